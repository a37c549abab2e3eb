// SPDX-License-Identifier: GPL-2.0-only
// rlsend's command line, parsed and validated: an Options value is safe to act on (addresses in
// the lab ranges, bounded count and time, consistent protocol flags).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/result.h"
#include "lab/sender_options.h"

namespace rl::rlsend {

using lab::Mac;

enum class Proto { kUdp, kTcp, kIcmp };
// Whole datagrams, or the first fragment of each (offset 0, more to come: it has the transport
// header) or a later one (offset above 0, the last: payload only).
enum class Fragment { kNone, kFirst, kLater };

struct Options : lab::SenderOptions {
  std::optional<Mac> src_mac;  // unset: the interface's own address
  Proto proto = Proto::kUdp;
  bool syn = false;
  size_t size = 0;  // frame bytes without FCS; 0: the smallest frame that holds the headers
  std::optional<uint16_t> vlan;
  Fragment fragment = Fragment::kNone;
};

constexpr uint32_t kMaxSources = 1u << 20;  // a million spoofed sources, frames prebuilt (64 MiB)

// Parses and validates argv. Every Error is a usage error (exit lab::kExitUsage); a help request
// is not an error, it comes back as the text to print.
struct Parsed {
  Options options;
  std::optional<std::string> help;
};
Result<Parsed> parse_options(int argc, char** argv);

}  // namespace rl::rlsend
