// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/netfilter/nft.h"

#include <nftables/libnftables.h>

namespace rl::daemon {

void Nft::Free::operator()(nft_ctx* c) const { nft_ctx_free(c); }

Nft::Nft() : ctx_(nft_ctx_new(NFT_CTX_DEFAULT)) {
  if (ctx_) {
    nft_ctx_buffer_output(ctx_.get());
    nft_ctx_buffer_error(ctx_.get());
  }
}

Result<std::string> Nft::run(const std::string& script) {
  if (!ctx_) return Error{ENOMEM, "nftables: no context"};
  if (nft_run_cmd_from_buffer(ctx_.get(), script.c_str()) != 0) {
    std::string err = nft_ctx_get_error_buffer(ctx_.get());
    while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
    return Error{EINVAL, "nftables: " + err};
  }
  return std::string(nft_ctx_get_output_buffer(ctx_.get()));
}

Result<bool> Nft::has_table(const std::string& table) {
  auto family = table.substr(0, table.find(' '));
  auto tables = run("list tables " + family);
  if (!tables) return tables.error();
  return tables->find("table " + table + "\n") != std::string::npos;
}

}  // namespace rl::daemon
