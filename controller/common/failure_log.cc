// SPDX-License-Identifier: GPL-2.0-only
#include "common/failure_log.h"

#include <cmath>

namespace rl::log {
namespace {

std::string seconds(FailureLog::Clock::duration d) {
  return std::to_string(std::llround(std::chrono::duration<double>(d).count()));
}

}  // namespace

std::optional<FailureLog::Line> FailureLog::failed(Clock::time_point now, const std::string& kind,
                                                   const std::string& error,
                                                   std::vector<Field> fields) {
  if (failures_ == 0 || kind != kind_) {
    kind_ = kind;
    failures_ = 1;
    since_ = last_line_ = now;
    fields.insert(fields.begin(), {{"kind", kind}, {"error", error}});
    return Line{Level::kError, what_ + " failing", std::move(fields)};
  }
  failures_++;
  if (now - last_line_ < every_) return std::nullopt;
  last_line_ = now;
  fields.insert(fields.begin(), {{"kind", kind},
                                 {"failures", std::to_string(failures_)},
                                 {"for_s", seconds(now - since_)},
                                 {"error", error}});
  return Line{Level::kWarn, what_ + " still failing", std::move(fields)};
}

std::optional<FailureLog::Line> FailureLog::succeeded(Clock::time_point now) {
  if (failures_ == 0) return std::nullopt;
  Line line{
      Level::kInfo,
      what_ + " recovered",
      {{"kind", kind_}, {"failures", std::to_string(failures_)}, {"for_s", seconds(now - since_)}}};
  failures_ = 0;
  return line;
}

void write(const std::optional<FailureLog::Line>& line) {
  if (line) write(line->level, line->msg, line->fields);
}

}  // namespace rl::log
