#!/usr/bin/env bash
# docs/performance.md, "Audit": `recount audit` of the full world's gold with 1% of its rows
# wrong (every 100th row: half of them doubled, a retried append; half one basket off), beside
# `recount check` run for each of its 128 dates, RUNS times each (default 3).
# usage: scripts/bench-audit.sh [RECOUNT_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
recount=${1:-${CARGO_TARGET_DIR:-target}/release/recount}
work=${BENCH_DIR:-/var/tmp/recount-bench-audit}
mkdir -p "$work"
world="$work/retail-full"
[ -d "$world" ] || "$recount" generate --preset full --seed 20261025 --out "$world" >/dev/null
[ -f "$work/gold.csv" ] || "$recount" generate --foreign-gold --world "$world" --out "$work/gold.csv" 2>/dev/null
[ -d "$work/lab" ] || "$recount" --lab "$work/lab" daily 2026-05-31 2026-10-05 --world "$world" >/dev/null
python3 - "$work/gold.csv" "$work/wrong.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head, out = rows[0], [rows[0]]
b, r = head.index("baskets"), head.index("revenue_minor")
for i, row in enumerate(rows[1:]):
    if i % 100 == 50:
        if (i // 100) % 2 == 0:
            row[b], row[r] = str(int(row[b]) * 2), str(int(row[r]) * 2)
        else:
            row[b] = str(int(row[b]) + 1)
    out.append(row)
csv.writer(open(sys.argv[2], "w", newline="")).writerows(out)
PY
for run in $(seq 1 "${RUNS:-3}"); do
  /usr/bin/time -f "run $run audit: %e s wall, %M KiB peak RSS" "$recount" --lab "$work/lab" audit --gold "$work/wrong.csv" >/dev/null || true
  start=$(date +%s.%N)
  for i in $(seq 0 127); do "$recount" --lab "$work/lab" check "$(date -u -d "2026-05-31 + $i days" +%F)" >/dev/null; done
  echo "run $run check of every date, one command each: $(echo "$(date +%s.%N) - $start" | bc) s wall"
done
