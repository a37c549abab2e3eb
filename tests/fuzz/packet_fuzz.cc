// SPDX-License-Identifier: GPL-2.0-only
// Frames of any length and content through the reference model, the specification the
// differential test holds the BPF parser to: its parser, and the shipped policies' rules matched
// and limited on what it parsed. Any crash, sanitizer report or read past the frame is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "model.h"
#include "policy/loader.h"

namespace {

const rl::policy::Policy& shipped_policies() {
  static const rl::policy::Policy policy = [] {
    auto loaded = rl::policy::load_directory(RL_POLICY_EXAMPLES);
    if (!loaded.ok()) {
      std::fprintf(stderr, "packet_fuzz: %s does not load\n", RL_POLICY_EXAMPLES);
      std::abort();
    }
    return loaded.policy;
  }();
  return policy;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> frame(data, data + size);
  (void)rl::reference::parse(frame);
  rl::reference::Model model(shipped_policies());
  // Twice at one instant: the second meets the state the first left.
  (void)model.decide(frame, 1'000'000'000);
  (void)model.decide(frame, 1'000'000'000);
  return 0;
}
