// SPDX-License-Identifier: GPL-2.0-only
// Shared by the tests that need Redis: a fresh server per test, store options that point at
// it, and a look at a key's stored window.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "cluster/redis_store.h"
#include "cluster/sync_batch.h"
#include "redis_server.h"
#include "window_model.h"

namespace rl::testing {

// A window longer than any test: its keys never roll over while the test reads them.
inline constexpr uint64_t kHourWindowMs = 3'600'000;

inline cluster::KeyDelta key_delta(const std::string& rule, const std::string& key, uint64_t delta,
                                   uint64_t limit, uint64_t window_ms) {
  return cluster::KeyDelta{rule, key, delta, limit, window_ms};
}

class RedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(RedisServer::binary().empty())
        << "redis-server is required: run scripts/install-deps.sh";
    auto s = RedisServer::start(server_options());
    ASSERT_TRUE(s) << s.error().str();
    server_ = std::move(*s);
  }

  virtual RedisServerOptions server_options() const { return {}; }

  cluster::RedisOptions options() const {
    cluster::RedisOptions o;
    o.port = server_->port() ? server_->port() : 6379;
    o.unix_socket = server_->unix_socket();
    o.password = server_->password();
    return o;
  }

  // nullptr (with a test failure) if the store cannot connect.
  std::unique_ptr<cluster::RedisStore> store(const cluster::RedisOptions& o) {
    auto s = cluster::RedisStore::connect(o);
    EXPECT_TRUE(s) << s.error().str();
    return s ? std::move(*s) : nullptr;
  }
  std::unique_ptr<cluster::RedisStore> store() { return store(options()); }

  // What the rule's hash holds for a key, as {newest window, count there, count in the window
  // before}; nullopt when it does not have the key.
  std::optional<WindowState> stored(const std::string& rule, const std::string& key,
                                    uint64_t window_ms, const std::string& prefix = "rl") {
    auto r = server_->command({"HGET", cluster::rule_hash(prefix, rule, window_ms), key});
    EXPECT_TRUE(r) << r.error().str();
    if (!r || r->type == RedisValue::Type::kNil) return std::nullopt;
    auto s = unpack_counts(r->str);
    EXPECT_TRUE(s) << "a value of " << r->str.size() << " bytes";
    return s;
  }

  // How many fields the rule's hash holds (keys and the script's bookkeeping); -1, with a test
  // failure, if Redis cannot tell.
  long long hash_fields(const std::string& rule, uint64_t window_ms) {
    auto r = server_->command({"HLEN", cluster::rule_hash("rl", rule, window_ms)});
    EXPECT_TRUE(r) << r.error().str();
    return r ? r->integer : -1;
  }

  // Stores `s` as the key's counts, as the sync script would have, expiry included. The hash
  // may carry an earlier expiry from another key's sync, due any moment: it is pushed out to
  // the seed's own first (the script, atomic, needs no such care), or the seed could be written
  // into a hash that expires a moment later and be taken with it.
  void seed(const std::string& rule, const std::string& key, uint64_t window_ms,
            const WindowState& s) {
    const std::string hash = cluster::rule_hash("rl", rule, window_ms);
    auto e = server_->command({"PEXPIREAT", hash, std::to_string((s.index + 2) * window_ms), "GT"});
    ASSERT_TRUE(e && !e->is_error());
    auto r = server_->command({"HSET", hash, key, pack_counts(s)});
    ASSERT_TRUE(r && !r->is_error());
  }

  std::unique_ptr<RedisServer> server_;
};

}  // namespace rl::testing
