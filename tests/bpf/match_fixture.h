// SPDX-License-Identifier: GPL-2.0-only
// The fixture of the rule-selection tests (match_*_test.cc): one loaded program, and what the
// runtime-list tests ask of it.
#pragma once

#include "fixture.h"

namespace rl::testing {

class MatchTest : public BpfTest {
 protected:
  // One rule that admits everything: a packet's reason is then the runtime lists' or ADMITTED.
  void admit_all() {
    policy::Policy p;
    p.rules = {token_bucket("all", 1'000'000, 1'000'000)};
    apply(p);
  }
  // The runtime entries rld lists, expired ones included.
  size_t runtime_entries() const {
    auto listed = dp_->runtime_acl_list();
    EXPECT_TRUE(listed.ok());
    return listed.ok() ? listed->size() : 0;
  }
};

}  // namespace rl::testing
