// SPDX-License-Identifier: GPL-2.0-only
// Memory latency by working-set size: a dependent pointer chase over random 64-byte lines.
// It explains the key table's cost once keys outgrow the caches (docs/benchmarks.md).
//
//   ./build/bench/mem_latency
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

int main() {
  std::mt19937_64 rng(1);
  for (size_t mb = 1; mb <= 64; mb *= 2) {
    size_t lines = mb * 1024 * 1024 / 64;
    std::vector<size_t> order(lines);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    // One 64-byte line per slot; each holds the index of the next line in a random cycle.
    std::vector<uint64_t> mem(lines * 8);
    for (size_t i = 0; i < lines; i++) mem[order[i] * 8] = order[(i + 1) % lines] * 8;
    constexpr long kSteps = 4'000'000;
    size_t p = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < kSteps; i++) p = mem[p];
    auto t1 = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / kSteps;
    std::printf("%3zu MB: %6.1f ns per access%s\n", mb, ns, p == 1 ? " " : "");
  }
  return 0;
}
