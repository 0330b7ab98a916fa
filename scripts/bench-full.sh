#!/usr/bin/env bash
# The figures in docs/performance.md: the full benchmark with the baseline in the same run, then
# the growth table at 1x, 4x and 10x the stores (FACTORS=1,2 for a quicker one). usage: scripts/bench-full.sh [RECOUNT_BENCH_BINARY]
# (recount-bench measures the recount binary built beside it).
# BASELINE=path/to/run.sh measures against another classic pipeline with the same command line
# (`run.sh runs WORLD --backward --db FILE`); the default is the repository's, bench/classic/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bench=${1:-${CARGO_TARGET_DIR:-target}/release/recount-bench}
work=${BENCH_DIR:-/var/tmp/recount-bench}
baseline=${BASELINE:-bench/classic/run.sh}
mkdir -p "$work"
echo "== recount-bench (full preset, 3 runs, baseline in the same run)"
NO_COLOR=1 "$bench" --preset full --runs 3 --work-dir "$work" --baseline "$baseline"
echo
echo "== growth: every step in a process of its own at 1x, 4x and 10x the stores (worlds kept in $work)"
sync  # the baseline's database is written back before the growth runs, not during them
NO_COLOR=1 "$bench" --preset full --store-factor "${FACTORS:-1,4,10}" --runs 1 --work-dir "$work/growth"
