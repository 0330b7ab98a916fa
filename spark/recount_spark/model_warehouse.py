"""A model other than retail on Spark + Iceberg (docs/data-contract.md, "Models"): the lab's
crates/lab/src/lake/model.rs, on a warehouse. Landing reads each new or corrected file with the model
(model.py, the reader the shared corpus holds to the lab's) into bronze, a file's next version
when its bytes changed; v2 rebuilds an upload's affected dates whose input hash changed and
replaces exactly those partitions of the model's gold table with overwritePartitions(), the run's
evidence as the snapshot's properties. An unchanged input (an identical re-delivery) commits
nothing to gold and is logged in model_skipped_runs. The SQL is queries/spark/model.sql.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import zlib
from typing import Any

from recount_spark import model as m
from recount_spark.answers import ModelHeld, ModelLandedFile, ModelLanding, ModelRollbackAnswer, ModelRun
from recount_spark.parse import I64_MAX, gunzip, is_blank, printable, split_lines, unreadable
from recount_spark.rules import fate
from recount_spark.state import has_table, lineage, static_table
from recount_spark.tables import HASH, NS, WINDOW, hashes_in, prop, summary_of, windows_in

FILES = f"{NS}.model_files"
RECORDS = f"{NS}.model_records"
DIMENSION = f"{NS}.model_dimension"
SKIPPED = f"{NS}.model_skipped_runs"
DEFINITION = f"{NS}.model_definition"
NAIVE = f"{NS}.model_naive"
COLUMNS = 4, 4, 6  # grain, attributes, measures: bronze's fixed columns


def gold_table(model: dict[str, Any]) -> str:
    return f"{NS}.{model['gold']}"


def gold_columns(model: dict[str, Any]) -> list[str]:
    return ["business_date", *model["grain"], *model.get("attributes", []), *(x["name"] for x in model["measures"])]


def ensure(spark: Any, sql: Any, model: dict[str, Any]) -> None:
    """The model's tables, and the model itself recorded on first use: a warehouse holds one."""
    import json

    from pyspark.sql import Row

    for name in ("schema_files", "schema_records", "schema_dimension", "schema_skipped", "schema_definition", "schema_naive"):
        sql("model", name)
    if "event_ns" not in spark.table(RECORDS).columns:
        sql("model", "records_event_time")
    kept = spark.table(DEFINITION).collect()
    if not kept:
        row = Row(name=model["name"], parts=json.dumps(model, sort_keys=True))
        spark.createDataFrame([row], schema=spark.table(DEFINITION).schema).writeTo(DEFINITION).append()
    elif json.loads(kept[0].parts) != model:
        raise ValueError(f"this warehouse holds model {kept[0].name}, not {model['name']}: write it to a warehouse of its own")


def warehouse_model(warehouse: str) -> dict[str, Any] | None:
    """The model a warehouse holds (None: retail's), read with pyiceberg."""
    import json

    if not has_table(warehouse, "model_definition"):
        return None
    rows = static_table(warehouse, "model_definition").scan().to_arrow().to_pylist()
    return json.loads(rows[0]["parts"]) if rows else None


def _dimension(spark: Any, world: str, model: dict[str, Any]) -> tuple[dict[str, tuple[str, list[str]]], list[str], list[str]]:
    """The dimension, as the lab's landing has it (crates/lab/src/lake/model_land.rs): the world's
    file when it has one (a new version when it changed), over every row the warehouse's versions
    named, so a key gone from the file keeps its last row and its records stay in gold. Returns
    it, the keys whose rows changed or are new, and the keys the file no longer names, each in
    byte order."""
    from pyspark.sql import Row

    dim = model.get("dimension")
    if not dim:
        return {}, [], []
    kept = sorted(spark.table(DIMENSION).collect(), key=lambda r: r.version)
    table: dict[str, tuple[str, list[str]]] = {}
    for v in kept:
        table.update(m.dimension(model, v.text))
    path = os.path.join(world, dim["file"])
    if not os.path.isfile(path):
        if not kept:
            raise ValueError(f"{world}: no {dim['file']} here, and the warehouse has none yet")
        return table, [], []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    md5 = hashlib.md5(text.encode()).hexdigest()
    now = m.dimension(model, text)
    removed = sorted(table.keys() - now.keys())
    if kept and kept[-1].md5 == md5:
        return table, [], removed
    changed = sorted(k for k, row in now.items() if table.get(k) != row) if kept else []
    row = Row(version=(kept[-1].version + 1) if kept else 1, md5=md5, text=text)
    spark.createDataFrame([row], schema=spark.table(DIMENSION).schema).writeTo(DIMENSION).append()
    table.update(now)
    return table, changed, removed


