// SPDX-License-Identifier: GPL-2.0-only
// SYN cookies on the real verifier: a SYN to a syn_cookies rule comes back as a SYN-ACK built by
// the program (XDP_TX), well-formed down to its checksums and options; the ACK carrying that
// cookie back passes, and one with any other number is dropped. The kernel's own helpers make
// and check the cookies, so a round trip here is the kernel agreeing with itself.
#include <arpa/inet.h>

#include <map>

#include "fixture.h"

namespace rl::testing {
namespace {

using packet::Builder;

constexpr uint16_t kPort = 80;
constexpr uint32_t kClientSeq = 1000;
constexpr uint32_t kClientTsval = 12345;

// MSS 1460, SACK permitted, timestamp, NOP, window scale 7: what Linux clients send.
std::vector<uint8_t> linux_syn_options() {
  return {2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x30, 0x39, 0, 0, 0, 0, 1, 3, 3, 7};
}

uint16_t get16(const std::vector<uint8_t>& f, size_t at) { return (f.at(at) << 8) | f.at(at + 1); }
uint32_t get32(const std::vector<uint8_t>& f, size_t at) {
  return (uint32_t{get16(f, at)} << 16) | get16(f, at + 2);
}

// The ones' complement sum of 16-bit words, folded.
uint32_t sum16(const uint8_t* p, size_t n, uint32_t acc = 0) {
  for (size_t i = 0; i + 1 < n; i += 2) acc += (p[i] << 8) | p[i + 1];
  if (n & 1) acc += p[n - 1] << 8;
  while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
  return acc;
}

// A frame's TCP options as (kind, bytes after kind and length).
std::map<uint8_t, std::vector<uint8_t>> tcp_options(const std::vector<uint8_t>& f, size_t tcp) {
  std::map<uint8_t, std::vector<uint8_t>> out;
  size_t end = tcp + size_t{4} * (f.at(tcp + 12) >> 4);
  for (size_t i = tcp + 20; i < end;) {
    if (f[i] == 0) break;
    if (f[i] == 1) {
      i++;
      continue;
    }
    out[f[i]] = std::vector<uint8_t>(f.begin() + i + 2, f.begin() + i + f[i + 1]);
    i += f[i + 1];
  }
  return out;
}

class SynCookieTest : public BpfTest {
 protected:
  void SetUp() override {
    BpfTest::SetUp();
    auto on_port = [](const char* name, uint16_t port, uint64_t rate, uint64_t burst,
                      bool cookies) {
      auto r = token_bucket(name, rate, burst);
      r.match.protocol = 6;
      r.match.ports = {{port, port}};
      r.syn_cookies = cookies;
      return r;
    };
    policy::Policy p;
    p.rules = {on_port("web", kPort, 1000, 1000, true), on_port("tight", 81, 1, 2, true),
               on_port("plain", 82, 1000, 1000, false)};
    apply(p);
  }

  // Runs a frame; returns the frame the program left behind.
  std::vector<uint8_t> run(const std::vector<uint8_t>& frame, uint32_t* action) {
    std::vector<uint8_t> out;
    auto r = hooks().run(frame, 1, &out);
    EXPECT_TRUE(r.ok()) << r.error().str();
    *action = r.ok() ? r->action : 0;
    return out;
  }

