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

  // What the rule's window hashes hold for a key, as {newest window, count there, count in the
  // window before}; nullopt when neither hash has the key.
  std::optional<WindowState> stored(const std::string& rule, const std::string& key,
                                    uint64_t window_ms, const std::string& prefix = "rl") {
    std::optional<uint64_t> index[2], count[2];
    for (uint64_t parity : {0, 1}) {
      auto r = server_->command({"HMGET", cluster::window_hash(prefix, rule, window_ms, parity),
                                 std::string(cluster::kWindowField), key});
      EXPECT_TRUE(r && r->elements.size() == 2) << (r ? "" : r.error().str());
      if (!r || r->elements.size() != 2) return std::nullopt;
      if (r->elements[0].type != RedisValue::Type::kNil)
        index[parity] = std::stoull(r->elements[0].str);
      if (r->elements[1].type != RedisValue::Type::kNil)
        count[parity] = std::stoull(r->elements[1].str);
    }
    if (!count[0] && !count[1]) return std::nullopt;
    int newest = !index[0] || (index[1] && *index[1] > *index[0]) ? 1 : 0;
    WindowState s{*index[newest], count[newest].value_or(0), 0};
    if (index[1 - newest] && *index[1 - newest] + 1 == s.index)
      s.prev = count[1 - newest].value_or(0);
    return s;
  }

  std::unique_ptr<RedisServer> server_;
};

}  // namespace rl::testing
