// SPDX-License-Identifier: GPL-2.0-only
// rlflood's command line, parsed and validated: an Options value is safe to act on (addresses in
// the lab ranges, a source range that the XDP program can count through, bounded count and time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/prefix.h"
#include "common/result.h"
#include "lab/sender_options.h"

namespace rl::rlflood {

enum class Proto { kUdp, kTcpSyn };
enum class Order { kSequential, kShuffled };
// auto: live frames where the kernel allows them, else the packet ring (ring_run.h).
enum class Engine { kAuto, kLive, kPacket };

struct Options : lab::SenderOptions {
  // Sources are src+1 .. src+N (src itself for a full-length prefix); size 0: 64 bytes, or the
  // headers if they need more; rate is paced in bursts of at most burst frames, each at its due
  // time, so that a receiving veth's ring (256 frames) can take every burst whole.
  Order order = Order::kSequential;
  Engine engine = Engine::kAuto;
  Proto proto = Proto::kUdp;
  size_t size = 0;
  uint32_t batch = 64;  // frames per batch inside the kernel (its default, NAPI's weight)
  int threads = 2;      // unpaced: callers taking turns (live_run.h says why)
  uint32_t burst = 64;  // paced: frames per call at most (live_run.h)
  // Source ports sport .. sport+N-1: frame k takes sport + k mod N, as a sender that opens a
  // new port for each packet does (one source, many flows).
  uint32_t sports = 1;
};

constexpr uint32_t kMaxSources = 1u << 24;
constexpr size_t kMinSize = 64, kMaxSize = 1500;
constexpr uint32_t kMaxBatch = 256;  // the kernel's limit for live frames
constexpr int kMaxThreads = 16;
constexpr uint32_t kMaxBurst = 4096;

struct Parsed {
  Options options;
  std::optional<std::string> help;
};
// Every Error is a usage error (exit lab::kExitUsage); a help request comes back as the text to
// print.
Result<Parsed> parse_options(int argc, char** argv);

// How many sources src can supply such that they differ only in their last 32 bits (what the XDP
// program rewrites): the host addresses after the prefix address, or 1 for a full address.
uint64_t source_capacity(const Prefix& src);

}  // namespace rl::rlflood
