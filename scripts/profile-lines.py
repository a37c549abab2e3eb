#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Charge CPU samples to the BPF source lines they fell on.

usage: perf script -F ip | scripts/profile-lines.py LINES [--top N]

LINES is what `bench_xdp --lines` wrote: "func ADDR LEN NAME" and "line ADDR FILE:LINE TEXT"
records of the loaded programs (bench/jit_lines.h). A sample inside a function belongs to the
last line at or before its address. Shares are of the samples that fell in those functions.
A sample lands on the instruction after the one that stalled as often as on the stalled one,
so read a line's share together with the lines just before it.
"""
import argparse
import bisect
import collections
import sys


def read_lines(path):
    funcs, lines = [], []
    with open(path) as f:
        for rec in f:
            kind, addr, rest = rec.rstrip("\n").split(" ", 2)
            if kind == "func":
                length, name = rest.split(" ", 1)
                funcs.append((int(addr, 16), int(length), name))
            elif kind == "line":
                where, _, text = rest.partition(" ")
                lines.append((int(addr, 16), where, text.strip()))
    funcs.sort()
    lines.sort(key=lambda l: l[0])
    return funcs, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("lines")
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    funcs, lines = read_lines(args.lines)
    if not funcs or not lines:
        sys.exit(f"profile-lines: {args.lines} holds no functions or lines")
    starts = [f[0] for f in funcs]
    line_addrs = [l[0] for l in lines]
    total = inside = 0
    by_func, by_line = collections.Counter(), collections.Counter()
    text = {}
    for rec in sys.stdin:
        fields = rec.split()
        if not fields:
            continue
        try:
            ip = int(fields[0], 16)
        except ValueError:
            continue
        total += 1
        i = bisect.bisect_right(starts, ip) - 1
        if i < 0 or ip >= funcs[i][0] + funcs[i][1]:
            continue
        inside += 1
        by_func[funcs[i][2]] += 1
        j = bisect.bisect_right(line_addrs, ip) - 1
        if j >= 0:
            # A header's line inlined into two functions is two places: keep them apart.
            where = (funcs[i][2], lines[j][1])
            by_line[where] += 1
            text[where] = lines[j][2]
    if not inside:
        sys.exit(f"profile-lines: none of {total} samples fell in the programs")
    print(f"{inside} of {total} samples ({100 * inside / total:.1f}%) in the programs\n")
    print("by function:")
    for name, n in by_func.most_common():
        print(f"  {100 * n / inside:5.1f}%  {name}")
    print(f"\nby source line (top {args.top}):")
    for where, n in by_line.most_common(args.top):
        print(f"  {100 * n / inside:5.1f}%  {where[0]:16s} {where[1]:22s} {text[where][:72]}")


if __name__ == "__main__":
    main()
