#!/usr/bin/env python3
"""The floor under GPMP's short-message FCT: what dcsim's ideal FCT of the < 50 KB messages
is made of, and what it becomes under the plausible alternatives of the paper's setup.

Usage: gpmp_short_floor.py RESULTS/gpmp-load [LOAD]   (default load 0.6; every seed pooled)

Reads each run's fct.csv (no simulation). The setup it assumes is the GPMP experiments'
(docs/reproduction/gpmp.md, Setup): 10 Gbps everywhere, 1 us links, 1000 B payloads + 82 B
headers, a leaf-spine of 4 hosts per leaf (2 links within a leaf, 4 across). It checks that
the decomposition adds up to dcsim's own ideal_fct_ps for every message before printing it.
"""
import csv
import glob
import math
import os
import sys

RATE = 10e9  # bit/s
LINK = 1e-6  # s
MSS, HDR = 1000, 82
PER_LEAF = 4
SHORT = 50_000


def parts(size, hops, link=LINK, hdr=HDR, ack=True):
    """Seconds of each component of the ideal FCT of a `size`-byte message over `hops` links."""
    n = math.ceil(size / MSS)
    last = size - (n - 1) * MSS
    ser = lambda b: b * 8 / RATE
    out = {
        "payload serialization at the host link": ser(size),
        "headers (n x header bytes at the host link)": ser(n * hdr),
        "store-and-forward at each further hop (one packet each)": (hops - 1) * ser(min(size, MSS if n > 1 else last) + hdr),
        "propagation, data (hops x link delay)": hops * link,
        "final ACK back to the sender (serialization + propagation)": hops * (ser(hdr) + link) if ack else 0.0,
    }
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    load = sys.argv[2] if len(sys.argv) > 2 else "0.6"
    files = sorted(glob.glob(os.path.join(sys.argv[1], f"GPMP-load={load}-s*", "fct.csv")))
    if not files:
        sys.exit(f"no GPMP-load={load}-s*/fct.csv under {sys.argv[1]}")
    rows = []
    for f in files:
        with open(f) as fh:
            for r in csv.DictReader(fh):
                if int(r["size_bytes"]) < SHORT and r["fct_ps"]:
                    rows.append(r)
    n = len(rows)
    hops = lambda r: 2 if int(r["src"]) // PER_LEAF == int(r["dst"]) // PER_LEAF else 4
    # The decomposition must be dcsim's ideal, message by message.
    worst = max(abs(sum(parts(int(r["size_bytes"]), hops(r)).values()) * 1e12 - int(r["ideal_fct_ps"])) for r in rows)
    if worst > 1:
        sys.exit(f"decomposition differs from ideal_fct_ps by up to {worst:.0f} ps: setup assumed wrongly")
    mean = lambda xs: sum(xs) / len(xs) * 1e6
    print(f"{n} messages < 50 KB of GPMP at load {load} ({len(files)} seeds); mean, us:")
    keys = list(parts(1000, 4))
    for k in keys:
        print(f"  {k:<62} {mean([parts(int(r['size_bytes']), hops(r))[k] for r in rows]):6.2f}")
    ideal = mean([int(r["ideal_fct_ps"]) * 1e-12 for r in rows])
    sender = mean([int(r["fct_ps"]) * 1e-12 for r in rows])
    rcv = mean([(int(r["rcv_finish_ps"]) - int(r["start_ps"])) * 1e-12 for r in rows])
    print(f"  {'ideal FCT (dcsim ideal_fct_ps), sender side':<62} {ideal:6.2f}")
    print(f"GPMP's measured mean FCT: sender side {sender:.2f} us, receiver side {rcv:.2f} us")
    print("the floor under alternatives (mean ideal, us):")
    alts = [
        ("as run: sender side (to the last ACK), 1 us links, 82 B headers", {}),
        ("receiver side (last byte delivered, no ACK return)", {"ack": False}),
        ("0.5 us links", {"link": 0.5e-6}),
        ("receiver side and 0.5 us links", {"ack": False, "link": 0.5e-6}),
        ("receiver side, 0.5 us links, 48 B headers", {"ack": False, "link": 0.5e-6, "hdr": 48}),
    ]
    for name, kw in alts:
        v = mean([sum(parts(int(r["size_bytes"]), hops(r), **kw).values()) for r in rows])
        print(f"  {name:<62} {v:6.2f}")


if __name__ == "__main__":
    main()
