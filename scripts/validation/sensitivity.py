#!/usr/bin/env python3
"""How much of a gap to the HPCC ns-3 simulator is chaos: runs one validation scenario in dcsim
with paths pinned and the reference's model emulated (as tests/it/validation.rs's "+pin+quirks"),
then again with some flows started 1 ns later (every tenth flow by default), and prints per size bucket the FCT-slowdown p50 and
p99 of the reference, of dcsim, and of the perturbed dcsim run, and per flow the mean |gap| of
dcsim to the reference and to itself perturbed. If a 1 ns nudge moves dcsim's tail as much as
the reference is away from it, the tail gap is sensitivity to event timing, not a model
difference.

    scripts/validation/sensitivity.py CC SCENARIO [FLOW_IDS]   # e.g. timely websearch 18,40
    scripts/validation/sensitivity.py CC SCENARIO --spread N   # N runs: flows k, k+N, ...

With --spread, run k (0..N) starts the flows whose id is k modulo N 1 ns later; the table gives
per bucket the reference's p50 and p99 and the range of dcsim's over the unnudged run and the N
nudged ones, and whether the reference falls inside it.

Needs `cargo build --release` first. Writes only under a temporary directory (and a temporary
config next to the scenario's, removed afterwards).
"""
import csv
import glob
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUCKETS = [("<10K", 10_000), ("10-50K", 50_000), ("50-200K", 200_000),
           ("200K-1M", 1_000_000), ("1-5M", 5_000_000), (">=5M", float("inf"))]


def pct(v, p):
    """Nearest-rank percentile (as the validation test and the pack)."""
    v = sorted(v)
    return v[max(1, math.ceil(p / 100 * len(v))) - 1]


def run(cc, scn, flows_file, out):
    src = os.path.join(ROOT, f"experiments/validation/{cc}/{scn}.toml")
    text = open(src).read()
    text = text.replace(f'"../flows/{scn}.csv"', f'"{flows_file}"')
    text = text.replace("seeds = 5", "seeds = 1")
    text = text.replace('ack_size = "60B"', 'ack_size = "60B"\npacing = "at_send"')
    text = text.replace('ack_size = "88B"', 'ack_size = "88B"\npacing = "at_send"')
    text += (f'\n[routing]\npin = "../flows/{scn}.pins.csv"\n'
             '[quirks]\nns_floor = true\nint_units = true\n[nic]\norder = "index"\n')
    cfg = os.path.join(os.path.dirname(src), f".sensitivity-{os.getpid()}.toml")
    with open(cfg, "w") as f:
        f.write(text)
    try:
        subprocess.run([os.path.join(ROOT, "target/release/dcsim"), "run", cfg, "--quiet",
                        "--output-dir", out], check=True, stdout=subprocess.DEVNULL)
    finally:
        os.remove(cfg)
    (fct,) = glob.glob(os.path.join(out, "*", "*", "fct.csv"))
    return {int(r["flow_id"]): int(r["fct_ps"]) / 1000 for r in csv.DictReader(open(fct))}


def nudged_flows(scn, tmp, pick):
    """A copy of the scenario's flow list with the flows `pick(id)` selects started 1 ns later."""
    flows = os.path.join(ROOT, f"experiments/validation/flows/{scn}.csv")
    out = os.path.join(tmp, f"flows-{len(os.listdir(tmp))}.csv")
    with open(flows) as fi, open(out, "w") as fo:
        for i, line in enumerate(fi):
            v = line.rstrip("\n").split(",")
            if i > 0 and pick(int(v[0])):
                v[4] = str(int(v[4]) + 1)
            fo.write(",".join(v) + "\n")
    return out


