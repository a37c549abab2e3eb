// SPDX-License-Identifier: GPL-2.0-only
// TLS to Redis (servers, sentinels and cluster nodes alike). A store makes its context once, from
// files read when it is created, so that a missing or unreadable file is refused with the
// configuration instead of failing every connection later. The server's certificate is always
// verified: against the CA file, or the system's store when none is named.
#pragma once

#include <memory>
#include <string>

#include "cluster/error.h"

struct ssl_ctx_st;
struct ssl_st;

namespace rl::cluster {

struct TlsOptions {
  bool enabled = false;
  std::string ca_file;    // PEM: the CAs the server's chain must end at; "" for the system's
  std::string cert_file;  // PEM: a client certificate, for servers that ask for one
  std::string key_file;   // PEM: its private key; set with cert_file or not at all
  // The name the server's certificate must carry, and the SNI sent. "" checks the address
  // connected to instead (an IP address then needs an IP SAN).
  std::string server_name;
};

struct SslDeleter {
  void operator()(ssl_st* s) const;
};
using Ssl = std::unique_ptr<ssl_st, SslDeleter>;

class TlsContext {
 public:
  static StoreResult<std::shared_ptr<const TlsContext>> create(const TlsOptions& o);
  // create() when o.enabled, else null: what a store keeps for plain connections.
  static StoreResult<std::shared_ptr<const TlsContext>> create_if_enabled(const TlsOptions& o);

  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;
  ~TlsContext();

  // A client session on a connected socket, set to check the certificate against the server
  // name (or `host`); the handshake is the caller's, so that its deadline holds.
  StoreResult<Ssl> session(int fd, const std::string& host) const;

 private:
  TlsContext(ssl_ctx_st* ctx, std::string server_name)
      : ctx_(ctx), server_name_(std::move(server_name)) {}
  ssl_ctx_st* ctx_;
  std::string server_name_;
};

// Why a TLS call on `ssl` failed with `ret`: the certificate check's reason when that is what
// failed, else OpenSSL's error queue (which this empties), else errno.
std::string tls_failure(ssl_st* ssl, int ret, int saved_errno);

}  // namespace rl::cluster
