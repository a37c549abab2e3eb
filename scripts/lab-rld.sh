# SPDX-License-Identifier: GPL-2.0-only
# Sourced by scripts that run rld in a hand-made lab (demo.sh, bench-live.sh). Expects $build
# and $lab (a name scripts/lab.sh accepts); sets $work, $pins and $rld, creates the lab, and
# removes everything on exit: rld, its pins and links, the namespaces and $work.
work=$(mktemp -d "/tmp/$lab.XXXXXX")
pins=/sys/fs/bpf/$lab
rld="$build/controller/rld/rld"
rl_lab_cleanup() {
  [ -n "${rld_pid:-}" ] && kill "$rld_pid" 2>/dev/null && wait "$rld_pid" 2>/dev/null || true
  [ -e "/run/netns/$lab-srv" ] && nsenter --net="/run/netns/$lab-srv" "$rld" --cleanup --pin-root "$pins" >/dev/null 2>&1 || true
  bash scripts/lab.sh down "$lab" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap rl_lab_cleanup EXIT
bash scripts/lab.sh up "$lab" >/dev/null
