#!/usr/bin/env python3
"""The PDTCP paper's abstract claims, computed from a dcsim experiment's summary.csv.

The abstract compares the full system with "TCP and hash-based multipath" (TCP+FH):
application throughput of latency-sensitive flows +30 %, their p99 FCT -90 %, the average FCT
of background flows -50 % to -80 %. For each sweep point this prints, for SCHEME against
TCP+FH (means over seeds):

* throughput_gain: deadline-met fraction of the latency-sensitive class / TCP+FH's - 1;
* p99_fct_cut: 1 - p99 FCT of that class / TCP+FH's;
* bg_avg_fct_cut: 1 - average FCT of the background flows / TCP+FH's.

usage: pdtcp_claims.py SUMMARY_CSV CLASS [SCHEME ...]
CLASS is the latency-sensitive class, e.g. tag:query or tag:workflow; schemes default to
PDTCP+AM.
"""
import csv
import sys
from collections import defaultdict

path, cls = sys.argv[1], sys.argv[2]
schemes = sys.argv[3:] or ["PDTCP+AM"]
base = "TCP+FH"
rows = list(csv.DictReader(open(path)))
head = list(rows[0].keys())
axes = head[head.index("seed") + 1:head.index("class")]

vals = defaultdict(list)  # (scheme, point, class, column) -> values over seeds
for r in rows:
    point = tuple(r[a] for a in axes)
    for col in ("deadline_met", "p99_fct_us", "avg_fct_us"):
        if r[col] not in ("", "NaN"):
            vals[(r["scheme"], point, r["class"], col)].append(float(r[col]))


def mean(k):
    v = vals.get(k)
    return sum(v) / len(v) if v else float("nan")


points = sorted({k[1] for k in vals}, key=lambda p: [float(x) if x.replace(".", "").isdigit() else x for x in p])
print("scheme," + ",".join(axes) + ",throughput_gain,p99_fct_cut,bg_avg_fct_cut")
for s in schemes:
    for p in points:
        g = mean((s, p, cls, "deadline_met")) / mean((base, p, cls, "deadline_met")) - 1
        c = 1 - mean((s, p, cls, "p99_fct_us")) / mean((base, p, cls, "p99_fct_us"))
        b = 1 - mean((s, p, "tag:background", "avg_fct_us")) / mean((base, p, "tag:background", "avg_fct_us"))
        print(f"{s}," + ",".join(p) + f",{g:+.3f},{c:+.3f},{b:+.3f}")
