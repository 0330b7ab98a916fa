#!/usr/bin/env bash
# The figures in docs/performance.md: the full benchmark with the baseline in the same run, then
# land + backwards backfill at 1x, 2x and 4x the stores. usage: scripts/bench-full.sh [RECOUNT_BINARY]
# BASELINE=path/to/run.sh measures against another classic pipeline with the same command line
# (`run.sh runs WORLD --backward --db FILE`); the default is the repository's, bench/classic/run.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
recount=${1:-${CARGO_TARGET_DIR:-target}/release/recount}
work=${BENCH_DIR:-/var/tmp/recount-bench}
baseline=${BASELINE:-bench/classic/run.sh}
mkdir -p "$work"
echo "== recount bench (full preset, 3 runs, baseline in the same run)"
NO_COLOR=1 "$recount" bench --preset full --runs 3 --work-dir "$work" --baseline "$baseline"
echo
echo "== growth: land every upload + v2 backfill backwards, from an empty lab (3 runs each; take the median)"
sync  # the baseline's database is written back before the growth runs, not during them
for f in 0.25 0.5 1.0; do
  w="$work/world-x$f"
  [ -d "$w" ] || "$recount" generate --preset full --store-factor "$f" --out "$w" >/dev/null
  events=$(NO_COLOR=1 "$recount" generate --preset full --store-factor "$f" --out "$w.tmp" | sed -n 's/^ *\([0-9,]*\) events.*/\1/p'); rm -rf "$w.tmp"
  for run in 1 2 3; do
    rm -rf "$work/lab-x$f"  # deleting the last run's lab is not part of the measure
    /usr/bin/time -f "stores x$f ($events events), run $run: %e s wall, %M KiB peak RSS" "$recount" bench-phase --world "$w" --lab "$work/lab-x$f" >/dev/null
  done
done
