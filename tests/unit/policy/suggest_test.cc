// SPDX-License-Identifier: GPL-2.0-only
#include "policy/suggest.h"

#include <gtest/gtest.h>

namespace rl::policy::detail {
namespace {

TEST(EditDistance, CountsSwapsAsOne) {
  EXPECT_EQ(edit_distance("burst", "burst"), 0u);
  EXPECT_EQ(edit_distance("burts", "burst"), 1u);
  EXPECT_EQ(edit_distance("rat", "rate"), 1u);
  EXPECT_EQ(edit_distance("algoritm", "algorithm"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(Closest, WithinTwoEdits) {
  std::vector<std::string> keys = {"algorithm", "rate", "burst"};
  EXPECT_EQ(closest("burts", keys), "burst");
  EXPECT_EQ(closest("rates", keys), "rate");
  EXPECT_EQ(closest("bandwidth", keys), "");
  EXPECT_EQ(closest("x", keys), "");  // a single letter suggests nothing
  EXPECT_EQ(did_you_mean("burts", keys), " (did you mean 'burst'?)");
  EXPECT_EQ(did_you_mean("zzz", keys), "");
}

}  // namespace
}  // namespace rl::policy::detail