def spread(cc, scn, n):
    ref = {}
    for r in csv.DictReader(open(os.path.join(ROOT, f"tests/data/hpcc-ns3/{cc}/{scn}.csv"))):
        fcts = [float(v) for k, v in r.items() if k.startswith("fct_ns")]
        ref[int(r["flow_id"])] = (int(r["size_bytes"]), float(r["ideal_fct_ns"]), fcts)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        runs.append(run(cc, scn, f"../flows/{scn}.csv", os.path.join(tmp, "base")))
        for k in range(n):
            f = nudged_flows(scn, tmp, lambda i, k=k: i % n == k)
            runs.append(run(cc, scn, f, os.path.join(tmp, f"k{k}")))
    n_ref = len(next(iter(ref.values()))[2])
    print(f"{cc} {scn}, paths pinned, reference model: the range over the reference's {n_ref}"
          f" random-number runs, and over {n + 1} dcsim runs (one unnudged, each other with a"
          f" 1/{n} of the flows started 1 ns later); ok: the ranges overlap")
    print(f"{'bucket':8} {'flows':>5}  {'p50 reference':>15} {'dcsim':>15}      "
          f"{'p99 reference':>15} {'dcsim':>15}")
    lo = 0
    overlap = total = 0
    for name, hi in BUCKETS:
        ids = [i for i, (s, _, _) in ref.items() if lo <= s < hi]
        lo = hi
        if not ids:
            continue
        cells = []
        for p in (50, 99):
            r = [pct([ref[i][2][j] / ref[i][1] for i in ids], p) for j in range(n_ref)]
            v = [pct([d[i] / ref[i][1] for i in ids], p) for d in runs]
            ok = min(v) <= max(r) and min(r) <= max(v)
            overlap += ok
            total += 1
            cells.append(f"{min(r):7.3f}-{max(r):7.3f} {min(v):7.3f}-{max(v):7.3f} "
                         f"{'ok ' if ok else 'OUT'}")
        print(f"{name:8} {len(ids):5}  " + "  ".join(cells))
    print(f"overlapping: {overlap} of {total}")


def main():
    cc, scn = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 4 and sys.argv[3] == "--spread":
        spread(cc, scn, int(sys.argv[4]))
        return
    nudge = None if len(sys.argv) <= 3 else {int(x) for x in sys.argv[3].split(",")}
    ref = {}
    for r in csv.DictReader(open(os.path.join(ROOT, f"tests/data/hpcc-ns3/{cc}/{scn}.csv"))):
        ref[int(r["flow_id"])] = (int(r["size_bytes"]), float(r["ideal_fct_ns"]),
                                  float(r["fct_ns"]))
    with tempfile.TemporaryDirectory() as tmp:
        flows = os.path.join(ROOT, f"experiments/validation/flows/{scn}.csv")
        nudged = os.path.join(tmp, "flows.csv")
        with open(flows) as fi, open(nudged, "w") as fo:
            for i, line in enumerate(fi):
                v = line.rstrip("\n").split(",")
                if i > 0 and (int(v[0]) in nudge if nudge else int(v[0]) % 10 == 0):
                    v[4] = str(int(v[4]) + 1)
                fo.write(",".join(v) + "\n")
        a = run(cc, scn, f"../flows/{scn}.csv", os.path.join(tmp, "a"))
        b = run(cc, scn, nudged, os.path.join(tmp, "b"))
    which = ",".join(map(str, sorted(nudge))) if nudge else "every tenth"
    print(f"{cc} {scn}, paths pinned, reference model; flows {which} started 1 ns later in"
          " the nudged run")
    print(f"{'bucket':8} {'flows':>5}  {'p50 ref':>8} {'dcsim':>8} {'nudged':>8}   "
          f"{'p99 ref':>8} {'dcsim':>8} {'nudged':>8}")
    lo = 0
    for name, hi in BUCKETS:
        ids = [i for i, (s, _, _) in ref.items() if lo <= s < hi]
        lo = hi
        if not ids:
            continue
        sd = lambda d: [d[i] / ref[i][1] for i in ids]
        r = [ref[i][2] / ref[i][1] for i in ids]
        print(f"{name:8} {len(ids):5}  {pct(r, 50):8.3f} {pct(sd(a), 50):8.3f} "
              f"{pct(sd(b), 50):8.3f}   {pct(r, 99):8.3f} {pct(sd(a), 99):8.3f} "
              f"{pct(sd(b), 99):8.3f}")
    n = len(ref)
    to_ref = sum(abs(a[i] / ref[i][2] - 1) for i in ref) / n
    to_self = sum(abs(b[i] / a[i] - 1) for i in ref) / n
    print(f"per flow, mean |gap|: dcsim to the reference {100 * to_ref:.2f} %, "
          f"dcsim to itself nudged {100 * to_self:.2f} %")


if __name__ == "__main__":
    main()
