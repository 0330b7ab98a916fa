"""One v2 run for one upload: the affected dates, their input hashes, and for the dates whose hash
changed a new silver and gold, each written with overwritePartitions() of exactly those dates
(silver first; gold, with the run's evidence as snapshot properties, commits it)."""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING, Any, TypedDict

from recount_spark import state
from recount_spark.answers import BeyondWindow, Run, RunDate
from recount_spark.tables import GOLD, HASH, NAIVE, SILVER, SKIPPED, STORE_CHANGES, WINDOW, prop, writer
from recount_spark.wire import timed

if TYPE_CHECKING:
    from recount_spark.warehouse import Warehouse


def v2_run(w: Warehouse, upload: dt.date, late_days: int, trigger: str) -> Run:
    with timed("state"):
        cells, date_hashes = w.state(late_days)
    affected, beyond = affected_and_beyond(cells, [upload], w.windows)
    beyond_rows: list[BeyondWindow] = [{"business_date": str(d), "currency": cur, "rows": n, "revenue_minor": r}
                                       for (_, d, cur), (n, r) in sorted(beyond.items())]
    result: Run = {
        "upload": str(upload), "trigger": trigger, "late_days": late_days, "action": "skipped", "dates": [],
        "beyond_window": beyond_rows,
    }
    props = {prop("upload"): str(upload), prop("trigger"): trigger}
    corrected = w.corrected(upload)
    if corrected:
        props[prop("corrected")] = ",".join(corrected)
    result["corrected"] = corrected
    return rewrite(w, sorted(affected), date_hashes, late_days, result, props, f"after-silver:{upload}")


def v2_range(w: Warehouse, uploads: list[dt.date], late_days: int) -> Run:
    """A range of uploads in one pass, as the lab's run_range: the union of the dates their
    per-upload runs would rebuild, under one overwritePartitions() per table, one gold snapshot
    naming every upload. A date's input hash does not depend on the run, so each is the one the
    per-upload runs would record, and a later run of one upload skips what did not change."""
    with timed("state"):
        cells, date_hashes = w.state(late_days)
    affected, beyond = affected_and_beyond(cells, uploads, w.windows)
    detail = f"backfill of uploads {name_runs(uploads)}"
    beyond_rows: list[BeyondWindow] = [{"upload": str(u), "business_date": str(d), "currency": cur, "rows": n, "revenue_minor": r}
                                       for (u, d, cur), (n, r) in sorted(beyond.items())]
    result: Run = {
        "upload": None, "trigger": "backfill", "detail": detail, "late_days": late_days, "action": "skipped", "dates": [],
        "beyond_window": beyond_rows,
    }
    props = {prop("trigger"): "backfill", prop("detail"): detail, prop("uploads"): ",".join(map(str, sorted(uploads)))}
    return rewrite(w, sorted(affected), date_hashes, late_days, result, props, "after-silver:range")


Beyond = dict[tuple[dt.date, dt.date, str], list[int]]


def affected_and_beyond(cells: dict[dt.date, list[Any]], uploads: list[dt.date],
                        windows: dict[dt.date, int]) -> tuple[set[dt.date], Beyond]:
    """The dates runs of `uploads` rebuild (any version's dates, no older than upload - late_days),
    and their current rows beyond the window: (rows, revenue) by (upload, business date, currency).
    A reopened date keeps its wider window (`windows`): an upload's rows of it inside that window
    (the cell's `window_days`, the smallest window that takes it in, from the SQL's one window
    rule) are affected, not beyond, as in the lab's affected_dates."""
    affected: set[dt.date] = set()
    beyond: Beyond = {}
    for u in uploads:
        for c in cells.get(u, []):
            kept = windows.get(c.business_date)
            inside_kept = kept is not None and c.window_days is not None and c.window_days <= kept
            if c.affected or inside_kept:
                affected.add(c.business_date)
            if c.beyond and c.current and not inside_kept:
                b = beyond.setdefault((u, c.business_date, c.currency), [0, 0])
                b[0] += c.rows
                b[1] += c.revenue_minor
    return affected, beyond


