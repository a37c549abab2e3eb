// SPDX-License-Identifier: GPL-2.0-only
// rl beside nginx, as docs/layering.md shows it: rld on the server's veth with
// docs/examples/rl-layering.yaml, nginx behind it running docs/examples/nginx-layering.conf as
// it is (included in a minimal http block, beside a stand-in application on 127.0.0.1:8080).
// A SYN flood from spoofed sources hits nginx's port while one client sends POST /rooms far over
// its per-path limit and another stays within it: rl drops the flood beyond its per-/24 bucket,
// nginx answers the first client 429 with Retry-After and the second 200 every time. The doc's
// other rl policies and nginx blocks are checked too: each must pass rlctl policy validate or
// nginx -t, and the doc must quote both example files as they are.
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rld_fixture.h"

namespace rl::testing {
namespace {

const std::string kDoc = std::string(RL_SOURCE_DIR) + "/docs/layering.md";
const std::string kRlExample = std::string(RL_SOURCE_DIR) + "/docs/examples/rl-layering.yaml";
const std::string kNginxExample = std::string(RL_SOURCE_DIR) + "/docs/examples/nginx-layering.conf";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool nginx_installed() { return run({"sh", "-c", "command -v nginx"}).ok(); }

// A whole nginx.conf around `include`d http-level configuration: every path nginx writes under
// `dir`, and the stand-in application that nginx-layering.conf's upstream names.
std::string nginx_conf(const std::filesystem::path& dir, const std::string& include) {
  std::filesystem::create_directories(dir / "tmp");
  std::string conf = R"(worker_processes 1;
user root root;
pid @DIR@/nginx.pid;
error_log @DIR@/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path @DIR@/tmp/body;
  proxy_temp_path @DIR@/tmp/proxy;
  fastcgi_temp_path @DIR@/tmp/fastcgi;
  uwsgi_temp_path @DIR@/tmp/uwsgi;
  scgi_temp_path @DIR@/tmp/scgi;
  server { listen 127.0.0.1:8080; location / { return 200 "ok\n"; } }
  include @INCLUDE@;
}
)";
  for (auto [name, value] :
       {std::pair<std::string, std::string>{"@DIR@", dir.string()}, {"@INCLUDE@", include}}) {
    for (size_t at; (at = conf.find(name)) != std::string::npos;)
      conf.replace(at, name.size(), value);
  }
  return conf;
}

// nginx's argv for a configuration written into `dir` (the -p prefix, -e its error log).
std::vector<std::string> nginx_argv(const std::filesystem::path& dir, const std::string& conf_text,
                                    std::vector<std::string> extra) {
  const std::string conf = (dir / "nginx.conf").string();
  std::ofstream(conf) << conf_text;
  std::vector<std::string> argv = {
      "nginx", "-p", dir.string(), "-c", conf, "-e", (dir / "error.log").string()};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// The fenced blocks of a Markdown text in one language, fences indented or not (in lists).
std::vector<std::string> fenced_blocks(const std::string& text, const std::string& lang) {
  std::vector<std::string> blocks;
  std::istringstream in(text);
  std::string line, indent, body;
  bool inside = false, wanted = false;
  while (std::getline(in, line)) {
    size_t lead = line.find_first_not_of(' ');
    bool fence = lead != std::string::npos && line.compare(lead, 3, "```") == 0;
    if (!inside && fence) {
      inside = true;
      indent = line.substr(0, lead);
      wanted = line.substr(lead + 3) == lang;
      body.clear();
    } else if (inside && fence && line == indent + "```") {
      inside = false;
      if (wanted) blocks.push_back(body);
    } else if (inside) {
      body += (line.compare(0, indent.size(), indent) == 0 ? line.substr(indent.size()) : line);
      body += '\n';
    }
  }
  return blocks;
}

// Whether a YAML block is an rl policy: its first line that is not a comment names one of a
// policy's top-level keys (the doc's Envoy blocks start with routes: or domain:).
bool is_rl_policy(const std::string& yaml) {
  std::istringstream in(yaml);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    for (const char* key : {"rules:", "sets:", "allow:", "deny:", "version:", "malformed:"})
      if (line.rfind(key, 0) == 0) return true;
    return false;
  }
  return false;
}

