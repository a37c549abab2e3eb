#include "common/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

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

const char* name(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
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
  if (!enabled(l)) return;
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char ts[32];
  std::strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
  std::string line = std::string("ts=") + ts + "." + (ms < 100 ? (ms < 10 ? "00" : "0") : "") +
                     std::to_string(ms) + "Z level=" + name(l) + " msg=" + quote(msg);
  for (const auto& [k, v] : fields) line += " " + k + "=" + quote(v);
  line += "\n";
  std::lock_guard<std::mutex> lock(g_mu);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace rl::log
