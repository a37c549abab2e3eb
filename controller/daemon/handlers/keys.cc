// SPDX-License-Identifier: GPL-2.0-only
#include "common/log.h"
#include "daemon/handlers/handlers.h"
#include "daemon/key_state.h"

namespace rl::daemon::handlers {

Json unblock(KeyTable& keys, const std::vector<RuleView>& rules, const Json& args) {
  auto addr = Address::parse(args.get<control::UnblockRequest>().address);
  if (!addr) return control::fail(addr.error().message);
  size_t reset = 0;
  auto reset_limit = [&](const rl_rule& r) {
    // A source-and-destination pair is not named by one address.
    if (r.key_kind == RL_KEY_RULE || r.key_kind == RL_KEY_SRC_DST) return;
    if (r.key_kind == RL_KEY_SRC_ADDR_DPORT) {
      for (uint32_t port = 0; port < 65536; port++)
        reset += keys.reset_key(key_for(r, *addr, static_cast<uint16_t>(port)));
    } else {
      reset += keys.reset_key(key_for(r, *addr, 0));
    }
  };
  // Every limit of a rule: a block a stacked limit holds keeps the address out as well. (A rule
  // adopted from pinned maps does not know its stacked limits until a policy is applied.)
  for (const auto& v : rules) {
    reset_limit(v.compiled);
    for (const rl_rule& more : v.more) reset_limit(more);
  }
  log::info("unblocked", {{"address", addr->str()}, {"keys", std::to_string(reset)}});
  return control::ok(control::UnblockResponse{addr->str(), reset});
}

}  // namespace rl::daemon::handlers
