// SPDX-License-Identifier: GPL-2.0-only
// Source sets read from files: the form blocklists, bogon lists and country lists come in, and
// what a feed updates (a timer that downloads, a ConfigMap). One prefix or address per line;
// '#' and ';' start a comment; blank lines are skipped; a prefix listed twice counts once.
// A bad line is an error at file:line:column, and an error anywhere refuses the whole load.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "policy/diagnostic.h"
#include "policy/load_limits.h"
#include "policy/model.h"

namespace rl::policy {

// The prefixes of set files as a load read them (sorted, each once), by path and stamp: the next
// load reads again only the files whose stamp changed. A feed updates one file of several, and a
// million-prefix file takes about a second to parse. A file no load read since the one before is
// forgotten.
class SetFileCache {
 public:
  using Prefixes = std::shared_ptr<const std::vector<Prefix>>;
  // A load begins and ends: files the load did not ask for are forgotten at its end.
  void begin() { used_.clear(); }
  void end();
  Prefixes find(const SetFileStamp& stamp);
  void put(const SetFileStamp& stamp, Prefixes prefixes);
  // Files found unchanged since the cache was made.
  size_t hits() const { return hits_; }

 private:
  size_t hits_ = 0;
  std::map<std::string, std::pair<SetFileStamp, Prefixes>> files_;
  std::set<std::string> used_;
};

// Reads the files of `set.source` into set.prefixes (sorted, each once) and stamps them into
// set.source.files. `prefixes_used` counts every set file of the load against
// limits.max_set_prefixes. Returns false, with the problems in `errors`, when the set could not
// be read whole.
bool read_set_source(SourceSet& set, const LoadLimits& limits, size_t& prefixes_used,
                     std::vector<Diagnostic>& errors);

// The stamps the files of `source` have now, taken the way read_set_source takes them but
// without reading a line: equal to source.files exactly while nothing changed.
std::vector<SetFileStamp> stamp_set_source(const SetSource& source);

// The files a set directory holds, sorted: every entry but hidden names (editors' and
// ConfigMaps' bookkeeping, and where a feed writes before it renames) and names ending in '~'.
// Subdirectories are skipped; anything else that is not a regular file is an error when read.
std::vector<std::string> set_directory_files(const std::string& dir, std::string* why);

}  // namespace rl::policy
