#!/usr/bin/env python3
"""The adaptive-multipath checks under heavier load (experiments/pdtcp/pa_heavy.toml and
experiments/pdtcp/seq_heavy.toml).

Per scheme and sweep point, means over seeds: deadlines met and p99 normalised FCT of the
query responses (partition-aggregate, against the query ideal) or workflow responses
(sequential, against the solo ideal), average normalised FCT of the background flows, mean fabric-link
utilisation, AM's decisions (share of forwarding decisions that kept the hash port, detoured
to another port, or kept it with every candidate congested), and the share of retransmissions
that were spurious (the receiver already had the data).

usage: pdtcp_heavy.py RESULTS/pdtcp-pa-heavy | RESULTS/pdtcp-seq-heavy
"""
import csv
import json
import os
import sys
from collections import defaultdict


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    rows = defaultdict(list)
    reader = csv.DictReader(open(os.path.join(d, "summary.csv")))
    # sweep columns sit between `seed` and `class`
    cols = reader.fieldnames
    axes = cols[cols.index("seed") + 1:cols.index("class")]
    for r in reader:
        if r["class"] in ("tag:query", "tag:workflow", "tag:background"):
            point = tuple(float(r[a]) for a in axes)
            rows[(r["scheme"], point, r["seed"])].append(r)
    acc = defaultdict(lambda: defaultdict(list))
    for (scheme, point, seed), rs in rows.items():
        q = next(r for r in rs if r["class"] in ("tag:query", "tag:workflow"))
        p99 = "p99_slowdown_group" if q["class"] == "tag:query" else "p99_slowdown"
        b = next((r for r in rs if r["class"] == "tag:background"), None)
        run = q["run"]
        t = json.load(open(os.path.join(d, run, "summary.json")))["totals"]
        dec = max(t["lb_hash"] + t["lb_other"] + t["lb_congested"], 1)
        a = acc[(scheme, point)]
        a["met"].append(float(q["deadline_met"]))
        a["p99n"].append(float(q[p99]))
        # a smoke run may finish no background flow
        a["bg"].append(float(b["avg_slowdown"]) if b else float("nan"))
        a["util"].append(t["mean_util_fabric_links"])
        a["hash"].append(t["lb_hash"] / dec)
        a["detour"].append(t["lb_other"] / dec)
        a["congested"].append(t["lb_congested"] / dec)
        a["spurious"].append(t["spurious_retx"] / max(t["retransmits"], 1))
        a["timeouts"].append(t["timeouts"])
    m = lambda v: sum(v) / len(v)
    names = {"load": "background load", "rate": "workflows per second"}
    print("| scheme | " + " | ".join(names.get(a, a) for a in axes) + " | deadlines met | p99 normalised FCT | background avg normalised FCT | fabric utilisation | hash / detour / congested | spurious retransmits | timeouts per run |")
    print("|---|" + "---|" * len(axes) + "---|---|---|---|---|---|---|")
    for (scheme, point) in sorted(acc, key=lambda k: (k[1], k[0])):
        a = acc[(scheme, point)]
        pt = " | ".join(f"{v:g}" for v in point)
        print(f"| {scheme} | {pt} | {100 * m(a['met']):.1f} % | {m(a['p99n']):.2f} | {m(a['bg']):.2f} | "
              f"{100 * m(a['util']):.0f} % | {100 * m(a['hash']):.1f} / {100 * m(a['detour']):.1f} / {100 * m(a['congested']):.1f} % | "
              f"{100 * m(a['spurious']):.0f} % | {m(a['timeouts']):.0f} |")

if __name__ == "__main__":
    main()
