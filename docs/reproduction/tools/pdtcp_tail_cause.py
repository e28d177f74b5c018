#!/usr/bin/env python3
"""Why the partition-aggregate responses' p99 normalised FCT stays above 2 without timeouts.

The normalised FCT of a response is its FCT over the ideal of its whole query (all N responses'
bytes into the aggregator's host link, `slowdown_group` in fct.csv). That ideal assumes the
aggregator's downlink carries the query alone. This splits the responses by whether a
background flow into the same aggregator was in progress at any time while the response was,
and prints the p99 (and median) normalised FCT of each part, for responses with and without a
timeout.

usage: pdtcp_tail_cause.py RESULTS_DIR [FILTER]   (every run directory whose id contains FILTER)
"""
import bisect
import csv
import os
import sys
from collections import defaultdict


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p * len(xs) + 0.5)) - 1))] if xs else float("nan")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    res, filt = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    groups = defaultdict(lambda: defaultdict(list))
    for run in sorted(os.listdir(res)):
        path = os.path.join(res, run, "fct.csv")
        if filt not in run or not os.path.isfile(path):
            continue
        point = run.rsplit("-s", 1)[0]
        bg = defaultdict(list)
        resp = []
        with open(path) as f:
            for r in csv.DictReader(f):
                start = int(r["start_ps"])
                end = int(r["finish_ps"]) if r["finish_ps"] else 2**63
                if r["tag"] == "background":
                    bg[r["dst"]].append((start, end))
                elif r["tag"] == "query" and r["slowdown_group"]:
                    resp.append((r["dst"], start, end, float(r["slowdown_group"]), int(r["timeouts"])))
        starts = {d: sorted(v) for d, v in bg.items()}
        keys = {d: [s for s, _ in v] for d, v in starts.items()}
        for dst, s, e, sd, to in resp:
            iv = starts.get(dst, [])
            # Background flows into dst that started before the response ended and ended after
            # it started.
            i = bisect.bisect_left(keys.get(dst, []), e)
            busy = any(be > s for _, be in iv[:i])
            groups[point][(busy, to > 0)].append(sd)
    for point, g in groups.items():
        allv = [x for v in g.values() for x in v]
        print(f"{point}: {len(allv)} responses, p99 {q(allv, 0.99):.2f}")
        for busy in (False, True):
            for to in (False, True):
                v = g.get((busy, to), [])
                if v:
                    print(f"  background into the aggregator {'yes' if busy else 'no ':<3} "
                          f"timeout {'yes' if to else 'no ':<3}: {len(v):6d} "
                          f"({100 * len(v) / len(allv):4.1f} %), median {q(v, 0.5):.2f}, p99 {q(v, 0.99):.2f}")


if __name__ == "__main__":
    main()
