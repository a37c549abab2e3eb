// SPDX-License-Identifier: GPL-2.0-only
// Typed views of BPF maps on the control path: each call is one syscall and returns errors as
// values carrying errno and the map's name.
#pragma once

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/fd.h"
#include "common/result.h"

namespace rl {

// Walks a hash map with BPF_MAP_LOOKUP_BATCH, a few thousand entries per syscall, calling
// fn(key, values) for each: `values` points at values_per_key V, one per possible CPU for a
// per-CPU map, else one.
template <typename K, typename V, typename Fn>
Status lookup_batches(int fd, const std::string& name, size_t values_per_key, Fn&& fn) {
  constexpr uint32_t kBatch = 4096;
  std::vector<K> keys(kBatch);
  std::vector<V> values(kBatch * values_per_key);
  K in{}, next{};
  bool first = true;
  for (;;) {
    uint32_t count = kBatch;
    LIBBPF_OPTS(bpf_map_batch_opts, o);
    int rc = bpf_map_lookup_batch(fd, first ? nullptr : &in, &next, keys.data(), values.data(),
                                  &count, &o);
    int err = rc ? errno : 0;
    for (uint32_t i = 0; i < count; i++) fn(keys[i], &values[i * values_per_key]);
    if (rc) {
      if (err == ENOENT) return {};  // the last batch
      return errno_error("read " + name, err);
    }
    in = next;
    first = false;
  }
}

template <typename K, typename V>
class MapRef {
 public:
  MapRef() = default;
  MapRef(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  // A map of a loaded object, named as the object names it.
  explicit MapRef(const bpf_map* m) : MapRef(bpf_map__fd(m), bpf_map__name(m)) {}

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }

  Status update(const K& key, const V& value, uint64_t flags = BPF_ANY) const {
    if (bpf_map_update_elem(fd_, &key, &value, flags) != 0) return errno_error("update " + name_);
    return {};
  }
  Result<V> lookup(const K& key) const {
    V v{};
    if (bpf_map_lookup_elem(fd_, &key, &v) != 0) return errno_error("lookup " + name_);
    return v;
  }
  // The key's value, or nullopt when the map does not hold the key.
  Result<std::optional<V>> find(const K& key) const {
    V v{};
    if (bpf_map_lookup_elem(fd_, &key, &v) == 0) return std::optional<V>(v);
    if (errno == ENOENT) return std::optional<V>();
    return errno_error("lookup " + name_);
  }
  Status remove(const K& key) const {
    if (bpf_map_delete_elem(fd_, &key) != 0 && errno != ENOENT)
      return errno_error("delete " + name_);
    return {};
  }
  Result<std::vector<K>> keys() const {
    std::vector<K> out;
    K cur{}, next{};
    const K* prev = nullptr;
    while (bpf_map_get_next_key(fd_, prev, &next) == 0) {
      out.push_back(next);
      cur = next;
      prev = &cur;
    }
    if (errno != ENOENT) return errno_error("iterate " + name_);
    return out;
  }
  // Every entry of a hash map, a few thousand per syscall (BPF_MAP_LOOKUP_BATCH).
  Result<std::vector<std::pair<K, V>>> entries() const {
    std::vector<std::pair<K, V>> out;
    Status s = lookup_batches<K, V>(fd_, name_, 1,
                                    [&](const K& k, const V* v) { out.emplace_back(k, *v); });
    if (!s) return s.error();
    return out;
  }
  // Sets keys[i] to values[i] in one syscall (BPF_MAP_UPDATE_BATCH).
  Status update(const std::vector<K>& keys, const std::vector<V>& values) const {
    if (keys.empty()) return {};
    auto count = static_cast<uint32_t>(keys.size());
    LIBBPF_OPTS(bpf_map_batch_opts, o);
    if (bpf_map_update_batch(fd_, keys.data(), values.data(), &count, &o) != 0)
      return errno_error("update " + name_ + " (" + std::to_string(count) + " of " +
                         std::to_string(keys.size()) + " written)");
    return {};
  }
  // Deletes `keys` in one syscall (BPF_MAP_DELETE_BATCH); all of them must exist.
  Status remove(const std::vector<K>& keys) const {
    if (keys.empty()) return {};
    auto count = static_cast<uint32_t>(keys.size());
    LIBBPF_OPTS(bpf_map_batch_opts, o);
    if (bpf_map_delete_batch(fd_, keys.data(), &count, &o) != 0)
      return errno_error("delete from " + name_);
    return {};
  }

 private:
  int fd_ = -1;
  std::string name_;
};

// Per-CPU array values: one V per possible CPU, summed by the caller.
template <typename V>
class PerCpuArrayRef {
 public:
  PerCpuArrayRef() = default;
  PerCpuArrayRef(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
    int n = libbpf_num_possible_cpus();
    ncpus_ = n > 0 ? n : 1;
  }
  explicit PerCpuArrayRef(const bpf_map* m) : PerCpuArrayRef(bpf_map__fd(m), bpf_map__name(m)) {}
  Result<std::vector<V>> lookup(uint32_t idx) const {
    std::vector<V> v(ncpus_);
    if (bpf_map_lookup_elem(fd_, &idx, v.data()) != 0) return errno_error("lookup " + name_);
    return v;
  }
  Status reset(uint32_t idx) const {
    std::vector<V> v(ncpus_);
    if (bpf_map_update_elem(fd_, &idx, v.data(), BPF_ANY) != 0)
      return errno_error("reset " + name_);
    return {};
  }
  size_t cpus() const { return ncpus_; }

 private:
  int fd_ = -1;
  std::string name_;
  size_t ncpus_ = 1;
};

// mmap an array map created with BPF_F_MMAPABLE.
inline Result<MmapRegion> mmap_array(const bpf_map* map) {
  size_t elem = (bpf_map__value_size(map) + 7) & ~size_t{7};
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t len = (elem * bpf_map__max_entries(map) + page - 1) & ~(page - 1);
  void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
  if (p == MAP_FAILED) return errno_error(std::string("mmap ") + bpf_map__name(map));
  return MmapRegion(p, len);
}

// mmaps each map (mmap_array) into its region, in order.
inline Status mmap_arrays(std::initializer_list<std::pair<const bpf_map*, MmapRegion*>> maps) {
  for (auto [map, region] : maps) {
    auto r = mmap_array(map);
    if (!r) return r.error();
    *region = std::move(*r);
  }
  return {};
}

}  // namespace rl
