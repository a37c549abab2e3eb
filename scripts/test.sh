#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Build rl and run every check and test CI runs, in stages; a failure names its stage.
#   checks        clang-format over the tracked sources, clang-tidy over controller/, tools/,
#                 bench/ and tests/ (tests/.clang-tidy's lighter set there)
#   unprivileged  the build, C++ warnings as errors, and the tests that need no root (label unit)
#   sanitizers    a clang build with ASan, UBSan and -Wthread-safety, running the same tests
#   fuzz          the libFuzzer targets on the policy loader and the packet parser, 60 s each
#   root          BPF on the real verifier, integration, cluster, metrics and packaging tests,
#                 two at a time; then those labelled serial (exactness, floods, rates, costs),
#                 each alone
# When one run has both checks and root, clang-tidy runs at the lowest priority beside the root
# stage's tests that run two at a time (most of their time is spent waiting on rld, Redis and
# packets), and is done before the serial ones start; RL_TIDY_BESIDE_ROOT=0 keeps it in checks.
# The root stage loads XDP programs into the running kernel: it needs root, and its tests fail
# rather than skip without it. On a fresh machine this also installs the dependencies from
# Debian packages. At the end it prints each stage's time and the total, and warns when the
# total passes the budget. docs/development.md has what each stage costs.
#
#   scripts/test.sh                       # as root: install deps, every stage
#   scripts/test.sh checks unprivileged   # the named stages only
#   scripts/test.sh quick [AREA...]       # rebuild, then the AREAs' tests (no AREA: unit)
#   RL_SKIP_DEPS=1 scripts/test.sh        # skip the package step
#
# quick is the inner loop: an incremental build of the same tree, then the tests labelled with
# each AREA (policy, compiler, control, datapath, cluster, rld, rlctl, metrics, lab, packaging,
# bench), or the `unit` tests when none is named; those needing root only when it is root.
set -euo pipefail
cd "$(dirname "$0")/.."

all=(checks unprivileged sanitizers fuzz root)
stages=("$@")
areas=()
if [ "${1:-}" = quick ]; then
  stages=(quick)
  areas=("${@:2}")
fi
[ "${#stages[@]}" -gt 0 ] || stages=("${all[@]}")
for s in "${stages[@]}"; do
  case " ${all[*]} quick " in *" $s "*) ;; *)
    echo "scripts/test.sh: unknown stage '$s' (stages: ${all[*]}, or quick [AREA...])" >&2
    exit 2
    ;;
  esac
done
if [[ " ${stages[*]} " == *" root "* ]] && [ "$(id -u)" -ne 0 ]; then
  echo "scripts/test.sh: the BPF and integration tests load XDP programs: run as root" >&2
  exit 1
fi
[ "${RL_SKIP_DEPS:-0}" = 1 ] || [ "${stages[*]}" = quick ] || bash scripts/install-deps.sh

build=${RL_BUILD_DIR:-build}
san_build=${RL_SANITIZE_BUILD_DIR:-build-sanitize}
jobs=$(nproc)
# The suite's budget on two CPUs (docs/development.md): past it, the run says so.
budget=${RL_TEST_BUDGET_SECONDS:-2700}

# Ninja, line tables for debug information, lld, and unity builds: the build's levers
# (docs/development.md, "What each stage costs"). A tree made with another generator is
# configured anew.
cmake_configure() {
  local dir=$1
  shift
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$dir/CMakeCache.txt"; then
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  fi
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRL_WERROR=ON \
    -DRL_DEBUG_INFO=lines -DCMAKE_UNITY_BUILD=ON "$@" >/dev/null
}

configure() { cmake_configure "$build"; }

tidy_beside_root=0
if [[ " ${stages[*]} " == *" checks "* && " ${stages[*]} " == *" root "* ]] &&
  [ "${RL_TIDY_BESIDE_ROOT:-1}" = 1 ]; then
  tidy_beside_root=1
fi

stage_checks() {
  bash scripts/check-format.sh
  # clang-tidy reads the compile commands and the headers the build generates.
  configure
  mapfile -t generated < <(cmake --build "$build" --target help | grep -o '[a-z_]*_skel_gen')
  cmake --build "$build" -j"$jobs" --target "${generated[@]}" >/dev/null
  if [ "$tidy_beside_root" = 1 ]; then
    echo "clang-tidy runs beside the root stage's parallel tests"
  else
    bash scripts/check-tidy.sh "$build"
  fi
}

