#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes a build's compile commands one source file each, for clang-tidy.

A unity build (CMAKE_UNITY_BUILD) compiles a target's files through generated
Unity/unity_N_cxx.cxx files that #include them, and its compile_commands.json names only
those. clang-tidy checks each file alone, so each included file gets its batch's command.

    tidy-compile-db.py BUILD_DIR OUT_DIR   # writes OUT_DIR/compile_commands.json
"""
import json
import os
import re
import sys

UNITY = re.compile(r"/Unity/unity_[0-9]+_(c|cxx)\.(c|cxx)$")
INCLUDE = re.compile(r'^#include "(.+)"$')


def expand(entry):
    unity = os.path.join(entry["directory"], entry["file"])
    if not UNITY.search(unity):
        return [entry]
    with open(unity, encoding="utf-8") as f:
        sources = [m.group(1) for m in map(INCLUDE.match, f.read().splitlines()) if m]
    out = []
    for src in sources:
        e = dict(entry, file=src)
        if "command" in e:
            e["command"] = e["command"].replace(entry["file"], src)
        if "arguments" in e:
            e["arguments"] = [src if a == entry["file"] else a for a in e["arguments"]]
        out.append(e)
    return out


def main():
    build, out_dir = sys.argv[1], sys.argv[2]
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "compile_commands.json"), "w", encoding="utf-8") as f:
        json.dump([e for entry in entries for e in expand(entry)], f, indent=1)


if __name__ == "__main__":
    main()
