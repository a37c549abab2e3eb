#!/usr/bin/env python3
"""Tables for scripts/bench-protect.sh: reads its raw measurements and prints markdown.

Raw lines (tab-separated): round, contender, flood rate offered (frames/s, 0 for none, "fast"
for as fast as the generator goes), wrk's requests/s, its p99 latency (ms), the flood frames/s
the server's link received, and the share of the time the flood's NAPI thread was on the CPU.
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
            rnd, who, rate, rps, p99, rx, napi = line.rstrip("\n").split("\t")
            rows.append((int(rnd), who, rate, float(rps), float(p99), int(rx), float(napi)))
    baseline = {r[0]: r[3] for r in rows if r[1] == "none" and r[2] == "0"}
    if not baseline:
        sys.exit("bench-protect-report: no baseline (no filter, no flood) in " + path)
    contenders = list(dict.fromkeys(r[1] for r in rows))
    rates = sorted(dict.fromkeys(r[2] for r in rows), key=rate_key)

    print("Goodput: wrk's requests/s as a share of the baseline (no filter, no flood) of the")
    print("same round; medians over rounds, (min–max) across them.")
    print()
    print("| contender | " + " | ".join(rate_title(r) for r in rates) + " |")
    print("|---|" + "---:|" * len(rates))
    absorbed = {}
    for who in contenders:
        cells = []
        for rate in rates:
            got = [r for r in rows if r[1] == who and r[2] == rate]
            if not got:
                cells.append("")
                continue
            shares = [100 * r[3] / baseline[r[0]] for r in got]
            cells.append(spread(shares, "{:.0f}%"))
            if statistics.median(shares) >= 100 * ABSORBED:
                received = statistics.median(r[5] for r in got)
                absorbed[who] = max(absorbed.get(who, 0), received)
        print(f"| {TITLES[who]} | " + " | ".join(cells) + " |")
    print()
    print("p99 latency, ms, and the flood the server's link received, Mpps (medians):")
    print()
    print("| contender | " + " | ".join(rate_title(r) for r in rates) + " |")
    print("|---|" + "---:|" * len(rates))
    for who in contenders:
        cells = []
        for rate in rates:
            got = [r for r in rows if r[1] == who and r[2] == rate]
            if not got:
                cells.append("")
                continue
            p99 = statistics.median(r[4] for r in got)
            rx = statistics.median(r[5] for r in got) / 1e6
            cells.append(f"{p99:.2f} ms" + (f" @ {rx:.2f}" if rate != "0" else ""))
        print(f"| {TITLES[who]} | " + " | ".join(cells) + " |")
    print()
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
