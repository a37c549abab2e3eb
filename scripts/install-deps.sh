#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Installs every build, test and benchmark dependency of rl from Debian packages.
# Idempotent: packages already present are left alone; quiet unless something fails.
set -euo pipefail

packages=(
  build-essential cmake pkg-config clang llvm lld
  libbpf-dev bpftool libelf-dev zlib1g-dev linux-libc-dev
  libcli11-dev libyaml-cpp-dev libhiredis-dev prometheus-cpp-dev libnftables-dev
  libnetfilter-conntrack-dev
  libssl-dev openssl  # TLS to Redis; the TLS tests make their own CA with openssl
  libgtest-dev libgmock-dev googletest libbenchmark-dev
  nlohmann-json3-dev
  redis-server prometheus
  nginx-light wrk  # bench-protect.sh: a server and a legitimate client under a flood
  linux-perf  # profile-xdp.sh, and bench-live.sh's profiles (RL_BENCH_PERF_DIR)
  iproute2 nftables iptables ipset ethtool curl python3 python3-yaml util-linux
  clang-format clang-tidy libclang-rt-dev  # format and tidy checks; ASan, UBSan, libFuzzer runtimes
  libsystemd-dev systemd libcap2-bin
  dpkg-dev help2man debootstrap python3-kubernetes
  systemd-container  # the package lifecycle test boots systemd in a container (systemd-nspawn)
  lintian man-db groff-base file binutils  # the package checks: lintian, man pages, stripping
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages: ${missing[*]} (run as root)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Debian's redis-server, prometheus and nginx packages start system services on install; the
# tests and benchmarks start their own instances in their own namespaces or on private ports, so
# the packaged ones are stopped to stay out of the way.
for svc in redis-server prometheus prometheus-node-exporter nginx; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$svc" 2>/dev/null; then
    systemctl stop "$svc" >/dev/null 2>&1 || true
  fi
done
exit 0
