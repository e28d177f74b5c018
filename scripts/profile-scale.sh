#!/usr/bin/env bash
# Cache profile of the scaling benchmark's fat-tree at arity K (default 16) with web search at
# load 0.3 for a short cut (default 0.3 ms), attribution off, under valgrind's cachegrind with
# cache simulation; prints the totals, D1 misses per packet-hop and the functions with the
# most first-level data-cache read misses.
#
#   scripts/profile-scale.sh [K] [STOP]        # e.g. scripts/profile-scale.sh 16 0.3ms
set -euo pipefail
cd "$(dirname "$0")/.."
K=${1:-16}
STOP=${2:-0.3ms}
cargo build --release --quiet
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
sed -e "s/^k = 8$/k = $K/" -e "s/^stop_time = .*/stop_time = \"$STOP\"/" \
    -e "s/^until = .*/until = \"$STOP\"/" -e 's/^name = .*/name = "prof"/' \
    experiments/bench_fat_tree.toml > "$WORK/prof.toml"
printf '\n[metrics]\nattribution = false\n' >> "$WORK/prof.toml"
valgrind --tool=cachegrind --cache-sim=yes --cachegrind-out-file="$WORK/cg.out" \
    target/release/dcsim run "$WORK/prof.toml" --quiet -j 1 --output-dir "$WORK/out" \
    > /dev/null 2> "$WORK/vg.log"
grep -E "I +refs|D +refs|D1 +misses|LLd misses" "$WORK/vg.log"
hops=$(python3 -c "import json;print(json.load(open('$WORK/out/prof/DCTCP-s1/manifest.json'))['packet_hops'])")
d1=$(cg_annotate --show=D1mr "$WORK/cg.out" | awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}')
python3 -c "print(f'{$hops} packet-hops; {$d1 / $hops:.1f} D1 read misses per packet-hop')"
cg_annotate --show=Ir,D1mr --sort=D1mr "$WORK/cg.out" | sed -n '/file:function/,$p' | head -20 || true
