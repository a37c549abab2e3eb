// SPDX-License-Identifier: GPL-2.0-only
#include "daemon/policy/load_worker.h"

#include <malloc.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

namespace rl::daemon {

LoadWorker::LoadWorker() : event_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

LoadWorker::~LoadWorker() {
  if (thread_.joinable()) thread_.join();
}

void LoadWorker::submit(Job job) {
  queue_.push_back(std::move(job));
  if (!thread_.joinable()) start_next();
}

void LoadWorker::start_next() {
  if (queue_.empty()) return;
  current_ = std::move(queue_.front());
  queue_.pop_front();
  answered_ = false;
  finished_ = false;
  if (current_.start) current_.start();
  deadline_ = Clock::now() + current_.timeout;
  // The thread sees only current_.work (not replaced until it is joined) and the eventfd.
  thread_ = std::thread([this] {
    current_.work();
    finished_ = true;
    uint64_t one = 1;
    (void)!::write(event_.get(), &one, sizeof(one));
  });
}

void LoadWorker::on_ready() {
  uint64_t n;
  while (::read(event_.get(), &n, sizeof(n)) > 0) {
  }
  if (!thread_.joinable() || !finished_) return;
  thread_.join();
  // Taken out first: `done` may submit a job, which then starts at once.
  Job job = std::move(current_);
  current_ = Job{};
  if (!answered_) job.done(false);
  job = Job{};
  // A load allocates up to a few hundred MB in the worker's malloc arena; give them back now
  // rather than keep them as rld's resident size.
  ::malloc_trim(0);
  if (!thread_.joinable()) start_next();
}

void LoadWorker::check_deadline() {
  if (!thread_.joinable() || answered_ || Clock::now() < deadline_) return;
  answered_ = true;
  current_.done(true);
}

std::optional<LoadWorker::Clock::time_point> LoadWorker::deadline() const {
  if (!thread_.joinable() || answered_) return std::nullopt;
  return deadline_;
}

void LoadWorker::drain() {
  while (thread_.joinable() && !(answered_ && queue_.empty())) {
    int ms = 100;
    if (auto d = deadline()) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*d - Clock::now()).count();
      ms = static_cast<int>(std::clamp<int64_t>(left, 0, 100));
    }
    pollfd p{event_.get(), POLLIN, 0};
    ::poll(&p, 1, ms);
    on_ready();
    check_deadline();
  }
}

}  // namespace rl::daemon
