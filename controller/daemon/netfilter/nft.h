// SPDX-License-Identifier: GPL-2.0-only
// One libnftables context: a script in, its output or the error nft printed out. rld's tables
// (the SYN cookies' SYNPROXY, conntrack for connection limits) go through it.
#pragma once

#include <memory>
#include <string>

#include "common/result.h"

struct nft_ctx;

namespace rl::daemon {

class Nft {
 public:
  Nft();
  Result<std::string> run(const std::string& script);
  // Whether the ruleset holds `table` ("inet rl_synproxy").
  Result<bool> has_table(const std::string& table);

 private:
  struct Free {
    void operator()(nft_ctx* c) const;
  };
  std::unique_ptr<nft_ctx, Free> ctx_;
};

}  // namespace rl::daemon
