// SPDX-License-Identifier: GPL-2.0-only
#include "policy/set_files.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>

#include "policy/file_read.h"
#include "policy/yaml_reader.h"

namespace rl::policy {
namespace {

namespace fs = std::filesystem;

// Errors shown per file; the rest are counted in one last line, as for policy files.
constexpr size_t kMaxErrors = detail::Reader::kMaxErrors;
// A line longer than this is not a prefix and a comment; it is refused, not scanned.
constexpr size_t kMaxLine = 4096;

SetFileStamp stamp_of(const std::string& path, const struct stat& st) {
  return {path,
          static_cast<uint64_t>(st.st_dev),
          static_cast<uint64_t>(st.st_ino),
          static_cast<uint64_t>(st.st_size),
          st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec,
          st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec};
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string too_many_prefixes(const LoadLimits& limits) {
  return "more than " + std::to_string(limits.max_set_prefixes) +
         " prefixes in the policy's set files together; refused";
}

class FileParser {
 public:
  FileParser(const std::string& path, const LoadLimits& limits, size_t& used,
             std::vector<Diagnostic>& errors, std::vector<Prefix>& out)
      : path_(path), limits_(limits), used_(used), errors_(errors), out_(out) {}

  // False when some line was refused.
  bool parse(std::string_view text) {
    int line = 0;
    while (!text.empty()) {
      size_t nl = text.find('\n');
      std::string_view l = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
      ++line;
      if ((line & 0xffff) == 0 && limits_.expired()) {
        error(line, 1, "reading the set took longer than the load's time limit; refused");
        return false;
      }
      if (!parse_line(l, line) && stopped_) break;
    }
    if (shown_ < errors_count_)
      errors_.push_back({{path_, 0, 0},
                         std::to_string(errors_count_ - shown_) +
                             " more errors not shown; fix the first ones and check again"});
    return errors_count_ == 0;
  }

 private:
  bool parse_line(std::string_view l, int line) {
    if (l.size() > kMaxLine) {
      error(line, 1,
            "line of " + std::to_string(l.size()) +
                " characters: a set file holds one "
                "prefix per line");
      return false;
    }
    size_t end = l.find_first_of("#;");
    if (end != std::string_view::npos) l = l.substr(0, end);
    size_t start = 0;
    while (start < l.size() && blank(l[start])) start++;
    size_t stop = start;
    while (stop < l.size() && !blank(l[stop])) stop++;
    if (start == stop) return true;
    size_t rest = stop;
    while (rest < l.size() && blank(l[rest])) rest++;
    if (rest < l.size()) {
      error(line, static_cast<int>(rest) + 1,
            "one prefix per line: unexpected '" + std::string(l.substr(rest)) + "'");
      return false;
    }
    auto prefix = Prefix::parse(l.substr(start, stop - start));
    if (!prefix) {
      error(line, static_cast<int>(start) + 1, prefix.error().message);
      return false;
    }
    if (++used_ > limits_.max_set_prefixes) {
      error(line, static_cast<int>(start) + 1, too_many_prefixes(limits_));
      stopped_ = true;
      return false;
    }
    out_.push_back(*prefix);
    return true;
  }

  void error(int line, int column, const std::string& message) {
    if (++errors_count_ > kMaxErrors) return;
    shown_++;
    errors_.push_back({{path_, line, column}, printable(message)});
  }

  const std::string& path_;
  const LoadLimits& limits_;
  size_t& used_;
  std::vector<Diagnostic>& errors_;
  std::vector<Prefix>& out_;
  size_t errors_count_ = 0;
  size_t shown_ = 0;
  bool stopped_ = false;
};

// Lists are often published sorted, or sorted with lines added at the end: the sorted head is
// kept, the rest sorted and merged in, so such a file costs a pass rather than a sort.
void sort_mostly_sorted(std::vector<Prefix>& v) {
  auto tail = std::is_sorted_until(v.begin(), v.end());
  if (tail == v.end()) return;
  std::sort(tail, v.end());
  std::inplace_merge(v.begin(), tail, v.end());
}

// The stamp of what a path names, a link taken as the loader takes it (the file it names, when
// allowed); nullopt when there is nothing the loader would read (the read then says why).
std::optional<SetFileStamp> stamp_path(const std::string& path) {
  struct stat st {};
  std::string why;
  if (::stat(path.c_str(), &st) != 0 || !link_stays_inside(path, &why)) return std::nullopt;
  return stamp_of(path, st);
}

bool read_one(const std::string& path, const LoadLimits& limits, size_t& used, SetSource& source,
              std::vector<Prefix>& out, std::vector<Diagnostic>& errors) {
  if (limits.set_cache)
    if (auto stamp = stamp_path(path))
      if (auto cached = limits.set_cache->find(*stamp)) {
        if ((used += cached->size()) > limits.max_set_prefixes) {
          errors.push_back({{path, 0, 0}, too_many_prefixes(limits)});
          return false;
        }
        source.files.push_back(*stamp);
        out.insert(out.end(), cached->begin(), cached->end());
        return true;
      }
  std::string why;
  struct stat st {};
  auto text = read_bounded_file(path, limits.max_set_file_bytes, "a set file", &why, &st);
  if (!text) {
    errors.push_back({{path, 0, 0}, why});
    return false;
  }
  source.files.push_back(stamp_of(path, st));
  std::vector<Prefix> mine;
  if (!FileParser(path, limits, used, errors, mine).parse(*text)) return false;
  text.reset();
  sort_mostly_sorted(mine);
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  out.insert(out.end(), mine.begin(), mine.end());
  if (limits.set_cache)
    limits.set_cache->put(source.files.back(),
                          std::make_shared<const std::vector<Prefix>>(std::move(mine)));
  return true;
}

}  // namespace

void SetFileCache::end() {
  for (auto it = files_.begin(); it != files_.end();)
    it = used_.count(it->first) ? std::next(it) : files_.erase(it);
}

SetFileCache::Prefixes SetFileCache::find(const SetFileStamp& stamp) {
  used_.insert(stamp.path);
  auto it = files_.find(stamp.path);
  if (it == files_.end() || it->second.first != stamp) return nullptr;
  hits_++;
  return it->second.second;
}

void SetFileCache::put(const SetFileStamp& stamp, Prefixes prefixes) {
  used_.insert(stamp.path);
  files_[stamp.path] = {stamp, std::move(prefixes)};
}

std::vector<std::string> set_directory_files(const std::string& dir, std::string* why) {
  std::vector<std::string> paths;
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || name.back() == '~') continue;
    std::error_code type_ec;
    if (it->symlink_status(type_ec).type() == fs::file_type::directory) continue;
    paths.push_back(it->path().string());
  }
  if (ec) {
    *why = "cannot read set directory: " + ec.message();
    return {};
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

bool read_set_source(SourceSet& set, const LoadLimits& limits, size_t& prefixes_used,
                     std::vector<Diagnostic>& errors) {
  SetSource& source = set.source;
  source.files.clear();
  set.prefixes.clear();
  bool ok = true;
  if (!source.directory) {
    ok = read_one(source.path, limits, prefixes_used, source, set.prefixes, errors);
  } else {
    std::string why;
    struct stat st {};
    if (::stat(source.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      errors.push_back({set.where, "set '" + set.name + "': " + source.path +
                                       " is not a directory that can be read"});
      return false;
    }
    source.files.push_back(stamp_of(source.path, st));
    auto paths = set_directory_files(source.path, &why);
    if (!why.empty()) {
      errors.push_back({{source.path, 0, 0}, why});
      return false;
    }
    if (paths.size() > limits.max_set_dir_files) {
      errors.push_back({{source.path, 0, 0},
                        "holds " + std::to_string(paths.size()) + " files, more than the " +
                            std::to_string(limits.max_set_dir_files) +
                            " a set directory may hold"});
      return false;
    }
    for (const auto& p : paths)
      ok = read_one(p, limits, prefixes_used, source, set.prefixes, errors) && ok;
  }
  // Each file's prefixes are sorted already; a directory's files together are not.
  if (source.directory) {
    std::sort(set.prefixes.begin(), set.prefixes.end());
    set.prefixes.erase(std::unique(set.prefixes.begin(), set.prefixes.end()), set.prefixes.end());
  }
  return ok;
}

std::vector<SetFileStamp> stamp_set_source(const SetSource& source) {
  std::vector<SetFileStamp> out;
  auto add = [&](const std::string& path) {
    out.push_back(stamp_path(path).value_or(SetFileStamp{path}));
  };
  add(source.path);
  if (source.directory) {
    std::string why;
    for (const auto& p : set_directory_files(source.path, &why)) add(p);
  }
  return out;
}

}  // namespace rl::policy
