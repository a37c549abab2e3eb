// SPDX-License-Identifier: GPL-2.0-only
// Structured logging: one logfmt line per event on stderr (journald and log shippers parse it).
//   ts=2026-11-22T07:30:00.123Z level=info msg="policy applied" generation=3 rules=6
#pragma once

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace rl::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

void set_level(Level l);
bool parse_level(const std::string& s, Level* out);
bool enabled(Level l);

using Field = std::pair<std::string, std::string>;
void write(Level l, const std::string& msg, std::initializer_list<Field> fields = {});
void write(Level l, const std::string& msg, const std::vector<Field>& fields);

inline void debug(const std::string& m, std::initializer_list<Field> f = {}) {
  write(Level::kDebug, m, f);
}
inline void info(const std::string& m, std::initializer_list<Field> f = {}) {
  write(Level::kInfo, m, f);
}
inline void warn(const std::string& m, std::initializer_list<Field> f = {}) {
  write(Level::kWarn, m, f);
}
inline void error(const std::string& m, std::initializer_list<Field> f = {}) {
  write(Level::kError, m, f);
}

}  // namespace rl::log
