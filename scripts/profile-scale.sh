#!/usr/bin/env bash
# Cache profile of the scaling benchmark's fat-tree at arity K (default 16) with web search at
# load 0.3 for a short cut (default 0.3 ms, setup included) under valgrind's cachegrind with
# cache simulation: the last level modelled as this machine's L2 (1 MiB, 16-way; LL=...
# overrides, in cachegrind's size,assoc,line form), so that "LL misses" are the L2 misses a
# packet-hop costs. Prints instructions, D1 read misses and L2 misses per packet-hop, then the
# functions with the most L2 misses.
#
#   scripts/profile-scale.sh [K] [STOP]        # e.g. scripts/profile-scale.sh 16 0.3ms
#
# ATTRIBUTION=false profiles with delay attribution off (default: on, as the benchmark runs);
# BIN=PATH profiles that dcsim binary instead of building this tree (before/after pairs).
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-16}
STOP=${2:-0.3ms}
LL=${LL:-1048576,16,64}
if [ -z "${BIN:-}" ]; then
    cargo build --release --quiet
    BIN=target/release/dcsim
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
sed -e "s/^k = 8$/k = $K/" -e "s/^stop_time = .*/stop_time = \"$STOP\"/" \
    -e "s/^until = .*/until = \"$STOP\"/" -e 's/^name = .*/name = "prof"/' \
    experiments/bench_fat_tree.toml > "$WORK/prof.toml"
printf '\n[metrics]\nattribution = %s\n' "${ATTRIBUTION:-true}" >> "$WORK/prof.toml"
valgrind --tool=cachegrind --cache-sim=yes --LL="$LL" --cachegrind-out-file="$WORK/cg.out" \
    "$BIN" run "$WORK/prof.toml" --quiet -j 1 --output-dir "$WORK/out" \
    > /dev/null 2> "$WORK/vg.log"
hops=$(python3 -c "import json;print(json.load(open('$WORK/out/prof/DCTCP-s1/manifest.json'))['packet_hops'])")
python3 - "$WORK/vg.log" "$hops" "$K" "$STOP" "${ATTRIBUTION:-true}" <<'PY'
import re, sys
log, hops, k, stop, attr = open(sys.argv[1]).read(), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
def total(label, part=None):
    m = re.search(label + r"\s+([\d,]+)(?:\s+\(\s*([\d,]+) rd)?", log)
    return int((m.group(2) if part == "rd" else m.group(1)).replace(",", ""))
ir, d1r, ll = total(r"I\s+refs:"), total(r"D1\s+misses:", "rd"), total(r"LLd misses:")
print(f"k={k} {stop} attribution={attr}: {hops} packet-hops; per packet-hop: "
      f"{ir / hops:.0f} instructions, {d1r / hops:.1f} D1 read misses, {ll / hops:.2f} L2 misses")
PY
cg_annotate --show=Ir,D1mr,DLmr,DLmw --sort=DLmr "$WORK/cg.out" | sed -n '/file:function/,$p' | head -16 || true
