// SPDX-License-Identifier: GPL-2.0-only
// RuntimeLists in memory for unit tests: one list of entries, found by exact prefix.
#pragma once

#include <optional>
#include <vector>

#include "datapath/datapath.h"

namespace rl::testing {

class FakeRuntimeLists : public virtual RuntimeLists {
 public:
  Status runtime_acl_set(const Prefix& p, uint32_t flags, uint64_t expires_ns) override {
    for (auto& e : runtime)
      if (e.prefix == p) {
        e = {p, flags, expires_ns};
        return {};
      }
    runtime.push_back({p, flags, expires_ns});
    return {};
  }
  Status runtime_acl_remove(const Prefix& p) override {
    for (auto it = runtime.begin(); it != runtime.end(); ++it)
      if (it->prefix == p) {
        runtime.erase(it);
        return {};
      }
    return Error{ENOENT, "no runtime entry " + p.str()};
  }
  Result<std::vector<RuntimeEntry>> runtime_acl_list() const override { return runtime; }
  Result<std::optional<RuntimeEntry>> runtime_acl_find(const Prefix& p) const override {
    for (const auto& e : runtime)
      if (e.prefix == p) return std::optional<RuntimeEntry>(e);
    return std::optional<RuntimeEntry>();
  }

  std::vector<RuntimeEntry> runtime;
};

}  // namespace rl::testing
