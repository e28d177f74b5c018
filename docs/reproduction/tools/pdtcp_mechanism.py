#!/usr/bin/env python3
"""What shapes the DCTCP family's windows in dcsim's partition-aggregate runs.

For every run directory under RESULTS_DIR whose id contains FILTER (default: all), prints, for
the query responses (tag "query"):

* reductions: ECN window reductions per response;
* at_2_3: the share of those reductions made at a window of 2 or 3 segments (before the
  reduction; from summary.json totals.reductions, bins by whole segments);
* le_4: the share made at a window of at most 4 segments;
* same_p: the share after which p = 0.5 and p = 2 would have left the same whole window
  (floor(W (1 - alpha^p / 2)), computed at each reduction with the flow's alpha);
* ce: the share of the responses' data packets that arrived CE-marked (fct.csv ecn_marks over
  ceil(size / MSS) + retransmits);
* met: the fraction of responses meeting their deadline.

Then the mean of each column over the runs of each (scheme, sweep point), seeds pooled.

usage: pdtcp_mechanism.py RESULTS_DIR [FILTER] [MSS_BYTES]
"""
import csv
import json
import math
import os
import re
import sys
from collections import defaultdict

res = sys.argv[1]
filt = sys.argv[2] if len(sys.argv) > 2 else ""
mss = int(sys.argv[3]) if len(sys.argv) > 3 else 1460

rows = []
for run in sorted(os.listdir(res)):
    d = os.path.join(res, run)
    if filt not in run or not os.path.isfile(os.path.join(d, "summary.json")):
        continue
    s = json.load(open(os.path.join(d, "summary.json")))
    red = next((r for r in s["totals"]["reductions"] if r["tag"] == "query"), None)
    if red is None:
        continue
    n = max(red["reductions"], 1)
    bins, by = red["window_bins"], red["by_window"]
    at_2_3 = sum(c for b, c in zip(bins, by) if b in (2, 3)) / n
    le_4 = sum(c for b, c in zip(bins, by) if b <= 4) / n
    pkts = marks = 0
    for f in csv.DictReader(open(os.path.join(d, "fct.csv"))):
        if f["tag"] != "query":
            continue
        pkts += math.ceil(int(f["size_bytes"]) / mss) + int(f["retransmits"])
        marks += int(f["ecn_marks"])
    q = next(c for c in s["classes"] if c["class"] == "tag:query")
    point = re.sub(r"-s\d+$", "", run)
    rows.append((point, red["reductions"] / max(red["flows"], 1), at_2_3, le_4,
                 red["same_window_half_vs_two"] / n, marks / max(pkts, 1), q["deadline_met"]))

cols = ["reductions", "at_2_3", "le_4", "same_p", "ce", "met"]
print("run," + ",".join(cols))
groups = defaultdict(list)
for r in rows:
    groups[r[0]].append(r[1:])
for point, vals in groups.items():
    mean = [sum(v[i] for v in vals) / len(vals) for i in range(len(cols))]
    print(f"{point} (x{len(vals)}),"
          + ",".join(f"{m:.3f}" for m in mean))
