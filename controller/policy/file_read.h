// SPDX-License-Identifier: GPL-2.0-only
// Reading a file named by an operator (a policy file, a set file) so that no file can hang,
// flood or leak into the errors.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <optional>
#include <string>

namespace rl::policy {

// The file's text, or nullopt and *why (completing "<path> ..."):
// - A symbolic link is followed only when it resolves to a file inside the directory that holds
//   the link (Kubernetes ConfigMap volumes link each file into a hidden subdirectory). A link out
//   of it (to /etc/shadow, /dev/zero, /proc/kcore) is refused before anything is opened.
// - Only a regular file is read: it is opened non-blocking and without following a link, and
//   checked with fstat, so a FIFO, socket or device is refused instead of blocking or streaming.
// - At most `max_bytes`, named `what` in the message ("a policy file"), and a read error is an
//   error, never an empty file.
// `st`, when given, gets the fstat of what was read.
std::optional<std::string> read_bounded_file(const std::string& path, size_t max_bytes,
                                             const char* what, std::string* why,
                                             struct stat* st = nullptr);

// Whether a symbolic link at `path` stays inside its directory (true for anything else).
bool link_stays_inside(const std::string& path, std::string* why);

}  // namespace rl::policy
