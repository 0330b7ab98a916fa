#!/usr/bin/env bash
# docs/performance.md, "What is still missing": retail's world through retail's pipeline and
# through the model pipeline (a recount.toml that restates retail, as tests/models.rs's does), in
# one run: every upload but the last landed and run, then a day's `daily` of the last upload, each
# timed on a copy of the built lab. Both labs must print the same fingerprint.
# usage: scripts/bench-retail-model.sh WORLD [RECOUNT_BINARY]     e.g. a world of `generate --preset full`
set -euo pipefail
cd "$(dirname "$0")/.."
world=$(realpath "$1")
recount=${2:-${CARGO_TARGET_DIR:-target}/release/recount}
work=${BENCH_DIR:-/var/tmp/recount-bench-retail-model}
rm -rf "$work" && mkdir -p "$work"
# The same raw files (hard links), under a recount.toml that names the model.
cp -al "$world" "$work/shop" && rm -f "$work/shop/recount.toml"
cp tests/corpus/retail_restated.toml "$work/shop/recount.toml"
uploads=$(ls "$world/pos/events" | sed -n 's/^upload_date=//p' | sort)
first=$(echo "$uploads" | head -1) last=$(echo "$uploads" | tail -1) before=$(echo "$uploads" | tail -2 | head -1)
for pipeline in retail model; do
  w=$world; [ "$pipeline" = model ] && w=$work/shop
  lab=$work/$pipeline
  /usr/bin/time -f "$pipeline land $first..$before: %e s, %M KiB" "$recount" --lab "$lab" land "$first" "$before" --world "$w" >/dev/null
  /usr/bin/time -f "$pipeline run $first..$before: %e s, %M KiB" "$recount" --lab "$lab" run "$first" "$before" >/dev/null
  for n in 1 2; do
    rm -rf "$lab.day" && cp -r "$lab" "$lab.day"
    /usr/bin/time -f "$pipeline daily $last ($n): %e s, %M KiB" "$recount" --lab "$lab.day" daily "$last" --world "$w" >/dev/null
  done
  "$recount" --lab "$lab.day" fingerprint
done
