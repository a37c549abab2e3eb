// rlsend's command line, parsed and validated: an Options value is safe to act on (addresses in
// the lab ranges, bounded count and time, consistent protocol flags).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "common/prefix.h"
#include "common/result.h"

namespace rl::rlsend {

enum class Proto { kUdp, kTcp, kIcmp };

using Mac = std::array<uint8_t, 6>;

struct Options {
  std::string iface;
  Mac dst_mac{};
  std::optional<Mac> src_mac;  // unset: the interface's own address
  Prefix src;                  // a bare address is a full-length prefix
  uint32_t sources = 1;
  Address dst;
  Proto proto = Proto::kUdp;
  uint16_t sport = 40000;
  uint16_t dport = 9;
  bool syn = false;
  size_t size = 0;  // frame bytes without FCS; 0: the smallest frame that holds the headers
  std::optional<uint16_t> vlan;
  uint64_t count = 0;
  uint64_t rate = 0;  // frames per second; 0: as fast as the socket takes them
  double max_seconds = 10;
  bool quiet = false;
};

constexpr double kMaxSeconds = 60;
constexpr uint32_t kMaxSources = 1u << 20;  // a million spoofed sources, frames prebuilt (64 MiB)
constexpr int64_t kMaxCount = 1'000'000'000;
constexpr int64_t kMaxRate = 100'000'000;

// Exit code for arguments that are invalid or outside what rlsend may send.
constexpr int kExitUsage = 2;

// Parses and validates argv. Every Error is a usage error (exit kExitUsage); a help request is
// not an error, it comes back as the text to print.
struct Parsed {
  Options options;
  std::optional<std::string> help;
};
Result<Parsed> parse_options(int argc, char** argv);

Result<Mac> parse_mac(const std::string& text);

// Checks that a number lies in [lo, hi] and stores it. Options are parsed as signed numbers so
// that "-5" is seen as negative rather than wrapped.
template <typename T>
Status in_range(const char* name, int64_t v, int64_t lo, int64_t hi, T& out) {
  if (v < lo || v > hi)
    return Error{0, std::string(name) + " must be between " + std::to_string(lo) + " and " +
                        std::to_string(hi) + ", not " + std::to_string(v)};
  out = static_cast<T>(v);
  return {};
}

}  // namespace rl::rlsend