def _reread(spark: Any, world: str, model: dict[str, Any], changed: list[str],
            landed: dict[tuple[dt.date, str], tuple[int, str]], todo: set[tuple[dt.date, str]]) -> list[tuple[dt.date, str, int, str]]:
    """The current files whose records name a dimension row that changed, to be read again as
    their next version (the contract's dimension correction), as the lab's landing does. The
    warehouse keeps no raw bytes: they are read from the world, which must still hold the current
    version's bytes. Returns (upload, file, next version, path)."""
    from pyspark.sql import functions as F

    dim = model.get("dimension")
    if not dim or not changed:
        return []
    column = f"g{model['grain'].index(dim['key']) + 1}"
    named = (spark.table(RECORDS).where(F.col(column).isin(changed))
             .select("upload_date", "file_name", "version").distinct().collect())
    out = []
    for r in sorted(named, key=lambda r: (r.upload_date, r.file_name.encode())):
        key = (r.upload_date, r.file_name)
        current = landed.get(key)
        if current is None or current[0] != r.version or key in todo:
            continue
        path = os.path.join(world, model["events_root"], f"upload_date={r.upload_date}", r.file_name)
        if not os.path.isfile(path) or _md5(path) != current[1]:
            raise ValueError(f"{dim['key']} {', '.join(changed)} changed, so upload {r.upload_date}'s {r.file_name} v{current[0]} "
                             "must be read again, and the world no longer holds those bytes (land that upload first)")
        out.append((r.upload_date, r.file_name, current[0] + 1, path))
        todo.add(key)
    return out


