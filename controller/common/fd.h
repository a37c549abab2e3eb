// SPDX-License-Identifier: GPL-2.0-only
// RAII owners for kernel handles: a file descriptor and an mmapped map region.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <utility>

namespace rl {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

class MmapRegion {
 public:
  MmapRegion() = default;
  MmapRegion(void* addr, size_t len) : addr_(addr), len_(len) {}
  MmapRegion(const MmapRegion&) = delete;
  MmapRegion& operator=(const MmapRegion&) = delete;
  MmapRegion(MmapRegion&& o) noexcept
      : addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0)) {}
  MmapRegion& operator=(MmapRegion&& o) noexcept {
    if (this != &o) {
      unmap();
      addr_ = std::exchange(o.addr_, nullptr);
      len_ = std::exchange(o.len_, 0);
    }
    return *this;
  }
  ~MmapRegion() { unmap(); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(addr_);
  }
  size_t size() const { return len_; }

 private:
  void unmap() {
    if (addr_) ::munmap(addr_, len_);
    addr_ = nullptr;
  }
  void* addr_ = nullptr;
  size_t len_ = 0;
};

}  // namespace rl