  static std::vector<uint8_t> syn4(const std::string& src, uint16_t dport = kPort,
                                   std::vector<uint8_t> options = linux_syn_options()) {
    return Builder()
        .ipv4(src, "192.0.2.1")
        .tcp(40000, dport, packet::kSyn)
        .tcp_seq(kClientSeq, 0)
        .tcp_options(std::move(options))
        .build();
  }
  static std::vector<uint8_t> ack4(const std::string& src, uint32_t ack) {
    return Builder()
        .ipv4(src, "192.0.2.1")
        .tcp(40000, kPort, packet::kAck)
        .tcp_seq(kClientSeq + 1, ack)
        .build();
  }
};

TEST_F(SynCookieTest, SynIsAnsweredWithAWellFormedSynAck) {
  auto syn = syn4("198.18.0.1");
  uint32_t action = 0;
  auto f = run(syn, &action);
  ASSERT_EQ(action, XDP_TX);
  EXPECT_EQ(hooks().last_decision().reason, RL_REASON_SYNCOOKIE_SENT);

  // Ethernet: addresses swapped.
  EXPECT_TRUE(std::equal(f.begin(), f.begin() + 6, syn.begin() + 6));
  EXPECT_TRUE(std::equal(f.begin() + 6, f.begin() + 12, syn.begin()));
  // IPv4: addresses swapped, length and checksum right.
  const size_t ip = 14, tcp = 34;
  EXPECT_EQ(f[ip], 0x45);
  EXPECT_EQ(get32(f, ip + 12), get32(syn, ip + 16));
  EXPECT_EQ(get32(f, ip + 16), get32(syn, ip + 12));
  EXPECT_EQ(f[ip + 9], 6);
  EXPECT_EQ(get16(f, ip + 2), f.size() - 14);
  EXPECT_EQ(sum16(&f[ip], 20), 0xffffu) << "IPv4 header checksum";

  // TCP: ports swapped, SYN|ACK, the client's sequence acknowledged, checksum right.
  EXPECT_EQ(get16(f, tcp), kPort);
  EXPECT_EQ(get16(f, tcp + 2), 40000);
  EXPECT_EQ(get32(f, tcp + 8), kClientSeq + 1);
  EXPECT_EQ(f[tcp + 13], packet::kSyn | packet::kAck);
  EXPECT_EQ(get16(f, tcp + 14), 0) << "window 0 until SYNPROXY has the server's connection";
  size_t tcp_len = size_t{4} * (f[tcp + 12] >> 4);
  EXPECT_EQ(tcp_len, 40u) << "MSS, SACK, timestamp and window scale";
  EXPECT_EQ(f.size(), tcp + tcp_len);
  uint32_t pseudo = sum16(&f[ip + 12], 8);
  pseudo += 6 + tcp_len;
  EXPECT_EQ(sum16(&f[tcp], tcp_len, pseudo), 0xffffu) << "TCP checksum";

  auto opts = tcp_options(f, tcp);
  ASSERT_TRUE(opts.count(2));
  EXPECT_EQ(get16(opts[2], 0), RL_SYNCOOKIE_MSS4);
  EXPECT_TRUE(opts.count(4)) << "SACK permitted";
  ASSERT_TRUE(opts.count(3));
  EXPECT_EQ(opts[3].at(0), RL_SYNCOOKIE_WSCALE);
  ASSERT_TRUE(opts.count(8));
  uint32_t tsval = get32(opts[8], 0), tsecr = get32(opts[8], 4);
  EXPECT_EQ(tsecr, kClientTsval) << "the client's timestamp echoed";
  EXPECT_EQ(tsval & 0xf, 7u) << "the client's window scale, for SYNPROXY";
  EXPECT_EQ(tsval & 0x10, 0x10u) << "SACK, for SYNPROXY";

  EXPECT_EQ(global(RL_GC_SYNCOOKIE_SENT), 1u);
  auto c = counters("web");
  EXPECT_EQ(c.matched_pkts, 1u);
  EXPECT_EQ(c.passed_pkts, 1u);
}

TEST_F(SynCookieTest, TheCookieComesBackAndPasses) {
  uint32_t action = 0;
  auto f = run(syn4("198.18.0.2"), &action);
  ASSERT_EQ(action, XDP_TX);
  uint32_t cookie = get32(f, 34 + 4);

  auto good = send(ack4("198.18.0.2", cookie + 1));
  EXPECT_EQ(good.verdict, XDP_PASS);
  EXPECT_EQ(good.reason, RL_REASON_ADMITTED);
  EXPECT_EQ(global(RL_GC_SYNCOOKIE_ACCEPTED), 1u);

  // Another number, another source, another port: the cookie binds all of them.
  for (const auto& frame : {ack4("198.18.0.2", cookie + 2), ack4("198.18.0.3", cookie + 1),
                            Builder()
                                .ipv4("198.18.0.2", "192.0.2.1")
                                .tcp(40001, kPort, packet::kAck)
                                .tcp_seq(kClientSeq + 1, cookie + 1)
                                .build()}) {
    auto bad = send(frame);
    EXPECT_EQ(bad.verdict, XDP_DROP);
    EXPECT_EQ(bad.reason, RL_REASON_SYNCOOKIE_REJECTED);
  }
  EXPECT_EQ(global(RL_GC_SYNCOOKIE_REJECTED), 3u);
  auto c = counters("web");
  EXPECT_EQ(c.dropped_pkts, 3u);
  EXPECT_EQ(c.matched_pkts, c.passed_pkts + c.dropped_pkts);
}

TEST_F(SynCookieTest, PacketsWithoutAConnectionOrCookieAreDropped) {
  for (uint8_t flags :
       {uint8_t(packet::kAck), uint8_t(packet::kRst | packet::kAck), uint8_t(packet::kRst),
        uint8_t(packet::kPsh), uint8_t(packet::kSyn | packet::kFin),
        uint8_t(packet::kSyn | packet::kAck)}) {
    auto d = send(tcp4("198.18.1.1", kPort, flags));
    EXPECT_EQ(d.verdict, XDP_DROP) << int(flags);
    EXPECT_EQ(d.reason, RL_REASON_SYNCOOKIE_REJECTED) << int(flags);
  }
  EXPECT_EQ(global(RL_GC_SYNCOOKIE_SENT), 0u);
  // A rule without syn_cookies leaves the same packets to its limit.
  EXPECT_EQ(send(tcp4("198.18.1.1", 82, packet::kAck)).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(send(tcp4("198.18.1.1", 82, packet::kSyn)).verdict, XDP_PASS);
}

// The limit decides which SYNs are answered: a spoofed victim gets at most its bucket's worth
// of SYN-ACKs, so rl cannot be made a reflector.
TEST_F(SynCookieTest, TheLimitCapsSynAcksPerSource) {
  int answered = 0, dropped = 0;
  for (int i = 0; i < 10; i++) {
    uint32_t action = 0;
    run(syn4("198.18.2.1", 81), &action);
    answered += action == XDP_TX;
    dropped += action == XDP_DROP;
  }
  EXPECT_EQ(answered, 2) << "the burst";
  EXPECT_EQ(dropped, 8);
  EXPECT_EQ(global(RL_GC_SYNCOOKIE_SENT), 2u);
  EXPECT_EQ(counters("tight").dropped_pkts, 8u);
}

// Without a client timestamp the cookie cannot carry window scale or SACK: only the MSS is
// offered, as the kernel does. The frame grows from 20 to 24 bytes of TCP.
TEST_F(SynCookieTest, SynWithoutOptionsGetsMssOnly) {
  uint32_t action = 0;
  auto f = run(syn4("198.18.3.1", kPort, {}), &action);
  ASSERT_EQ(action, XDP_TX);
  const size_t tcp = 34;
  EXPECT_EQ((f[tcp + 12] >> 4) * 4, 24);
  EXPECT_EQ(f.size(), tcp + 24);
  auto opts = tcp_options(f, tcp);
  EXPECT_EQ(opts.size(), 1u);
  EXPECT_EQ(get16(opts[2], 0), RL_SYNCOOKIE_MSS4);
  uint32_t pseudo = sum16(&f[14 + 12], 8) + 6 + 24;
  EXPECT_EQ(sum16(&f[tcp], 24, pseudo), 0xffffu);
}

TEST_F(SynCookieTest, Ipv6AndVlan) {
  auto syn = Builder()
                 .vlan(7)
                 .ipv6("2001:db8::5", "2001:db8:ff::1")
                 .tcp(40000, kPort, packet::kSyn)
                 .tcp_seq(kClientSeq, 0)
                 .tcp_options(linux_syn_options())
                 .build();
  uint32_t action = 0;
  auto f = run(syn, &action);
  ASSERT_EQ(action, XDP_TX);
  const size_t ip = 18, tcp = 58;
  EXPECT_EQ(get16(f, 12), 0x8100);
  EXPECT_EQ(get16(f, 14) & 0xfff, 7) << "the tag stays";
  EXPECT_TRUE(std::equal(f.begin() + ip + 8, f.begin() + ip + 24, syn.begin() + ip + 24));
  EXPECT_TRUE(std::equal(f.begin() + ip + 24, f.begin() + ip + 40, syn.begin() + ip + 8));
  size_t tcp_len = size_t{4} * (f[tcp + 12] >> 4);
  EXPECT_EQ(get16(f, ip + 4), tcp_len) << "payload length";
  EXPECT_EQ(f.size(), tcp + tcp_len);
  uint32_t pseudo = sum16(&f[ip + 8], 32) + 6 + tcp_len;
  EXPECT_EQ(sum16(&f[tcp], tcp_len, pseudo), 0xffffu);
  EXPECT_EQ(get16(tcp_options(f, tcp)[2], 0), RL_SYNCOOKIE_MSS6);

  auto ack = Builder()
                 .vlan(7)
                 .ipv6("2001:db8::5", "2001:db8:ff::1")
                 .tcp(40000, kPort, packet::kAck)
                 .tcp_seq(kClientSeq + 1, get32(f, tcp + 4) + 1)
                 .build();
  EXPECT_EQ(send(ack).reason, RL_REASON_ADMITTED);
  EXPECT_EQ(global(RL_GC_SYNCOOKIE_ACCEPTED), 1u);
}

// A SYN the program does not rewrite (IPv4 options) is left to the stack's SYNPROXY, which
// answers it the same way; the limit still applied.
TEST_F(SynCookieTest, SynWithIpOptionsIsLeftToTheStack) {
  auto syn = Builder()
                 .ipv4("198.18.4.1", "192.0.2.1")
                 .ipv4_options(1)
                 .tcp(40000, kPort, packet::kSyn)
                 .tcp_options(linux_syn_options())
                 .build();
  auto d = send(syn);
  EXPECT_EQ(d.verdict, XDP_PASS);
  EXPECT_EQ(d.reason, RL_REASON_ADMITTED);
  EXPECT_EQ(global(RL_GC_SYNCOOKIE_SENT), 0u);
}

// Without the conntrack lookup the program loads all the same (the verifier drops the calls)
// and a syn_cookies rule is refused with the reason, leaving the rule set in force.
TEST(SynCookieLoad, WithoutConntrackLookupTheRuleIsRefused) {
  LoadOptions o;
  o.key_capacity = 1 << 12;
  o.cluster_keys = 64;
  o.syn_cookies = false;
  auto dp = BpfDatapath::load(o);
  ASSERT_TRUE(dp.ok()) << dp.error().str();
  EXPECT_FALSE((*dp)->syn_cookies());
  policy::Policy p;
  auto r = token_bucket("web", 10, 10);
  r.match.protocol = 6;
  r.match.ports = {{kPort, kPort}};
  r.syn_cookies = true;
  p.rules = {r};
  auto c = compiler::compile(p);
  ASSERT_TRUE(c.ok());
  auto s = (*dp)->apply(*c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().err, ENOTSUP);
  EXPECT_NE(s.error().message.find("bpf_xdp_ct_lookup"), std::string::npos);
  EXPECT_EQ((*dp)->active_generation(), 0u) << "nothing switched";
}

}  // namespace
}  // namespace rl::testing