def _md5(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def _pad(xs: list[Any], n: int) -> list[Any]:
    """`xs` in `n` of bronze's fixed columns, the unused ones NULL."""
    return list(xs) + [None] * (n - len(xs))


def _record_row(upload: dt.date, name: str, version: int, line: int, r: dict[str, Any]) -> tuple[Any, ...]:
    g, a, ms = COLUMNS
    pad = _pad
    return (upload, name, version, line, r["key"], r["event_id"], r["arrival_ns"], dt.date.fromisoformat(r["business_date"]),
            *pad(r["grain"], g), *pad(r["attributes"], a), *pad(r["measures"], ms), r["event_ns"])


def past_limit(model: dict[str, Any], new: list[tuple[Any, ...]], existing: list[Any], replaced: set[tuple[dt.date, str]]) -> str | None:
    """Why a landing is refused when a measure, summed as absolute values over every copy of a
    (business date, grain) its new records touch, would leave 64 bits, as the lab's landing says
    it (crates/lab/src/lake/model_land.rs, refuse_measures_past_limit); None when none would.
    `new`: the landing's records (_record_row); `existing`: the warehouse's current copies summed
    by date, grain and file (`measure_totals`), less the files the landing replaces."""
    width = COLUMNS[2]
    totals: dict[tuple[Any, ...], list[int]] = {}
    files: dict[tuple[Any, ...], str] = {}
    for r in new:
        k = (r[7], *r[8:12])
        acc = totals.setdefault(k, [0] * width)
        for i, value in enumerate(r[16:16 + width]):
            acc[i] += abs(value or 0)
        f = f"upload_date={r[0]}/{r[1]}"
        files[k] = min(files.get(k, f), f)
    for row in existing:
        k = (row["business_date"], row["g1"], row["g2"], row["g3"], row["g4"])
        if k in totals and (row["upload_date"], row["file_name"]) not in replaced:
            for i in range(width):
                totals[k][i] += int(row[f"t{i + 1}"] or 0)
    for k in sorted(totals, key=lambda k: (k[0], *((g or "").encode() for g in k[1:]))):
        for measure, total in zip(model["measures"], totals[k], strict=False):
            if total > I64_MAX:
                grain = ", ".join(f"{name} {printable(v or '')}" for name, v in zip(model["grain"], k[1:], strict=False))
                return (f"business date {k[0]}, {grain}: {measure['name']} over every landed copy would total {total}, "
                        f"past what 64 bits hold (file {printable(files[k])}); nothing was landed")
    return None


def land(spark: Any, sql: Any, world: str, model: dict[str, Any], uploads: list[dt.date]) -> tuple[ModelLanding, list[dt.date]]:
    """Lands `uploads` of `world`: a file whose bytes are new lands as its path's next version,
    and a corrected dimension row's files are read again. Returns what landed, and the uploads
    whose files were read again (their runs rebuild the dates the correction moves)."""
    from pyspark.sql import Row

    dims, changed, removed = _dimension(spark, world, model)
    landed: dict[tuple[dt.date, str], tuple[int, str]] = {}
    for r in spark.table(FILES).collect():
        key = (r.upload_date, r.file_name)
        if key not in landed or r.version > landed[key][0]:
            landed[key] = (r.version, r.md5)
    out: list[ModelLandedFile] = []
    todo: list[tuple[dt.date, str, int, str, str]] = []  # upload, file, version, path, status
    missing: list[str] = []
    held: list[ModelHeld] = []
    for u in uploads:
        part = os.path.join(world, model["events_root"], f"upload_date={u}")
        if not os.path.isdir(part):
            missing.append(str(u))
            continue
        names = []
        for here, _, found in os.walk(part):
            names += [os.path.relpath(os.path.join(here, n), part) for n in found if n.endswith(".jsonl.gz")]
        upload: list[tuple[dt.date, str, int, str, str]] = []
        for name in sorted(names, key=lambda n: n.encode()):
            path = os.path.join(part, name)
            before = landed.get((u, name))
            if before and before[1] == _md5(path):
                out.append({"upload_date": str(u), "file": name, "version": before[0], "status": "unchanged",
                            "records": 0, "quarantined": 0})
                continue
            # A file that cannot be read whole holds back its upload, and only that upload
            # (crates/lab/src/lake/model_land.rs).
            try:
                with open(path, "rb") as f:
                    gunzip(f.read())
            except (ValueError, zlib.error) as e:
                held.append({"upload_date": str(u), "file": name, "reason": unreadable(".gz", e)})
                upload = []
                break
            version = before[0] + 1 if before else 1
            upload.append((u, name, version, path, "new" if version == 1 else "corrected"))
        todo += upload
    again = _reread(spark, world, model, changed, landed, {(u, n) for u, n, *_ in todo})
    todo += [(u, n, v, p, "re-read") for u, n, v, p in again]
    records: list[tuple[Any, ...]] = []
    files: list[Any] = []
    for u, name, version, path, status in todo:
        with open(path, "rb") as f:
            data = f.read()
        good = refused = 0
        lines = split_lines(gunzip(data))
        for i, line in enumerate(lines.text, 1):
            if i - 1 in lines.not_utf8:
                refused += 1
                continue
            if is_blank(line):
                continue
            r = m.read_line(model, dims, line, u)
            if isinstance(r, str):
                refused += 1
                continue
            good += 1
            records.append(_record_row(u, name, version, i, r))
        md5 = hashlib.md5(data).hexdigest()
        files.append(Row(upload_date=u, file_name=name, version=version, md5=md5, records=good, quarantined=refused))
        out.append({"upload_date": str(u), "file": name, "version": version, "status": status, "records": good, "quarantined": refused})
    if records:
        dates = sorted({r[7] for r in records})
        existing = [r.asDict() for r in sql("model", "measure_totals", dates=dates).collect()]
        why = past_limit(model, records, existing, {(u, n) for u, n, *_ in todo})
        if why is not None:
            raise ValueError(why)
        spark.createDataFrame(records, schema=spark.table(RECORDS).schema).writeTo(RECORDS).append()
    if files:
        spark.createDataFrame(files, schema=spark.table(FILES).schema).writeTo(FILES).append()
    # Other bytes holding the same records are a re-delivery, not a correction, as the lab says.
    corrected = sorted({dt.date.fromisoformat(o["upload_date"]) for o in out if o["status"] == "corrected"})
    if corrected:
        same = {(str(r.upload_date), r.file_name, r.version) for r in sql("model", "redelivered", uploads=corrected).collect()}
        for o in out:
            if o["status"] == "corrected" and (o["upload_date"], o["file"], o["version"]) in same:
                o["status"] = REDELIVERED
    out.sort(key=lambda f: (f["upload_date"], f["file"].encode(), f["version"]))
    landing: ModelLanding = {"model": model["name"], "files": out, "dimension_changed": changed, "dimension_removed": removed,
                            "missing": missing, "held": held}
    return landing, sorted({u for u, *_ in again})


# A file version whose records are the version's before it (crates/lab/src/lake/model_land.rs's REDELIVERED).
REDELIVERED = "re-delivered (same rows)"


def gold_hashes(warehouse: str, model: dict[str, Any]) -> dict[str, str]:
    """Each date's input hash as gold's lineage names it (the newest write of the date)."""
    if not has_table(warehouse, model["gold"]):
        return {}
    hashes: dict[str, str] = {}
    for snap in lineage(static_table(warehouse, model["gold"])):
        for d, h in hashes_in(summary_of(snap)).items():
            hashes.setdefault(d, h)
    return hashes


def kept_windows(warehouse: str, model: dict[str, Any]) -> dict[dt.date, int]:
    """Each reopened date's wider window, as gold's lineage names it (the newest write of the
    date that kept one): every later build of the date keeps it, as the lab's date_windows."""
    if not has_table(warehouse, model["gold"]):
        return {}
    kept: dict[dt.date, int] = {}
    for snap in lineage(static_table(warehouse, model["gold"])):
        for d, w in windows_in(summary_of(snap)).items():
            kept.setdefault(dt.date.fromisoformat(d), w)
    return kept


def _kept_view(spark: Any, kept: dict[dt.date, int]) -> None:
    """The view model_kept that model.sql's model_visible reads each date's kept window from."""
    spark.createDataFrame(sorted(kept.items()), schema="kept_date DATE, kept_days INT").createOrReplaceTempView("model_kept")


def run(spark: Any, sql: Any, warehouse: str, model: dict[str, Any], uploads: list[dt.date], late_days: int) -> ModelRun:
    """v2 for `uploads` in one pass, as the lab's lake::model::run: their affected dates (any
    version's), those whose input changed rebuilt and their gold partitions replaced in one commit;
    none changed, nothing is committed. A date's build does not depend on the run that asks for
    it, so a range gives what its per-upload runs would. A reopened date is judged and built under
    the wider window it keeps."""
    kept = kept_windows(warehouse, model)
    _kept_view(spark, kept)
    affected: set[dt.date] = set()
    beyond = future = 0
    uploads = sorted(set(uploads))
    for c in sql("model", "upload_dates", uploads=uploads).collect():
        verdict = fate(c.upload_date, c.business_date, max(late_days, kept.get(c.business_date, 0)))
        if verdict == "beyond_window":
            beyond += c.rows if c.current else 0
        elif verdict == "future_dated":
            future += c.rows if c.current else 0
        else:
            affected.add(c.business_date)
    dates = sorted(affected)
    now = {r.business_date: r.input_hash for r in sql("model", "input_hashes", dates=dates, late_days=late_days).collect()}
    hashes = gold_hashes(warehouse, model)
    changed = [d for d in dates if hashes.get(str(d), "") != now.get(d, "") and (str(d) in hashes or d in now)]
    skipped = [str(d) for d in dates if d not in changed]
    if not changed:
        if dates:
            from pyspark.sql import Row

            at = dt.datetime.now(dt.UTC).replace(tzinfo=None)
            rows = [Row(upload=u, dates=",".join(map(str, dates)), at=at) for u in uploads]
            spark.createDataFrame(rows, schema=spark.table(SKIPPED).schema).writeTo(SKIPPED).append()
        return {"uploads": [str(u) for u in uploads], "snapshot": None, "rewritten": [], "skipped": skipped,
                "beyond_window": beyond, "future_dated": future, "fingerprint": fingerprint(warehouse, model)}
    props = {prop("uploads"): ",".join(map(str, uploads)), prop("late-days"): str(late_days),
             prop("files"): _files_of(spark, sql, uploads), prop("skipped-dates"): ",".join(skipped),
             prop("beyond-window-rows"): str(beyond)}
    snapshot = _write(spark, sql, warehouse, model, (changed, now, kept), late_days, props)
    return {"uploads": [str(u) for u in uploads], "snapshot": snapshot, "rewritten": [str(d) for d in changed],
            "skipped": skipped, "beyond_window": beyond, "future_dated": future, "fingerprint": fingerprint(warehouse, model)}


def _files_of(spark: Any, sql: Any, uploads: list[dt.date]) -> str:
    """What a run was built from, as the lab's lake::model::files_of names it: one upload's current
    file versions; for a range, the uploads and each corrected file among them."""
    from pyspark.sql import functions as F

    from recount_spark.v2 import name_runs

    versions: dict[tuple[dt.date, str], int] = {}
    for r in spark.table(FILES).where(F.col("upload_date").isin(uploads)).collect():
        key = (r.upload_date, r.file_name)
        versions[key] = max(versions.get(key, 0), r.version)
    names = sorted(versions, key=lambda k: (k[0], k[1].encode()))
    if len(uploads) == 1:
        return ", ".join(f"{n} v{versions[(u, n)]}" for u, n in names)
    same = {(r.upload_date, r.file_name) for r in sql("model", "redelivered", uploads=uploads).collect()
            if versions.get((r.upload_date, r.file_name)) == r.version}
    corrected = [f"corrected: upload_date={u}/{n} v{versions[(u, n)]}" for u, n in names
                 if versions[(u, n)] > 1 and (u, n) not in same]
    return ", ".join([f"uploads {name_runs(uploads)}", *corrected])


def _write(spark: Any, sql: Any, warehouse: str, model: dict[str, Any],
           built: tuple[list[dt.date], dict[dt.date, str], dict[dt.date, int]], late_days: int, props: dict[str, str]) -> int | None:
    """Silver's winners of `dates` summed into gold, whose partitions of exactly those dates are
    replaced in one commit that carries `props`, each date's input hash and the window a
    reopened date keeps. Returns gold's new snapshot."""
    from pyspark.sql import functions as F

    dates, hashes, kept = built
    sql("model", "silver_rows", dates=dates, late_days=late_days).createOrReplaceTempView("silver")
    g, a, ms = len(model["grain"]), len(model.get("attributes", [])), len(model["measures"])
    cols = ["business_date", *[f"g{i + 1}" for i in range(g)], *[f"a{i + 1}" for i in range(a)], *[f"m{i + 1}" for i in range(ms)]]
    gold = sql("model", "gold_rows").select(*cols).toDF(*gold_columns(model))
    table = gold_table(model)
    props = {**props, prop("dates"): ",".join(map(str, dates))}
    for d in dates:
        props[f"{HASH}{d}"] = hashes.get(d, "")
        if d in kept:
            props[f"{WINDOW}{d}"] = str(kept[d])
    if not has_table(warehouse, model["gold"]):
        gold.limit(0).writeTo(table).partitionedBy(F.col("business_date")).create()
    writer = gold.writeTo(table)
    for k, v in props.items():
        writer = writer.option("snapshot-property." + k, v)
    present = {r.business_date for r in gold.select("business_date").distinct().collect()}
    if present == set(dates):
        writer.overwritePartitions()
    else:
        writer.overwrite(F.col("business_date").isin(dates))
    current = static_table(warehouse, model["gold"]).current_snapshot()
    return current.snapshot_id if current else None


def rebuild(spark: Any, sql: Any, warehouse: str, model: dict[str, Any], dates: list[dt.date], late_days: int,
            force: bool) -> ModelRun:
    """v2 for business dates `dates`, whatever uploads feed them, as the lab's lake::model::rebuild:
    each rebuilt from every landed upload in its window, skipped when its input is its version's
    own unless `force`; with none left, a skipped run and no snapshot."""
    from recount_spark.v2 import name_runs

    kept = kept_windows(warehouse, model)
    _kept_view(spark, kept)
    dates = sorted(set(dates))
    now = {r.business_date: r.input_hash for r in sql("model", "input_hashes", dates=dates, late_days=late_days).collect()}
    hashes = gold_hashes(warehouse, model)
    changed = [d for d in dates if (str(d) in hashes or d in now) and (force or hashes.get(str(d), "") != now.get(d, ""))]
    skipped = [str(d) for d in dates if d not in changed]
    if not changed:
        from pyspark.sql import Row

        row = Row(upload=None, dates=",".join(map(str, dates)), at=dt.datetime.now(dt.UTC).replace(tzinfo=None))
        spark.createDataFrame([row], schema=spark.table(SKIPPED).schema).writeTo(SKIPPED).append()
        return {"uploads": [], "snapshot": None, "rewritten": [], "skipped": skipped, "beyond_window": 0, "future_dated": 0,
                "fingerprint": fingerprint(warehouse, model)}
    props = {prop("trigger"): "manual", prop("late-days"): str(late_days), prop("files"): f"rebuild of {name_runs(dates)}",
             prop("skipped-dates"): ",".join(skipped)}
    snapshot = _write(spark, sql, warehouse, model, (changed, now, kept), late_days, props)
    return {"uploads": [], "snapshot": snapshot, "rewritten": [str(d) for d in changed], "skipped": skipped, "beyond_window": 0,
            "future_dated": 0, "fingerprint": fingerprint(warehouse, model)}


def reopen(spark: Any, sql: Any, warehouse: str, model: dict[str, Any], d: dt.date, late_days: int, decision: tuple[str, str]) -> ModelRun:
    """Finance reopens date `d`, as the lab's lake::model::reopen: its current records past its
    window go into silver and gold under the widest window that holds them, which the date keeps
    for every later run (gold's property recount.window.DATE); the snapshot names who decided
    and why."""
    reason, by = decision
    kept = kept_windows(warehouse, model)
    _kept_view(spark, kept)
    late = sql("model", "late_rows", d=str(d), late_days=max(late_days, kept.get(d, 0))).collect()[0]
    if not late.rows:
        raise ValueError(f"{d} has no record past its window: there is nothing to reopen it for")
    if late.widest is None or late.widest < 0:
        raise ValueError(f"{d}: its records past the window were dated after their upload")
    window = int(late.widest)
    kept[d] = window
    _kept_view(spark, kept)
    built = max(window, late_days)
    hashes = {r.business_date: r.input_hash for r in sql("model", "input_hashes", dates=[d], late_days=built).collect()}
    props = {prop("trigger"): "reopen", prop("reason"): reason, prop("by"): by, prop("reopened"): str(d),
             prop("late-days"): str(built), prop("files"): f"reopened {d} with a {window}-day window by {by}: {reason}"}
    snapshot = _write(spark, sql, warehouse, model, ([d], hashes, kept), built, props)
    return {"uploads": [], "snapshot": snapshot, "rewritten": [str(d)], "skipped": [], "beyond_window": 0, "future_dated": 0,
            "fingerprint": fingerprint(warehouse, model)}


def naive(spark: Any, sql: Any, model: dict[str, Any], run_date: dt.date) -> int:
    """v1 for `run_date`, the naive append, on purpose: the upload's current records of that date,
    every copy counted, appended to model_naive. Returns the rows appended."""
    sql("model", "schema_naive")
    rows = sql("model", "naive_rows", run_date=str(run_date))
    n = int(rows.count())
    if n:
        rows.writeTo(NAIVE).append()
    return n


def rollback(spark: Any, warehouse: str, model: dict[str, Any], snapshot: int) -> ModelRollbackAnswer:
    """The model's gold back to `snapshot` with Iceberg's rollback_to_snapshot, through the table
    API (nothing formatted into SQL text); gold as of the snapshot is read first, by time travel.
    Each date's input hash is gold's lineage's, so the next run compares against the snapshot's."""
    if not has_table(warehouse, model["gold"]) or static_table(warehouse, model["gold"]).snapshot_by_id(snapshot) is None:
        raise ValueError(f"{gold_table(model)} has no snapshot {snapshot}; `recount spark snapshots` lists them")
    target = fingerprint(warehouse, model, snapshot)
    table = spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, gold_table(model))
    table.refresh()
    table.manageSnapshots().rollbackTo(int(snapshot)).commit()
    return {"model": model["name"], "snapshot_id": snapshot, "target": target, "line": fingerprint(warehouse, model)}


def fingerprint(warehouse: str, model: dict[str, Any], as_of: int | None = None) -> str:
    """Gold's fingerprint in the model's columns, read with pyiceberg (no JVM)."""
    if not has_table(warehouse, model["gold"]):
        return m.fingerprint(model, [])
    rows = static_table(warehouse, model["gold"]).scan(snapshot_id=as_of).to_arrow().to_pylist()
    g, a = model["grain"], model.get("attributes", [])
    out = [(str(r["business_date"]), [r[c] for c in g], [r[c] for c in a], [r[x["name"]] for x in model["measures"]]) for r in rows]
    out.sort(key=lambda r: (r[0], [x.encode() for x in r[1]]))
    return m.fingerprint(model, out)
