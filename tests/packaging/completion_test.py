#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""rlctl's bash completion against rlctl itself: for every command path `rlctl --help` shows
(recursively), completing after it offers exactly the subcommands and options that --help
lists; option values and positional arguments complete to their choices, files, interfaces.

usage: completion_test.py RLCTL
"""
import os
import re
import subprocess
import sys
import tempfile

rlctl = sys.argv[1]
script = subprocess.run([rlctl, "completion", "bash"], capture_output=True, text=True,
                        check=True).stdout
failures = []


def complete(words, cwd):
    """COMPREPLY for a command line whose last word is being completed."""
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    prog = (script + f"\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; _rlctl\n"
            'printf "%s\\n" "${COMPREPLY[@]}"\n')
    r = subprocess.run(["bash", "-c", prog], capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        failures.append(f"{words}: bash failed: {r.stderr}")
    return set(filter(None, r.stdout.split("\n")))


def help_sections(path):
    """Subcommand names and option names of `rlctl PATH --help`."""
    out = subprocess.run([rlctl, *path, "--help"], capture_output=True, text=True).stdout
    subs, opts, section = set(), set(), None
    for line in out.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line[:-1].lower()
            continue
        m = re.match(r"^  (\S+)", line)
        if not m:
            continue
        if section == "subcommands":
            subs.add(m.group(1))
        elif section == "options":
            opts.update(n for n in m.group(1).split(",") if n.startswith("-"))
    return subs, opts


def expect(words, want, cwd, exact=True):
    got = complete(words, cwd)
    ok = got == want if exact else want <= got
    if not ok:
        failures.append(f"complete {' '.join(words)!r}: got {sorted(got)}, want "
                        f"{'' if exact else 'at least '}{sorted(want)}")


with tempfile.TemporaryDirectory() as empty:
    # Every command path, as --help shows it.
    # rlctl's global options (-o, --socket, ...) are taken after any subcommand too.
    global_opts = help_sections([])[1]
    paths, todo = [], [[]]
    while todo:
        path = todo.pop()
        subs, opts = help_sections(path)
        if not opts:
            failures.append(f"rlctl {' '.join(path)} --help lists no options")
        paths.append(path)
        todo += [path + [s] for s in subs]
        positional = {"attach", "detach", "validate", "diff", "apply", "completion", "help"}
        if not path or path[-1] not in positional:
            expect(["rlctl", *path, ""], subs, empty)
        expect(["rlctl", *path, "-"], opts | global_opts if path else opts, empty)
    if len(paths) < 15:
        failures.append(f"only {len(paths)} command paths found in --help")

    # Values and positionals.
    expect(["rlctl", "-o", ""], {"table", "json"}, empty)
    expect(["rlctl", "-s", "/tmp/x.sock", "-o", "j"], {"json"}, empty)
    expect(["rlctl", "-s", "/tmp/x.sock", "policy", ""], help_sections(["policy"])[0], empty)
    expect(["rlctl", "completion", ""], {"bash"}, empty)
    # `rlctl help COMMAND`: the commands, as --help lists them.
    expect(["rlctl", "help", ""], help_sections([])[0], empty)
    expect(["rlctl", "help", "po"], {"policy"}, empty)
    expect(["rlctl", "stats", "-o", ""], {"table", "json"}, empty)
    expect(["rlctl", "top", "--by", ""], {"drops", "traffic"}, empty)
    expect(["rlctl", "attach", ""], set(os.listdir("/sys/class/net")), empty)
    expect(["rlctl", "attach", "lo", "--mode", ""], set(), empty)
    with tempfile.TemporaryDirectory() as d:
        for f in ("web.yaml", "dns.yml", "notes.txt"):
            open(os.path.join(d, f), "w").close()
        os.mkdir(os.path.join(d, "more"))
        expect(["rlctl", "policy", "validate", ""], {"web.yaml", "dns.yml", "more"}, d)
        expect(["rlctl", "policy", "apply", "web.yaml", "w"], {"web.yaml"}, d)

for f in failures:
    print("FAIL:", f)
print(f"bash completion: {'FAIL' if failures else 'ok'}")
sys.exit(1 if failures else 0)
