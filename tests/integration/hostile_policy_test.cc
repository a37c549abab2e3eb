// SPDX-License-Identifier: GPL-2.0-only
// Hostile files where policies are read: links to devices and to other programs' secrets, FIFOs,
// dangling and looping links, read errors, directories, huge files, deep nesting, alias bombs.
// `rlctl policy validate` must refuse each quickly with exit 1, and a live rld must reject each
// reload like any broken policy, keep the rule set in force, keep answering, and never copy a
// byte of a secret into its output or log.
#include <sys/stat.h>

#include <fstream>

#include "control/client.h"
#include "policy_text.h"
#include "rld_fixture.h"

namespace rl::testing {
namespace {

namespace fs = std::filesystem;

constexpr char kSecret[] = "rl-secret-marker-5d1c";  // must never appear in output or logs

class HostilePolicyTest : public RldTest {
 protected:
  // A root-only file outside the policy directory, holding the marker.
  fs::path secret() {
    fs::path outside = dir_ / "outside";
    fs::create_directories(outside);
    if (!fs::exists(outside / "secret")) {
      std::ofstream(outside / "secret") << "root:" << kSecret << ":20228:0:99999:7:::\n"
                                        << "daemon:*:20228:0:99999:7:::\n";
      ::chmod((outside / "secret").c_str(), 0600);
    }
    return outside / "secret";
  }

