#!/usr/bin/env bash
# Re-baselines the golden outputs (tests/golden/*.hashes) from the working tree's build:
# runs every golden config and records the hash of each output. Only for a change meant to
# alter the model (its commit says so and why); a refactor or an optimisation must pass
# `cargo test golden` unchanged instead.
#
#   scripts/golden.sh           # rewrite every fixture, then show what changed
set -euo pipefail
cd "$(dirname "$0")/.."
DCSIM_GOLDEN=rebaseline cargo test --quiet --test it golden_ > /dev/null
cargo test --quiet --test it golden > /dev/null
git --no-pager diff --stat -- tests/golden/
