#!/usr/bin/env python3
"""Paired comparison of two result directories of one experiment run two ways (e.g. FIFO
against keyed ties): for every scheme and class, the means of a statistic (default
avg_fct_us) over the seeds in A and in B and their difference in percent of A's; and, from
the per-seed differences in percent (B against A with the same seed), their standard
deviation and the paired t statistic (mean / (sd / sqrt(n))).

    scripts/paired-compare.py A/<experiment> B/<experiment> [--stat avg_fct_us] [--max-t 2.5]
        [--max-pct 1.0]

Reads each directory's summary.csv. Exits 1 when a row breaks --max-t or --max-pct (if
given), so that it can gate a change meant to move results in distribution only.
"""
import argparse
import csv
import math
import sys
from collections import defaultdict


def load(d, stat):
    rows = {}
    with open(f"{d}/summary.csv", newline="") as f:
        for r in csv.DictReader(f):
            v = r.get(stat, "")
            if v in ("", "NaN", "nan"):
                continue
            rows[(r["scheme"], r["class"], r["seed"])] = float(v)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--stat", default="avg_fct_us")
    ap.add_argument("--max-t", type=float)
    ap.add_argument("--max-pct", type=float)
    args = ap.parse_args()
    a, b = load(args.a, args.stat), load(args.b, args.stat)
    groups = defaultdict(list)
    for key, va in a.items():
        if key in b and va != 0:
            groups[key[:2]].append((va, b[key]))
    bad = 0
    print(f"{'scheme':<12} {'class':<16} {'seeds':>5} {'mean A':>12} {'mean B':>12} "
          f"{'diff %':>8} {'sd %':>7} {'t':>6}")
    for (scheme, cls), pairs in sorted(groups.items()):
        n = len(pairs)
        diffs = [100.0 * (vb - va) / va for va, vb in pairs]
        mean = sum(diffs) / n
        sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / (n - 1)) if n > 1 else float("nan")
        t = mean / (sd / math.sqrt(n)) if n > 1 and sd > 0 else 0.0
        ma = sum(p[0] for p in pairs) / n
        mb = sum(p[1] for p in pairs) / n
        flag = ""
        if (args.max_t is not None and abs(t) >= args.max_t) or (
            args.max_pct is not None and abs(100.0 * (mb - ma) / ma) > args.max_pct
        ):
            flag = "  <-"
            bad += 1
        print(f"{scheme:<12} {cls:<16} {n:>5} {ma:>12.2f} {mb:>12.2f} "
              f"{100.0 * (mb - ma) / ma:>+8.2f} {sd:>7.2f} {t:>+6.2f}{flag}")
    if bad:
        print(f"{bad} rows outside the bounds", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
