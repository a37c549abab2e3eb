// SPDX-License-Identifier: GPL-2.0-only
#include "common/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <vector>

#include <sys/stat.h>

namespace rl::log {
namespace {

std::atomic<int> g_level{static_cast<int>(Level::kInfo)};
std::mutex g_mu;

std::string quote(const std::string& v) {
  bool plain = !v.empty();
  for (char c : v)
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20)
      plain = false;
  if (plain) return v;
  std::string out = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// By Level: the name in log lines, and the syslog priority prefix (err, warning, info, debug).
struct LevelNames {
  const char* name;
  const char* journal;
};
constexpr LevelNames kLevels[] = {
    {"debug", "<7>"}, {"info", "<6>"}, {"warn", "<4>"}, {"error", "<3>"}};

const char* name(Level l) { return kLevels[static_cast<int>(l)].name; }
const char* journal_prefix(Level l) { return kLevels[static_cast<int>(l)].journal; }

// systemd sets JOURNAL_STREAM to the device and inode of the stream it connected to stdout and
// stderr. When stderr is still that stream, a "<N>" prefix gives each line its syslog priority
// (journalctl -p, colours); anywhere else the prefix would only be noise.
bool stderr_is_journal() {
  const char* env = std::getenv("JOURNAL_STREAM");
  if (!env) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(env, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (fstat(fileno(stderr), &st) != 0) return false;
  return st.st_dev == dev && st.st_ino == ino;
}

}  // namespace

void set_level(Level l) { g_level = static_cast<int>(l); }
bool enabled(Level l) { return static_cast<int>(l) >= g_level.load(); }

bool parse_level(const std::string& s, Level* out) {
  for (Level l : {Level::kDebug, Level::kInfo, Level::kWarn, Level::kError})
    if (s == name(l)) {
      *out = l;
      return true;
    }
  return false;
}

void write(Level l, const std::string& msg, std::initializer_list<Field> fields) {
  write(l, msg, std::vector<Field>(fields));
}

void write(Level l, const std::string& msg, const std::vector<Field>& fields) {
  if (!enabled(l)) return;
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char ts[32];
  std::strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
  static const bool journal = stderr_is_journal();
  std::string line = std::string(journal ? journal_prefix(l) : "") + "ts=" + ts + "." +
                     (ms < 100 ? (ms < 10 ? "00" : "0") : "") + std::to_string(ms) +
                     "Z level=" + name(l) + " msg=" + quote(msg);
  for (const auto& [k, v] : fields) line += " " + k + "=" + quote(v);
  line += "\n";
  std::lock_guard<std::mutex> lock(g_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace rl::log
