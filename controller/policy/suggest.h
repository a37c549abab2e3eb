// SPDX-License-Identifier: GPL-2.0-only
// "Did you mean" suggestions for misspelled keys, values and names in policy files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rl::policy::detail {

// Edit distance counting insertions, deletions, substitutions and swaps of adjacent
// characters ("burts" -> "burst" is 1), since swaps are the most common typing slip.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is within `max_distance` edits (ties: the earliest
// candidate), else empty.
std::string closest(std::string_view word, const std::vector<std::string>& candidates,
                    size_t max_distance = 2);

// " (did you mean 'x'?)" for the closest candidate, or "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace rl::policy::detail
