// SPDX-License-Identifier: GPL-2.0-only
// Policy elements as operators read them: one line per rule, in the vocabulary of the files.
#pragma once

#include <string>

#include "policy/model.h"

namespace rl::policy {

std::string describe_match(const Match& m);  // "tcp dport 80,443 syn from scanners"
std::string describe_limit(const Rule& r);   // "token_bucket 3/s burst 5 per source"
std::string describe_rule(const Rule& r);    // match, limit, action, block
const char* key_name(KeyKind k);             // as in files: source, source_prefix, ...
const char* algorithm_name(Algorithm a);
const char* action_name(Action a);

}  // namespace rl::policy
