// SPDX-License-Identifier: GPL-2.0-only
// Cluster-wide limits over TLS, end to end: a redis-server with a TLS port only, requiring
// client certificates, runs in the lab's client namespace on 192.0.2.1, with a private CA made
// by openssl. Three rld nodes configured by rld.yaml alone (CA, client certificate, server name)
// hold the fleet limit through it; a node given the wrong CA says why it cannot sync.
#include <gtest/gtest.h>

#include "cluster_lab.h"
#include "test_pki.h"

namespace rl::testing {
namespace {

class TlsLab : public ClusterLab {
 protected:
  TlsLab() : ClusterLab(/*local_redis=*/false) {}

  void SetUp() override {
    ClusterLab::SetUp();
    if (HasFatalFailure()) return;
    auto pki = TestPki::create();
    ASSERT_TRUE(pki) << pki.error().str();
    pki_.emplace(std::move(*pki));
    const std::string host = estate_host();
    if (HasFailure()) return;
    auto s = RedisServer::start({.host = host,
                                 .netns = lab_->client_ns(),
                                 .tls_cert = pki_->server_cert,
                                 .tls_key = pki_->server_key,
                                 .tls_ca = pki_->ca,
                                 .tls_auth_clients = true});
    ASSERT_TRUE(s) << s.error().str();
    server_ = std::move(*s);
    // The certificate names 127.0.0.1 and redis.test, not the lab's address: the name is given.
    address_ = "  redis_host: " + host + "\n  redis_port: " + std::to_string(server_->port()) +
               "\n  redis_tls: true\n  redis_tls_server_name: redis.test\n" +
               "  redis_tls_cert_file: " + pki_->client_cert + "\n" +
               "  redis_tls_key_file: " + pki_->client_key + "\n";
  }

  void TearDown() override {
    ClusterLab::TearDown();  // the nodes first, then the server
    server_.reset();
  }

  std::optional<TestPki> pki_;
  std::unique_ptr<RedisServer> server_;
  std::string address_;
};

TEST_F(TlsLab, TheFleetLimitHoldsOverTls) {
  use_config(address_ + "  redis_tls_ca_file: " + pki_->ca + "\n");
  for (size_t i = 0; i < kNodes; i++) start_node(i, kFleetPolicy);
  ASSERT_TRUE(wait_for(10s, [&] {
    for (size_t i = 0; i < kNodes; i++)
      if (!ctl(i, {"cluster", "status"}).value("redis_up", false)) return false;
    return true;
  })) << ctl(0, {"cluster", "status"}).dump();
  expect_fleet_limit("198.18.57.1", "over TLS");
  Json st = ctl(0, {"cluster", "status"});
  EXPECT_NE(st.value("redis", std::string()).find("over TLS"), std::string::npos) << st.dump();
  EXPECT_EQ(st["last_error"], "") << st.dump();
  EXPECT_EQ(st["peers"].size(), kNodes) << "heartbeats and peers over TLS";
  // Every node's connection is a TLS client of the server (INFO clients over its Unix socket
  // counts the test's own connection too).
  auto clients = server_->info_number("clients", "connected_clients");
  ASSERT_TRUE(clients) << clients.error().str();
  EXPECT_GE(*clients, kNodes + 1);
}

TEST_F(TlsLab, AServerFromAnotherCaIsRefusedAndNamed) {
  use_config(address_ + "  redis_tls_ca_file: " + pki_->other_ca + "\n");
  start_node(0, kFleetPolicy);
  Json st;
  ASSERT_TRUE(wait_for(10s, [&] {
    st = ctl(0, {"cluster", "status"});
    return st["errors"].value("tls", 0) > 0;
  })) << st.dump();
  EXPECT_FALSE(st.value("redis_up", true)) << st.dump();
  EXPECT_NE(st["last_error"].get<std::string>().find("certificate verify failed"),
            std::string::npos)
      << st.dump();
}

}  // namespace
}  // namespace rl::testing