def name_runs(dates: list[dt.date]) -> str:
    """Dates as runs of consecutive days, oldest first, as the lab writes them:
    "2026-10-12..2026-10-20, 2026-10-22"."""
    runs: list[list[dt.date]] = []
    for d in sorted(set(dates)):
        if runs and runs[-1][1] + dt.timedelta(days=1) == d:
            runs[-1][1] = d
        else:
            runs.append([d, d])
    return ", ".join(str(a) if a == b else f"{a}..{b}" for a, b in runs)


def v2_store_changes(w: Warehouse, late_days: int) -> Run | None:
    """The v2 run the landed store corrections need (None when none is pending), as the lab's
    run_store_changes: every date holding a corrected store's events in the file versions
    re-derived for it, or the versions they replaced, rebuilt under the window rule and
    committed as one overwrite per table, named for each store and what changed. A 'rebuilt'
    row in the store_changes log then marks them done, whether or not a date changed."""
    from pyspark.sql import Row

    pending = state.pending_store_changes(w.path)
    if not pending:
        return None
    # The uploads of the re-derived versions: their dates' hashes are computed (again) for this run.
    w.landed({dt.date.fromisoformat(f.split("/")[0]) for c in pending for f in (c["files"] or "").split(",") if f})
    with timed("state"):
        _, date_hashes = w.state(late_days)
    dates: set[dt.date] = set()
    for c in pending:
        dates |= {r.business_date for r in w.sql("v2", "store_change_dates", store_id=c["store_id"], files=c["files"] or "").collect()}
    detail = "; ".join(
        state.describe_change(c["store_id"], (c["old_country"], c["old_timezone"], c["old_currency"]),
                              (c["new_country"], c["new_timezone"], c["new_currency"]))
        for c in pending
    )
    result: Run = {"upload": None, "trigger": "store", "detail": detail, "late_days": late_days, "action": "skipped",
                   "dates": [], "beyond_window": []}
    props = {prop("trigger"): "store", prop("detail"): detail, prop("store-changes"): ",".join(str(c["change_id"]) for c in pending)}
    result = rewrite(w, sorted(dates), date_hashes, late_days, result, props, "after-silver:store")
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    rows = [Row(event="rebuilt", change_id=c["change_id"], store_id=c["store_id"], old_country=None, old_timezone=None,
                old_currency=None, new_country=None, new_timezone=None, new_currency=None, files=None,
                run=result.get("run"), snapshot_id=result.get("snapshot_id"), at=now) for c in pending]
    w.spark.createDataFrame(rows, schema=w.spark.table(STORE_CHANGES).schema).writeTo(STORE_CHANGES).append()
    return result


def kept_windows(w: Warehouse, dates: list[dt.date], late_days: int, reopen: tuple[dt.date, int] | None) -> dict[dt.date, int]:
    """The dates of `dates` built with a kept window, and that window: a reopened date's (the
    run's when wider), or the one `reopen` gives its date now; as the lab's windows()."""
    kept = {d: max(w.windows[d], late_days) for d in dates if d in w.windows}
    if reopen is not None:
        kept[reopen[0]] = reopen[1]
    return kept


def by_window(dates: list[dt.date], kept: dict[dt.date, int], late_days: int) -> dict[int, list[dt.date]]:
    """`dates` grouped by the window each is built with (its kept one, else the run's), each
    group sorted, the narrowest window first."""
    groups: dict[int, list[dt.date]] = {}
    for d in sorted(dates):
        groups.setdefault(kept.get(d, late_days), []).append(d)
    return dict(sorted(groups.items()))