  // One hostile entry `name` (named *.yaml, so the loader considers it), created in `dir`.
  void plant_one(const fs::path& dir, const std::string& name) {
    if (name == "zero.yaml") fs::create_symlink("/dev/zero", dir / name);
    if (name == "urandom.yaml") fs::create_symlink("/dev/urandom", dir / name);
    if (name == "shadow.yaml") fs::create_symlink(secret(), dir / name);
    if (name == "dangling.yaml") fs::create_symlink("nowhere", dir / name);
    if (name == "loop-a.yaml") {
      fs::create_symlink("loop-b.yaml", dir / "loop-a.yaml");
      fs::create_symlink("loop-a.yaml", dir / "loop-b.yaml");
    }
    if (name == "fifo.yaml") ::mkfifo((dir / name).c_str(), 0600);
    if (name == "dir.yaml") fs::create_directories(dir / name);
    if (name == "big.yaml") {
      std::ofstream big(dir / name);
      for (int i = 0; i < 200'000; i++)
        big << "junk" << i << ": 0123456789012345678901234567890123\n";
    }
    if (name == "huge.yaml") {
      std::ofstream huge(dir / name);
      std::string line(1023, 'x');
      for (int i = 0; i < 17 * 1024; i++) huge << line << "\n";
    }
    if (name == "deep.yaml")
      std::ofstream(dir / name) << "rules: " << std::string(100'000, '[') << "\n";
    if (name == "bomb.yaml") {
      std::ofstream bomb(dir / name);
      bomb << "sets:\n  a0: &a0 [198.18.0.1, 198.18.0.2, 198.18.0.3, 198.18.0.4, 198.18.0.5]\n";
      for (int i = 1; i < 10; i++) {
        bomb << "  a" << i << ": &a" << i << " [";
        for (int j = 0; j < 10; j++) bomb << (j ? ", " : "") << "*a" << i - 1;
        bomb << "]\n";
      }
    }
  }

  void plant(const fs::path& dir) {
    for (const auto& n : hostile_names()) plant_one(dir, n);
  }

  // What each is refused for (the start of the first error's message).
  static std::vector<std::pair<std::string, std::string>> hostile_cases() {
    return {{"zero.yaml", "is a symbolic link to a file outside its directory"},
            {"urandom.yaml", "is a symbolic link to a file outside its directory"},
            {"shadow.yaml", "is a symbolic link to a file outside its directory"},
            {"dangling.yaml", "is a symbolic link that cannot be followed"},
            {"loop-a.yaml", "is a symbolic link that cannot be followed"},
            {"fifo.yaml", "is not a regular file"},
            {"dir.yaml", "no policy files"},
            {"big.yaml", "more than 300000 YAML nodes"},
            {"huge.yaml", "MiB a policy file may hold"},
            {"deep.yaml", "nested deeper than 32 levels"},
            {"bomb.yaml", "aliases expand to more than 300000 YAML nodes"}};
  }
  static std::vector<std::string> hostile_names() {
    std::vector<std::string> names;
    for (const auto& [n, why] : hostile_cases()) names.push_back(n);
    return names;
  }

  // rld's resident size (VmRSS) or its peak so far (VmHWM) in KiB, from /proc.
  long rld_rss_kib(const std::string& field = "VmRSS:") {
    std::ifstream st("/proc/" + std::to_string(rld_->pid()) + "/status");
    std::string line;
    while (std::getline(st, line))
      if (line.rfind(field, 0) == 0) return std::stol(line.substr(field.size()));
    return -1;
  }
};

TEST_F(HostilePolicyTest, ValidateRefusesEachQuickly) {
  fs::path dir = dir_ / "hostile";
  fs::create_directories(dir);
  plant(dir);
  for (const auto& [name, why] : hostile_cases()) {
    if (name == "dir.yaml") continue;  // a directory given by name: see below
    Output out = run({RL_RLCTL_PATH, "policy", "validate", (dir / name).string()}, 10s);
    EXPECT_NE(out.err.find(why), std::string::npos) << name << ": " << out.err;
  }
  std::vector<std::string> files;
  for (const auto& n : hostile_names()) files.push_back((dir / n).string());
  files.emplace_back("/proc/self/mem");  // opens, then fails to read
  files.emplace_back("/proc/kcore");     // larger than any policy
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
  // A file its reader may not open: rlctl as nobody (root reads every mode).
  std::ofstream(dir / "unreadable.yaml") << "rules: []\n";
  ::chmod((dir / "unreadable.yaml").c_str(), 0);
  Output denied = run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", RL_RLCTL_PATH,
                       "policy", "validate", (dir / "unreadable.yaml").string()});
  EXPECT_EQ(denied.code, 1) << denied.describe();
  EXPECT_NE(denied.err.find("cannot read: Permission denied"), std::string::npos) << denied.err;
  // -o json of a file with bytes that are not UTF-8: valid JSON, no abort.
  std::ofstream(dir / "binary.yaml") << "rules:\n  - name: x\xff\xfe\n    limit: {rate: 1/s}\n";
  Output out =
      run({RL_RLCTL_PATH, "-o", "json", "policy", "validate", (dir / "binary.yaml").string()});
  EXPECT_EQ(out.code, 1) << out.describe();
  EXPECT_FALSE(Json::parse(out.out, nullptr, false).is_discarded()) << out.out;
}

// Each hostile entry alone in rld's policy directory next to a valid policy: `rlctl policy
// reload` fails (exit 1) quickly with the reason, rld keeps the generation in force and keeps
// limiting, and neither rlctl nor rld's log shows a line of the root-only file.
TEST_F(HostilePolicyTest, LiveReloadsRejectEachAndRldStaysUp) {
  write_policy("a.yaml", udp9_policy("1/min", 3));
  start_rld();
  uint64_t gen = ctl({"status"})["generation"];
  fs::path dir = dir_ / "policies";
  uint64_t failed = ctl({"status"})["reloads"]["failed"];
  for (const auto& [name, why] : hostile_cases()) {
    SCOPED_TRACE(name);
    plant_one(dir, name);
    auto t0 = std::chrono::steady_clock::now();
    Output out = run({RL_RLCTL_PATH, "-s", socket_path(), "policy", "reload"}, 30s);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(out.code, name == "dir.yaml" ? 0 : 1) << out.describe();
    EXPECT_LT(s, 5.0);
    if (name != "dir.yaml") {  // a directory is skipped: the valid policy loads again
      EXPECT_NE(out.err.find(why), std::string::npos) << out.err;
    }
    EXPECT_EQ(out.out.find(kSecret), std::string::npos);
    EXPECT_EQ(out.err.find(kSecret), std::string::npos);
    EXPECT_EQ(out.err.find("daemon:*"), std::string::npos);
    auto t1 = std::chrono::steady_clock::now();
    Json st = ctl({"status"});
    EXPECT_LT(std::chrono::steady_clock::now() - t1, 2s);
    if (name == "big.yaml" || name == "bomb.yaml")
      std::printf("rld resident after the %s reload: %ld KiB, peak %ld KiB\n", name.c_str(),
                  rld_rss_kib(), rld_rss_kib("VmHWM:"));
    std::printf("live reload with %-14s exit %d in %.3f s: %s", name.c_str(), out.code, s,
                out.err.substr(0, out.err.find('\n') + 1).c_str());
    if (name == "dir.yaml") {
      fs::remove_all(dir / name);
    } else {
      EXPECT_FALSE(st["last_reload"]["ok"].get<bool>()) << st.dump();
      EXPECT_EQ(st["generation"].get<uint64_t>(), gen) << "the policy in force stays";
      EXPECT_GT(st["reloads"]["failed"].get<uint64_t>(), failed);
      failed = st["reloads"]["failed"];
      for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename() != "a.yaml") fs::remove_all(e.path());
    }
    // The directory is valid again: inotify applies it (a new generation, the same rules).
    wait_reload(gen);
    gen = ctl({"status"})["generation"];
  }
  EXPECT_EQ(received({.src = "198.18.4.4", .count = 20, .rate = 2000}), 3u) << "and enforces";
  // Every entry at once, found by inotify and by SIGHUP: rejected, rld stays.
  plant(dir);
  rld_->signal(SIGHUP);
  Json st;
  for (int i = 0; i < 100; i++) {
    std::this_thread::sleep_for(100ms);
    st = ctl({"status"});
    if (!st["reload_running"].get<bool>() && !st["last_reload"]["ok"].get<bool>()) break;
  }
  ASSERT_TRUE(rld_->running()) << rld_->err();
  EXPECT_FALSE(st["last_reload"]["ok"].get<bool>()) << st.dump();
  EXPECT_EQ(st["generation"].get<uint64_t>(), gen);
  std::printf("rld resident after every hostile file: %ld KiB\n", rld_rss_kib());
  EXPECT_LT(rld_rss_kib(), 256 * 1024) << "a load's memory is bounded and given back";
  std::ifstream secret_file(secret());
  for (std::string line; std::getline(secret_file, line);) {
    EXPECT_EQ(rld_->err().find(line), std::string::npos) << "no line of the secret in the log";
    EXPECT_EQ(rld_->out().find(line), std::string::npos);
  }
  EXPECT_EQ(rld_->err().find(kSecret), std::string::npos);
}

// A load slower than reload_timeout_ms is rejected like a broken policy: counted as failed, the
// reason in rlctl status and the log, the policy in force stays and keeps limiting. While a
// slow load runs, rld answers rlctl status within 100 ms.
TEST_F(HostilePolicyTest, SlowReloadsRunOffTheLoopAndTimeOut) {
  rld_extra_args_ = {"--reload-timeout-ms", "300"};
  write_policy("a.yaml", udp9_policy("1/min", 3));
  start_rld();
  uint64_t gen = ctl({"status"})["generation"];
  uint64_t failed = ctl({"status"})["reloads"]["failed"];
  // 250,000 YAML nodes: valid, within every bound, and a second or more to load (3 us a node).
  {
    std::ofstream big(dir_ / "policies" / ".big.part");
    big << "sets:\n  many:\n";
    for (int i = 0; i < 125'000; i++)
      big << "    - 10." << (i >> 16) << "." << ((i >> 8) & 255) << "." << (i & 255) << "\n";
    big << "  many6:\n";
    for (int i = 0; i < 124'990; i++)
      big << "    - 2001:db8:" << std::hex << i << std::dec << "::/48\n";
    big << "rules:\n  - name: big\n    match: {sources: [many, many6]}\n"
           "    limit: {rate: 10/s}\n";
  }
  auto t0 = std::chrono::steady_clock::now();
  fs::rename(dir_ / "policies" / ".big.part", dir_ / "policies" / "big.yaml");
  // Polled while the load runs: each answer within 100 ms. The answer is timed with rlctl's
  // own client code, which is what rld takes; the rlctl program is run too, and must answer,
  // but its time (process start-up on two cores, one of them busy loading) is only reported.
  bool saw_running = false;
  double slowest = 0, slowest_program = 0;
  int polls = 0;
  Json st;
  for (; std::chrono::steady_clock::now() - t0 < 10s; polls++) {
    auto t1 = std::chrono::steady_clock::now();
    auto got = control::call(socket_path(), control::request("status", Json::object()), 5'000);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    ASSERT_TRUE(got && got->value("ok", false)) << (got ? got->dump() : got.error().str());
    slowest = std::max(slowest, s);
    t1 = std::chrono::steady_clock::now();
    Output out = run({RL_RLCTL_PATH, "-s", socket_path(), "-o", "json", "status"}, 5s);
    slowest_program =
        std::max(slowest_program,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
    st = Json::parse(out.out, nullptr, false);
    ASSERT_TRUE(st.is_object()) << out.describe() << out.out;
    // Not ready once the load has failed: rlctl status says so in its exit status too.
    ASSERT_EQ(out.code, st.value("ready", false) ? kExitOk : kExitNotReady) << out.describe();
    saw_running = saw_running || st["reload_running"].get<bool>();
    if (st["reloads"]["failed"].get<uint64_t>() > failed && !st["reload_running"].get<bool>())
      break;
  }
  std::printf(
      "status during a slow reload: %d polls, slowest answer %.1f ms, slowest rlctl program "
      "%.1f ms\n",
      polls, slowest * 1000, slowest_program * 1000);
  EXPECT_TRUE(saw_running) << "the load was seen running";
  EXPECT_LT(slowest, 0.100) << "status answers within 100 ms while a load runs";
  EXPECT_FALSE(st["last_reload"]["ok"].get<bool>()) << st.dump();
  ASSERT_FALSE(st["last_reload"]["errors"].empty());
  EXPECT_NE(st["last_reload"]["errors"][0].get<std::string>().find(
                "took longer than 300 ms (reload_timeout_ms)"),
            std::string::npos)
      << st.dump();
  EXPECT_EQ(st["generation"].get<uint64_t>(), gen) << "the policy in force stays";
  std::printf("rld resident after the timed-out load: %ld KiB, peak %ld KiB\n", rld_rss_kib(),
              rld_rss_kib("VmHWM:"));
  EXPECT_NE(rld_->err().find("took longer than 300 ms"), std::string::npos)
      << "and the log says why";
  EXPECT_EQ(received({.src = "198.18.4.4", .count = 20, .rate = 2000}), 3u) << "and enforces";
  // rlctl policy reload gets the same answer; then a fixed directory loads.
  Output out = run({RL_RLCTL_PATH, "-s", socket_path(), "policy", "reload"}, 30s);
  EXPECT_EQ(out.code, 1) << out.describe();
  EXPECT_NE(out.err.find("took longer than 300 ms"), std::string::npos) << out.err;
  fs::remove(dir_ / "policies" / "big.yaml");
  write_policy("a.yaml", udp9_policy("1/min", 5));
  wait_reload(gen);
  EXPECT_EQ(received({.src = "198.18.4.5", .count = 20, .rate = 2000}), 5u);
}

// Reloads asked for while one runs are merged: one more load follows, every asker is answered.
TEST_F(HostilePolicyTest, ReloadsRequestedDuringALoadAreCoalesced) {
  write_policy("a.yaml", udp9_policy("1/min", 3));
  start_rld();
  uint64_t ok_before = ctl({"status"})["reloads"]["ok"];
  std::vector<Process> reloads;
  for (int i = 0; i < 6; i++) {
    auto p = Process::spawn({RL_RLCTL_PATH, "-s", socket_path(), "policy", "reload"});
    ASSERT_TRUE(p.ok()) << p.error().str();
    reloads.push_back(std::move(*p));
    rld_->signal(SIGHUP);
  }
  for (auto& p : reloads) EXPECT_EQ(p.wait(30s).code, 0);
  Json st = ctl({"status"});
  uint64_t loads = st["reloads"]["ok"].get<uint64_t>() - ok_before;
  EXPECT_GE(loads, 1u);
  EXPECT_LE(loads, 12u);
  std::printf("6 rlctl reloads and 6 SIGHUPs: %llu loads\n",
              static_cast<unsigned long long>(loads));
  EXPECT_FALSE(st["reload_running"].get<bool>());
}

// rld removes nothing at --control-socket but a stale socket; rlctl applies only policy files.
TEST_F(HostilePolicyTest, ControlSocketPathAndApplyAreChecked) {
  write_policy("a.yaml", udp9_policy("1/min", 3));
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

  // diff and apply load on the worker, and read the directory as the loader does: a FIFO in it
  // is refused, not waited on; without it the file is applied and installed.
  uint64_t gen = ctl({"status"})["generation"];
  std::ofstream(dir_ / "b.yaml") << "rules:\n  - name: udp10\n    match: {protocol: udp, port: "
                                    "10}\n    limit: {rate: 1/min, burst: 3}\n";
  ::mkfifo((dir_ / "policies" / "fifo.yaml").c_str(), 0600);
  Output diff =
      run({RL_RLCTL_PATH, "-s", socket_path(), "policy", "diff", (dir_ / "b.yaml").string()}, 10s);
  EXPECT_EQ(diff.code, 1) << diff.describe();
  EXPECT_NE(diff.err.find("fifo.yaml: error: is not a regular file"), std::string::npos)
      << diff.err;
  fs::remove(dir_ / "policies" / "fifo.yaml");
  diff = run({RL_RLCTL_PATH, "-s", socket_path(), "policy", "diff", (dir_ / "b.yaml").string()});
  EXPECT_EQ(diff.code, 0) << diff.describe();
  EXPECT_NE(diff.out.find("udp10"), std::string::npos) << diff.out;
  Json applied = ctl({"policy", "apply", (dir_ / "b.yaml").string()});
  EXPECT_GT(applied["generation"].get<uint64_t>(), gen) << applied.dump();
  EXPECT_TRUE(fs::exists(dir_ / "policies" / "b.yaml"));
  EXPECT_EQ(ctl({"status"})["rules"].get<size_t>(), 2u);
}

}  // namespace
}  // namespace rl::testing
