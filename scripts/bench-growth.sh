#!/usr/bin/env bash
# docs/performance.md, "A day as history grows": one day's run as the lab's history grows. For 1x, 2x and 4x the
# full world's 128 upload days (`generate --days`, all ending at the same last upload), a lab
# holds every upload but the last, built; then the last upload is landed and run, as the
# morning's `daily` does, on a fresh copy of that lab each time. Prints each step's wall time,
# RUNS runs each (default 3); take the medians. DAYS="128 1280" measures 1x and 10x history.
# usage: scripts/bench-growth.sh [RECOUNT_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
recount=${1:-${CARGO_TARGET_DIR:-target}/release/recount}
work=${BENCH_DIR:-/var/tmp/recount-bench-growth}
mkdir -p "$work"
last=2026-10-05
for days in ${DAYS:-128 256 512}; do
  w="$work/world-d$days"
  [ -d "$w" ] || "$recount" generate --preset full --days "$days" --out "$w" >/dev/null
  first=$(date -u -d "$last - $((days - 1)) days" +%F)
  before=$(date -u -d "$last - 1 day" +%F)
  base="$work/lab-d$days"
  if [ ! -d "$base" ]; then
    "$recount" --lab "$base" land "$first" "$before" --world "$w" >/dev/null
    "$recount" --lab "$base" run "$first" "$before" >/dev/null
  fi
  for run in $(seq 1 "${RUNS:-3}"); do
    rm -rf "$work/lab"; cp -r "$base" "$work/lab"
    sync
    /usr/bin/time -f "$days days, run $run: land $last %e s wall" "$recount" --lab "$work/lab" land "$last" --world "$w" >/dev/null
    /usr/bin/time -f "$days days, run $run: run $last %e s wall, %M KiB peak RSS" "$recount" --lab "$work/lab" run "$last" >/dev/null
  done
done
rm -rf "$work/lab"
