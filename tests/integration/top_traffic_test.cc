// SPDX-License-Identifier: GPL-2.0-only
// `rlctl top --by traffic` end to end: rld samples 1 in 16 packets on a real veth, three
// sources send at clearly different known rates, and rlctl ranks them in that order with
// estimates within the error it states.
#include <cmath>

#include "policy_text.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

const std::string kTopPolicy = policy_text({udp_rule_text("udp9", 9, "1000000/s", 1000000),
                                            udp_rule_text("udp7", 7, "1000000/s", 1000000)});

class TopTraffic : public RldTest {};

TEST_F(TopTraffic, RanksThreeSourcesByRateWithinTheStatedError) {
  write_policy("p.yaml", kTopPolicy);
  rld_extra_args_ = {"--traffic-sample-shift", "4"};
  start_rld();

  // One second each at 6,000, 3,000 and 1,000 packets per second: 375, 188 and 62 samples
  // expected. Rates far enough apart that a wrong order is a bug (8 standard deviations), and
  // enough samples that the stated error is under 80% of the estimate for all but 1 run in
  // 10^7 (at 500 packets per second, 31 samples, it would not be in 1 run in 15).
  struct Source {
    std::string addr;
    uint64_t rate;
    uint64_t sent = 0;
  };
  std::vector<Source> sources = {{"198.18.7.1", 6000}, {"198.18.7.2", 3000}, {"198.18.7.3", 1000}};
  for (auto& s : sources) {
    auto r = send({.src = s.addr, .size = 200, .count = s.rate, .rate = s.rate, .max_seconds = 5});
    ASSERT_EQ(r.errors, 0u);
    s.sent = r.sent;
    ASSERT_EQ(s.sent, s.rate) << s.addr;
  }
  uint64_t total = 0;
  for (const auto& s : sources) total += s.sent;
  EXPECT_EQ(rule_stats("udp9")["matched_packets"], total) << "every packet reached XDP";

  // The samples reach rld through the ring buffer: wait (bounded) until they stop coming.
  Json top;
  uint64_t last = ~0ULL;
  for (int i = 0; i < 50; i++) {
    top = ctl({"top", "--by", "traffic"});
    uint64_t n = top.value("samples", 0ULL);
    if (n == last && n > 0) break;
    last = n;
    std::this_thread::sleep_for(200ms);
  }
  ASSERT_EQ(top["by"], "traffic") << top.dump();
  EXPECT_EQ(top["sample_ratio"], 16);
  EXPECT_EQ(top["samples_shed"], 0);
  ASSERT_EQ(top["keys"].size(), 3u) << top.dump();
  const double secs = top["window_seconds"].get<double>();
  EXPECT_GT(secs, 3.0);
  EXPECT_LT(secs, 20.5);
  double shares = 0;
  for (size_t i = 0; i < sources.size(); i++) {
    const Json& k = top["keys"][i];
    SCOPED_TRACE(k.dump());
    EXPECT_EQ(k["key"], sources[i].addr) << "ranked by rate";
    EXPECT_EQ(k["rule"], "udp9");
    double est = k["packets"].get<double>(), err = k["packets_error"].get<double>();
    EXPECT_LE(std::fabs(est - double(sources[i].sent)), err);
    EXPECT_LT(err, 0.8 * double(sources[i].sent)) << "an error that says something";
    EXPECT_NEAR(k["pps"].get<double>(), est / secs, 1e-6 * est + 1e-9);
    // Every frame is 200 bytes: the bytes are the packets' times 200.
    EXPECT_NEAR(k["bytes_per_second"].get<double>(), k["pps"].get<double>() * 200, 1);
    EXPECT_EQ(k["dropped_share"], 0.0);
    shares += k["share"].get<double>();
  }
  EXPECT_NEAR(shares, 1.0, 1e-9) << "the three keys are all the samples";

  // -n and --rule, and the text form with its header.
  EXPECT_EQ(ctl({"top", "--by", "traffic", "-n", "1"})["keys"].size(), 1u);
  EXPECT_TRUE(ctl({"top", "--by", "traffic", "--rule", "udp7"})["keys"].empty());
  auto text = run({RL_RLCTL_PATH, "top", "--by", "traffic", "-s", socket_path()});
  ASSERT_TRUE(text.ok()) << text.describe();
  std::printf("%s", text.out.c_str());
  EXPECT_EQ(text.out.rfind("sampled 1 in 16 packets over the last ", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("EST. PPS"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("198.18.7.1"), std::string::npos) << text.out;

  // The metrics endpoint exports the samples.
  std::string m = metrics();
  EXPECT_EQ(sample(m, "rl_traffic_samples_total"), double(top["samples"].get<uint64_t>()));
  EXPECT_EQ(sample(m, "rl_traffic_samples_shed_total"), 0);
}

}  // namespace
}  // namespace rl::testing
