#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Tables for the policy-size mode of scripts/bench-live.sh (--rules N --set-prefixes M) and
for scripts/bench-scale-live.sh, which runs it once per configuration.

  bench-scale-report.py [--summary] RAW_TSV [RAW_TSV...]

Raw lines as bench-live-report.py reads them, plus three fields: rules, prefixes per family, and
the UDP datagrams the server's stack took during the measurement (what the limiter let
through). Beside each RAW_TSV, RAW_TSV.load holds "rules prefixes contender seconds detail"
lines: how long each contender took to load its policy (seconds empty: skipped, detail says
why). One table per configuration, flood and mode; with more than one configuration, a summary
per flood and mode across them (--summary: only that).
"""
import os
import statistics
import sys

from bench_report import REFUSED_PACED_MAX, spread

TITLES = {
    "none": "no filter (kernel stack)",
    "drop": "XDP drop-all",
    "src": "XDP read source + drop (floor)",
    "slot": "XDP read source + its slot",
    "rl": "rl (XDP native)",
    "nftchain": "nftables, linear chain",
    "nftvmap": "nftables, verdict maps",
    "iptchain": "iptables, linear (set as rules)",
    "ipset": "iptables + ipset, port groups",
    "nft": "nftables meter, 2 rules (no policy)",
    "ipt": "iptables hashlimit, 2 rules (no policy)",
}
REFERENCES = (("none", "x no filter"), ("drop", "x XDP drop-all"))


def count(n):
    return "{:,}".format(n)


def read(paths):
    runs = {}  # (rules, prefixes, mode, flood, who) -> {round: measurement}
    loads = {}  # (rules, prefixes, who) -> (seconds or None, detail)
    order = {"config": [], "flood": [], "who": [], "mode": []}

    def seen(kind, v):
        if v not in order[kind]:
            order[kind].append(v)

    for path in paths:
        with open(path) as f:
            for line in f:
                fields = line.rstrip("\n").split("\t")
                if len(fields) < 13:
                    sys.exit("bench-scale-report: {} is not a policy-size run (a line of {} "
                             "fields)".format(path, len(fields)))
                rnd, who, flood, sent, secs, rx, rt, _, dr, mode, rules, prefixes, took = fields[:13]
                config = (int(rules), int(prefixes))
                seen("config", config)
                seen("flood", flood)
                seen("who", who)
                seen("mode", mode)
                sent, rx = int(sent), int(rx)
                runs.setdefault(config + (mode, flood, who), {})[int(rnd)] = {
                    "ns": int(rt) / rx,
                    "took": int(took) / rx,
                    "refused": int(dr) / sent if sent else 0.0,
                }
        if os.path.exists(path + ".load"):
            with open(path + ".load") as f:
                for line in f:
                    rules, prefixes, who, secs, detail = line.rstrip("\n").split("\t")
                    config = (int(rules), int(prefixes))
                    seen("config", config)
                    seen("who", who)
                    loads[config + (who,)] = (float(secs) if secs else None, detail)
    return runs, loads, order


def ratio(runs, key, who, ref):
    a, b = runs.get(key + (who,), {}), runs.get(key + (ref,), {})
    return [a[r]["ns"] / b[r]["ns"] for r in a if r in b]


def config_tables(runs, loads, order):
    for config in order["config"]:
        rules, prefixes = config
        skipped = [(who, loads[config + (who,)][1]) for who in order["who"]
                   if config + (who,) in loads and loads[config + (who,)][0] is None]
        for mode in order["mode"]:
            for flood in order["flood"]:
                key = config + (mode, flood)
                whos = [w for w in order["who"] if key + (w,) in runs]
                if not whos:
                    continue
                refs = [(r, t) for r, t in REFERENCES if r in whos]
                print("### {} rules, {} prefixes per family: {}, {}\n".format(
                    count(rules), count(prefixes), flood, mode))
                print("| contender | ns/pkt | " + "".join(t + " | " for _, t in refs) +
                      "stack took | ring refused | load s |")
                print("|---|---:|" + "---:|" * len(refs) + "---:|---:|---:|")
                for who in whos:
                    ms = list(runs[key + (who,)].values())
                    flag = ""
                    if mode == "paced" and any(m["refused"] > REFUSED_PACED_MAX for m in ms):
                        flag = " !"
                    cells = [spread([m["ns"] for m in ms], "{:.0f}") + flag]
                    for ref, _ in refs:
                        r = ratio(runs, key, who, ref)
                        cells.append(spread(r, "{:.2f}") if r and who != ref else "")
                    cells.append("{:.1f}%".format(100 * statistics.median(m["took"] for m in ms)))
                    cells.append("{:.2f}%".format(100 * statistics.median(m["refused"] for m in ms)))
                    load = loads.get(config + (who,))
                    cells.append("{:.2f}".format(load[0]) if load and load[0] is not None else "")
                    print("| {} | {} |".format(TITLES.get(who, who), " | ".join(cells)))
                for who, why in skipped:
                    print("| {} | {} |".format(TITLES.get(who, who), why) + " |" * (len(refs) + 3))
                print()
        details = [(who,) + loads[config + (who,)] for who in order["who"] if config + (who,) in loads]
        if details:
            print("Loading, {} rules and {} prefixes per family: {}\n".format(
                count(rules), count(prefixes), "; ".join(load_text(*d) for d in details)))


def load_text(who, secs, detail):
    if secs is None:
        return "{} {}".format(who, detail)
    return "{} {:.2f} s{}".format(who, secs, " ({})".format(detail) if detail else "")


def summary(runs, loads, order):
    configs = order["config"]
    head = " | ".join("{} / {}".format(count(r), count(p)) for r, p in configs)
    for mode in order["mode"]:
        for flood in order["flood"]:
            whos = [w for w in order["who"] if any(c + (mode, flood, w) in runs for c in configs)]
            if not whos:
                continue
            print("### Summary: {}, {}, ns per packet (rules / prefixes per family)\n".format(flood, mode))
            print("| contender | " + head + " |")
            print("|---|" + "---:|" * len(configs))
            for who in whos:
                cells = []
                for c in configs:
                    ms = runs.get(c + (mode, flood, who), {}).values()
                    if not ms:
                        load = loads.get(c + (who,))
                        cells.append("skipped" if load and load[0] is None else "")
                        continue
                    flag = " !" if mode == "paced" and any(m["refused"] > REFUSED_PACED_MAX for m in ms) else ""
                    cells.append("{:.0f}{}".format(statistics.median(m["ns"] for m in ms), flag))
                print("| {} | {} |".format(TITLES.get(who, who), " | ".join(cells)))
            # The summary's ratios: to XDP drop-all alone (the configuration tables have both).
            for ref, title in REFERENCES[1:]:
                for who in whos:
                    if who in (r for r, _ in REFERENCES):
                        continue
                    cells = []
                    for c in configs:
                        r = ratio(runs, c + (mode, flood), who, ref)
                        cells.append("{:.2f}".format(statistics.median(r)) if r else "")
                    if any(cells):
                        print("| {}, {} | {} |".format(TITLES.get(who, who), title, " | ".join(cells)))
            print()
    loaders = [w for w in order["who"] if any(c + (w,) in loads for c in configs)]
    if loaders:
        print("### Summary: load time, seconds (rules / prefixes per family)\n")
        print("| contender | " + head + " |")
        print("|---|" + "---:|" * len(configs))
        for who in loaders:
            cells = []
            for c in configs:
                load = loads.get(c + (who,))
                cells.append("" if not load else "skipped" if load[0] is None else "{:.2f}".format(load[0]))
            print("| {} | {} |".format(TITLES.get(who, who), " | ".join(cells)))
        print()


def main(args):
    only_summary = args[:1] == ["--summary"]
    paths = args[1:] if only_summary else args
    if not paths:
        sys.exit("usage: bench-scale-report.py [--summary] RAW_TSV [RAW_TSV...]")
    runs, loads, order = read(paths)
    if not runs:
        sys.exit("bench-scale-report: no measurements in " + ", ".join(paths))
    if not only_summary:
        config_tables(runs, loads, order)
    if len(order["config"]) > 1 or only_summary:
        summary(runs, loads, order)
    print("Medians over rounds, (min–max) across rounds. x no filter, x XDP drop-all: the "
          "contender's ns/pkt over the reference's, per round, measured in the same rounds of the "
          "same run. stack took: the flood's frames that reached the server's UDP stack, i.e. "
          "that the limiter let through (no filter: all of them). ring refused: offered frames "
          "the receiving veth's ring had no room for. ! marks a paced figure where, in some round, "
          "the ring refused more than {:.1f}% of the frames: the contender did not absorb the "
          "rate. load s: from the loader's start to the policy in the kernel (rl: rld's start to "
          "ready, the program's load and verification included; nftables: nft -f; iptables: "
          "ipset restore and iptables-restore), once per configuration.".format(
              100 * REFUSED_PACED_MAX))


if __name__ == "__main__":
    main(sys.argv[1:])
