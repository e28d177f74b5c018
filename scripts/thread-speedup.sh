#!/usr/bin/env bash
# Thread speedup of the scaling benchmark, measured as interleaved pairs: for each fat-tree
# arity K, run `dcsim bench --scenario scale:K:websearch` at -t 1 and at -t N alternately,
# REPS pairs (the order flips every pair so that drift in the machine's speed falls on both
# sides), and report each pair's wall-time ratio and the median. Same run, same bytes: only
# the thread count differs.
#
#   scripts/thread-speedup.sh [N] [REPS] [K...]     # e.g. scripts/thread-speedup.sh 2 3 8 16
#
# BIN=PATH measures that dcsim binary instead of building this tree. Wall times on a shared
# VM vary by tens of percent from run to run; the pairing is what makes the ratio usable.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2}
REPS=${2:-3}
shift $(( $# > 2 ? 2 : $# ))
KS=("$@")
[ ${#KS[@]} -eq 0 ] && KS=(8 16)
if [ -z "${BIN:-}" ]; then
    cargo build --release --quiet
    BIN=target/release/dcsim
fi
wall() { # wall seconds of one scale point: 5th column of the point's row
    "$BIN" bench --scenario "scale:$1:websearch" -t "$2" | awk 'NR==1 {print $5}'
}
echo "host: $(nproc) cores, $(uname -m); dcsim $("$BIN" --version | awk '{print $2}')"
printf '%3s %4s %10s %10s %8s\n' k pair "t1 (s)" "t$N (s)" speedup
for k in "${KS[@]}"; do
    ratios=()
    for r in $(seq 1 "$REPS"); do
        if (( r % 2 )); then a=$(wall "$k" 1); b=$(wall "$k" "$N");
        else b=$(wall "$k" "$N"); a=$(wall "$k" 1); fi
        ratio=$(python3 -c "print(f'{$a / $b:.3f}')")
        ratios+=("$ratio")
        printf '%3s %4s %10s %10s %8s\n' "$k" "$r" "$a" "$b" "$ratio"
    done
    python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[2:]]; print(f'k={sys.argv[1]}: median speedup at -t $N over -t 1: {statistics.median(v):.2f}x (min {min(v):.2f}, max {max(v):.2f}, {len(v)} pairs)')" "$k" "${ratios[@]}"
done
