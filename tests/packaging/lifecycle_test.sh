#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The package's life on a server, driven only as an operator drives it: apt, systemctl, rlctl.
# A clean Debian 12 root boots its own systemd as PID 1 (systemd-nspawn -b) in a network
# namespace of the test's; its interface is one end of a veth pair whose other end is a client
# namespace. In the container: apt install, a first start with a broken policy (fails, naming
# file:line:column), the fixed start, real packets limited, a real TCP client through a SYN-cookie
# rule, reload, restart (state adopted), runtime allow/deny entries, an upgrade to a package whose
# data path layout differs (entries kept and enforced), the downgrade, apt remove with a broken
# rld.yaml (nothing of rl left in the kernel, nftables or sysctls; the unit still enabled) and
# apt purge (no link or deb-systemd-helper state of the unit left: an install after it is not
# enabled).
#
#   lifecycle_test.sh BUILD_DIR NEXT_BUILD_DIR VERSION NEXT_VERSION
# NEXT_BUILD_DIR holds the same source built with another data path layout and NEXT_VERSION
# (tests/CMakeLists.txt). Needs root, systemd-nspawn (systemd-container), debootstrap and
# Debian's mirror (RL_DEBIAN_MIRROR).
set -euo pipefail
build=$(realpath "$1")
next_build=$(realpath "$2")
version=$3
next_version=$4
mirror=${RL_DEBIAN_MIRROR:-http://deb.debian.org/debian}

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, systemd-nspawn, network namespaces)"
for tool in cpack dpkg-deb debootstrap systemd-nspawn nsenter curl python3; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/install-deps.sh)"
done

work=$(mktemp -d /tmp/rl-lifecycle.XXXXXX)
tag=$(basename "$work" | cut -d. -f2 | tr -dc 'a-zA-Z0-9' | tr 'A-Z' 'a-z')
srv=rl-lc-srv-$tag cli=rl-lc-cli-$tag machine=rl-lc-$tag
ifs=rlc${tag}s ifc=rlc${tag}c
# The client is a lab host; the sources rlsend writes into frames come from the benchmarking range.
server=192.0.2.1 client=192.0.2.2 sender=198.18.0.2 denied=198.18.0.3
nspawn_pid="" leader=""

cleanup() {
  local rc=$?
  set +e
  if [ -n "$leader" ] && kill -0 "$leader" 2>/dev/null; then
    [ "$rc" -eq 0 ] || { echo "-- journal of rld in the container"; in_c journalctl -u rld --no-pager | tail -40; }
    in_c systemctl poweroff >/dev/null 2>&1
  fi
  if [ -n "$nspawn_pid" ]; then
    for _ in $(seq 1 30); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 1; done
    kill -9 "$nspawn_pid" 2>/dev/null
    wait "$nspawn_pid" 2>/dev/null
  fi
  [ -n "${http_pid:-}" ] && kill "$http_pid" 2>/dev/null
  ip netns del "$srv" 2>/dev/null
  ip netns del "$cli" 2>/dev/null
  rm -rf --one-file-system "$work"
  exit "$rc"
}
trap cleanup EXIT

# A command in the booted container, with its systemd's view of everything.
in_c() {
  nsenter -t "$leader" -m -u -i -n -p -- \
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}
in_cli() { nsenter --net="/run/netns/$cli" -- "$@"; }
# Whether rld's journal holds a line matching $1 (read whole: grep -q would cut the pipe short).
journal_has() { in_c journalctl -u rld --no-pager >"$work/journal" && grep -q "$1" "$work/journal"; }

step "packages: $version from $build, $next_version with another data path layout from $next_build"
for b in "$build" "$next_build"; do
  (cd "$b" && cpack -G DEB -B "$work/out") >"$work/cpack.log" 2>&1 || { tail -30 "$work/cpack.log"; fail "cpack in $b"; }
done
# rl_VERSION-REVISION_amd64.deb (the Debian revision from packaging/debian/changelog).
deb=$(ls "$work/out/rl_${version}"-*_amd64.deb 2>/dev/null || true)
next_deb=$(ls "$work/out/rl_${next_version}"-*_amd64.deb 2>/dev/null || true)
[ -f "$deb" ] && [ -f "$next_deb" ] || fail "cpack wrote $(ls "$work/out")"
deb_version=$(dpkg-deb -f "$deb" Version)

