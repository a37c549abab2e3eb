// SPDX-License-Identifier: GPL-2.0-only
#include "cluster/tls.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstring>

namespace rl::cluster {
namespace {

// OpenSSL's error queue is per thread; take all of it so that the next call starts clean.
std::string drain_errors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

StoreError tls_error(const std::string& what) {
  std::string why = drain_errors();
  return StoreError{ErrorKind::kTls, 0, what + (why.empty() ? "" : ": " + why)};
}

bool is_ip(const std::string& s) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

}  // namespace

void SslDeleter::operator()(ssl_st* s) const { SSL_free(s); }

StoreResult<std::shared_ptr<const TlsContext>> TlsContext::create(const TlsOptions& o) {
  if (o.cert_file.empty() != o.key_file.empty())
    return StoreError{ErrorKind::kInvalid, EINVAL,
                      "TLS: a client certificate needs its key, and a key its certificate"};
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (!ctx) return tls_error("TLS: new context");
  std::shared_ptr<const TlsContext> out(new TlsContext(ctx, o.server_name));
  // Redis 6 and later speak TLS 1.2 and 1.3; nothing older is worth accepting.
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return tls_error("TLS: version");
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  // The connection appends commands while earlier ones are still being written, so a retried
  // write may start from a moved buffer and carry more bytes than the one that waited.
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
  if (o.ca_file.empty()) {
    if (SSL_CTX_set_default_verify_paths(ctx) != 1) return tls_error("TLS: the system's CAs");
  } else if (SSL_CTX_load_verify_locations(ctx, o.ca_file.c_str(), nullptr) != 1) {
    return tls_error("TLS: CA file '" + o.ca_file + "'");
  }
  if (!o.cert_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, o.cert_file.c_str()) != 1)
      return tls_error("TLS: certificate file '" + o.cert_file + "'");
    if (SSL_CTX_use_PrivateKey_file(ctx, o.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
      return tls_error("TLS: key file '" + o.key_file + "'");
    if (SSL_CTX_check_private_key(ctx) != 1)
      return tls_error("TLS: key file '" + o.key_file + "' does not match '" + o.cert_file + "'");
  }
  return out;
}

StoreResult<std::shared_ptr<const TlsContext>> TlsContext::create_if_enabled(const TlsOptions& o) {
  if (!o.enabled) return std::shared_ptr<const TlsContext>();
  auto made = create(o);
  if (!made) return made.error().wrap("redis options");
  return made;
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

StoreResult<Ssl> TlsContext::session(int fd, const std::string& host) const {
  ERR_clear_error();
  Ssl ssl(SSL_new(ctx_));
  if (!ssl) return tls_error("TLS: new session");
  if (SSL_set_fd(ssl.get(), fd) != 1) return tls_error("TLS: socket");
  const std::string& name = server_name_.empty() ? host : server_name_;
  if (is_ip(name)) {
    // An address is matched against the certificate's IP SANs, and never sent as SNI (RFC 6066).
    if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl.get()), name.c_str()) != 1)
      return tls_error("TLS: address to check '" + name + "'");
  } else {
    if (SSL_set_tlsext_host_name(ssl.get(), name.c_str()) != 1)
      return tls_error("TLS: server name '" + name + "'");
    if (SSL_set1_host(ssl.get(), name.c_str()) != 1)
      return tls_error("TLS: name to check '" + name + "'");
  }
  SSL_set_connect_state(ssl.get());
  return ssl;
}

std::string tls_failure(ssl_st* ssl, int ret, int saved_errno) {
  const int code = SSL_get_error(ssl, ret);
  if (long v = SSL_get_verify_result(ssl); v != X509_V_OK) {
    drain_errors();
    return std::string("certificate verify failed: ") + X509_verify_cert_error_string(v);
  }
  std::string queue = drain_errors();
  if (!queue.empty()) return queue;
  if (code == SSL_ERROR_ZERO_RETURN) return "the server closed the TLS session";
  if (code == SSL_ERROR_SYSCALL)
    return saved_errno != 0 ? std::strerror(saved_errno) : "the server hung up";
  return "TLS error " + std::to_string(code);
}

}  // namespace rl::cluster
