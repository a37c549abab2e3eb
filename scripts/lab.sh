#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# A lab by hand, the same shape as the integration tests' rl::testing::Lab with one server: two
# network namespaces joined by a veth pair, nothing in the host namespace, no route out.
#
#   scripts/lab.sh up rl-demo     # creates rl-demo-cli and rl-demo-srv (idempotent)
#   scripts/lab.sh down rl-demo   # removes them and what runs inside (idempotent)
#
# Then, for example:
#   ip netns exec rl-demo-cli build/tools/rlsend/rlsend --iface rlc0 --dst-mac <server MAC> \
#     --src 198.18.200.0/24 --sources 100 --dst 192.0.2.2 --dport 9000 --count 1000
#
# Addresses: client 192.0.2.1/30 3fff:0:ff::1/64, server 192.0.2.2/30 3fff:0:ff::2/64.
# Spoofed sources come from the rest of 198.18.0.0/15 and 2001:db8::/32.
set -euo pipefail

usage() {
  echo "usage: $0 up|down rl-NAME" >&2
  exit 2
}

[ $# -eq 2 ] || usage
cmd=$1
name=$2
# rl-<digits>-... is what the test labs use (their creator's PID): reap_stale() would delete a
# hand-made lab with such a name, so it is refused here.
if ! [[ $name =~ ^rl-[A-Za-z][A-Za-z0-9_-]{0,39}$ ]]; then
  echo "$0: '$name': the name must be rl- followed by a letter, then letters, digits, - or _" >&2
  exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "$0: network namespaces need root" >&2
  exit 1
fi

cli=$name-cli
srv=$name-srv
# The ends' names. A benchmark that must tell its own NAPI thread ("napi/<ifname>-<id>") from
# other labs' gives them names of its own.
cif=${RL_LAB_CLIENT_IF:-rlc0}
sif=${RL_LAB_SERVER_IF:-rls0}

ns_exists() { [ -e "/run/netns/$1" ]; }

# Kills what runs inside a namespace (only lab processes can be there), then deletes it; its
# end of the veth pair goes with it, and the other end with that.
remove_ns() {
  ns_exists "$1" || return 0
  local pids
  pids=$(ip netns pids "$1" 2>/dev/null || true)
  [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
  ip netns del "$1"
}

down() {
  remove_ns "$cli"
  remove_ns "$srv"
}

show() {
  for ns in "$cli" "$srv"; do
    local dev=$cif
    [ "$ns" = "$srv" ] && dev=$sif
    printf '%s %s ifindex=%s mac=%s %s\n' "$ns" "$dev" \
      "$(ip netns exec "$ns" cat /sys/class/net/$dev/ifindex)" \
      "$(ip netns exec "$ns" cat /sys/class/net/$dev/address)" \
      "$(ip -n "$ns" -o addr show dev "$dev" scope global | awk '{printf "%s ", $4}')"
  done
}

setup_ns() {
  ip netns add "$1"
  ip -n "$1" link set lo up
  # As in lab.cc: spoofed sources have no route back, so reverse-path filtering would drop them;
  # no DAD and no router solicitations, so addresses work at once and counters stay quiet.
  ip netns exec "$1" sysctl -q -w net.ipv4.conf.all.rp_filter=0 \
    net.ipv4.conf.default.rp_filter=0 net.ipv6.conf.all.accept_dad=0 \
    net.ipv6.conf.default.accept_dad=0 net.ipv6.conf.default.router_solicitations=0
}

setup_end() { # ns dev v4 v6 peer_v4 peer_v6 peer_mac
  ip -n "$1" addr add "$3/30" dev "$2"
  ip -n "$1" addr add "$4/64" dev "$2" nodad
  ip -n "$1" neigh replace "$5" lladdr "$7" dev "$2" nud permanent
  ip -n "$1" neigh replace "$6" lladdr "$7" dev "$2" nud permanent
  ip -n "$1" link set "$2" up
  ip netns exec "$1" sysctl -q -w "net.ipv4.conf.$2.rp_filter=0"
}

up() {
  if ns_exists "$cli" && ns_exists "$srv" && ip -n "$cli" link show "$cif" >/dev/null 2>&1; then
    show
    return
  fi
  down # a half-built lab from an interrupted run
  trap 'echo "$0: setup failed, removing $name" >&2; down' ERR
  setup_ns "$cli"
  setup_ns "$srv"
  # Both ends are created inside their namespaces: the pair never exists in the host's.
  ip link add "$cif" netns "$cli" type veth peer name "$sif" netns "$srv"
  local cmac smac
  cmac=$(ip netns exec "$cli" cat /sys/class/net/$cif/address)
  smac=$(ip netns exec "$srv" cat /sys/class/net/$sif/address)
  setup_end "$cli" "$cif" 192.0.2.1 3fff:0:ff::1 192.0.2.2 3fff:0:ff::2 "$smac"
  setup_end "$srv" "$sif" 192.0.2.2 3fff:0:ff::2 192.0.2.1 3fff:0:ff::1 "$cmac"
  trap - ERR
  # The link-local addresses come up a moment later (linkwatch); wait, so the lab is quiet.
  for _ in $(seq 500); do
    if ip -n "$cli" -6 -o addr show dev "$cif" scope link | grep -v tentative | grep -q fe80 &&
      ip -n "$srv" -6 -o addr show dev "$sif" scope link | grep -v tentative | grep -q fe80; then
      break
    fi
    sleep 0.01
  done
  show
}

case $cmd in
  up) up ;;
  down) down ;;
  *) usage ;;
esac
