#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The Debian package as a fresh machine gets it. cpack builds it; its control data and file list
# are checked, and what Debian asks of a package: the copyright file (DEP-5), the changelog,
# documentation over 4 KB compressed and no relative link in it to a file the package does not
# install, stripped programs with their debug information in rl-dbgsym by build ID, man pages
# that format without a warning, and lintian without an error or warning that the package does
# not override with its reason. Then it is installed with apt into a clean Debian 12 root
# (debootstrap, minbase) by running the container image definition's own steps, which proves its
# Depends are complete.
# In that root: rld --version, rlctl --version, rlctl policy validate on the shipped examples;
# systemd-analyze verify on the installed unit and its exposure score (no worse than measured).
#
#   package_test.sh BUILD_DIR SOURCE_DIR
# Needs root and Debian's mirror (RL_DEBIAN_MIRROR, default the one apt uses).
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")
version=$(sed -n 's/^project(rl VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
# The package's version: the project's and the Debian revision of packaging/debian/changelog.
deb_version=$(sed -n '1s/^rl (\(.*\)) .*/\1/p' "$src/packaging/debian/changelog")
mirror=${RL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# The exposure `systemd-analyze security` gives the hardened unit (docs/operations.md): 2.4 with
# CAP_SYS_NICE for the event loop's real-time priority, and ProtectKernelTunables= and
# ProcSubset= spelled out as paths so that the pins and the conntrack sysctl stay writable.
max_exposure=${RL_MAX_EXPOSURE:-2.4}
# Installed-Size in KiB: the stripped programs and the docs come to about 4 MiB; unstripped, the
# programs alone are over 80 MiB.
max_installed_kib=${RL_MAX_INSTALLED_KIB:-8192}

fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot)"
for tool in cpack dpkg-deb dpkg-parsechangelog debootstrap systemd-analyze unshare lintian man groff file readelf; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/install-deps.sh)"
done

work=$(mktemp -d /tmp/rl-package-test.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT

echo "== cpack"
(cd "$build" && cpack -G DEB -B "$work/out") >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; fail "cpack"; }
[[ "$deb_version" == "$version"-* ]] || fail "packaging/debian/changelog is for $deb_version, the project is $version"
deb="$work/out/rl_${deb_version}_amd64.deb"
ddeb="$work/out/rl-dbgsym_${deb_version}_amd64.ddeb"
[ -f "$deb" ] || fail "no $deb; cpack wrote: $(ls "$work/out")"
[ -f "$ddeb" ] || fail "no $ddeb; cpack wrote: $(ls "$work/out")"

echo "== control data"
dpkg-deb -f "$deb" Package Version Maintainer Installed-Size Depends Description
[ "$(dpkg-deb -f "$deb" Version)" = "$deb_version" ] || fail "Version: $(dpkg-deb -f "$deb" Version)"
maintainer=$(dpkg-deb -f "$deb" Maintainer)
[[ "$maintainer" =~ ^[^@\<]+\ \<[^@\>]+@[a-z0-9.-]+\>$ && "$maintainer" != *localhost* ]] \
  || fail "Maintainer is not a name and an address: $maintainer"
# A CMake list reaches the description joined by ';', with no space after it.
if dpkg-deb -f "$deb" Description | grep -q ';[^ ]'; then fail "a list's ';' in the Description"; fi
installed_kib=$(dpkg-deb -f "$deb" Installed-Size)
echo "installed size: $installed_kib KiB"
[ "$installed_kib" -le "$max_installed_kib" ] || fail "Installed-Size $installed_kib KiB is over $max_installed_kib"
depends=$(dpkg-deb -f "$deb" Depends)
for lib in libbpf1 libsystemd0 libyaml-cpp0.7 libhiredis0.14 libssl3 libprometheus-cpp-pull1.0 libc6; do
  [[ "$depends" == *"$lib"* ]] || fail "Depends lacks $lib: $depends"
