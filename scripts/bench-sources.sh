#!/usr/bin/env bash
# Landing the full world in its own shape and in two others, in
# one run, alternating so the machine's noise falls on all of them alike. Prints each landing's
# wall time and peak RSS, RUNS runs each (default 3); take the medians.
# usage: scripts/bench-sources.sh [RECOUNT_BINARY] [OLD_RECOUNT_BINARY]
#   OLD_RECOUNT_BINARY (optional): a build from before source descriptions, landing the
#   contract's shape too, for the before/after of the fast path.
set -euo pipefail
cd "$(dirname "$0")/.."
recount=${1:-${CARGO_TARGET_DIR:-target}/release/recount}
old=${2:-}
work=${BENCH_DIR:-/var/tmp/recount-bench-sources}
mkdir -p "$work"
for shape in contract kafka-connect parquet; do
  [ -d "$work/full-$shape" ] || "$recount" generate --preset full --shape "$shape" --out "$work/full-$shape" >/dev/null
done
first=2026-05-31
last=2026-10-05
land() { # label binary world
  rm -rf "$work/lab"
  /usr/bin/time -f "$1: %e s wall, %M KiB peak RSS" "$2" --lab "$work/lab" land "$first" "$last" --world "$3" >/dev/null
}
for run in $(seq 1 "${RUNS:-3}"); do
  echo "== run $run"
  [ -n "$old" ] && land "contract shape, before" "$old" "$work/full-contract"
  land "contract shape" "$recount" "$work/full-contract"
  land "kafka-connect (mapped JSON Lines)" "$recount" "$work/full-kafka-connect"
  land "parquet" "$recount" "$work/full-parquet"
done
rm -rf "$work/lab"
