#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# clang-tidy with the checks in .clang-tidy over controller/, tools/, tests/ and bench/ (tests/ with
# the relaxations of tests/.clang-tidy), two files at a time.
# Needs a configured build directory (compile_commands.json) whose generated headers (the BPF
# skeletons) are built: scripts/test.sh does both first.
#
#   scripts/check-tidy.sh BUILD_DIR [FILE...]
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:?usage: scripts/check-tidy.sh BUILD_DIR [FILE...]}
shift
if [ ! -f "$build/compile_commands.json" ]; then
  echo "check-tidy: no $build/compile_commands.json: configure the build first" >&2
  exit 1
fi
# One compile command per source file, also for a unity build's batches.
db="$build/tidy"
python3 scripts/tidy-compile-db.py "$build" "$db"

if [ "$#" -gt 0 ]; then
  files=("$@")
else
  # Only the files this build compiles: the fuzzers' sources, for one, are built with RL_FUZZ only,
  # and without their compile command clang-tidy would guess the flags.
  mapfile -t files < <(git ls-files -- 'controller/*.cc' 'tools/*.cc' 'tests/*.cc' 'bench/*.cc' |
    grep -x -F -f <(python3 -c 'import json, os, sys
for e in json.load(open(sys.argv[1])):
    print(os.path.relpath(os.path.join(e["directory"], e["file"])))' "$db/compile_commands.json"))
fi

# One clang-tidy per file; a file's findings are printed together, and any finding fails.
# --quiet: no "N warnings suppressed" lines for what the header filter keeps out.
printf '%s\n' "${files[@]}" |
  xargs -P "${RL_TIDY_JOBS:-2}" -n 1 clang-tidy --quiet -p "$db" 2> >(grep -v '^[0-9]* warnings\? generated' >&2)
