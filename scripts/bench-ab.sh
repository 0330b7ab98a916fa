#!/usr/bin/env bash
# Two builds of recount alternating on the same worlds: land + backfill of the retail full world
# and of a plant world (the manufacturing model, 530x the sample's plants), each run printing
# the fingerprint, so a change's cost is a ratio within one run on a shared machine.
# usage: RUNS=5 scripts/bench-ab.sh OLD_RECOUNT NEW_RECOUNT   (worlds kept in $BENCH_DIR)
set -euo pipefail
old=$1; new=$2; work=${BENCH_DIR:-/var/tmp/recount-ab}
mkdir -p "$work"
plant=$work/plant-530; retail=$work/retail-full
[ -d "$plant" ] || "$new" generate --model manufacturing --store-factor 530 --out "$plant" >/dev/null
[ -d "$retail" ] || "$new" generate --preset full --seed 20261025 --out "$retail" >/dev/null
for run in $(seq 1 "${RUNS:-3}"); do
  for which in old new; do
    bin=${!which}
    rm -rf "$work/lab"
    /usr/bin/time -f "$run $which retail land %e s %M KiB" "$bin" --lab "$work/lab" land 2026-05-31 2026-10-05 --world "$retail" >/dev/null
    /usr/bin/time -f "$run $which retail backfill %e s %M KiB" "$bin" --lab "$work/lab" run 2026-05-31 2026-10-05 >/dev/null
    echo "$run $which retail $("$bin" --lab "$work/lab" fingerprint | tail -1)"
    rm -rf "$work/lab"
    /usr/bin/time -f "$run $which plant land %e s %M KiB" "$bin" --lab "$work/lab" land 2026-06-18 2026-07-15 --world "$plant" >/dev/null
    /usr/bin/time -f "$run $which plant backfill %e s %M KiB" "$bin" --lab "$work/lab" run 2026-06-18 2026-07-15 >/dev/null
    echo "$run $which plant $("$bin" --lab "$work/lab" fingerprint | tail -1)"
  done
done
rm -rf "$work/lab"