step "a Debian 12 root with systemd and rl's dependencies"
# A root prepared once per dependency list is kept beside debootstrap's cache.
deps=$(dpkg-deb -f "$deb" Depends)
base_pkgs=systemd,systemd-sysv,dbus,iproute2,nftables,procps,curl
key=$(printf '%s\n%s\n' "$deps" "$base_pkgs" | sha256sum | cut -c1-16)
cache=/var/cache/rl-debootstrap
root=$work/root
mkdir -p "$cache" "$root"
if [ -f "$cache/lifecycle-$key.tar" ]; then
  tar -C "$root" -xf "$cache/lifecycle-$key.tar"
else
  start=$(date +%s)
  debootstrap --variant=minbase --cache-dir="$cache" --include="$base_pkgs" bookworm "$root" "$mirror" \
    >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log"; fail "debootstrap"; }
  # The libraries rl needs, as an operator's server has them: apt then installs rl offline.
  unshare --mount --fork sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$root" \
    env DEBIAN_FRONTEND=noninteractive sh -ec "apt-get satisfy -y --no-install-recommends '$deps' && apt-get clean" \
    >"$work/deps.log" 2>&1 || { tail -20 "$work/deps.log"; fail "rl's dependencies in the root"; }
  tar -C "$root" -cf "$cache/lifecycle-$key.tar.tmp" . && mv "$cache/lifecycle-$key.tar.tmp" "$cache/lifecycle-$key.tar"
  echo "the root took $(( $(date +%s) - start )) s"
fi
echo "$machine" >"$root/etc/hostname"
cp "$deb" "$next_deb" "$root/root/"

step "the server's and the client's network namespaces, a veth pair between them"
ip netns add "$srv"
ip netns add "$cli"
ip link add "$ifs" netns "$srv" type veth peer name "$ifc" netns "$cli"
ip -n "$srv" addr add "$server/24" dev "$ifs"
ip -n "$cli" addr add "$client/24" dev "$ifc"
for ns in "$srv" "$cli"; do ip -n "$ns" link set lo up; done
ip -n "$srv" link set "$ifs" up
ip -n "$cli" link set "$ifc" up
# A veth takes the frames its peer's XDP program sends back (XDP_TX: SYN cookies) only while it
# runs an XDP program itself; a real NIC's peer needs nothing.
ip -n "$cli" link set dev "$ifc" xdpdrv obj "$build/bench/bpf/skel/rl_empty.bpf.o" sec xdp

step "boot: systemd as PID 1 of the container"
# As on a host: /sys and /proc/sys writable, the capabilities rld's unit keeps, and bpf() (the
# container's own system call filter refuses it, a host has none).
SYSTEMD_NSPAWN_API_VFS_WRITABLE=yes systemd-nspawn -q -D "$root" -M "$machine" -b --register=no \
  --keep-unit --network-namespace-path="/run/netns/$srv" \
  --capability=CAP_BPF,CAP_PERFMON,CAP_NET_ADMIN --system-call-filter=bpf \
  --console=read-only >"$work/console.log" 2>&1 &
nspawn_pid=$!
for _ in $(seq 1 100); do
  leader=$(pgrep -x -P "$nspawn_pid" systemd || true)
  [ -n "$leader" ] && break
  sleep 0.2
done
[ -n "$leader" ] || { cat "$work/console.log"; fail "the container's systemd did not start"; }
for _ in $(seq 1 300); do
  state=$(in_c systemctl is-system-running 2>/dev/null || true)
  case "$state" in running | degraded | maintenance | stopping) break ;; esac
  sleep 0.3
done
[ "$state" = running ] || { in_c systemctl --failed --no-pager; fail "the container's boot ended '$state'"; }
# A host's systemd mounts bpffs at boot; a container's leaves /sys/fs/bpf bare.
in_c mount -t bpf -o mode=0700 bpf /sys/fs/bpf
loose_before=$(in_c cat /proc/sys/net/netfilter/nf_conntrack_tcp_loose 2>/dev/null || echo absent)

