#!/usr/bin/env bash
# Paired comparison of two dcsim builds over 10 seeds, on the default experiment and every
# golden config with several schemes: both builds run each config with `seeds = 10`, then
# scripts/paired-compare.py compares them seed by seed (mean FCT per scheme and class, the
# per-seed differences' sd and paired t). For a change meant to move results in distribution
# only (the kernel change of 2026-12-06 was measured with it).
#
#   scripts/paired-kernel.sh OLD_BIN [NEW_BIN] [OUT_DIR]
#
# NEW_BIN defaults to target/release/dcsim (built first), OUT_DIR to a temporary directory.
# Prints every row, then the rows with |t| >= 2.5 and the number of rows.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OLD=$(realpath "$1")
if [ -z "${2:-}" ]; then
    cargo build --release --quiet
    NEW=$(realpath target/release/dcsim)
else
    NEW=$(realpath "$2")
fi
OUT=${3:-$(mktemp -d)}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
cd tests/golden
for c in default fat_tree rdma_pfc gpmp partition_aggregate incast_ties hpcc_file end_when failures; do
    arg=()
    [ "$c" != default ] && arg=("$c.toml")
    rm -rf "$OUT/old-$c" "$OUT/new-$c"
    "$OLD" run "${arg[@]}" --output-dir "$OUT/old-$c" --quiet --set seeds=10 > /dev/null
    "$NEW" run "${arg[@]}" --output-dir "$OUT/new-$c" --quiet --set seeds=10 > /dev/null
done
cd "$OUT"
for c in default fat_tree rdma_pfc gpmp partition_aggregate incast_ties hpcc_file end_when failures; do
    exp=$(ls "old-$c")
    python3 "$ROOT/scripts/paired-compare.py" "old-$c/$exp" "new-$c/$exp" | tail -n +2 | sed "s/^/$c /"
done > all.txt
cat all.txt
echo "rows with |t| >= 2.5:"
awk '{t=$NF+0; if (t >= 2.5 || t <= -2.5) print}' all.txt
echo "$(wc -l < all.txt) rows"
