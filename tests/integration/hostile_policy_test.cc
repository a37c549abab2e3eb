// Hostile files where policies are read: links to devices and to other programs' secrets, FIFOs,
// dangling and looping links, read errors, directories, huge files, deep nesting, alias bombs.
// `rlctl policy validate` must refuse each quickly with exit 1, and a live rld must reject each
// reload like any broken policy, keep the rule set in force, keep answering, and never copy a
// byte of a secret into its output or log.
#include <sys/stat.h>

#include <fstream>

#include "rld_fixture.h"

namespace rl::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kSecret[] = "rl-secret-marker-5d1c";  // must never appear in output or logs

class HostilePolicyTest : public RldTest {
 protected:
  // Each hostile entry, created in `dir` (named *.yaml, so the loader considers it).
  void plant(const fs::path& dir) {
    fs::path outside = dir_ / "outside";
    fs::create_directories(outside);
    std::ofstream(outside / "secret") << "root:" << kSecret << ":20228:0:99999:7:::\n"
                                      << "daemon:*:20228:0:99999:7:::\n";
    ::chmod((outside / "secret").c_str(), 0600);
    fs::create_symlink("/dev/zero", dir / "zero.yaml");
    fs::create_symlink("/dev/urandom", dir / "urandom.yaml");
    fs::create_symlink(outside / "secret", dir / "shadow.yaml");
    fs::create_symlink(dir / "nowhere", dir / "dangling.yaml");
    fs::create_symlink(dir / "loop-b.yaml", dir / "loop-a.yaml");
    fs::create_symlink(dir / "loop-a.yaml", dir / "loop-b.yaml");
    ::mkfifo((dir / "fifo.yaml").c_str(), 0600);
    fs::create_directories(dir / "dir.yaml");
    {
      std::ofstream big(dir / "big.yaml");
      for (int i = 0; i < 200'000; i++)
        big << "junk" << i << ": 0123456789012345678901234567890123\n";
    }
    {
      std::ofstream huge(dir / "huge.yaml");
      std::string line(1023, 'x');
      for (int i = 0; i < 17 * 1024; i++) huge << line << "\n";
    }
    std::ofstream(dir / "deep.yaml") << "rules: " << std::string(100'000, '[') << "\n";
    std::ofstream bomb(dir / "bomb.yaml");
    bomb << "sets:\n  a0: &a0 [198.18.0.1, 198.18.0.2, 198.18.0.3, 198.18.0.4, 198.18.0.5]\n";
    for (int i = 1; i < 10; i++) {
      bomb << "  a" << i << ": &a" << i << " [";
      for (int j = 0; j < 10; j++) bomb << (j ? ", " : "") << "*a" << i - 1;
      bomb << "]\n";
    }
  }

  static std::vector<std::string> hostile_names() {
    return {"zero.yaml", "urandom.yaml", "shadow.yaml", "dangling.yaml", "loop-a.yaml", "fifo.yaml",
            "dir.yaml",  "big.yaml",     "huge.yaml",   "deep.yaml",     "bomb.yaml"};
  }
};

TEST_F(HostilePolicyTest, ValidateRefusesEachQuickly) {
  fs::path dir = dir_ / "hostile";
  fs::create_directories(dir);
  plant(dir);
  std::vector<std::string> files;
  for (const auto& n : hostile_names()) files.push_back((dir / n).string());
  files.push_back("/proc/self/mem");  // opens, then fails to read
  files.push_back("/proc/kcore");     // larger than any policy
  for (const auto& f : files) {
    auto t0 = std::chrono::steady_clock::now();
    Output out = run({RL_RLCTL_PATH, "policy", "validate", f}, 10s);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    SCOPED_TRACE(f);
    EXPECT_FALSE(out.timed_out);
    EXPECT_EQ(out.code, 1) << out.describe();
    EXPECT_LT(s, 5.0);
    EXPECT_EQ(out.out.find(kSecret), std::string::npos);
    EXPECT_EQ(out.err.find(kSecret), std::string::npos);
    EXPECT_EQ(out.err.find("root:"), std::string::npos) << "no excerpt of the secret";
    size_t lines = std::count(out.err.begin(), out.err.end(), '\n');
    EXPECT_LE(lines, 22u) << "errors are bounded per file";
    std::printf("validate %-40s exit %d in %.3f s: %s", f.c_str(), out.code, s,
                out.err.substr(0, out.err.find('\n') + 1).c_str());
  }
  // -o json of a file with bytes that are not UTF-8: valid JSON, no abort.
  std::ofstream(dir / "binary.yaml") << "rules:\n  - name: x\xff\xfe\n    limit: {rate: 1/s}\n";
  Output out =
      run({RL_RLCTL_PATH, "-o", "json", "policy", "validate", (dir / "binary.yaml").string()});
  EXPECT_EQ(out.code, 1) << out.describe();
  EXPECT_FALSE(Json::parse(out.out, nullptr, false).is_discarded()) << out.out;
}

TEST_F(HostilePolicyTest, LiveReloadsRejectThemAndRldStaysUp) {
  write_policy("a.yaml",
               "rules:\n  - name: udp9\n    match: {protocol: udp, port: 9}\n"
               "    limit: {rate: 1/min, burst: 3}\n");
  start_rld();
  uint64_t gen = ctl({"status"})["generation"];
  plant(dir_ / "policies");
  // Every hostile entry at once, then each reload rejected; status answers throughout.
  for (int i = 0; i < 40; i++) {
    auto t0 = std::chrono::steady_clock::now();
    Json st = ctl({"status"});
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
    if (!st["last_reload"]["ok"].get<bool>()) break;
    std::this_thread::sleep_for(100ms);
  }
  Json st = ctl({"status"});
  EXPECT_FALSE(st["last_reload"]["ok"].get<bool>()) << st.dump();
  EXPECT_EQ(st["generation"].get<uint64_t>(), gen) << "the policy in force stays";
  EXPECT_EQ(received({.src = "198.18.4.4", .count = 20, .rate = 2000}), 3u) << "and enforces";
  rld_->signal(SIGHUP);
  std::this_thread::sleep_for(500ms);
  ASSERT_TRUE(rld_->running()) << rld_->err();
  EXPECT_EQ(ctl({"status"})["generation"].get<uint64_t>(), gen);
  EXPECT_EQ(rld_->err().find(kSecret), std::string::npos) << "no byte of the secret in the log";
  EXPECT_EQ(rld_->out().find(kSecret), std::string::npos);
}

// rld removes nothing at --control-socket but a stale socket; rlctl applies only policy files.
TEST_F(HostilePolicyTest, ControlSocketPathAndApplyAreChecked) {
  write_policy("a.yaml",
               "rules:\n  - name: udp9\n    match: {protocol: udp, port: 9}\n"
               "    limit: {rate: 1/min, burst: 3}\n");
  std::ofstream(socket_path()) << "an operator's file\n";
  auto p = Process::spawn(rld_argv());
  ASSERT_TRUE(p.ok()) << p.error().str();
  Output out = p->wait(20s);
  EXPECT_NE(out.code, 0) << out.describe();
  EXPECT_NE(out.err.find("is not a socket"), std::string::npos) << out.err;
  std::ifstream kept(socket_path());
  std::string line;
  std::getline(kept, line);
  EXPECT_EQ(line, "an operator's file") << "the file is left alone";
  fs::remove(socket_path());

  start_rld();
  std::ofstream(dir_ / "trav.txt") << "rules: []\n";
  Output apply =
      run({RL_RLCTL_PATH, "-s", socket_path(), "policy", "apply", (dir_ / "trav.txt").string()});
  EXPECT_EQ(apply.code, 1) << apply.describe();
  EXPECT_NE(apply.err.find(".yaml"), std::string::npos) << apply.err;
}

}  // namespace
}  // namespace rl::testing