def rewrite(w: Warehouse, dates: list[dt.date], date_hashes: dict[dt.date, tuple[str, int]], late_days: int,
            result: Run, props: dict[str, str], crash_point: str,
            reopen: tuple[dt.date, int] | None = None) -> Run:
    """The dates whose input hash changed get a new silver and gold, each written by one
    overwritePartitions() of exactly those dates, silver first; gold's commit, with the run's
    evidence as snapshot properties, is the run's commit point. A date with a kept window is
    hashed and built under it, and the write names the window again."""
    from functools import reduce

    from pyspark.sql import functions as F

    kept = kept_windows(w, dates, late_days, reopen)
    date_hashes = dict(date_hashes)
    for window, ds in by_window(list(kept), kept, late_days).items():
        date_hashes.update(w.window_hashes(ds, window))
    missing = [d for d in dates if d not in date_hashes]
    if missing:
        raise ValueError(f"no input hash was computed for {', '.join(map(str, missing))}: the run's state missed them")
    hashes = {d: date_hashes[d] for d in dates}
    changed = [d for d in dates if w.hashes.get(d) != hashes[d][0]]
    for d in dates:
        entry: RunDate = {"business_date": str(d), "action": "overwrite" if d in changed else "skip",
                          "input_rows": hashes[d][1], "input_hash": hashes[d][0]}
        result["dates"].append(entry)
    # What the lab's snapshot record keeps too: the dates whose inputs were unchanged, and the
    # run's rows that arrived past their date's window.
    props = {**props, prop("late-days"): str(late_days),
             prop("skipped-dates"): ",".join(str(d) for d in dates if d not in changed),
             prop("beyond-window-rows"): str(sum(b["rows"] for b in result["beyond_window"]))}
    if not changed:
        record_skip(w, props)
        return result
    run_id = w.last_run + 1
    props = {**props, prop("run"): str(run_id), prop("dates"): ",".join(map(str, changed))}
    for d in changed:
        props[f"{HASH}{d}"] = hashes[d][0]
        if d in kept:
            props[f"{WINDOW}{d}"] = str(kept[d])

    def write(df: Any, table: str, present: set[dt.date], extra: dict[str, str]) -> int | None:
        # overwritePartitions() replaces exactly the partitions the rows hold. A changed date
        # left with no rows (a correction withdrew them all) is in no partition of `df`, so then
        # the same dates are replaced by an explicit filter: one atomic overwrite either way.
        wr = writer(df, table, "business_date", len(changed))
        for k, v in {**props, **extra}.items():
            wr = wr.option("snapshot-property." + k, v)
        if present == set(changed):
            wr.overwritePartitions()
        else:
            wr.overwrite(F.col("business_date").isin(changed))
        return w.current_snapshot(table)

    # One silver for the run, each group of dates built under its own window.
    parts = [w.sql("v2", "silver_rows", dates=ds, late_days=window, first=min(ds), last=max(ds))
             for window, ds in by_window(changed, kept, late_days).items()]
    silver = reduce(lambda a, b: a.unionByName(b), parts).cache()
    silver.createOrReplaceTempView("silver")
    gold = w.sql("v2", "gold_rows").cache()
    counts: dict[dt.date, tuple[int, int]] = {}
    with timed("silver+gold rows"):
        for r in gold.groupBy("business_date").agg(F.count("*").alias("g"), F.sum("baskets").alias("s")).collect():
            counts[r.business_date] = (r.s, r.g)
    with timed("silver write"):
        silver_snapshot = write(silver, SILVER, set(counts), {})
    if os.environ.get("RECOUNT_SPARK_CRASH") == crash_point:
        # Test hook: die as a kill would, between the two commits of a run.
        os._exit(137)
    with timed("gold write"):
        gold_snapshot = write(gold, GOLD, set(counts), {prop("silver-snapshot"): str(silver_snapshot)})
    silver.unpersist()
    gold.unpersist()
    w.last_run = run_id
    for d in changed:
        w.hashes[d] = hashes[d][0]
        if d in kept:
            w.windows[d] = kept[d]
        else:
            w.windows.pop(d, None)
    for entry in result["dates"]:
        d = dt.date.fromisoformat(entry["business_date"])
        if d in changed:
            entry["silver_rows"], entry["gold_rows"] = counts.get(d, (0, 0))
    result["action"] = "overwrite"
    result["run"] = run_id
    result["snapshot_id"] = gold_snapshot
    result["silver_snapshot_id"] = silver_snapshot
    return result


