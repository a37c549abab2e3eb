#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Tables for scripts/bench-live.sh: reads its raw measurements and prints markdown.

Raw lines (tab-separated): round, contender, flood, frames sent, seconds, frames received,
NAPI thread run time (ns), its time runnable but waiting for the CPU (ns), frames the receiving
ring refused, and the mode (fast: as fast as the generator goes; paced: a fixed rate that every
contender absorbs). Each mode gets its own tables.
"""
import statistics
import sys

from bench_report import REFUSED_PACED_MAX, spread

TITLES = {
    "none": "no filter (kernel stack)",
    "drop": "XDP drop-all",
    "src": "XDP read source + drop (floor)",
    "slot": "XDP read source + its slot (floor with per-source state)",
    "rl": "rl (XDP native)",
    "rlb": "rl, build B (RL_BENCH_RLD_B)",
    "nft": "nftables meter (netdev ingress)",
    "ipt": "iptables hashlimit (raw)",
}
# A figure counts as receiver-bound when the ring refused at least this share of the frames
# offered: the receiver then had frames waiting whenever it ran.
REFUSED_BOUND = 0.05
MODE_TITLES = {
    "fast": "As fast as the generator goes (the ring refuses the excess)",
    "paced": "Paced: the same offered rate for every contender, no ring refusals",
}


def main(path):
    by_mode = {}  # mode -> raw lines
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            mode = fields[9] if len(fields) > 9 else "fast"
            by_mode.setdefault(mode, []).append(fields[:9])
    if not by_mode:
        sys.exit("bench-live-report: no measurements in " + path)
    for mode in sorted(by_mode, key=lambda m: list(MODE_TITLES).index(m) if m in MODE_TITLES else 9):
        print("## {}\n".format(MODE_TITLES.get(mode, mode)))
        report(mode, by_mode[mode])


def report(mode, lines):
    runs = {}  # (flood, who) -> {round: measurement}
    floods, whos = [], []
    for fields in lines:
        rnd, who, flood, sent, secs, rx, rt, wt, dr = fields
        sent, secs, rx, rt, wt, dr = int(sent), float(secs), int(rx), int(rt), int(wt), int(dr)
        if flood not in floods:
            floods.append(flood)
        if who not in whos:
            whos.append(who)
        runs.setdefault((flood, who), {})[int(rnd)] = {
            "ns": rt / rx,
            "offered": sent / secs / 1e6,
            "received": rx / secs / 1e6,
            "busy": rt / (secs * 1e9),
            "waiting": wt / (secs * 1e9),
            "refused": dr / sent if sent else 0.0,
            "bound": sent > 0 and dr / sent >= REFUSED_BOUND,
            "clean": sent == 0 or dr / sent <= REFUSED_PACED_MAX,
        }

    def mark(flood, who):  # flags a figure that does not mean what its mode says
        ms = runs.get((flood, who), {}).values()
        if mode == "paced":
            return "" if all(m["clean"] for m in ms) else " !"
        return "" if all(m["bound"] for m in ms) else " *"

    def ns(flood, who):
        return [m["ns"] for m in runs.get((flood, who), {}).values()]

    def ratio(flood, a, b):  # per round a/b, rounds where both ran
        ra, rb = runs.get((flood, a), {}), runs.get((flood, b), {})
        return [ra[r]["ns"] / rb[r]["ns"] for r in ra if r in rb]

    print("Receive CPU per packet, ns (median over rounds):\n")
    
    print("| contender | " + " | ".join(floods) + " |")
    print("|---|" + "---:|" * len(floods))
    for who in whos:
        cells = []
        for flood in floods:
            v = ns(flood, who)
            cells.append("{:.0f}{}".format(statistics.median(v), mark(flood, who)) if v else "")
        print("| {} | {} |".format(TITLES.get(who, who), " | ".join(cells)))

    def ratio_row(title, a, b, fmt="{:.2f}"):  # a / b for every flood, when both ran
        if a in whos and b in whos:
            cells = []
            for flood in floods:
                r = ratio(flood, a, b)
                cells.append(fmt.format(statistics.median(r)) if r else "")
            print("| {} | ".format(title) + " | ".join(cells) + " |")

    ratio_row("**rl / floor**", "rl", "src")
    ratio_row("**rl / floor with state**", "rl", "slot")
    # What the floor with per-source state reaches against netfilter's limiters: the most any
    # limiter that reads a slot per source could show against them on this lab.
    ratio_row("nftables / floor with state", "nft", "slot")
    ratio_row("iptables / floor with state", "ipt", "slot")
    ratio_row("**nftables / rl**", "nft", "rl")
    ratio_row("**iptables / rl**", "ipt", "rl")
    ratio_row("**rl / build B**", "rl", "rlb", "{:.3f}")
    print()

    for flood in floods:
        print("### {}, {}\n".format(flood, mode))
        print("| contender | ns/pkt | Mpps per core | x rl | offered Mpps | received Mpps "
              "| NAPI on CPU / waiting | ring refused |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for who in whos:
            ms = list(runs.get((flood, who), {}).values())
            if not ms:
                continue
            v = [m["ns"] for m in ms]
            to_rl = ratio(flood, who, "rl") if "rl" in whos else []
            print("| {} | {} | {} | {} | {} | {} | {} | {} |".format(
                TITLES.get(who, who) + mark(flood, who),
                spread(v, "{:.0f}"),
                spread([1e3 / x for x in v], "{:.2f}"),
                spread(to_rl, "{:.2f}") if to_rl else "",
                spread([m["offered"] for m in ms], "{:.2f}"),
                spread([m["received"] for m in ms], "{:.2f}"),
                "{:.0f}% / {:.0f}%".format(100 * statistics.median(m["busy"] for m in ms),
                                           100 * statistics.median(m["waiting"] for m in ms)),
                ("{:.2f}%" if mode == "paced" else "{:.0f}%").format(
                    100 * statistics.median(m["refused"] for m in ms))))
        r = ratio(flood, "rl", "src")
        if r:
            print("\nrl / floor: " + spread(r, "{:.2f}"))
        r = ratio(flood, "rl", "slot")
        if r:
            print("\nrl / floor with state: " + spread(r, "{:.2f}"))
        r = ratio(flood, "rl", "rlb")
        if r:
            print("\nrl / build B: " + spread(r, "{:.3f}"))
        print()
    print("Medians over rounds, (min–max) across rounds. x rl: the contender's ns/pkt over rl's, "
          "per round. Mpps per core: 1000 / ns. NAPI on CPU / waiting: the receiving thread's "
          "run time, and its time runnable but waiting for the CPU, over the flood's duration. "
          "ring refused: offered frames the receiving veth's ring had no room for. " +
          ("! marks a figure where, in some round, the ring refused more than {:.1f}% of the "
           "frames: the contender did not absorb the rate, and its figure includes the lab's "
           "lock spin.".format(100 * REFUSED_PACED_MAX) if mode == "paced" else
           "* marks a figure where, in some round, the ring refused under {:.0f}% of the frames: "
           "there the generator, not the receiver, may have set the pace.".format(
               100 * REFUSED_BOUND)))
    print()

if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bench-live-report.py RAW_TSV")
    main(sys.argv[1])