done
mkdir "$work/control"
dpkg-deb -e "$deb" "$work/control"
expected_conffiles=$( (echo /etc/rl/rld.yaml; for p in "$src"/policies/*.yaml; do echo "/etc/rl/examples/$(basename "$p")"; done) | sort)
actual_conffiles=$(sort "$work/control/conffiles")
[ "$expected_conffiles" = "$actual_conffiles" ] || fail "conffiles: got
$actual_conffiles
want
$expected_conffiles"
for script in postinst prerm postrm; do [ -x "$work/control/$script" ] || fail "no $script"; done

echo "== files"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$work/files"
for f in /usr/sbin/rld /usr/bin/rlctl /usr/lib/systemd/system/rld.service \
         /usr/share/man/man8/rld.8.gz /usr/share/man/man8/rlctl.8.gz /usr/share/man/man5/rl-policy.5.gz \
         /usr/share/bash-completion/completions/rlctl /usr/share/doc/rl/README.md.gz \
         /usr/share/doc/rl/docs/operations.md.gz /usr/share/doc/rl/docs/prometheus/alerts.yml.gz \
         /usr/share/doc/rl/deploy/kubernetes/rld-daemonset.yaml.gz /etc/rl/policies/; do
  grep -qx "$f" "$work/files" || fail "$f is not in the package"
done
if grep -E '^/usr/local|/tests?/|bench_xdp|rlsend|udp_sink' "$work/files"; then fail "files that do not belong"; fi

echo "== Debian's files: copyright, changelog"
pkg="$work/pkg"
dpkg-deb -x "$deb" "$pkg"
doc="$pkg/usr/share/doc/rl"
[ -f "$doc/copyright" ] || fail "no /usr/share/doc/rl/copyright"
# Machine-readable (DEP-5): a header with Format, every Files paragraph with Copyright and a
# License whose every name has its text in a paragraph of its own.
python3 - "$doc/copyright" <<'PY' || fail "copyright is not DEP-5"
import re, sys
paras, cur, last = [], {}, None
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    if not line.strip():
        if cur:
            paras.append(cur)
        cur, last = {}, None
    elif line[0] in " \t":
        if last is None:
            sys.exit("a continuation line outside a field: " + line)
        cur[last] += "\n" + line.strip()
    else:
        m = re.match(r"([A-Za-z-]+):\s*(.*)$", line)
        if not m:
            sys.exit("not a field: " + line)
        last = m.group(1)
        cur[last] = m.group(2)
if cur:
    paras.append(cur)
head, rest = paras[0], paras[1:]
if head.get("Format") != "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/":
    sys.exit("no DEP-5 Format line")
files = [p for p in rest if "Files" in p]
texts = {p["License"].split("\n")[0] for p in rest if "Files" not in p and "License" in p}
if not files or files[0]["Files"].split() != ["*"]:
    sys.exit("the first Files paragraph is not Files: *")
for p in files:
    if not p.get("Copyright") or not p.get("License"):
        sys.exit("Files: %s lacks Copyright or License" % p["Files"])
    for name in re.split(r"\s+(?:or|and)\s+", p["License"].split("\n")[0]):
        if name not in texts:
            sys.exit("License %s of Files: %s has no text" % (name, p["Files"]))
print("copyright: DEP-5,", len(files), "Files paragraphs, licences", ", ".join(sorted(texts)))
PY
[ -f "$doc/changelog.Debian.gz" ] || fail "no /usr/share/doc/rl/changelog.Debian.gz"
zcat "$doc/changelog.Debian.gz" >"$work/changelog"
[ "$(dpkg-parsechangelog -l "$work/changelog" -S Version)" = "$deb_version" ] \
  || fail "changelog.Debian.gz is not for $deb_version"

echo "== documentation: compressed over 4 KB, no link to a file the package does not ship"
# Debian Policy 12.3: gzip -9n what is larger than 4 KB in /usr/share/doc, except copyright.
big=$(find "$doc" -type f -size +4096c ! -name '*.gz' ! -name copyright)
[ -z "$big" ] || fail "documentation over 4 KB not compressed: ${big//$pkg/}"
for gz in $(find "$doc" -name '*.gz'); do
  gzip -t "$gz" || fail "${gz#"$pkg"} is not gzip"
done
# Every relative link of a Markdown document, [text](target) outside fenced code, resolved
# against the document's directory as installed, names something the package installs.
python3 - "$doc" <<'PY' || fail "links to files the package does not ship"
import gzip, os, re, sys
root = sys.argv[1]
link = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
bad = links = 0
for d, _, names in os.walk(root):
    for n in names:
        if not n.endswith((".md", ".md.gz")):
            continue
        path = os.path.join(d, n)
        text = (gzip.open if n.endswith(".gz") else open)(path, "rt", encoding="utf-8").read()
        fenced = False
        for i, line in enumerate(text.splitlines(), 1):
            if re.match(r"^\s*(```|~~~)", line):
                fenced = not fenced
                continue
            for m in [] if fenced else link.finditer(line):
                target = m.group(1).split("#")[0]
                if not target or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target) or target.startswith("/"):
                    continue
                links += 1
                if not os.path.exists(os.path.normpath(os.path.join(d, target))):
                    bad += 1
                    print(f"{os.path.relpath(path, root)}:{i}: {m.group(0)}: not installed", file=sys.stderr)
print(f"documentation: {links} relative links, {bad} to files not installed")
sys.exit(1 if bad else 0)
PY

echo "== stripped programs, debug information in rl-dbgsym"
dbg="$work/dbgsym"
dpkg-deb -x "$ddeb" "$dbg"
[ "$(dpkg-deb -f "$ddeb" Package)" = rl-dbgsym ] || fail "the debug package is $(dpkg-deb -f "$ddeb" Package)"
[[ "$(dpkg-deb -f "$ddeb" Depends)" == *"rl (= $deb_version)"* ]] || fail "rl-dbgsym Depends: $(dpkg-deb -f "$ddeb" Depends)"
# Its md5sums name its files as dpkg --verify reads them (packaging/debian/dbgsym.cmake).
(cd "$dbg" && dpkg-deb -I "$ddeb" md5sums | md5sum --check --quiet) || fail "rl-dbgsym's md5sums"
for prog in usr/sbin/rld usr/bin/rlctl; do
  file "$pkg/$prog" | grep -q ', stripped' || fail "$prog is not stripped: $(file "$pkg/$prog")"
  if readelf -S "$pkg/$prog" | grep -q '\.debug_info'; then fail "$prog has .debug_info"; fi
  id=$(readelf -n "$pkg/$prog" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
  [ -n "$id" ] || fail "$prog has no build ID"
  debug="$dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
  [ -f "$debug" ] || fail "rl-dbgsym has no $debug for $prog"
  readelf -S "$debug" 2>/dev/null | grep -q '\.debug_info' || fail "$debug holds no .debug_info"
  echo "$prog: stripped, $(stat -c %s "$pkg/$prog") bytes; debug information $(stat -c %s "$debug") bytes, build ID $id"
done

echo "== man pages"
for page in "$pkg"/usr/share/man/man*/*.gz; do
  # What lintian runs (manpage-has-errors-from-man), and groff with every warning.
  warnings=$( (zcat "$page" | LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
               man --warnings -E UTF-8 -l -Tutf8 -Z - >/dev/null) 2>&1
             zcat "$page" | groff -ww -z -man 2>&1)
  [ -z "$warnings" ] || fail "$(basename "$page"): $warnings"
done
zcat "$pkg/usr/share/man/man8/rlctl.8.gz" | grep -q '^\.SH COMMANDS' || fail "rlctl.8 has no COMMANDS"

echo "== lintian"
# Fails on any error or warning the package does not override (/usr/share/lintian/overrides/rl,
# each override with its reason).
lintian --fail-on error,warning --info "$deb" "$ddeb" || fail "lintian"

echo "== clean root: debootstrap bookworm (minbase)"
root="$work/root"
start=$(date +%s)
mkdir -p /var/cache/rl-debootstrap
debootstrap --variant=minbase --cache-dir=/var/cache/rl-debootstrap bookworm "$root" "$mirror" \
  >"$work/debootstrap.log" 2>&1 || { tail -20 "$work/debootstrap.log"; fail "debootstrap"; }
echo "debootstrap took $(( $(date +%s) - start )) s"

# Commands in the root run in a mount namespace of their own: /proc mounted there vanishes
# with it, whatever happens to this script.
in_root() { unshare --mount --fork sh -c 'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$root" "$@"; }

echo "== install: the steps of deploy/container/Containerfile"
containerfile="$src/deploy/container/Containerfile"
grep -q '^FROM debian:bookworm' "$containerfile" || fail "the image is not built on bookworm, the root is"
# COPY from the build context (where the .deb is) into the root; RUN in the root, as a build would.
python3 - "$containerfile" >"$work/steps" <<'PY'
import re, sys
text = re.sub(r"\\\n", " ", open(sys.argv[1]).read())
for line in text.splitlines():
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    op, _, arg = line.partition(" ")
    if op in ("COPY", "RUN"):
        print(op, arg)
    elif op not in ("FROM", "EXPOSE", "ENTRYPOINT", "CMD", "LABEL", "ENV"):
        sys.exit("Containerfile: no support for " + op)
PY
start=$(date +%s)
while read -r op arg; do
  case "$op" in
    COPY) read -r pattern dest <<<"$arg"
          [[ "$pattern" == rl_*.deb ]] || fail "COPY $pattern: only the package is copied"
          cp "$deb" "$root$dest" ;;
    RUN) echo "RUN $arg"
         in_root env DEBIAN_FRONTEND=noninteractive sh -ec "$arg" >"$work/run.log" 2>&1 \
           || { tail -30 "$work/run.log"; fail "RUN $arg"; } ;;
  esac
done <"$work/steps"
echo "install took $(( $(date +%s) - start )) s"
in_root dpkg-query -W -f='${Status}\n' rl | grep -qx "install ok installed" || fail "rl is not installed"

echo "== the programs in the root"
out=$(in_root rld --version) || fail "rld --version"
[ "$out" = "rld $version" ] || fail "rld --version printed '$out'"
out=$(in_root rlctl --version) || fail "rlctl --version"
[ "$out" = "rlctl $version" ] || fail "rlctl --version printed '$out'"
in_root sh -c 'rlctl policy validate /etc/rl/examples/*.yaml' || fail "the shipped policies do not validate"
for p in "$root"/etc/rl/examples/*.yaml; do
  in_root rlctl policy validate "/etc/rl/examples/$(basename "$p")" >/dev/null || fail "$p does not validate"
done
in_root rld --config /etc/rl/rld.yaml --help >/dev/null || fail "rld --help with the shipped configuration"
in_root bash -c 'source /usr/share/bash-completion/completions/rlctl && complete -p rlctl' >/dev/null \
  || fail "the bash completion does not load"
for page in rld.8 rlctl.8; do
  zcat "$root/usr/share/man/man8/$page.gz" | grep -q '^\.SH OPTIONS' || fail "$page has no OPTIONS"
done

echo "== the unit, on the root's own systemd"
# A server has systemd, kill (procps) and man; the image does not need them.
start=$(date +%s)
in_root env DEBIAN_FRONTEND=noninteractive sh -ec \
  'apt-get update && apt-get install -y --no-install-recommends systemd procps man-db' \
  >"$work/systemd.log" 2>&1 || { tail -30 "$work/systemd.log"; fail "installing systemd in the root"; }
echo "systemd, procps, man-db took $(( $(date +%s) - start )) s"
unit=/usr/lib/systemd/system/rld.service
grep -qx "ExecStart=/usr/sbin/rld --config /etc/rl/rld.yaml" "$root$unit" || fail "ExecStart: $(grep ExecStart "$root$unit")"
# verify also checks that the Documentation= man pages open.
in_root systemd-analyze verify "$unit" || fail "systemd-analyze verify"
in_root systemd-analyze security --offline=true "$unit" >"$work/security" 2>&1 || true
tail -1 "$work/security"
exposure=$(sed -n 's/.*Overall exposure level for rld.service: \([0-9.]*\).*/\1/p' "$work/security")
[ -n "$exposure" ] || { cat "$work/security"; fail "no exposure level"; }
awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e <= m) }' \
  || fail "exposure $exposure is above $max_exposure: the unit lost hardening"

echo "PASS"
