#!/usr/bin/env bash
# Checks that a change keeps dcsim's outputs byte-identical: builds BASE (a git revision,
# default HEAD) in a temporary work tree, runs the default experiment and the smoke version
# (`--smoke`) of every GPMP, PDTCP and congestion-control (cc/) experiment and of the three
# imports (interop/) with it and with the working tree's build,
# and compares every run's fct.csv, summary.csv, ports.csv and switches.csv byte for byte.
#
#   scripts/compare-outputs.sh [BASE]        # exit 0: identical; 1: a file differs
#
# IGNORE_COLUMNS=REGEX: a file that differs is compared again without the CSV columns whose
# names match REGEX (for a change meant to alter only those, e.g. 'attr_' for the delay
# attribution); files equal then are listed as such and do not fail the check.
#
# BASE_BIN=PATH: use this already-built dcsim binary as the base instead of building BASE
# (e.g. a previous run's build kept for a series of comparisons).
#
# BASE must know `dcsim run --smoke` (added with this script). A refactor or an optimisation
# must pass this; a change that alters event order is a model change and is reported as one.
set -euo pipefail
cd "$(dirname "$0")/.."
BASE=${1:-HEAD}
WORK=$(mktemp -d)
trap 'git worktree remove --force "$WORK/src" > /dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

if [ -n "${BASE_BIN:-}" ]; then
    echo "== base: $BASE_BIN; building the working tree"
    mkdir -p "$WORK/base-target/release"
    cp "$BASE_BIN" "$WORK/base-target/release/dcsim"
else
    echo "== building $BASE and the working tree"
    git worktree add --detach "$WORK/src" "$BASE" > /dev/null
    (cd "$WORK/src" && CARGO_TARGET_DIR="$WORK/base-target" cargo build --release --quiet)
fi
cargo build --release --quiet

configs=(experiments/default.toml experiments/gpmp/*.toml experiments/pdtcp/*.toml experiments/cc/*.toml
    experiments/interop/hpcc.toml experiments/interop/htsim.toml experiments/interop/failures.toml)
for side in base new; do
    if [ "$side" = base ]; then bin="$WORK/base-target/release/dcsim"; else bin=target/release/dcsim; fi
    for c in "${configs[@]}"; do
        flags=(--smoke)
        [ "$c" = experiments/default.toml ] && flags=()
        "$bin" run "$c" "${flags[@]}" --quiet --output-dir "$WORK/out-$side" > /dev/null
    done
done

echo "== comparing"
status=0
n=0
ignored=0
list() {
    (cd "$1" && find . -type f \( -name fct.csv -o -name summary.csv -o -name ports.csv \
        -o -name switches.csv \) | sort)
}
diff <(list "$WORK/out-base") <(list "$WORK/out-new") > /dev/null || {
    echo "the two sides wrote different sets of files:"
    diff <(list "$WORK/out-base") <(list "$WORK/out-new") || true
    status=1
}
while IFS= read -r rel; do
    n=$((n + 1))
    if ! cmp -s "$WORK/out-base/$rel" "$WORK/out-new/$rel"; then
        if [ -n "${IGNORE_COLUMNS:-}" ] && python3 - "$WORK/out-base/$rel" "$WORK/out-new/$rel" "$IGNORE_COLUMNS" <<'PY'
import csv, re, sys
def rows(path, pat):
    r = list(csv.reader(open(path, newline="")))
    keep = [i for i, h in enumerate(r[0]) if not re.search(pat, h)] if r else []
    return [[row[i] for i in keep if i < len(row)] for row in r]
sys.exit(0 if rows(sys.argv[1], sys.argv[3]) == rows(sys.argv[2], sys.argv[3]) else 1)
PY
        then
            echo "differs only in ignored columns: $rel"
            ignored=$((ignored + 1))
        else
            echo "DIFFERS: $rel"
            status=1
        fi
    fi
done < <(list "$WORK/out-base")
echo "$n files compared"
[ $ignored -gt 0 ] && echo "$ignored differ only in columns matching $IGNORE_COLUMNS"
[ $status -eq 0 ] && echo "== identical"

exit $status
