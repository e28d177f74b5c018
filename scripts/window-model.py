#!/usr/bin/env python3
"""Fits the parallel kernel's cost model to measured runs and predicts larger core counts.

Per window, with P partitions on P cores (design note of issue 26):

    T_P = I_P * (N * c / P) * (1 + x_P * m / c) + B

N events per window, c the cost of an event, x_P the share of events that cross partitions,
m the extra cost of a crossing, I_P the event imbalance (the busiest partition's events over
the mean, window by window), B what a window costs beyond its work (barriers, the coordinator,
and, measured on a shared machine, threads slowing each other down).

Every term is measured with `dcsim bench --scenario scale:K:websearch`:
  * c, from the unpartitioned run (P = 1), its setup subtracted (a run of 1 ns measures it);
  * x_P, I_P and N, counted by the windowed kernel for each P (single-threaded: counts do
    not depend on the threads);
  * m / c, from instructions (callgrind, machine-independent): a CUT of the run (default
    0.3 ms) at P = 1 and at P = MC_P (default 8) on one thread, setup subtracted, instructions
    per event of the split run over the unsplit one, less one, over x_P (without valgrind:
    fitted to the single-threaded P-partition runs' wall times, which this VM's noise swamps);
  * B, the residual of a 2-thread, 2-partition run (this machine has two cores), run
    alternately with the P = 1 run, REPS pairs, median.
Wall times are medians of REPS runs. Predictions are given for the measured B and for B = 0
(no cost beyond the work: the ceiling).

    scripts/window-model.py [--k 16] [--sim-time 2ms] [--parts 2,4,8,16] [--predict 8,32,128]

BIN=PATH uses that dcsim binary (default target/release/dcsim, built if missing). Wall-clock
terms move with the machine (tens of percent on a shared VM); counts do not. For P beyond the
measured points, I_P and x_P are taken from the largest measured P and scaled for pods: a
fat-tree's pods stay whole, so P above the pod count k leaves partitions with core switches
only, and I_P grows at least as P / k.
"""
import argparse, os, re, shutil, subprocess

ap = argparse.ArgumentParser()
ap.add_argument("--k", type=int, default=16)
ap.add_argument("--sim-time", default="2ms")
ap.add_argument("--parts", default="2,4,8,16")
ap.add_argument("--predict", default="8,32,128")
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--cut", default="0.3ms")
ap.add_argument("--mc-p", type=int, default=8)
a = ap.parse_args()
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
binp = os.environ.get("BIN") or os.path.join(root, "target/release/dcsim")
if not os.path.exists(binp):
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=root, check=True)


def bench(p, t, sim_time):
    out = subprocess.run([binp, "bench", "--scenario", f"scale:{a.k}:websearch", "-t", str(t),
                          "-p", str(p), "--sim-time", sim_time],
                         capture_output=True, text=True, check=True).stdout
    row = out.splitlines()[0].split()
    r = {"wall": float(row[4]), "hops": int(row[5])}
    m = re.search(r"(\d+) windows .*?, (\d+) events per window, ([\d.]+) % of events crossing.*?"
                  r"event imbalance ([\d.]+).*?barrier wait ([\d.]+) s", out, re.S)
    if m:
        r.update(windows=int(m[1]), n=float(m[2]), x=float(m[3]) / 100, imb=float(m[4]),
                 wait=float(m[5]))
    return r


def instructions(p, sim_time):
    '''Instructions of one single-threaded scale point (callgrind), and its events.'''
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/cg.out",
                              binp, "bench", "--scenario", f"scale:{a.k}:websearch", "-p", str(p),
                              "--sim-time", sim_time], capture_output=True, text=True,
                             check=True).stdout
        ir = next(int(l.split()[1]) for l in open(f"{d}/cg.out")
                  if l.startswith(("summary:", "totals:")))
    row = out.splitlines()[0].split()
    return ir, int(row[10])


def median(runs):
    runs = sorted(runs, key=lambda r: r["wall"])
    return runs[len(runs) // 2]


parts = [int(x) for x in a.parts.split(",")]
setup = {p: bench(p, 1, "1ns")["wall"] for p in [1, 2] + parts}
ones, twos = [], []
for _ in range(a.reps):
    ones.append(bench(1, 1, a.sim_time))
    twos.append(bench(2, 2, a.sim_time))
one, two = median(ones), median(twos)
pair = sorted(o["wall"] / t["wall"] for o, t in zip(ones, twos))
pts = {p: median([bench(p, 1, a.sim_time) for _ in range(a.reps)]) for p in parts}
w, n = pts[parts[0]]["windows"], pts[parts[0]]["n"]
work1 = one["wall"] - setup[1]
c = work1 / (w * n)
if shutil.which("valgrind"):
    i1, e1 = instructions(1, a.cut)
    s1, _ = instructions(1, "1ns")
    ip, ep = instructions(a.mc_p, a.cut)
    sp, _ = instructions(a.mc_p, "1ns")
    xp = bench(a.mc_p, 1, a.cut)["x"]
    ipe1, ipep = (i1 - s1) / e1, (ip - sp) / ep
    mc = (ipep / ipe1 - 1) / xp
    mc_src = (f"instructions per event {ipe1:.0f} at P = 1, {ipep:.0f} at P = {a.mc_p} "
              f"(x {xp:.3f}), {a.cut} cut")
else:
    # Extra time of P partitions on one thread over P = 1, against x_P.
    num = sum(pts[p]["x"] * ((pts[p]["wall"] - setup[p]) / work1 - 1) for p in parts)
    den = sum(pts[p]["x"] ** 2 for p in parts)
    mc = max(num / den, 0.0)
    mc_src = "fitted to wall times" 
x2, i2 = two["x"], two["imb"]
pred2 = i2 * (n * c / 2) * (1 + x2 * mc)
b = ((two["wall"] - setup[2]) / w) - pred2

print(f"k = {a.k}, web search {a.sim_time}: {w} windows of {n:.0f} events")
print(f"  c   = {c * 1e9:.0f} ns per event (P = 1: {work1:.2f} s after {setup[1]:.2f} s setup)")
print(f"  m/c = {mc:.2f} (a crossing costs {mc:.2f} events more; {mc_src})")
print(f"  B   = {b * 1e6:.1f} us per window (2 threads: {two['wall']:.2f} s; barrier wait "
      f"{two['wait']:.2f} s per thread)")
print(f"  measured 2 threads over 1 (alternate pairs): {', '.join(f'{r:.2f}x' for r in pair)}")
print(f"{'P':>5} {'x_P':>6} {'I_P':>6} {'T_P/T_1 single-thread':>22}")
for p in parts:
    r = pts[p]
    print(f"{p:>5} {r['x']:6.3f} {r['imb']:6.2f} {(r['wall'] - setup[p]) / work1:22.2f}")
big = parts[-1]
print(f"predicted speedup over one core (simulation only, setup excluded); pods k = {a.k}:")
for p in [int(x) for x in a.predict.split(",")]:
    if p in pts:
        x, imb, src = pts[p]["x"], pts[p]["imb"], "measured x, I"
    else:
        x = pts[big]["x"]
        imb = pts[big]["imb"] * max(1.0, p / max(big, a.k))
        src = f"x, I of P = {big}" + (f", I scaled by P / {max(big, a.k)}" if p > max(big, a.k) else "")
    tp = imb * (n * c / p) * (1 + x * mc)
    print(f"  P = {p:>4}: {n * c / (tp + b):5.1f}x, {n * c / tp:5.1f}x with B = 0  "
          f"({src}: x {x:.3f}, I {imb:.2f})")
