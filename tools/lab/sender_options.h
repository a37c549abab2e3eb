// SPDX-License-Identifier: GPL-2.0-only
// The command-line options every lab sender shares (interface, addresses, sources, ports, how many
// frames, how fast, for how long), declared and checked once. A tool's own Options derive from
// SenderOptions, so a validated value is safe to act on: addresses in the lab ranges, bounded
// count, rate and time.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "common/prefix.h"
#include "common/result.h"
#include "iface.h"

namespace rl::lab {

struct SenderOptions {
  std::string iface;
  Mac dst_mac{};
  Prefix src;  // a bare address is a full-length prefix
  uint32_t sources = 1;
  Address dst;
  uint16_t sport = 40000;
  uint16_t dport = 9;
  uint64_t count = 0;
  uint64_t rate = 0;  // frames per second; 0: as fast as the tool can
  double max_seconds = 10;
  bool quiet = false;
};

// Where one tool's bounds and wording differ from another's.
struct SenderLimits {
  uint32_t max_sources = 1;
  int64_t max_count = 1;
  int64_t max_rate = 1;
  double max_seconds = 1;
  std::string sources_help;
  std::string rate_help;
};

// Options as typed, before validation. Numbers are signed on purpose: CLI11 wraps "-5" into a
// huge unsigned value, so the range checks must see the sign.
struct SenderRaw {
  std::string dst_mac, src, dst;
  int64_t sources = 1, sport = 40000, dport = 9, count = 0, rate = 0;
};

void add_sender_options(CLI::App& app, const SenderLimits& limits, SenderRaw& raw,
                        SenderOptions& o);

// Checks and stores what add_sender_options read. How many sources a prefix can supply depends
// on how the tool draws them, so the tool checks that itself.
Status validate_sender(const SenderRaw& raw, const SenderLimits& limits, SenderOptions& o);

// Runs CLI11 on argv. A help request is not an error: its text comes back in help. Every Error is
// a usage error.
Status parse_command_line(CLI::App& app, int argc, char** argv, std::optional<std::string>& help);

// Checks that a number lies in [lo, hi] and stores it.
template <typename T>
Status in_range(const char* name, int64_t v, int64_t lo, int64_t hi, T& out) {
  if (v < lo || v > hi)
    return Error{0, std::string(name) + " must be between " + std::to_string(lo) + " and " +
                        std::to_string(hi) + ", not " + std::to_string(v)};
  out = static_cast<T>(v);
  return {};
}

}  // namespace rl::lab
