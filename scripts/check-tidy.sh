#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# clang-tidy with the checks in .clang-tidy over controller/ and tools/, two files at a time.
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
if [ "$#" -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files -- 'controller/*.cc' 'tools/*.cc')
fi

# One clang-tidy per file; a file's findings are printed together, and any finding fails.
# --quiet: no "N warnings suppressed" lines for what the header filter keeps out.
printf '%s\n' "${files[@]}" |
  xargs -P "${RL_TIDY_JOBS:-2}" -n 1 clang-tidy --quiet -p "$build" 2> >(grep -v '^[0-9]* warnings\? generated' >&2)
