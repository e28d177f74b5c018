#!/usr/bin/env bash
# Issue 27's AI experiment in one command: all-reduce algorithms and sizes on a 128-GPU rail
# fabric, transports and load balancers under all-reduce, and a mixture-of-experts iteration
# on rail against ToR wiring. Results (summary.csv, collectives.csv, training.csv, figures)
# go to results/ai-*/; each run's wall time is in its manifest.json, and this script prints
# each part's. Pass --smoke for the seconds-long smoke version (its numbers mean nothing).
#
#   experiments/ai/run.sh [--smoke] [-j N]
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
for part in allreduce transport moe; do
    start=$(date +%s)
    target/release/dcsim run "experiments/ai/$part.toml" --quiet "$@"
    echo "experiments/ai/$part.toml: $(( $(date +%s) - start )) s"
done