def record_skip(w: Warehouse, props: dict[str, str]) -> None:
    """A run that wrote nothing is kept in skipped_runs (gold gets no snapshot for it), with the
    properties a written run's gold snapshot would carry."""
    import json

    row = [(json.dumps(props, sort_keys=True), dt.datetime.now(dt.UTC).replace(tzinfo=None))]
    w.spark.createDataFrame(row, "properties STRING, at TIMESTAMP").writeTo(SKIPPED).append()


def reopen(w: Warehouse, d: dt.date, reason: str, by: str, late_days: int) -> Run:
    """Finance reopens closed date `d`, as the lab's lake::reopen: its current rows past its
    window's far end go into silver and gold under a window widened to the newest upload that
    holds them, in one run whose gold snapshot names who decided, why, and what it took in.
    The date keeps the wider window in every later write."""
    window = w.windows.get(d, late_days)
    w.few = True
    w.events()
    plan = w.sql("v2", "reopen_plan", d=d, late_days=window).collect()
    if not plan:
        raise ValueError(f"{d} has no rows past its {window}-day window: there is nothing to reopen")
    wider = (max(r.newest for r in plan) - d).days
    uploads = sorted({u for r in plan for u in r.uploads})
    detail = f"reopened by {by}: {reason}"
    result: Run = {
        "upload": None, "trigger": "reopen", "detail": detail, "late_days": late_days, "action": "skipped", "dates": [],
        "beyond_window": [],
    }
    # What the date takes in is the gold snapshot's evidence (its properties), as the lab's
    # snapshot record keeps it.
    props = {prop("trigger"): "reopen", prop("detail"): detail, prop("reason"): reason, prop("by"): by,
             prop("reopened"): str(d), prop("uploads"): ",".join(map(str, uploads)),
             prop("taken-baskets"): str(sum(r.baskets for r in plan))}
    for r in plan:
        props[prop("taken-revenue.") + r.currency] = str(r.revenue_minor)
    return rewrite(w, [d], {}, late_days, result, props, "after-silver:reopen", reopen=(d, wider))


def rebuild(w: Warehouse, dates: list[dt.date], late_days: int) -> Run:
    """A rebuild of named dates under window `late_days`, as the lab's rebuild_dates: each date
    whose inputs changed since its version was built gets a new silver and gold; unchanged ones
    are skipped, and a rebuild of nothing but those writes no snapshot."""
    w.few = True  # a few dates: events read straight from Iceberg, not cached whole
    w.events()
    detail = "rebuild of " + ", ".join(map(str, sorted(dates)))
    result: Run = {"upload": None, "trigger": "manual", "detail": detail, "late_days": late_days,
                   "action": "skipped", "dates": [], "beyond_window": []}
    props = {prop("trigger"): "manual", prop("detail"): detail}
    return rewrite(w, sorted(dates), w.window_hashes(sorted(dates), late_days), late_days, result, props, "after-silver:rebuild")


class NaiveDone(TypedDict):
    """What one v1 run appended."""

    run_date: str
    rows_added: int
    snapshot_id: int | None


def naive(w: Warehouse, run_date: dt.date) -> NaiveDone:
    """v1 for `run_date`, as the lab's: the upload's current events of that business date, per
    store, appended to naive_daily_sales (one snapshot, its run date and trigger as properties)."""
    w.few = True
    w.events()
    rows = w.sql("v2", "naive_rows", run_date=run_date).cache()
    added = rows.count()
    rows.writeTo(NAIVE).option("snapshot-property." + prop("trigger"), "naive") \
        .option("snapshot-property." + prop("upload"), str(run_date)).append()
    rows.unpersist()
    return {"run_date": str(run_date), "rows_added": added, "snapshot_id": w.current_snapshot(NAIVE)}
