#!/usr/bin/env python3
"""The tables of docs/reproduction/gpmp.md that come from the load experiment.

Usage: gpmp_load_tables.py RESULTS/gpmp-load

Reads the experiment's figure tables (short30_avg_fct.csv, short_avg_fct.csv, long_avg_fct.csv
and the p99 ones, means over seeds) and every run's fct.csv (for the share of short messages
under 50 us, pooled over seeds); prints Markdown. No simulation.
"""
import csv
import glob
import os
import sys
from collections import defaultdict

SCHEMES = ["SP-RDMA", "MP-RDMA", "NEM-like", "SRM-like", "GPMP"]


def table(path):
    t = defaultdict(dict)
    with open(path) as f:
        for r in csv.DictReader(f):
            metric = [k for k in r if k.endswith("_mean")][0]
            t[r["series"]][r["load"]] = float(r[metric])
    return t


def fmt(v, digits=1):
    if v >= 1000:
        return f"{v:,.0f}".replace(",", " ")
    return f"{v:.{digits}f}"


def md(t, scale=1.0, bold="GPMP"):
    loads = sorted({l for s in t.values() for l in s}, key=float)
    out = ["| scheme | " + " | ".join(loads) + " |", "|---" * (len(loads) + 1) + "|"]
    for s in SCHEMES:
        cells = [fmt(t[s][l] * scale, 2 if scale < 1 else 1) for l in loads]
        if s == bold:
            cells = [f"**{c}**" for c in cells]
        out.append(f"| {s} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    for name, title, scale in [
        ("short30_avg_fct", "average FCT, messages < 30 KB (us)", 1.0),
        ("short_avg_fct", "average FCT, messages < 50 KB (us)", 1.0),
        ("long_avg_fct", "average FCT, messages >= 50 KB (ms)", 1e-3),
        ("short30_p99_fct", "p99 FCT, messages < 30 KB (us)", 1.0),
        ("short_p99_fct", "p99 FCT, messages < 50 KB (us)", 1.0),
    ]:
        print(f"{title}:\n\n{md(table(os.path.join(d, name + '.csv')), scale)}\n")
    s50, s30, lg = (table(os.path.join(d, f"{n}.csv")) for n in ("short_avg_fct", "short30_avg_fct", "long_avg_fct"))
    loads = sorted(s50["GPMP"], key=float)
    print("GPMP / NEM-like, average FCT: " + ", ".join(
        f"{l}: < 30 KB {s30['GPMP'][l] / s30['NEM-like'][l]:.2f}, < 50 KB {s50['GPMP'][l] / s50['NEM-like'][l]:.2f}" for l in loads))
    l6 = "0.6"
    print(f"long messages at load {l6}, GPMP against: " + ", ".join(
        f"{s} {100 * (lg['GPMP'][l6] / lg[s][l6] - 1):+.0f} %" for s in SCHEMES if s != "GPMP"))
    # Share of GPMP's short messages under 50 us, per load.
    for limit in (30_000, 50_000):
        shares = []
        for l in loads:
            n = ok = 0
            for f in glob.glob(os.path.join(d, f"GPMP-load={l}-s*", "fct.csv")):
                with open(f) as fh:
                    for r in csv.DictReader(fh):
                        if int(r["size_bytes"]) < limit and r["fct_ps"]:
                            n += 1
                            ok += int(r["fct_ps"]) < 50_000_000
            shares.append(f"{l}: {100 * ok / n:.1f} %")
        print(f"GPMP messages < {limit // 1000} KB finishing under 50 us: " + ", ".join(shares))


if __name__ == "__main__":
    main()
