#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Fails when a tracked C/C++ source differs from what clang-format makes of it, naming each
# place. The BPF programs are in kernel style (bpf/.clang-format), wherever they live.
#
#   scripts/check-format.sh        # check
#   scripts/check-format.sh --fix  # rewrite the files instead
set -euo pipefail
cd "$(dirname "$0")/.."

mode=(--dry-run -Werror)
[ "${1:-}" = --fix ] && mode=(-i)

mapfile -t bpf < <(git ls-files -- '*.bpf.c' '*.bpf.h' 'bpf/*.c' 'bpf/*.h' | sort -u)
mapfile -t cxx < <(git ls-files -- '*.c' '*.cc' '*.h' | grep -v -x -F -f <(printf '%s\n' "${bpf[@]}"))

status=0
clang-format "${mode[@]}" "${cxx[@]}" || status=1
clang-format "${mode[@]}" --style=file:bpf/.clang-format "${bpf[@]}" || status=1
if [ "$status" -ne 0 ]; then
  echo "check-format: run scripts/check-format.sh --fix" >&2
fi
exit "$status"
