// SPDX-License-Identifier: GPL-2.0-only
#include "common/log.h"
#include "daemon/handlers/handlers.h"
#include "daemon/key_state.h"

namespace rl::daemon::handlers {

Json unblock(KeyTable& keys, const std::vector<RuleView>& rules, const Json& args) {
  auto addr = Address::parse(args.get<control::UnblockRequest>().address);
  if (!addr) return control::fail(addr.error().message);
  size_t reset = 0;
  for (const auto& v : rules) {
    const rl_rule& r = v.compiled;
    // A source-and-destination pair is not named by one address.
    if (r.key_kind == RL_KEY_RULE || r.key_kind == RL_KEY_SRC_DST) continue;
    if (r.key_kind == RL_KEY_SRC_ADDR_DPORT) {
      for (uint32_t port = 0; port < 65536; port++)
        reset += keys.reset_key(key_for(r, *addr, static_cast<uint16_t>(port)));
    } else {
      reset += keys.reset_key(key_for(r, *addr, 0));
    }
  }
  log::info("unblocked", {{"address", addr->str()}, {"keys", std::to_string(reset)}});
  return control::ok(control::UnblockResponse{addr->str(), reset});
}

}  // namespace rl::daemon::handlers
