"""One v2 run for one upload: the affected dates, their input hashes, and for the dates whose hash
changed a new silver and gold, each written with overwritePartitions() of exactly those dates
(silver first; gold, with the run's evidence as snapshot properties, commits it)."""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING, Any

from recount_spark.tables import GOLD, HASH, PROP, SILVER
from recount_spark.wire import timed

if TYPE_CHECKING:
    from recount_spark.warehouse import Warehouse


def v2_run(w: Warehouse, upload: dt.date, late_days: int, trigger: str) -> dict[str, Any]:
    from pyspark.sql import functions as F

    with timed("state"):
        cells, date_hashes = w.state(late_days)
    affected: set[dt.date] = set()
    beyond: dict[tuple[dt.date, str], list[int]] = {}
    for c in cells.get(upload, []):
        if c.affected:
            affected.add(c.business_date)
        if c.beyond and c.current:
            b = beyond.setdefault((c.business_date, c.currency), [0, 0])
            b[0] += c.rows
            b[1] += c.revenue_minor
    dates = sorted(affected)
    result: dict[str, Any] = {
        "upload": str(upload), "trigger": trigger, "late_days": late_days, "action": "skipped", "dates": [],
        "beyond_window": [{"business_date": str(d), "currency": cur, "rows": n, "revenue_minor": r}
                          for (d, cur), (n, r) in sorted(beyond.items())],
    }
    hashes = {d: date_hashes[d] for d in dates}
    changed = [d for d in dates if w.hashes.get(d) != hashes[d][0]]
    for d in dates:
        result["dates"].append({"business_date": str(d), "action": "overwrite" if d in changed else "skip",
                                "input_rows": hashes[d][1], "input_hash": hashes[d][0]})
    if not changed:
        return result
    run_id = w.last_run + 1
    corrected = w.corrected(upload)
    props = {
        PROP + "run": str(run_id), PROP + "upload": str(upload), PROP + "trigger": trigger,
        PROP + "late-days": str(late_days), PROP + "dates": ",".join(map(str, changed)),
    }
    if corrected:
        props[PROP + "corrected"] = ",".join(corrected)
    for d in changed:
        props[f"{HASH}{d}"] = hashes[d][0]

    def write(df: Any, table: str, present: set[dt.date], extra: dict[str, str]) -> int | None:
        # overwritePartitions() replaces exactly the partitions the rows hold. A changed date
        # left with no rows (a correction withdrew them all) is in no partition of `df`, so then
        # the same dates are replaced by an explicit filter: one atomic overwrite either way.
        wr = df.writeTo(table)
        for k, v in {**props, **extra}.items():
            wr = wr.option("snapshot-property." + k, v)
        if present == set(changed):
            wr.overwritePartitions()
        else:
            wr.overwrite(F.col("business_date").isin(changed))
        return w.current_snapshot(table)

    silver = w.sql("v2", "silver_rows", dates=changed, late_days=late_days, first=min(changed), last=max(changed)).cache()
    silver.createOrReplaceTempView("silver")
    gold = w.sql("v2", "gold_rows").cache()
    counts: dict[dt.date, tuple[int, int]] = {}
    with timed("silver+gold rows"):
        for r in gold.groupBy("business_date").agg(F.count("*").alias("g"), F.sum("baskets").alias("s")).collect():
            counts[r.business_date] = (r.s, r.g)
    with timed("silver write"):
        silver_snapshot = write(silver, SILVER, set(counts), {})
    if os.environ.get("RECOUNT_SPARK_CRASH") == f"after-silver:{upload}":
        # Test hook: die as a kill would, between the two commits of a run.
        os._exit(137)
    with timed("gold write"):
        gold_snapshot = write(gold, GOLD, set(counts), {PROP + "silver-snapshot": str(silver_snapshot)})
    silver.unpersist()
    gold.unpersist()
    w.last_run = run_id
    for d in changed:
        w.hashes[d] = hashes[d][0]
    for entry in result["dates"]:
        d = dt.date.fromisoformat(entry["business_date"])
        if d in changed:
            entry["silver_rows"], entry["gold_rows"] = counts.get(d, (0, 0))
    result.update(action="overwrite", run=run_id, snapshot_id=gold_snapshot, silver_snapshot_id=silver_snapshot,
                  corrected=corrected)
    return result
