// rlflood's command line, parsed and validated: an Options value is safe to act on (addresses in
// the lab ranges, a source range that the XDP program can count through, bounded count and time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/prefix.h"
#include "common/result.h"
#include "rlsend/options.h"

namespace rl::rlflood {

enum class Proto { kUdp, kTcpSyn };
enum class Order { kSequential, kShuffled };

struct Options {
  std::string iface;
  rlsend::Mac dst_mac{};
  Prefix src;  // sources are src+1 .. src+N (src itself for a full-length prefix)
  uint32_t sources = 1;
  Order order = Order::kSequential;
  Address dst;
  Proto proto = Proto::kUdp;
  uint16_t sport = 40000;
  uint16_t dport = 9;
  size_t size = 0;  // frame bytes without FCS; 0: 64, or the headers if they need more
  uint64_t count = 0;
  uint64_t rate = 0;  // frames per second, paced per millisecond's worth; 0: as fast as it goes
  double max_seconds = 10;
  uint32_t batch = 64;  // frames per batch inside the kernel (its default, NAPI's weight)
  int threads = 2;      // unpaced: callers taking turns (live_run.h says why)
  bool quiet = false;
};

constexpr uint32_t kMaxSources = 1u << 24;
constexpr int64_t kMaxCount = 10'000'000'000;
constexpr int64_t kMaxRate = 100'000'000;
constexpr double kMaxSeconds = 120;
constexpr size_t kMinSize = 64, kMaxSize = 1500;
constexpr uint32_t kMaxBatch = 256;  // the kernel's limit for live frames
constexpr int kMaxThreads = 16;

constexpr int kExitUsage = 2;

struct Parsed {
  Options options;
  std::optional<std::string> help;
};
// Every Error is a usage error (exit kExitUsage); a help request comes back as the text to print.
Result<Parsed> parse_options(int argc, char** argv);

// How many sources src can supply such that they differ only in their last 32 bits (what the XDP
// program rewrites): the host addresses after the prefix address, or 1 for a full address.
uint64_t source_capacity(const Prefix& src);

}  // namespace rl::rlflood
