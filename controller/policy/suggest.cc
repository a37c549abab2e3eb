// SPDX-License-Identifier: GPL-2.0-only
#include "policy/suggest.h"

#include <algorithm>

namespace rl::policy::detail {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment over a full matrix: names are short, clarity wins.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); i++) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); j++) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    for (size_t j = 1; j <= b.size(); j++) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

std::string closest(std::string_view word, const std::vector<std::string>& candidates,
                    size_t max_distance) {
  std::string best;
  size_t best_distance = max_distance + 1;
  for (const auto& c : candidates) {
    size_t dist = edit_distance(word, c);
    // A one-letter word is within two edits of every short name; such guesses are noise.
    if (dist >= std::max(word.size(), c.size())) continue;
    if (dist < best_distance) {
      best = c;
      best_distance = dist;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string c = closest(word, candidates);
  return c.empty() ? "" : " (did you mean '" + c + "'?)";
}

}  // namespace rl::policy::detail
