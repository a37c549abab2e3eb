// SPDX-License-Identifier: GPL-2.0-only
#include "test_pki.h"

#include <vector>

#include "process.h"

namespace rl::testing {
namespace {

Status openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  Output out = run(argv, 30s);
  if (!out.ok()) return Error{0, "openssl " + args[0] + ": " + out.describe()};
  return Status::Ok();
}

// A self-signed CA: its certificate and key.
Status make_ca(const std::string& base, const std::string& name) {
  return openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                  "-nodes", "-keyout", base + ".key", "-out", base + ".crt", "-days", "2", "-subj",
                  "/CN=" + name});
}

// A leaf signed by the CA at `ca`, with the extensions in `ext` (openssl x509 -extfile).
Status make_leaf(const std::string& dir, const std::string& base, const std::string& ca,
                 const std::string& cn, const std::string& ext) {
  const std::string ext_file = base + ".ext";
  if (Status s = write_text(ext_file, ext); !s) return s;
  if (Status s =
          openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                   "-keyout", base + ".key", "-out", base + ".csr", "-subj", "/CN=" + cn});
      !s)
    return s;
  return openssl({"x509", "-req", "-in", base + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
                  "-CAcreateserial", "-CAserial", dir + "/ca.srl", "-out", base + ".crt", "-days",
                  "2", "-extfile", ext_file});
}

}  // namespace

Result<TestPki> TestPki::create() {
  TestPki pki;
  auto dir = TempDir::create("rl-pki-");
  if (!dir) return dir.error();
  pki.dir.emplace(std::move(*dir));
  const std::string d = pki.dir->path();
  if (Status s = make_ca(d + "/ca", "rl test CA"); !s) return s.error();
  if (Status s = make_ca(d + "/other-ca", "another CA"); !s) return s.error();
  if (Status s = make_leaf(d, d + "/server", d + "/ca", "redis.test",
                           "subjectAltName=IP:127.0.0.1,DNS:redis.test\n"
                           "extendedKeyUsage=serverAuth,clientAuth\n");
      !s)
    return s.error();
  if (Status s = make_leaf(d, d + "/client", d + "/ca", "rld", "extendedKeyUsage=clientAuth\n"); !s)
    return s.error();
  pki.ca = d + "/ca.crt";
  pki.other_ca = d + "/other-ca.crt";
  pki.server_cert = d + "/server.crt";
  pki.server_key = d + "/server.key";
  pki.client_cert = d + "/client.crt";
  pki.client_key = d + "/client.key";
  return pki;
}

}  // namespace rl::testing
