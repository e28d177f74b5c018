#!/usr/bin/env python3
"""DCTCP's alpha and PDTCP's priority exponent p over the query responses of a run or
experiment: what the penalty P = alpha^p is made of.

For every run directory under RESULTS_DIR whose id contains FILTER (default: all), pools the
query responses (tag "query") of summary.json totals.reductions and prints, per scheme:

* alpha at the end of each response: p10, median, p90 (from 100 bins of 0.01: a value v
  means v <= alpha < v + 0.01), and the share of responses with alpha >= 0.9;
* p in force at each ECN window reduction: the share at the 0.5 floor, in (0.5, 1), at 1,
  in (1, 2), at the ceiling 2;
* p at the end of each response, the same bins.

usage: pdtcp_alpha_p.py RESULTS_DIR [FILTER]
"""
import json
import os
import sys
from collections import defaultdict


def pct(bins, q):
    total = sum(bins)
    acc = 0
    for i, c in enumerate(bins):
        acc += c
        if acc >= q * total:
            return i / 100
    return 1.0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    res, filt = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    alpha = defaultdict(lambda: [0] * 100)
    red = defaultdict(lambda: [0] * 5)
    end = defaultdict(lambda: [0] * 5)
    names = None
    runs = defaultdict(int)
    for run in sorted(os.listdir(res)):
        path = os.path.join(res, run, "summary.json")
        if filt not in run or not os.path.isfile(path):
            continue
        s = json.load(open(path))
        r = next((x for x in s["totals"]["reductions"] if x["tag"] == "query"), None)
        if r is None or not r.get("flows_by_alpha_at_end"):
            continue
        scheme = s["plan"]["scheme"]
        scheme = scheme.get("name", str(scheme)) if isinstance(scheme, dict) else scheme
        runs[scheme] += 1
        names = r["exponent_bins"]
        for i, c in enumerate(r["flows_by_alpha_at_end"]):
            alpha[scheme][i] += c
        for i, c in enumerate(r["by_exponent"]):
            red[scheme][i] += c
        for i, c in enumerate(r["flows_by_exponent_at_end"]):
            end[scheme][i] += c
    if not runs:
        sys.exit(f"no run with query responses and alpha under {res}")
    for scheme in sorted(runs):
        a = alpha[scheme]
        n = sum(a)
        print(f"{scheme} ({runs[scheme]} runs, {n} responses)")
        print(f"  alpha at the end: p10 {pct(a, 0.1):.2f}, median {pct(a, 0.5):.2f}, "
              f"p90 {pct(a, 0.9):.2f}; alpha >= 0.9: {100 * sum(a[90:]) / n:.1f} %")
        for label, b in (("p at each ECN reduction", red[scheme]), ("p at the end", end[scheme])):
            t = max(sum(b), 1)
            print(f"  {label}: " + ", ".join(f"{k} {100 * c / t:.1f} %" for k, c in zip(names, b)))


if __name__ == "__main__":
    main()
