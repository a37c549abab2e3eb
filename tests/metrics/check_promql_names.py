#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks the operator material against what the exporter really exports.

  --dashboard FILE   the Grafana dashboard parses, is importable, and every panel query and
                     variable query uses only exported metric names (and is valid PromQL when
                     --promtool is given)
  --rules FILE       every alerting rule's expression uses only exported metric names
  --reference FILE   docs/metrics.md documents every exported metric, and each metric in its
                     tables' first column is exported

The exported names come from `<exporter> --dump` (metrics_fixture_server), i.e. from the
exporter's own code, so a renamed metric fails here instead of leaving a blank panel.
Exit status: 0 ok, 1 problems found (or PyYAML missing for --rules).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# Series Prometheus makes itself for every target; alerts may use them.
PROMETHEUS_OWN = {"up"}

KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left",
            "group_right", "offset", "bool", "inf", "nan", "atan2"}

# Grafana's built-in interval variables, replaced to get plain PromQL.
GRAFANA_INTERVALS = re.compile(r"\$\{?__(rate_interval|interval|range)(_ms|_s)?\}?")
GRAFANA_VARIABLE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*(:[a-z]+)?\}?")


def exported_names(exporter, series=False):
    """Metric family names; with `series`, also the _bucket, _sum and _count series of
    histograms and summaries, which queries select."""
    out = subprocess.run([exporter, "--dump"], check=True, capture_output=True, text=True,
                         timeout=30).stdout
    names = set()
    for line in out.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()[:4]
            names.add(name)
            if series and kind in ("histogram", "summary"):
                names.update(name + s for s in ("_bucket", "_sum", "_count"))
    if not names:
        sys.exit(f"{exporter} --dump exported no metric families")
    return names


def metric_names(expr):
    """Metric names an expression selects: identifiers that are not functions, keywords,
    label names, durations or Grafana variables."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"'(?:[^'\\]|\\.)*'", "''", e)
    e = re.sub(r"`[^`]*`", "``", e)
    e = re.sub(r"\{[^}]*\}", " ", e)  # label matchers
    e = re.sub(r"\[[^\]]*\]", " ", e)  # ranges and subqueries
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"\boffset\s+-?[0-9a-zA-Z_$]+", " ", e)
    e = GRAFANA_VARIABLE.sub(" ", e)
    e = re.sub(r"(?<![A-Za-z_:])[0-9][0-9a-zA-Z_.+-]*", " ", e)  # numbers, 1e3, 5m
    names = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        if m.group(0) in KEYWORDS or e[m.end():].lstrip().startswith("("):
            continue
        names.add(m.group(0))
    return names


def as_promql(expr):
    """A Grafana query with its variables replaced, so that promtool can parse it."""
    e = GRAFANA_INTERVALS.sub("5m", expr)
    return GRAFANA_VARIABLE.sub(".*", e)


def promtool_parse(promtool, exprs):
    """promtool has no plain parse command, so each expression becomes a recording rule."""
    rules = {"groups": [{"name": "syntax", "rules": [
        {"record": f"rl_syntax_check_{i}", "expr": e} for i, e in enumerate(exprs)]}]}
    with tempfile.TemporaryDirectory(prefix="rl-promql-") as d:
        path = os.path.join(d, "rules.yml")
        with open(path, "w") as f:
            json.dump(rules, f)  # JSON is YAML
        r = subprocess.run([promtool, "check", "rules", path], capture_output=True, text=True,
                           timeout=60)
    return [] if r.returncode == 0 else [f"promtool rejects a query:\n{r.stdout}{r.stderr}"]


def walk_panels(panels):
    for p in panels:
        yield p
        yield from walk_panels(p.get("panels", []))


def check_dashboard(path, names, promtool):
    problems = []
    with open(path) as f:
        d = json.load(f)
    if d.get("schemaVersion", 0) < 36:
        problems.append(f"schemaVersion {d.get('schemaVersion')} < 36")
    variables = d.get("templating", {}).get("list", [])
    has_ds_variable = any(v.get("type") == "datasource" and v.get("query") == "prometheus"
                          for v in variables)
    has_ds_input = any(i.get("pluginId") == "prometheus" for i in d.get("__inputs", []))
    if not (has_ds_variable or has_ds_input):
        problems.append("no Prometheus datasource variable or __inputs entry")

    queries = []  # (where, expr, is_promql)
    ids = set()
    for p in walk_panels(d.get("panels", [])):
        where = f"panel {p.get('id')} \"{p.get('title')}\""
        if p.get("id") in ids:
            problems.append(f"{where}: duplicate id")
        ids.add(p.get("id"))
        if "gridPos" not in p:
            problems.append(f"{where}: no gridPos")
        if p.get("type") == "row":
            continue
        exprs = [t.get("expr", "") for t in p.get("targets", [])]
        if not exprs or not all(exprs):
            problems.append(f"{where}: a target without a query")
        queries += [(where, e, True) for e in exprs if e]
    for v in variables:
        if v.get("type") != "query":
            continue
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        m = re.fullmatch(r"\s*label_values\((.*),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*", q)
        queries.append((f"variable {v.get('name')}", m.group(1) if m else q, True))

    for where, expr, _ in queries:
        for n in sorted(metric_names(expr) - names):
            problems.append(f"{where}: {n} is not exported (in: {expr})")
    if promtool:
        problems += promtool_parse(promtool, [as_promql(e) for _, e, p in queries if p])
    print(f"{path}: {len(queries)} queries in {len(ids)} panels")
    return problems


def check_rules(path, names):
    try:
        import yaml
    except ImportError:
        print("PyYAML is required for --rules: run scripts/install-deps.sh (python3-yaml)")
        sys.exit(1)
    with open(path) as f:
        doc = yaml.safe_load(f)
    problems = []
    count = 0
    for g in doc["groups"]:
        for r in g["rules"]:
            count += 1
            where = r.get("alert") or r.get("record")
            for n in sorted(metric_names(r["expr"]) - names - PROMETHEUS_OWN):
                problems.append(f"{where}: {n} is not exported")
    print(f"{path}: {count} rules")
    return problems


def check_reference(path, names):
    with open(path) as f:
        text = f.read()
    documented = set(re.findall(r"^\|\s*`([a-z_:][a-z0-9_:]*)`", text, re.M))
    problems = [f"{n} is exported but not in a table of {path}" for n in sorted(names - documented)]
    problems += [f"{n} is documented but not exported" for n in sorted(documented - names)]
    print(f"{path}: {len(documented)} metrics documented, {len(names)} exported")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exporter", required=True)
    ap.add_argument("--promtool")
    ap.add_argument("--dashboard")
    ap.add_argument("--rules")
    ap.add_argument("--reference")
    args = ap.parse_args()
    names = exported_names(args.exporter)
    series = exported_names(args.exporter, series=True)
    problems = []
    if args.dashboard:
        problems += check_dashboard(args.dashboard, series, args.promtool)
    if args.rules:
        problems += check_rules(args.rules, series)
    if args.reference:
        problems += check_reference(args.reference, names)
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
