#!/usr/bin/env bash
# docs/reliability.md, "Faults": N daily runs (landing and v2) of a world under a memory budget
# drawn from 16 to 64 MiB, each killed (SIGKILL) at a random point within 3 s or failing on the
# budget, then finished by one more daily run with the default budget. Prints each try's budget,
# kill time, exit code and the next command's, and whether the lab's fingerprint equals a clean
# lab's; an exit of 134 (an abort: a C++ exception crossing into Rust) is printed as ABORT. Exits
# 1 if any try aborted or left a lab that differs.
# usage: scripts/budget-kills.sh WORLD FROM TO [N] [RECOUNT_BINARY]
# e.g.   scripts/budget-kills.sh sample-data 2026-10-12 2026-11-01 25
#        scripts/budget-kills.sh sample-data-manufacturing 2026-06-18 2026-07-15 25
set -uo pipefail
world=$1 from=$2 to=$3 n=${4:-25}
recount=${5:-${CARGO_TARGET_DIR:-target}/release/recount}
work=$(mktemp -d "${TMPDIR:-/tmp}/recount-kills.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$recount" --lab "$work/clean" daily --world "$world" "$from" "$to" >/dev/null 2>&1
clean=$("$recount" --lab "$work/clean" fingerprint)
echo "clean: $clean"
bad=0
for i in $(seq 1 "$n"); do
  mem=$((16 + RANDOM % 49)) ms=$((RANDOM % 3000)) lab="$work/lab$i"
  timeout -s KILL "$((ms / 1000)).$(printf %03d $((ms % 1000)))" \
    "$recount" --lab "$lab" --memory "${mem}MB" daily --world "$world" "$from" "$to" >"$work/out" 2>&1
  rc=$?
  "$recount" --lab "$lab" daily --world "$world" "$from" "$to" >/dev/null 2>&1
  next=$?
  verdict=same
  [ "$("$recount" --lab "$lab" fingerprint 2>&1)" = "$clean" ] || { verdict=DIFFERS; bad=1; }
  echo "$i: --memory ${mem}MB, killed at ${ms} ms: exit $rc, next command exit $next, fingerprint $verdict"
  [ "$rc" = 134 ] && { echo "ABORT: $(tail -3 "$work/out")"; bad=1; }
  rm -rf "$lab"
done
exit "$bad"
