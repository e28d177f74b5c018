#!/usr/bin/env python3
"""Upper bound on the deadlines any transport can meet in dcsim's partition-aggregate runs.

For each query (the responses with one start time and one aggregator), the aggregator's
downlink is a single server: response i needs ser_i = wire bytes * 8 / C of it, after a fixed
latency (its solo ideal FCT minus its own serialization). The most responses that can meet
their deadlines is then the optimum of 1 || sum U_j, which the Moore-Hodgson algorithm finds
exactly (earliest-due-date order, dropping the longest job whenever one is late). Background
traffic and the fabric are ignored, so this is an upper bound, not a prediction.

For reference it also gives the fraction met under ideal fair sharing of that downlink
(processor sharing, all responses from time 0: response i completes after
sum_j min(ser_j, ser_i)), which is what a transport without deadline awareness approaches.

usage: pa_deadline_ceiling.py RESULTS_DIR [--by-class] [MSS_BYTES HEADER_BYTES RATE_BPS]
prints one row per sweep point (e.g. fan_in): the point, queries, responses, ceiling, fair share;
with --by-class, one row per sweep point and deadline class (each query has one class).
"""
import csv
import glob
import heapq
import math
import os
import re
import sys
from collections import defaultdict

args = [a for a in sys.argv[1:] if a != "--by-class"]
by_class = "--by-class" in sys.argv
res = args[0]
mss = int(args[1]) if len(args) > 1 else 1460
hdr = int(args[2]) if len(args) > 2 else 78
rate = float(args[3]) if len(args) > 3 else 1e9


# Responses of one query start within this much of each other (see below).
QUERY_SPREAD_PS = 50_000_000


def ser_ps(size):
    pkts = max(1, math.ceil(size / mss))
    return round((size + pkts * hdr) * 8 / rate * 1e12)


def moore_hodgson(jobs):
    """jobs: (due, proc). Returns the largest number of jobs finishing by their due time."""
    t, kept = 0, []
    for due, p in sorted(jobs):
        heapq.heappush(kept, -p)
        t += p
        if t > due:
            t += heapq.heappop(kept)  # drop the longest kept job (adds a negative)
    return len(kept)


def fair_share(jobs):
    """Responses meeting their due time under processor sharing of the downlink."""
    return sum(1 for d, p in jobs if sum(min(q, p) for _, q in jobs) <= d)


per_fan_in = defaultdict(lambda: [0, 0, 0, 0])
per_class = defaultdict(lambda: [0, 0, 0, 0])
seen_runs = set()
for f in sorted(glob.glob(os.path.join(res, "*", "fct.csv"))):
    run = os.path.basename(os.path.dirname(f))
    # Run ids are <scheme>-<axis>=<value>-s<seed>; the workload depends on the sweep point
    # and the seed only, so one scheme's runs suffice.
    m = re.search(r"-([A-Za-z_]+)=([^-]+)-s(\d+)$", run)
    if not m:
        continue
    axis_name = m.group(1)
    key = (m.group(2), m.group(3))
    if key in seen_runs:
        continue
    seen_runs.add(key)
    fan_in = m.group(2)
    # A query's responses start when the query reaches each worker: within a few
    # microseconds of each other (the base latencies from the aggregator differ), while the
    # next query starts only once this one has completed. So a query is the responses to one
    # aggregator, of one deadline class, starting within QUERY_SPREAD of its first response.
    with open(f) as fh:
        rows = [r for r in csv.DictReader(fh) if r["tag"] == "query" and r["deadline_ps"]]
    rows.sort(key=lambda r: int(r["start_ps"]))
    queries = defaultdict(list)
    open_query = {}
    for r in rows:
        start = int(r["start_ps"])
        k = (r["dst"], r["deadline_class"])
        if k not in open_query or start - open_query[k] > QUERY_SPREAD_PS:
            open_query[k] = start
        size = int(r["size_bytes"])
        s = ser_ps(size)
        fixed = int(r["ideal_fct_ps"]) - s
        # deadline_ps is absolute; the due time is relative to the query's first start (the
        # later responses are released a few microseconds early: still an upper bound).
        due = int(r["deadline_ps"]) - open_query[k] - fixed
        queries[(open_query[k], r["dst"], r["deadline_class"])].append((due, s))
    for (_, _, cls), jobs in queries.items():
        for acc in (per_fan_in[fan_in], per_class[(fan_in, cls)]):
            acc[0] += 1
            acc[1] += len(jobs)
            acc[2] += moore_hodgson(jobs)
            acc[3] += fair_share(jobs)

def order(v):
    num = re.match(r"[0-9.]+", v)
    return (float(num.group(0)) if num else 0.0, v)


if by_class:
    print(f"{axis_name},deadline_class,queries,responses,deadline_ceiling,fair_share")
    for (n, c) in sorted(per_class, key=lambda k: (order(k[0]), order(k[1]))):
        q, r, ok, fs = per_class[(n, c)]
        print(f"{n},{c},{q},{r},{ok / r:.4f},{fs / r:.4f}")
else:
    print(f"{axis_name},queries,responses,deadline_ceiling,fair_share")
    for n in sorted(per_fan_in, key=order):
        q, r, ok, fs = per_fan_in[n]
        print(f"{n},{q},{r},{ok / r:.4f},{fs / r:.4f}")
