// SPDX-License-Identifier: GPL-2.0-only
// Offender reports through the ring buffer: one event when a key starts exceeding, then at
// most one per key per report interval.
#include "fixture.h"
#include "support/ring_records.h"

namespace rl::testing {
namespace {

class EventsTest : public BpfTest {
 protected:
  std::vector<rl_event> drain() { return drain_ring<rl_event>(dp_->events_fd()); }
};

TEST_F(EventsTest, OneReportPerKeyPerInterval) {
  policy::Policy p;
  auto r = token_bucket("noisy", 1, 1);
  r.key = policy::KeyKind::kSourcePrefix;
  r.v4_prefix = 24;
  auto quiet = token_bucket("quiet", 1, 1);
  quiet.report = false;
  quiet.match.ports = {{9, 9}};
  quiet.priority = -1;
  p.rules = {r, quiet};
  apply(p);

  EXPECT_EQ(passed(udp4("198.18.3.77"), 50), 1);
  EXPECT_EQ(passed(udp4("198.18.4.1"), 5), 1);
  EXPECT_EQ(passed(udp4("198.18.9.9", 9), 5), 1);  // not reported
  auto ev = drain();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, static_cast<uint32_t>(RL_EVENT_OVER_LIMIT));
  EXPECT_EQ(ev[0].rule_id, ids_.by_name.at("noisy").id);
  EXPECT_EQ(ev[0].family, 4);
  EXPECT_EQ(ev[0].key_kind, RL_KEY_SRC_PREFIX);
  uint8_t a[4];
  std::memcpy(a, ev[0].addr, 4);
  EXPECT_EQ(a[0], 198);
  EXPECT_EQ(a[2], 3);
  EXPECT_EQ(a[3], 0) << "a prefix key reports the prefix";

  hooks().set_clock(kT0 + kSec);
  EXPECT_EQ(passed(udp4("198.18.3.77"), 10), 1);
  EXPECT_TRUE(drain().empty()) << "still inside the report interval";
  hooks().set_clock(kT0 + 4 * kSec);
  passed(udp4("198.18.3.77"), 10);
  EXPECT_EQ(drain().size(), 1u);
  EXPECT_EQ(global(RL_GC_REPORTS), 3u);
}

}  // namespace
}  // namespace rl::testing
