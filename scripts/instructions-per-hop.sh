#!/usr/bin/env bash
# Instructions per packet-hop, machine-independent: runs a 1 ms cut of the benchmark scenario
# (b) (experiments/bench_fat_tree.toml: k = 8 fat-tree, 100 Gbps, web search at load 0.3,
# DCTCP) under valgrind's callgrind and divides the instructions executed (setup included) by
# the packet-hops the run reports. Extra arguments go to the [metrics] table, e.g.
#   scripts/instructions-per-hop.sh                 # attribution on (the default)
#   scripts/instructions-per-hop.sh attribution=false
# SETS="key=value ..." adds `--set` overrides, e.g. SETS="run.partitions=2" for a split run.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
sed -e 's/^stop_time = .*/stop_time = "1ms"/' -e 's/^name = .*/name = "cut"/' \
    experiments/bench_fat_tree.toml > "$WORK/cut.toml"
if [ $# -gt 0 ]; then
    { echo; echo "[metrics]"; for kv in "$@"; do echo "${kv%%=*} = ${kv#*=}"; done; } >> "$WORK/cut.toml"
fi
sets=()
for kv in ${SETS:-}; do sets+=(--set "$kv"); done
valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.out" \
    target/release/dcsim run "$WORK/cut.toml" "${sets[@]}" --quiet -j 1 --output-dir "$WORK/out" \
    > /dev/null 2> "$WORK/vg.log"
ir=$(grep -E "^(summary|totals):" "$WORK/cg.out" | head -1 | awk '{print $2}')
hops=$(python3 -c "import json;print(json.load(open('$WORK/out/cut/DCTCP-s1/manifest.json'))['packet_hops'])")
python3 -c "print(f'{$ir} instructions, {$hops} packet-hops: {$ir/$hops:.1f} instructions per packet-hop')"
