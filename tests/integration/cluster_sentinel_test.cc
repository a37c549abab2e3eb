// SPDX-License-Identifier: GPL-2.0-only
// Cluster-wide limits on Redis with Sentinel, end to end: a master, a replica and three
// sentinels run in the lab's client namespace on its address 192.0.2.1, each server namespace
// has a route to it, and three rld nodes configured by rld.yaml alone find the master through
// the sentinels. The fleet limit is measured before, during and after a failover.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "cluster_lab.h"

namespace rl::testing {
namespace {

using Clock = std::chrono::steady_clock;

class SentinelLab : public ClusterLab {
 protected:
  SentinelLab() : ClusterLab(/*local_redis=*/false) {}

  void SetUp() override {
    ClusterLab::SetUp();
    if (HasFatalFailure()) return;
    host_ = estate_host();
    if (HasFailure()) return;
    const RedisServerOptions estate{.host = host_, .netns = lab_->client_ns()};
    auto master = RedisServer::start(estate);
    ASSERT_TRUE(master) << master.error().str();
    master_ = std::move(*master);
    RedisServerOptions replica = estate;
    replica.replica_of = master_->port();
    auto r = RedisServer::start(replica);
    ASSERT_TRUE(r) << r.error().str();
    replica_ = std::move(*r);
    RedisServerOptions sentinel = estate;
    sentinel.sentinel_for = master_->port();
    std::string sentinels;
    for (int i = 0; i < 3; i++) {
      auto s = RedisServer::start(sentinel);
      ASSERT_TRUE(s) << s.error().str();
      sentinels += (i ? ", " : "") + host_ + ":" + std::to_string((*s)->port());
      sentinels_.push_back(std::move(*s));
    }
    ASSERT_TRUE(wait_for(20s, [&] { return sentinels_ready(*replica_, sentinels_, &waiting_); }))
        << "the sentinels never met; " << waiting_;

    use_config("  redis_sentinels: [" + sentinels + "]\n  redis_master_name: " + kSentinelMaster +
               "\n");
  }

  void TearDown() override {
    ClusterLab::TearDown();  // the nodes first, then the estate
    sentinels_.clear();
    replica_.reset();
    master_.reset();
  }

  std::string address(const RedisServer& s) const { return host_ + ":" + std::to_string(s.port()); }

  // Every node syncing with the server at `addr`.
  bool every_node_on(const std::string& addr) {
    for (size_t i = 0; i < kNodes; i++) {
      Json st = ctl(i, {"cluster", "status"});
      if (!st.value("redis_up", false) ||
          st.value("redis", std::string()).find(" " + addr + " ") == std::string::npos)
        return false;
    }
    return true;
  }

  // Floods for `seconds` while `fault` runs one second in; returns the fleet's admissions and
  // sets `outage` to the time from the fault until every node synced with `to` again.
  template <typename Fault>
  uint64_t flood_through(const std::string& src, double seconds, Fault fault, const std::string& to,
                         double& outage) {
    std::atomic<double> measured{-1};
    std::thread faulty([&] {
      std::this_thread::sleep_for(1s);
      const auto start = Clock::now();
      fault();
      if (wait_for(20s, [&] { return every_node_on(to); }))
        measured = std::chrono::duration<double>(Clock::now() - start).count();
    });
    const uint64_t total = sum(flood(src, 300, seconds));
    faulty.join();
    outage = measured;
    return total;
  }

  // The bound through a fault that lasted `outage` seconds (docs/cluster.md, "Sentinel"): the
  // fleet limit's own bound, plus, while a node writes nowhere that counts (no master, or a
  // demoted one whose writes are lost), all it admits at its local rate, plus one sync interval
  // of every node's deltas that the replica had not received.
  static double failover_bound(double seconds, double outage) {
    return fleet_bound(seconds, seconds) + kNodes * kLocalRate * (outage + kInterval);
  }

  void expect_followed(const RedisServer& now_master) {
    for (size_t i = 0; i < kNodes; i++) {
      Json st = ctl(i, {"cluster", "status"});
      EXPECT_NE(st.value("redis", std::string()).find(" " + address(now_master) + " "),
                std::string::npos)
          << st.dump();
      EXPECT_EQ(st.value("masters_changed", 0), 1) << st.dump();
      EXPECT_EQ(st.value("topology", std::string()), "sentinel") << st.dump();
      EXPECT_EQ(st["peers"].size(), kNodes) << st.dump();
    }
  }

  // Three nodes on the master; the fleet limit held before `fault`, through it (the nodes all on
  // the promoted replica within `max_outage` seconds) and after it. Sources are `net`.1 to .3.
  template <typename Fault>
  void through_failover(const std::string& net, const char* fault_name, double max_outage,
                        Fault fault) {
    for (size_t i = 0; i < kNodes; i++) start_node(i, kFleetPolicy);
    ASSERT_TRUE(wait_for(10s, [&] { return every_node_on(address(*master_)); }))
        << ctl(0, {"cluster", "status"}).dump();
    expect_fleet_limit(net + ".1", "before the failover");

    constexpr double kSeconds = 8;
    double outage = -1;
    const uint64_t during = flood_through(net + ".2", kSeconds, fault, address(*replica_), outage);
    std::printf(
        "fleet admitted %lu through %s; every node on the promoted replica %.1f s after "
        "it; bound %.0f\n",
        (unsigned long)during, fault_name, outage, failover_bound(kSeconds, outage));
    ASSERT_GE(outage, 0) << "the nodes never all moved to the promoted replica";
    EXPECT_LE(outage, max_outage);
    EXPECT_LE(during, failover_bound(kSeconds, outage));
    EXPECT_GE(during, 0.9 * kLimit * kSeconds);

    expect_fleet_limit(net + ".3", "after the failover");
    expect_followed(*replica_);
  }

  std::string host_, waiting_;
  std::unique_ptr<RedisServer> master_, replica_;
  std::vector<std::unique_ptr<RedisServer>> sentinels_;
};

TEST_F(SentinelLab, AKilledMasterIsFollowedAndTheFleetLimitHolds) {
  // Down after 1 s, then the sentinels' election and each node's reconnection backoff.
  through_failover("198.18.54", "a killed master", 15, [&] { master_->kill(); });
}

// SENTINEL FAILOVER demotes a live master: it takes writes until the sentinels reconfigure it,
// and those are lost. rld asks a sentinel every second, so it moves within about two seconds.
TEST_F(SentinelLab, ASentinelFailoverIsFollowedAndTheFleetLimitHolds) {
  through_failover("198.18.55", "SENTINEL FAILOVER", 10, [&] {
    auto r = sentinels_[0]->command({"SENTINEL", "FAILOVER", kSentinelMaster});
    EXPECT_TRUE(r && !r->is_error()) << (r ? r->str : r.error().str());
  });
}

}  // namespace
}  // namespace rl::testing
