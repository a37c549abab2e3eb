// SPDX-License-Identifier: GPL-2.0-only
// A failure that persists is logged once when it starts, then as a summary while it lasts (how
// many failures, for how long, the latest error), and once when it ends. A Redis that is down
// for an hour then costs the log a line a minute, not one per attempt, and no line is told from
// the last by a changing detail ("next attempt in N ms"). A failure of another kind starts a new
// run: that is news.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/log.h"

namespace rl::log {

class FailureLog {
 public:
  using Clock = std::chrono::steady_clock;
  struct Line {
    Level level = Level::kError;
    std::string msg;
    std::vector<Field> fields;
  };

  // `what` names the failing thing in each line: "cluster sync" gives "cluster sync failing",
  // "cluster sync still failing", "cluster sync recovered".
  explicit FailureLog(std::string what, Clock::duration summary_every = std::chrono::minutes(1))
      : what_(std::move(what)), every_(summary_every) {}

  // A failure of `kind` at `now`: the line to write, when there is one. `fields` go into the
  // first line of a run and into each summary.
  std::optional<Line> failed(Clock::time_point now, const std::string& kind,
                             const std::string& error, std::vector<Field> fields = {});
  // A success at `now`: the line that ends a run of failures, when one was under way.
  std::optional<Line> succeeded(Clock::time_point now);

  bool failing() const { return failures_ > 0; }

 private:
  std::string what_;
  Clock::duration every_;
  std::string kind_;
  uint64_t failures_ = 0;  // in the run under way
  Clock::time_point since_{}, last_line_{};
};

// Writes the line, if any.
void write(const std::optional<FailureLog::Line>& line);

}  // namespace rl::log
