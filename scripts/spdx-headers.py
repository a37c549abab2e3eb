#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every source file names its licence on an SPDX-License-Identifier line near its top: the XDP
programs and the headers they share with the controller (bpf/, abi/, bench/bpf/, *.bpf.c,
*.bpf.h) GPL-2.0-only OR BSD-2-Clause, everything else GPL-2.0-only (LICENSE). Files that cannot carry the line (test
inputs, example policies, documents, data) are listed in .reuse/dep5 instead.

  scripts/spdx-headers.py          # check: name each file without the right line, exit 1
  scripts/spdx-headers.py --fix    # add the line where it is missing (only that line)

Files tracked by git, and new ones not yet added (unless ignored), are checked.
"""
import fnmatch
import os
import re
import subprocess
import sys

DUAL = "GPL-2.0-only OR BSD-2-Clause"
GPL = "GPL-2.0-only"
# The licence files themselves, and the file naming the exceptions.
NOT_SOURCES = {"LICENSE", ".reuse/dep5"}
LINES_SEARCHED = 5
SPDX = re.compile(r"SPDX-License-Identifier:\s*(.*?)\s*(\*/)?\s*$")


def licence(path):
    bpf = path.startswith(("bpf/", "abi/", "bench/bpf/")) or path.endswith((".bpf.c", ".bpf.h"))
    return DUAL if bpf else GPL


def comment(path, expr):
    """The SPDX line as the file's language writes a comment; None for an unknown kind."""
    name = os.path.basename(path)
    ext = name.rsplit(".", 1)[-1] if "." in name else ""
    if expr == DUAL:
        expr = "(" + expr + ")"  # as the kernel writes a compound expression
    if (path.startswith(("bpf/", "abi/", "bench/bpf/")) or name.endswith(".bpf.h")) and ext == "h":
        return f"/* SPDX-License-Identifier: {expr} */"
    if ext in ("c", "cc", "h") or name.endswith(".cc.in"):
        return f"// SPDX-License-Identifier: {expr}"
    if ext == "lua":
        return f"-- SPDX-License-Identifier: {expr}"
    if re.fullmatch(r"[1-9]", ext):
        return f'.\\" SPDX-License-Identifier: {expr}'
    if ext == "h2m":  # help2man ignores the text before the first [section]
        return f"SPDX-License-Identifier: {expr}"
    hash_comment = {"sh", "py", "yaml", "yml", "cmake", "txt", "in", "clang-format",
                    "clang-tidy", "gitignore"}
    if (ext in hash_comment or name in ("Containerfile", "postinst", "prerm", "postrm", "lintian-overrides")
            or path == ".ci/run"):
        return f"# SPDX-License-Identifier: {expr}"
    return None


def dep5_globs(root):
    """The Files: patterns of .reuse/dep5 (a DEP-5 '*' also matches '/')."""
    globs = []
    try:
        text = open(os.path.join(root, ".reuse/dep5"), encoding="utf-8").read()
    except FileNotFoundError:
        return globs
    in_files = False
    for line in text.splitlines():
        if line.startswith("Files:"):
            globs += line[len("Files:"):].split()
            in_files = True
        elif in_files and line.startswith((" ", "\t")):
            globs += line.split()
        else:
            in_files = False
    return globs


def files(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others",
                          "--exclude-standard"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("spdx-headers: not a git checkout: " + out.stderr.strip())
    return sorted(set(p for p in out.stdout.splitlines() if os.path.isfile(os.path.join(root, p))))


def found_expression(lines):
    for line in lines[:LINES_SEARCHED]:
        m = SPDX.search(line)
        if m:
            return m.group(1).strip().removeprefix("(").removesuffix(")")
    return None


def main():
    fix = sys.argv[1:] == ["--fix"]
    if sys.argv[1:] and not fix:
        sys.exit(__doc__)
    root = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
    exempt = dep5_globs(root)
    problems = []
    for path in files(root):
        if path in NOT_SOURCES or path.startswith("LICENSES/"):
            continue
        if any(fnmatch.fnmatchcase(path, g) for g in exempt):
            continue
        want = licence(path)
        full = os.path.join(root, path)
        text = open(full, encoding="utf-8").read()
        lines = text.splitlines(keepends=True)
        got = found_expression(lines)
        if got == want:
            continue
        if got is not None:
            problems.append(f"{path}: SPDX-License-Identifier: {got}, want {want}")
            continue
        line = comment(path, want)
        if line is None:
            problems.append(f"{path}: no SPDX line, and no comment syntax known for it: add one "
                            "here, or list the file in .reuse/dep5")
            continue
        if not fix:
            problems.append(f"{path}: no SPDX-License-Identifier line (want {want})")
            continue
        at = 1 if lines and lines[0].startswith("#!") else 0
        lines.insert(at, line + "\n")
        mode = os.stat(full).st_mode
        with open(full, "w", encoding="utf-8") as f:
            f.write("".join(lines))
        os.chmod(full, mode)
    for p in problems:
        print("spdx-headers:", p, file=sys.stderr)
    if problems and not fix:
        print("spdx-headers: run scripts/spdx-headers.py --fix", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
