#!/usr/bin/env bash
# docs/performance.md, "Another model": land + backfill of a manufacturing world of about two
# million records (`generate --model manufacturing --store-factor 530`: 1,060 lines a plant)
# beside the retail full world (2,297,357 events), alternating, RUNS times each (default 3), each
# into an empty lab. Prints each step's wall time and peak RSS, and the lines or events each
# world holds, so that the cost per event can be compared within one run.
# usage: scripts/bench-models.sh [RECOUNT_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
recount=${1:-${CARGO_TARGET_DIR:-target}/release/recount}
work=${BENCH_DIR:-/var/tmp/recount-bench-models}
mkdir -p "$work"
plant="$work/plant-530"
retail="$work/retail-full"
[ -d "$plant" ] || "$recount" generate --model manufacturing --store-factor 530 --out "$plant"
[ -d "$retail" ] || "$recount" generate --preset full --seed 20261025 --out "$retail" >/dev/null
echo "retail: $(zcat "$retail"/pos/events/*/*.gz | wc -l) lines"
for run in $(seq 1 "${RUNS:-3}"); do
  rm -rf "$work/lab"
  /usr/bin/time -f "run $run retail land: %e s wall, %M KiB peak RSS" "$recount" --lab "$work/lab" land 2026-05-31 2026-10-05 --world "$retail" >/dev/null
  /usr/bin/time -f "run $run retail backfill: %e s wall, %M KiB peak RSS" "$recount" --lab "$work/lab" run 2026-05-31 2026-10-05 >/dev/null
  rm -rf "$work/lab"
  /usr/bin/time -f "run $run manufacturing land: %e s wall, %M KiB peak RSS" "$recount" --lab "$work/lab" land 2026-06-18 2026-07-15 --world "$plant" >/dev/null
  /usr/bin/time -f "run $run manufacturing backfill: %e s wall, %M KiB peak RSS" "$recount" --lab "$work/lab" run 2026-06-18 2026-07-15 >/dev/null
  "$recount" --lab "$work/lab" fingerprint
done
rm -rf "$work/lab"
