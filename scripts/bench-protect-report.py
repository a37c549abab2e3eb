#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Tables for scripts/bench-protect.sh: reads its raw measurements and prints markdown.

Raw lines (tab-separated): round, contender, flood rate offered (frames/s, 0 for none, "fast"
for as fast as the generator goes), wrk's requests/s, its p99 latency (ms), the flood frames/s
the server's link received, the share of the time the flood's NAPI thread was on the CPU, and
the flood frames/s that reached the server's stack (bench-protect.sh's stack_in).
"""
import importlib.util
import pathlib
import statistics
import sys

_live = importlib.util.spec_from_file_location(
    "bench_live_report", pathlib.Path(__file__).with_name("bench-live-report.py"))
_module = importlib.util.module_from_spec(_live)
_live.loader.exec_module(_module)
TITLES = _module.TITLES
spread = _module.spread

# A contender absorbs a flood rate when the client keeps at least this share of its baseline.
ABSORBED = 0.95


def rate_key(rate):
    return float("inf") if rate == "fast" else int(rate)


def rate_title(rate):
    if rate == "fast":
        return "as fast as it goes"
    if rate == "0":
        return "no flood"
    return f"{int(rate) / 1e6:.2f} Mpps"


def main(path):
    rows = []
    with open(path) as f:
        for line in f:
            rnd, who, rate, rps, p99, rx, napi, stack = line.rstrip("\n").split("\t")
            rows.append((int(rnd), who, rate, float(rps), float(p99), int(rx), float(napi),
                         int(stack)))
    baseline = {r[0]: r[3] for r in rows if r[1] == "none" and r[2] == "0"}
    if not baseline:
        sys.exit("bench-protect-report: no baseline (no filter, no flood) in " + path)
    contenders = list(dict.fromkeys(r[1] for r in rows))
    rates = sorted(dict.fromkeys(r[2] for r in rows), key=rate_key)

    by = {}  # (contender, rate) -> its rounds
    for r in rows:
        by.setdefault((r[1], r[2]), []).append(r)

    def table(cell):
        """One row per contender, one column per rate; cell(rate, rounds) renders a figure."""
        print("| contender | " + " | ".join(rate_title(r) for r in rates) + " |")
        print("|---|" + "---:|" * len(rates))
        for who in contenders:
            cells = [cell(rate, by[(who, rate)]) if (who, rate) in by else "" for rate in rates]
            print(f"| {TITLES[who]} | " + " | ".join(cells) + " |")

    def shares(got):
        return [100 * r[3] / baseline[r[0]] for r in got]

    def latency(rate, got):
        p99 = statistics.median(r[4] for r in got)
        rx = statistics.median(r[5] for r in got) / 1e6
        return f"{p99:.2f} ms" + (f" @ {rx:.2f}" if rate != "0" else "")

    print("Goodput: wrk's requests/s as a share of the baseline (no filter, no flood) of the")
    print("same round; medians over rounds, (min–max) across them.")
    print()
    table(lambda rate, got: spread(shares(got), "{:.0f}%"))
    print()
    print("p99 latency, ms, and the flood the server's link received, Mpps (medians):")
    print()
    table(latency)
    print()
    print("The flood that got past the filter to the server's stack, frames/s (medians):")
    print()
    table(lambda rate, got: f"{statistics.median(r[7] for r in got):,.0f}")
    print()
    absorbed = {}  # contender -> the highest flood received with goodput >= ABSORBED
    for (who, rate), got in by.items():
        if rate != "0" and statistics.median(shares(got)) >= 100 * ABSORBED:
            received = statistics.median(r[5] for r in got)
            absorbed[who] = max(absorbed.get(who, 0), received)
    print(f"Highest flood each contender absorbed (goodput >= {ABSORBED:.0%}), as received:")
    print()
    for who in contenders:
        got = absorbed.get(who)
        print(f"- {TITLES[who]}: " +
              (f"{got / 1e6:.2f} Mpps" if got else "none of the rates tried"))
    base = statistics.median(baseline.values())
    print()
    print(f"Baseline: {base:.0f} requests/s (median over {len(baseline)} rounds).")


if __name__ == "__main__":
    main(sys.argv[1])