step "apt install"
in_c apt-get install -y "/root/$(basename "$deb")" >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log"; fail "apt install"; }
[ "$(in_c dpkg-query -W -f='${Status} ${Version}' rl)" = "install ok installed $deb_version" ] || fail "rl $deb_version is not installed"
[ "$(in_c systemctl is-active rld || true)" = inactive ] || fail "a fresh install started rld"
in_c systemd-analyze security rld.service >"$work/security" 2>&1 || true
echo "systemd-analyze security: $(tail -1 "$work/security")"

step "configure: an interface, a broken policy; the first start fails and says where"
in_c sed -i "s/^interfaces: \[\].*/interfaces: [$ifs]/" /etc/rl/rld.yaml
in_c grep -q "^interfaces: \[$ifs\]" /etc/rl/rld.yaml || fail "rld.yaml has no interfaces line to set"
policy() {  # NAME CONTENT: a file in the policy directory, written as an editor would
  printf '%s' "$2" >"$work/policy" && cp "$work/policy" "$root/etc/rl/policies/$1"
}
# Two rules, one of them for SYN cookies; the first start gets the same file with a typo on
# line 8 (burts), the fixed start the file itself.
web_policy="rules:
  - name: web
    match: {protocol: tcp, port: 8080}
    limit: {rate: 100/s, burst: 100}
    syn_cookies: true
  - name: udp-echo
    match: {protocol: udp, port: 9000}
    limit: {rate: 50/s, burst: 50}
"
policy web.yaml "${web_policy/burst: 50/burts: 50}"
if in_c systemctl enable --now rld >"$work/start.log" 2>&1; then fail "rld started with a broken policy"; fi
for _ in $(seq 1 50); do [ "$(in_c systemctl is-active rld || true)" = failed ] && break; sleep 0.2; done
[ "$(in_c systemctl is-active rld || true)" = failed ] || fail "rld is $(in_c systemctl is-active rld), not failed"
in_c journalctl -u rld --no-pager >"$work/journal"
grep -q "web.yaml:8:[0-9]*" "$work/journal" || { tail -20 "$work/journal"; fail "the journal does not name web.yaml:8:COLUMN"; }
[[ "$(in_c ip -d link show dev "$ifs")" != *prog/xdp* ]] || fail "a failed start left a program on $ifs"