TEST(LayeringDoc, QuotesTheExampleFilesAsTheyAre) {
  const std::string doc = read_file(kDoc);
  ASSERT_FALSE(doc.empty()) << kDoc;
  for (const std::string& path : {kRlExample, kNginxExample}) {
    const std::string example = read_file(path);
    ASSERT_FALSE(example.empty()) << path;
    EXPECT_NE(doc.find(example), std::string::npos) << kDoc << " quotes " << path << " whole";
  }
}

TEST(LayeringDoc, EveryPolicyAndNginxBlockIsValid) {
  ASSERT_TRUE(nginx_installed()) << "nginx is missing (scripts/install-deps.sh)";
  const std::string doc = read_file(kDoc);
  auto dir = std::filesystem::path("/tmp") / ("rl-layering-doc-" + std::to_string(::getpid()) +
                                              "-" + std::to_string(::time(nullptr)));
  std::filesystem::create_directories(dir);

  size_t policies = 0;
  for (const std::string& yaml : fenced_blocks(doc, "yaml")) {
    if (!is_rl_policy(yaml)) continue;
    const std::string file = (dir / ("policy-" + std::to_string(++policies) + ".yaml")).string();
    std::ofstream(file) << yaml;
    auto out = run({RL_RLCTL_PATH, "policy", "validate", file});
    EXPECT_TRUE(out.ok()) << out.describe() << out.out << "\n" << yaml;
  }
  EXPECT_EQ(policies, 4u) << "the example, the office, the WebSocket port, the CDN";

  size_t confs = 0;
  for (const std::string& block : fenced_blocks(doc, "nginx")) {
    auto at = dir / ("nginx-" + std::to_string(++confs));
    std::filesystem::create_directories(at);
    const std::string snippet = (at / "snippet.conf").string();
    std::ofstream(snippet) << block;
    auto out = run(nginx_argv(at, nginx_conf(at, snippet), {"-t"}));
    EXPECT_TRUE(out.ok()) << out.describe() << "\n" << block;
  }
  EXPECT_EQ(confs, 2u) << "the example and the real-address block";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

constexpr uint64_t kFloodSyns = 30000, kFloodRate = 5000;
// docs/examples/rl-layering.yaml: the per-/24 limit every spoofed source of the flood shares.
constexpr double kPer24Burst = 400, kPer24Rate = 200;

class LayeringLabTest : public RldTest {
 protected:
  void TearDown() override {
    nginx_.reset();  // before the fixture removes the directory nginx writes in
    RldTest::TearDown();
  }

  // nginx in the server namespace with the example included; returns once it answers.
  void start_nginx() {
    ASSERT_TRUE(nginx_installed()) << "nginx is missing (scripts/install-deps.sh)";
    auto at = dir_ / "nginx";
    std::filesystem::create_directories(at);
    auto argv = nginx_argv(at, nginx_conf(at, kNginxExample), {"-g", "daemon off;"});
    auto p = lab_->spawn_in(lab_->server_ns(), argv);
    ASSERT_TRUE(p.ok()) << p.error().str();
    nginx_ = std::make_unique<Process>(std::move(*p));
    for (int i = 0; i < 100; i++) {
      if (lab_->run(lab_->client_ns(), {"curl", "-sf", "-o", "/dev/null", "--max-time", "1",
                                        url(lab_->pair().server.ipv4, "/")})
              .ok())
        return;
      std::this_thread::sleep_for(50ms);
    }
    FAIL() << "nginx does not answer:\n" << nginx_->err() << read_file((at / "error.log").string());
  }

  static std::string url(const std::string& host, const std::string& path) {
    bool v6 = host.find(':') != std::string::npos;
    return "http://" + (v6 ? "[" + host + "]" : host) + path;
  }

  // curl's argv for `count` POSTs to /rooms on one connection; each prints "CODE RETRY-AFTER".
  static std::vector<std::string> posts(const std::string& host, int count,
                                        std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {
        "curl", "-sg", "--max-time", "5", "-d", "", "-w", "%{http_code} %header{retry-after}\\n"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    for (int i = 0; i < count; i++) {  // -o applies to one URL
      argv.insert(argv.end(), {"-o", "/dev/null", url(host, "/rooms")});
    }
    return argv;
  }

  // The lines curl printed, one per request.
  static std::vector<std::string> lines(const std::string& out) {
    std::vector<std::string> v;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) v.push_back(line);
    return v;
  }

  std::unique_ptr<Process> nginx_;
};

TEST_F(LayeringLabTest, SynFloodDroppedWhileNginxLimitsPerPath) {
  write_policy("layering.yaml", read_file(kRlExample));
  start_rld();
  start_nginx();
  const Pair& pair = lab_->pair();
  Json before = rule_stats("web-syn");  // nginx's readiness checks made connections already

  // Spoofed SYNs to nginx's port from 250 addresses of one /24, 6 s at 5,000 per second.
  SendSpec flood_spec{.src = "198.18.0.0/24",
                      .sources = 250,
                      .proto = "tcp",
                      .dport = 80,
                      .syn = true,
                      .count = kFloodSyns,
                      .rate = kFloodRate,
                      .max_seconds = 10};
  auto flood = lab_->spawn_in(lab_->client_ns(), rlsend_argv(pair, flood_spec));
  ASSERT_TRUE(flood.ok()) << flood.error().str();
  std::this_thread::sleep_for(500ms);  // the flood under way before the clients start

  // Within the limit: four POSTs at 2 per second over IPv6, from the client's own address.
  auto polite = lab_->spawn_in(lab_->client_ns(), posts(pair.server.ipv6, 4, {"--rate", "2/s"}));
  ASSERT_TRUE(polite.ok()) << polite.error().str();
  // Far over it: twenty POSTs back to back over IPv4, another address to nginx.
  auto eager = lab_->run(lab_->client_ns(), posts(pair.server.ipv4, 20), 20s);
  auto calm = polite->wait(20s);
  EXPECT_TRUE(flood->running()) << "the clients were answered while the flood went on";

  ASSERT_TRUE(eager.ok()) << eager.describe();
  auto answers = lines(eager.out);
  ASSERT_EQ(answers.size(), 20u) << eager.out;
  size_t ok = 0, refused = 0;
  for (const auto& a : answers) {
    if (a == "200 ") ok++;
    if (a == "429 1") refused++;  // 429 with Retry-After: 1
  }
  EXPECT_EQ(ok + refused, 20u) << eager.out;
  EXPECT_GE(ok, 5u) << "one request and a burst of 4 pass at once";
  EXPECT_GE(refused, 10u) << eager.out;
  for (size_t i = 0; i < 5; i++) EXPECT_EQ(answers[i], "200 ") << "request " << i;

  ASSERT_TRUE(calm.ok()) << calm.describe();
  EXPECT_EQ(lines(calm.out), std::vector<std::string>(4, "200 ")) << calm.out;

  auto sent = flood->wait(15s);
  ASSERT_TRUE(sent.ok()) << sent.describe();
  auto summary = parse_send_summary(sent.out);
  ASSERT_TRUE(summary.ok()) << sent.out;
  EXPECT_EQ(summary->sent, kFloodSyns);

  // The flood gets the per-/24 bucket through, and the clients' two connections; rl drops the
  // rest before the stack sees it.
  Json after = rule_stats("web-syn");
  auto grew = [&](const char* counter) {
    return after[counter].get<uint64_t>() - before[counter].get<uint64_t>();
  };
  const uint64_t passed = grew("passed_packets"), dropped = grew("dropped_packets");
  const double bound = kPer24Burst + kPer24Rate * (summary->seconds + 1) + 2;
  EXPECT_EQ(grew("matched_packets"), kFloodSyns + 2) << "the flood and one SYN per client";
  EXPECT_LE(passed, bound) << "flood sent for " << summary->seconds << " s";
  EXPECT_GE(dropped, kFloodSyns - bound);
  EXPECT_TRUE(nginx_->running()) << nginx_->err();
  printf(
      "flood: %lu SYNs in %.1f s, rl passed %lu (bound %.0f) and dropped %lu; nginx: %zu x 200 "
      "and %zu x 429 to the eager client\n",
      (unsigned long)summary->sent, summary->seconds, (unsigned long)passed, bound,
      (unsigned long)dropped, ok, refused);
}

}  // namespace
}  // namespace rl::testing