stage_unprivileged() {
  configure
  cmake --build "$build" -j"$jobs"
  ctest --test-dir "$build" -L unit -j"$jobs" --output-on-failure --timeout 300
}

stage_sanitizers() {
  CC=clang CXX=clang++ cmake_configure "$san_build" -DRL_SANITIZE=ON -DRL_FUZZ=ON \
    -DRL_BUILD_BENCH=OFF
  cmake --build "$san_build" -j"$jobs" --target unit_tests fuzzers
  ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$san_build" -L unit -j"$jobs" --output-on-failure --timeout 600
}

stage_fuzz() {
  if [ ! -x "$san_build/tests/fuzz/policy_fuzz" ]; then
    echo "fuzz: no fuzzers in $san_build: the sanitizers stage builds them" >&2
    return 1
  fi
  bash scripts/fuzz.sh "$san_build" "${RL_FUZZ_SECONDS:-60}"
}

stage_root() {
  configure
  cmake --build "$build" -j"$jobs"
  local tidy_pid="" tidy_log="$build/check-tidy.log"
  if [ "$tidy_beside_root" = 1 ]; then
    # A process group of its own, so that a failed stage stops every clang-tidy it started.
    setsid nice -n 19 bash scripts/check-tidy.sh "$build" >"$tidy_log" 2>&1 &
    tidy_pid=$!
    trap '[ -z "${tidy_pid:-}" ] || kill -- "-$tidy_pid" 2>/dev/null' EXIT
  fi
  # A failure in one part still runs the others, so that a red run names every failure.
  local failed=0
  ctest --test-dir "$build" -LE '^(unit|serial)$' -j"$jobs" --output-on-failure --timeout 600 ||
    failed=1
  if [ -n "$tidy_pid" ]; then
    local rc=0 waited=$SECONDS
    wait "$tidy_pid" || rc=$?
    tidy_pid=""
    cat "$tidy_log"
    echo "clang-tidy (checks) done $((SECONDS - waited)) s after the parallel tests"
    if [ "$rc" -ne 0 ]; then
      echo "==== clang-tidy (stage checks) FAILED" >&2
      failed=1
    fi
  fi
  # Each alone: nothing else runs beside a serial test.
  ctest --test-dir "$build" -L '^serial$' -LE '^unit$' --output-on-failure --timeout 600 ||
    failed=1
  return "$failed"
}

stage_quick() {
  configure
  cmake --build "$build" -j"$jobs"
  local args=(-L unit)
  if [ "${#areas[@]}" -gt 0 ]; then
    args=(-L "^($(IFS='|' && echo "${areas[*]}"))\$")
    # Without root, only the areas' unit tests: the rest load programs into the kernel.
    [ "$(id -u)" -eq 0 ] || args+=(-L unit)
  fi
  ctest --test-dir "$build" -j"$jobs" --output-on-failure --timeout 600 "${args[@]}"
}

times=()
total_start=$SECONDS
report() {
  echo "==== stage times"
  printf '  %s\n' "${times[@]}"
  local total=$((SECONDS - total_start))
  printf '  %-13s %5d s (%d min %02d s)\n' total "$total" $((total / 60)) $((total % 60))
  if [ "$total" -gt "$budget" ]; then
    echo "==== WARNING: the run took $total s, over its budget of $budget s" \
      "(docs/development.md, \"What each stage costs\")" >&2
  fi
}

for s in "${stages[@]}"; do
  echo "==== stage $s"
  start=$SECONDS
  # A subshell outside any condition, so that set -e holds inside the stage.
  set +e
  (set -e; "stage_$s")
  rc=$?
  set -e
  times+=("$(printf '%-13s %5d s' "$s" $((SECONDS - start)))")
  if [ "$rc" -ne 0 ]; then
    echo "==== stage $s FAILED after $((SECONDS - start)) s" >&2
    report
    exit 1
  fi
  echo "==== stage $s passed in $((SECONDS - start)) s"
done
report
