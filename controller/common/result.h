// SPDX-License-Identifier: GPL-2.0-only
// Errors as values on the control path: an Error carries errno (0 when none applies) and a
// message with its context; Result<T> is a value or an Error (or, for a module whose callers
// decide on what went wrong, its own error type derived from Error: Result<T, E>).
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <variant>

namespace rl {

struct Error {
  int err = 0;
  std::string message;

  // "context: message" chains, outermost first.
  Error wrap(const std::string& context) const { return Error{err, context + ": " + message}; }
  std::string str() const {
    if (err == 0) return message;
    return message + " (" + std::strerror(err) + ")";
  }
};

inline Error errno_error(const std::string& what, int e = errno) {
  return Error{e < 0 ? -e : e, what};
}

template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(E error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const E& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, E> v_;
};

template <typename E = Error>
class [[nodiscard]] BasicStatus {
 public:
  BasicStatus() = default;
  BasicStatus(E error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  static BasicStatus Ok() { return BasicStatus(); }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const E& error() const { return error_; }

 private:
  E error_;
  bool ok_ = true;
};

using Status = BasicStatus<>;

}  // namespace rl