step "the fixed policy: rld active, READY, rules on $ifs"
policy web.yaml "$web_policy"
in_c systemctl restart rld || { in_c journalctl -u rld --no-pager | tail -20; fail "systemctl restart rld"; }
[ "$(in_c systemctl is-active rld)" = active ] || fail "rld is not active"
rlctl_json() { in_c rlctl -o json "$@"; }
status_field() { rlctl_json status | python3 -c "import json,sys; d=json.load(sys.stdin); print(d$1)"; }
[ "$(status_field "['rules']")" = 2 ] || fail "rlctl status: $(rlctl_json status)"
prog_id() { in_c ip -j -d link show dev "$ifs" | python3 -c "import json,sys; print(json.load(sys.stdin)[0].get('xdp',{}).get('prog',{}).get('id',''))"; }
first_prog=$(prog_id)
[ -n "$first_prog" ] || fail "no XDP program on $ifs"
# The container shares the server's namespace: its loopback is the metrics endpoint's.
ready=$(nsenter --net="/run/netns/$srv" -- curl -sf --max-time 5 http://127.0.0.1:9464/readyz) \
  || fail "/readyz does not answer 200: $ready"

# Per-rule counters from rlctl; PASSED and DROPPED.
rule_counts() { rlctl_json policy show "$1" | python3 -c "
import json, sys
d = json.load(sys.stdin)
c = d['counters']
print(c['passed_packets'], c['dropped_packets'])"; }

step "real packets: a UDP burst over the limit is cut to it"
server_mac=$(ip -n "$srv" -j link show dev "$ifs" | python3 -c "import json,sys; print(json.load(sys.stdin)[0]['address'])")
send_udp() {  # SOURCE COUNT
  in_cli "$build/tools/rlsend/rlsend" --iface "$ifc" --dst-mac "$server_mac" --src "$1" \
    --dst "$server" --proto udp --dport 9000 --count "$2" --rate 20000 --max-seconds 10 --quiet >/dev/null
}
send_udp "$sender" 1000
read -r passed dropped <<<"$(rule_counts udp-echo)"
echo "udp-echo: $passed passed, $dropped dropped of 1000"
[ "$dropped" -ge 800 ] && [ "$passed" -ge 50 ] && [ "$passed" -le 200 ] || fail "udp-echo passed $passed and dropped $dropped of 1000"

step "a real TCP client through the SYN-cookie rule"
nsenter --net="/run/netns/$srv" -- python3 -m http.server --bind "$server" 8080 --directory "$work" >/dev/null 2>&1 &
http_pid=$!
http_ok() { in_cli curl -sf --max-time 5 -o /dev/null "http://$server:8080/policy"; }
for _ in $(seq 1 50); do http_ok && break; sleep 0.2; done
http_ok || fail "the client cannot fetch through the SYN-cookie rule"
in_c nft list table inet rl_synproxy >/dev/null || fail "no inet rl_synproxy table while a syn_cookies rule is in force"
[ "$(in_c cat /proc/sys/net/netfilter/nf_conntrack_tcp_loose)" = 0 ] || fail "nf_conntrack_tcp_loose is not 0"
read -r passed _ <<<"$(rule_counts web)"
[ "$passed" -ge 1 ] || fail "the web rule saw no SYN"

step "systemctl reload"
reloads=$(status_field "['reloads']['ok']")
in_c systemctl reload rld
for _ in $(seq 1 50); do [ "$(status_field "['reloads']['ok']")" -gt "$reloads" ] && break; sleep 0.2; done
[ "$(status_field "['reloads']['ok']")" -gt "$reloads" ] || fail "systemctl reload did not reload"

step "runtime entries, then systemctl restart: the pinned program and state adopted"
in_c rlctl deny add "$denied" >/dev/null
in_c rlctl deny add 198.18.1.0/26 >/dev/null
in_c rlctl allow add 198.18.0.4 --ttl 2h >/dev/null
entries() { { in_c rlctl deny list; in_c rlctl allow list; } | grep -Eo '198\.18\.[0-9.]+(/[0-9]+)?' | sort | tr '\n' ' '; }
want_entries=$(entries)
case "$want_entries" in
  "198.18.0.3 198.18.0.4 198.18.1.0/26 " | "198.18.0.3/32 198.18.0.4/32 198.18.1.0/26 ") ;;
  *) fail "runtime entries: '$want_entries'" ;;
esac
counts_before=$(rule_counts udp-echo)
in_c systemctl restart rld
[ "$(in_c systemctl is-active rld)" = active ] || fail "rld is not active after restart"
# The maps are adopted with their state (the counters here); the program is reloaded onto them.
[ "$(rule_counts udp-echo)" = "$counts_before" ] || fail "counters after restart: $(rule_counts udp-echo), before: $counts_before"
journal_has "adopted pinned data path" || fail "no adoption in the journal"

denied_drops() {  # the denied source's packets that reach nothing: sent minus what the rule saw
  read -r p d <<<"$(rule_counts udp-echo)"
  send_udp "$denied" 200
  read -r p2 d2 <<<"$(rule_counts udp-echo)"
  echo $(( (p2 + d2) - (p + d) ))
}
check_running() {  # VERSION: rld of VERSION active, with the rules, a client served
  [ "$(in_c systemctl is-active rld)" = active ] || fail "rld is not active under $1"
  [ "$(in_c rld --version)" = "rld $1" ] || fail "rld --version: $(in_c rld --version)"
  [ "$(status_field "['rules']")" = 2 ] || fail "the rules did not carry over to $1"
  http_ok || fail "the client cannot fetch under $1"
}
check_entries() {  # VERSION: every runtime entry listed and the denied source denied
  [ "$(entries)" = "$want_entries" ] || fail "runtime entries under $1: '$(entries)', want '$want_entries'"
  [ "$(denied_drops)" = 0 ] || fail "the denied source reached the rules under $1"
}

