// SPDX-License-Identifier: GPL-2.0-only
// Aligned text tables for rlctl's human output.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>
#include "control/protocol.h"

namespace rlctl {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  // Cells may be strings or JSON strings (printed without quotes).
  void row(std::initializer_list<nlohmann::json> cells) {
    std::vector<std::string> r;
    for (const auto& c : cells)
      r.push_back(c.is_string() ? c.get<std::string>() : rl::control::to_text(c));
    rows_.push_back(std::move(r));
  }
  void print(std::ostream& out) const {
    std::vector<size_t> w;
    for (const auto& r : rows_)
      for (size_t i = 0; i < r.size(); i++) {
        if (w.size() <= i) w.push_back(0);
        w[i] = std::max(w[i], r[i].size());
      }
    for (const auto& r : rows_) {
      std::string line;
      for (size_t i = 0; i < r.size(); i++) {
        line += r[i];
        if (i + 1 < r.size()) line += std::string(w[i] - r[i].size() + 2, ' ');
      }
      out << line << "\n";
    }
    if (rows_.size() == 1) out << "(none)\n";
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace rlctl
