"""Landing uploads' files into bronze, in one commit.

Each file is new, corrected (its path's next version) or unchanged. The uploads' bronze
partitions are rewritten with the rows they keep plus the new ones; the raw_files record, written
after, is what makes a version count (a landing killed between the two leaves rows no reader
sees, and the next landing drops them). A file that cannot be read whole (a cut or corrupt gzip)
holds back its own upload, as in the lab: nothing of that upload lands, the others do."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from recount_spark.parse import FILE_NAME, PARSED_FIELDS, arrow_schema, parse_file, printable, read_stores
from recount_spark.state import stores_now
from recount_spark.tables import BRONZE, RAW_FILES, STORES
from recount_spark.wire import timed

if TYPE_CHECKING:
    from recount_spark.warehouse import Warehouse

# (upload, file name, version, md5, path) of a file to land.
ToLand = tuple[dt.date, str, int, str, str]
# A file that could not be read whole: its rows are one row at line 0 with this prefix.
HELD = "held back: "


def land(w: Warehouse, world: str, uploads: list[dt.date]) -> list[dict[str, Any]]:
    with timed("land: stores and plan"):
        todo, reports, stores = plan(w, world, uploads)
    if not todo:
        return reports
    with timed("land: parse, write"):
        return write(w, todo, reports, stores)


def plan(w: Warehouse, world: str, uploads: list[dt.date]) -> tuple[list[ToLand], list[dict[str, Any]], list[dict[str, str]]]:
    from pyspark.sql import functions as F

    stores = read_stores(world)
    if stores_now(w.path) != sorted(stores, key=lambda r: r["store_id"]):
        w.spark.createDataFrame(stores, schema=w.spark.table(STORES).schema).writeTo(STORES).overwrite(F.lit(True))
    reports: list[dict[str, Any]] = []
    todo: list[ToLand] = []
    for u in uploads:
        part = os.path.join(world, "pos", "events", f"upload_date={u}")
        names = sorted(n for n in os.listdir(part) if n.endswith(".jsonl.gz")) if os.path.isdir(part) else []
        report: dict[str, Any] = {
            "upload": str(u), "new": [], "corrected": [], "unchanged": [], "missing": [], "events": 0, "quarantined": 0, "held": None,
        }
        for n in names:
            if not FILE_NAME.match(n):
                raise ValueError(f"{part}: the file name {printable(n)!r} is not one the Spark job lands (letters, digits, . _ -)")
            path = os.path.join(part, n)
            with open(path, "rb") as f:
                md5 = hashlib.md5(f.read()).hexdigest()
            old = w.files.get((u, n))
            if old is None:
                todo.append((u, n, 1, md5, path))
                report["new"].append(n)
            elif old[1] != md5:
                todo.append((u, n, old[0] + 1, md5, path))
                report["corrected"].append(f"{n} v{old[0] + 1}")
            else:
                report["unchanged"].append(n)
        report["missing"] = sorted(n for (d, n) in w.files if d == u and n not in names)
        reports.append(report)
    return todo, reports, stores


def write(w: Warehouse, todo: list[ToLand], reports: list[dict[str, Any]], stores: list[dict[str, str]]) -> list[dict[str, Any]]:
    from pyspark.sql import Row
    from pyspark.sql import functions as F

    by_path = {os.path.abspath(p): (u, n, v) for u, n, v, _, p in todo}
    b_stores = w.spark.sparkContext.broadcast({s["store_id"]: s for s in stores})
    cols = [c for c, _ in PARSED_FIELDS]
    ddl = ", ".join(f"{c} {t}" for c, t in PARSED_FIELDS)

    def parse(batches: Iterator[Any]) -> Iterator[Any]:
        # In the executors' Python workers: each file's lines out as Arrow batches (no row
        # pickling between Python and the JVM). A file that cannot be read whole is one row at
        # line 0 saying why: the driver holds its upload back.
        import pyarrow as pa

        schema = arrow_schema()
        for batch in batches:
            for path, data in zip(batch.column("path").to_pylist(), batch.column("content").to_pylist(), strict=True):
                local = path[len("file:"):] if path.startswith("file:") else path
                u, name, version = by_path[os.path.abspath(local)]
                try:
                    rows = list(parse_file(u, name, version, data, b_stores.value))
                except ValueError as e:
                    rows = [{"upload_date": u, "file_name": name, "file_version": version, "line": 0, "reason": f"{HELD}{e}"}]
                yield pa.RecordBatch.from_pydict({c: [r.get(c) for r in rows] for c in cols}, schema=schema)

    files = w.spark.read.format("binaryFile").load(["file://" + p for p in by_path]).select("path", "content")
    parsed = files.mapInArrow(parse, ddl).cache()
    per_file = parsed.groupBy("upload_date", "file_name", "file_version").agg(
        F.count(F.when(parsed.reason.isNull(), 1)).alias("events"),
        F.count(F.when(parsed.line > 0, parsed.reason)).alias("quarantined"),
        F.max(F.when(parsed.line == 0, parsed.reason)).alias("held"),
    )
    with timed("land: parse"):
        counts: dict[tuple[dt.date, str, int], tuple[int, int]] = {}
        held: dict[dt.date, tuple[str, str]] = {}
        for r in sorted(per_file.collect(), key=lambda r: (r.upload_date, r.file_name)):
            counts[(r.upload_date, r.file_name, r.file_version)] = (r.events, r.quarantined)
            if r.held is not None:
                held.setdefault(r.upload_date, (r.file_name, r.held[len(HELD):]))
    for report in reports:
        u = dt.date.fromisoformat(report["upload"])
        if u in held:
            report["held"] = {"file": held[u][0], "reason": held[u][1]}
    todo = [f for f in todo if f[0] not in held]
    if not todo:
        parsed.unpersist()
        return reports
    parsed.where(~parsed.upload_date.isin(list(held))).createOrReplaceTempView("parsed")
    touched = sorted({u for u, *_ in todo})
    rows = w.sql("land", "kept_rows", uploads=touched).unionByName(w.sql("land", "new_rows"))
    with timed("land: bronze write"):
        rows.writeTo(BRONZE).option("snapshot-property.recount.uploads", ",".join(map(str, touched))).overwritePartitions()
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    records = [
        Row(upload_date=u, file_name=n, version=v, md5=md5, bytes=os.path.getsize(p),
            events=counts.get((u, n, v), (0, 0))[0], quarantined=counts.get((u, n, v), (0, 0))[1], landed_at=now)
        for u, n, v, md5, p in todo
    ]
    w.spark.createDataFrame(records, schema=w.spark.table(RAW_FILES).schema).writeTo(RAW_FILES).append()
    w.forget_events()
    parsed.unpersist()
    for u, n, v, md5, _ in todo:
        w.files[(u, n)] = (v, md5)
    for report in reports:
        u = dt.date.fromisoformat(report["upload"])
        mine = [counts.get((u, n, v), (0, 0)) for (d, n, v, _, _) in todo if d == u]
        report["events"] = sum(e for e, _ in mine)
        report["quarantined"] = sum(q for _, q in mine)
    w.landed(set(touched))
    return reports