step "apt install of $next_version: another data path layout"
in_c apt-get install -y "/root/$(basename "$next_deb")" >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log"; fail "apt upgrade"; }
check_running "$next_version"
check_entries "$next_version"
journal_has "replaced a data path with another layout" || fail "no layout change in the journal"

step "apt install of $version again: the downgrade"
# An older rld cannot read a newer layout's runtime maps: it says so, and the operator adds the
# entries again (docs/operations.md, Upgrade).
in_c apt-get install -y --allow-downgrades "/root/$(basename "$deb")" >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log"; fail "apt downgrade"; }
check_running "$version"
if [ "$(entries)" != "$want_entries" ]; then
  journal_has "entries of the replaced data path are lost: add them again" || fail "the downgrade lost the runtime entries without saying so"
  in_c rlctl deny add "$denied" >/dev/null
  in_c rlctl deny add 198.18.1.0/26 >/dev/null
  in_c rlctl allow add 198.18.0.4 --ttl 2h >/dev/null
fi
check_entries "$version"

step "apt remove, with rld.yaml broken meanwhile: nothing of rl left"
in_c sh -c 'echo "interfaces: [unclosed" >> /etc/rl/rld.yaml'
in_c apt-get remove -y rl >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log"; fail "apt remove"; }
[ "$(in_c systemctl is-active rld || true)" != active ] || fail "rld still runs"
[[ "$(in_c ip -d link show dev "$ifs")" != *prog/xdp* ]] || fail "apt remove left a program on $ifs"
# maps.debug and progs.debug are the kernel's own (bpf_preload).
pins=$(in_c find /sys/fs/bpf -mindepth 1 ! -name '*.debug')
[ -z "$pins" ] || fail "apt remove left pins: $pins"
[[ "$(in_c nft list tables)" != *rl_synproxy* ]] || fail "apt remove left the nftables table"
loose_after=$(in_c cat /proc/sys/net/netfilter/nf_conntrack_tcp_loose 2>/dev/null || echo absent)
[ "$loose_before" = absent ] || [ "$loose_after" = "$loose_before" ] || fail "nf_conntrack_tcp_loose is $loose_after, was $loose_before"
http_ok || fail "the client cannot fetch once rl is removed"
in_c test -f /etc/rl/rld.yaml || fail "apt remove removed the configuration"
# A remove keeps the unit enabled, as it keeps the configuration; deb-systemd-helper, run as
# dpkg runs it, knows the link the operator's `systemctl enable` made.
wants=/etc/systemd/system/multi-user.target.wants/rld.service
in_c test -L "$wants" || fail "apt remove dropped the enabled unit's link $wants"
dsh() { in_c env DPKG_MAINTSCRIPT_PACKAGE=rl deb-systemd-helper "$@"; }
dsh debian-installed rld.service || fail "deb-systemd-helper has no state for rld.service after apt remove"

step "apt purge: nothing of the unit's enablement left"
in_c apt-get purge -y rl >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log"; fail "apt purge"; }
in_c test -e /etc/rl/rld.yaml && fail "apt purge left /etc/rl/rld.yaml"
[ "$(in_c dpkg-query -W -f='${Status}' rl 2>/dev/null || true)" != "install ok installed" ] || fail "rl is still installed"
left=$(in_c find /etc/systemd/system -name 'rld.service*')
[ -z "$left" ] || fail "apt purge left $left"
left=$(in_c find /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked \
         -name 'rld.service*' 2>/dev/null || true)
[ -z "$left" ] || fail "apt purge left deb-systemd-helper's state: $left"
if dsh debian-installed rld.service; then fail "deb-systemd-helper still knows rld.service"; fi

step "apt install after the purge: installed, not enabled, not started"
in_c apt-get install -y "/root/$(basename "$deb")" >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log"; fail "apt install after purge"; }
[ "$(in_c systemctl is-enabled rld || true)" = disabled ] || fail "rld is $(in_c systemctl is-enabled rld) after a purge and an install"
[ "$(in_c systemctl is-active rld || true)" = inactive ] || fail "an install after a purge started rld"
in_c apt-get purge -y rl >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log"; fail "apt purge"; }
echo "PASS"
