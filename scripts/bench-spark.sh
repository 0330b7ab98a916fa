#!/usr/bin/env bash
# Spark on local[2] beside the embedded lab, in one run, on one world: land + backfill (every
# upload landed, then v2 per upload newest first) and one more run of one upload (its inputs
# unchanged, so skipped; and, for the lab, a forced rewrite). Prints wall times; the Spark driver's
# own per-step times go to its log (RECOUNT_PROFILE=1).
#   scripts/bench-spark.sh WORLD [UPLOAD] [RUNS]     e.g. scripts/bench-spark.sh sample-data 2026-10-20 3
set -euo pipefail
cd "$(dirname "$0")/.."
recount=${RECOUNT:-${CARGO_TARGET_DIR:-target}/release/recount}
world=$1
first=$(ls "$world/pos/events" | sed -n 's/^upload_date=//p' | sort | head -1)
last=$(ls "$world/pos/events" | sed -n 's/^upload_date=//p' | sort | tail -1)
upload=${2:-$last}
runs=${3:-1}
work=${BENCH_DIR:-/var/tmp/recount-bench-spark}
mkdir -p "$work"
secs() { /usr/bin/time -f "%e" "$@" 2>&1 >/dev/null | tail -1; }
echo "world $world: uploads $first..$last; one run of upload $upload; $runs run(s); $(nproc) cores"
for run in $(seq "$runs"); do
  rm -rf "$work/lab" "$work/wh"
  lab_backfill=$( { /usr/bin/time -f "%e" sh -c "'$recount' --lab '$work/lab' land $first $last --world '$world' >/dev/null && '$recount' --lab '$work/lab' run $last $first >/dev/null"; } 2>&1 | tail -1)
  lab_one=$(secs "$recount" --lab "$work/lab" run "$upload")
  spark_backfill=$(RECOUNT_PROFILE=1 secs "$recount" spark run "$last" "$first" --world "$world" --warehouse "$work/wh")
  spark_one=$(RECOUNT_PROFILE=1 secs "$recount" spark run "$upload" --world "$world" --warehouse "$work/wh")
  fp_lab=$("$recount" --lab "$work/lab" fingerprint)
  fp_spark=$("$recount" spark fingerprint --warehouse "$work/wh" --reader pyiceberg)
  echo "run $run: land + backfill: lab ${lab_backfill} s, spark ${spark_backfill} s; one run (skipped): lab ${lab_one} s, spark ${spark_one} s"
  [ "$fp_lab" = "$fp_spark" ] && echo "  same fingerprint: $fp_lab" || { echo "  FINGERPRINTS DIFFER: lab $fp_lab, spark $fp_spark"; exit 1; }
done
echo "spark driver phases of the last run: $(ls -t "${RECOUNT_SPARK_HOME:-$HOME/.local/share/recount/spark}"/logs/*run*.log | sed -n 2p)"
