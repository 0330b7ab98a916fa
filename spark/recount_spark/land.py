"""Landing uploads' files into bronze, in one commit.

Each file is new, corrected (its path's next version) or unchanged. The uploads' bronze
partitions are rewritten with the rows they keep plus the new ones; the raw_files record, written
after, is what makes a version count (a landing killed between the two leaves rows no reader
sees, and the next landing drops them). A file that cannot be read whole (a cut or corrupt gzip)
holds back its own upload, as in the lab: nothing of that upload lands, the others do. A changed
stores.csv row (a store correction) re-derives every file version whose lines depend on that
store, and is logged in store_changes for the v2 run that rebuilds the dates it moves."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recount_spark.answers import Landing, StoresLanded
from recount_spark.lines import judged
from recount_spark.parse import FILE_NAME, PARSED_DDL, PARSED_FIELDS, arrow_schema, printable
from recount_spark.source import Source, _row, contract_line, file_batch, file_lines, load, read_stores
from recount_spark.state import describe_change, last_store_change, stores_now
from recount_spark.tables import BRONZE, RAW_FILES, STORE_CHANGES, STORES, writer
from recount_spark.wire import timed

if TYPE_CHECKING:
    from recount_spark.warehouse import Warehouse

# (upload, file name, version, md5, path) of a file to land.
ToLand = tuple[dt.date, str, int, str, str]
# A file that could not be read whole: its rows are one row at line 0 with this prefix.
HELD = "held back: "
# RECOUNT_SPARK_READER=jvm reads the contract's shape with Jackson and column expressions
# (contract_rows) instead of Python per line: the same rows, measured 1.9x slower on local[2]
# (docs/performance.md), so not the default.
READER = "RECOUNT_SPARK_READER"
FIELDS = ("country", "timezone", "currency")


@dataclass
class StorePlan:
    """What a landing does to the stores, as the lab's landing: the rows it reads lines by (the
    world's, and landed stores the world no longer lists, kept), the corrections (a landed row
    that changed), the stores gone from stores.csv, and the file versions it re-derives."""

    stores: list[dict[str, str]]
    changes: list[tuple[dict[str, str], dict[str, str]]]
    removed: list[str]
    rederived: set[tuple[dt.date, str, int]] = field(default_factory=set)
    landed_now: dict[str, dict[str, str]] = field(default_factory=dict)
    # New stores whose lines had been quarantined as an unknown store: they count now.
    readmitted: list[dict[str, str]] = field(default_factory=list)
    # How the world's files read (its recount.toml, or the contract's layout).
    source: Source = field(default_factory=Source)

    def report(self) -> StoresLanded:
        return {
            "changed": [describe_change(n["store_id"], tuple(o[f] for f in FIELDS), tuple(n[f] for f in FIELDS))  # type: ignore[arg-type]
                        for o, n in self.changes],
            "readmitted": [s["store_id"] for s in self.readmitted],
            "removed": self.removed,
            "rederived_files": len(self.rederived),
        }


def land(w: Warehouse, world: str, uploads: list[dt.date]) -> tuple[list[Landing], StorePlan]:
    with timed("land: stores and plan"):
        todo, reports, stores = plan(w, world, uploads)
    if todo:
        with timed("land: parse, write"):
            reports = write(w, todo, reports, stores)
    record_stores(w, stores)
    return reports, stores


def plan(w: Warehouse, world: str, uploads: list[dt.date]) -> tuple[list[ToLand], list[Landing], StorePlan]:
    src = load(world)
    landed = {s["store_id"]: s for s in stores_now(w.path)}
    offered = {s["store_id"]: s for s in read_stores(src, world)}
    changes = [(landed[i], s) for i, s in sorted(offered.items()) if i in landed and any(landed[i][f] != s[f] for f in FIELDS)]
    removed = sorted(i for i in landed if i not in offered)
    merged = sorted([*offered.values(), *(landed[i] for i in removed)], key=lambda s: s["store_id"])
    stores = StorePlan(merged, changes, removed, landed_now=landed)
    reports: list[Landing] = []
    todo: list[ToLand] = []
    for u in uploads:
        part = src.partition_dir(world, u)
        names = src.files(world, u)
        report: Landing = {
            "upload": str(u), "new": [], "corrected": [], "redelivered": [], "unchanged": [], "missing": [], "events": 0, "quarantined": 0,
            "held": None,
        }
        for n in names:
            if not FILE_NAME.match(n):
                raise ValueError(f"{part}: the file name {printable(n)!r} is not one the Spark job lands "
                                 "(letters, digits and . _ - + = in each folder and name)")
            path = os.path.join(part, n)
            md5 = md5_of(path)
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
    if w.files:
        new = [s for i, s in offered.items() if i not in landed]
        unknown = {r.store_id for r in w.sql("land", "unknown_stores").collect()} if new else set()
        stores.readmitted = [s for s in new if s["store_id"] in unknown]
        rederive(w, world, src, [n["store_id"] for _, n in changes] + [s["store_id"] for s in stores.readmitted], todo, stores)
    stores.source = src
    return todo, reports, stores


def md5_of(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.md5(f.read()).hexdigest()


def rederive(w: Warehouse, world: str, src: Source, store_ids: list[str], todo: list[ToLand], stores: StorePlan) -> None:
    """A store correction, or a new store, re-derives every current file version whose lines
    depend on the store's row as the file's next version, read again under the new row, as the
    lab does. The warehouse keeps no raw bytes: they are read from the world, which must still
    hold the landed version's bytes."""
    if not store_ids:
        return
    have = {(u, n) for u, n, *_ in todo}
    for r in w.sql("land", "files_of_stores", store_ids=json.dumps(store_ids)).collect():
        key = (r.upload_date, r.file_name)
        current = w.files.get(key)
        if current is None or current[0] != r.file_version or key in have:
            continue
        path = os.path.join(src.partition_dir(world, r.upload_date), r.file_name)
        if not os.path.isfile(path) or md5_of(path) != current[1]:
            raise ValueError(
                f"store {r.store_id} changed, so upload {r.upload_date}'s {r.file_name} v{current[0]} must be read again, "
                "and the world no longer holds those bytes (land that upload first)"
            )
        todo.append((r.upload_date, r.file_name, current[0] + 1, current[1], path))
        stores.rederived.add((r.upload_date, r.file_name, current[0] + 1))
        have.add(key)


def record_stores(w: Warehouse, stores: StorePlan) -> None:
    """After the files' record: the corrections into the store_changes log (each with the file
    versions re-derived for it), then the stores table. A kill between the two leaves the
    change logged and the table as it was: the next landing finds the change again."""
    from pyspark.sql import Row
    from pyspark.sql import functions as F

    logged: list[tuple[dict[str, str] | None, dict[str, str]]] = [*stores.changes, *((None, s) for s in stores.readmitted)]
    if logged:
        now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
        first = last_store_change(w.path) + 1
        files = ",".join(sorted(f"{u}/{n}/{v}" for u, n, v in stores.rederived))
        rows = [
            Row(event="landed", change_id=first + i, store_id=n["store_id"], old_country=o and o["country"],
                old_timezone=o and o["timezone"], old_currency=o and o["currency"], new_country=n["country"],
                new_timezone=n["timezone"], new_currency=n["currency"], files=files, run=None, snapshot_id=None, at=now)
            for i, (o, n) in enumerate(logged)
        ]
        w.spark.createDataFrame(rows, schema=w.spark.table(STORE_CHANGES).schema).writeTo(STORE_CHANGES).append()
    if sorted(stores.landed_now.values(), key=lambda r: r["store_id"]) != stores.stores:
        w.spark.createDataFrame(stores.stores, schema=w.spark.table(STORES).schema).writeTo(STORES).overwrite(F.lit(True))


def write(w: Warehouse, todo: list[ToLand], reports: list[Landing], stores: StorePlan) -> list[Landing]:
    from pyspark.sql import Row
    from pyspark.sql import functions as F

    by_path = {os.path.abspath(p): (u, n, v) for u, n, v, _, p in todo}
    # Each store with its currency's digits, which a total in major units is read by.
    b_stores = w.spark.sparkContext.broadcast({s["store_id"]: {**s, "digits": w.digits.get(s["currency"])} for s in stores.stores})
    src = stores.source
    w.spark.createDataFrame(stores.stores, schema=w.spark.table(STORES).schema).createOrReplaceTempView("stores_in")

    def parse(batches: Iterator[Any]) -> Iterator[Any]:
        # In the executors' Python workers: each file's lines out as Arrow batches (no row
        # pickling between Python and the JVM). A file that cannot be read whole is one row at
        # line 0 saying why: the driver holds its upload back.
        import pyarrow as pa

        schema = arrow_schema()
        for path, data in contents(batches):
            u, name, version = file_of(by_path, path)
            try:
                yield file_batch(src, u, name, version, data, b_stores.value)
            except ValueError as e:
                held = {"upload_date": u, "file_name": name, "file_version": version, "line": 0, "reason": f"{HELD}{e}"}
                yield pa.RecordBatch.from_pylist([held], schema=schema)

    files = in_upload_order(w, by_path)
    kept = None
    if src.is_contract and os.environ.get(READER) == "jvm":
        parsed, kept = contract_rows(w, files, by_path, src, b_stores)
    else:
        parsed = files.mapInArrow(parse, PARSED_DDL).cache()
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
        (parsed if kept is None else kept).unpersist()
        return reports
    parsed.where(~parsed.upload_date.isin(list(held))).createOrReplaceTempView("parsed")
    touched = sorted({u for u, *_ in todo})
    rows = w.sql("land", "kept_rows", uploads=touched).unionByName(w.sql("land", "new_rows"))
    bronze = writer(rows, BRONZE, "upload_date", len(touched)).option("snapshot-property.recount.uploads", ",".join(map(str, touched)))
    with timed("land: bronze write"):
        bronze.overwritePartitions()
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    records = [
        Row(upload_date=u, file_name=n, version=v, md5=md5, bytes=os.path.getsize(p),
            events=counts.get((u, n, v), (0, 0))[0], quarantined=counts.get((u, n, v), (0, 0))[1], landed_at=now)
        for u, n, v, md5, p in todo
    ]
    w.spark.createDataFrame(records, schema=w.spark.table(RAW_FILES).schema).writeTo(RAW_FILES).append()
    w.forget_events()
    (parsed if kept is None else kept).unpersist()
    for u, n, v, md5, _ in todo:
        w.files[(u, n)] = (v, md5)
        w.md5s[(u, n, v)] = md5
    for report in reports:
        u = dt.date.fromisoformat(report["upload"])
        mine = [counts.get((u, n, v), (0, 0)) for (d, n, v, _, _) in todo if d == u and (d, n, v) not in stores.rederived]
        report["events"] = sum(e for e, _ in mine)
        report["quarantined"] = sum(q for _, q in mine)
        if report["corrected"]:
            # A next version whose rows are the version's before it is a re-delivery, not a
            # correction (the lab's raw.redelivered_versions; `redelivered` in v2.sql).
            same = {f"{r.file_name} v{r.file_version}" for r in w.sql("v2", "redelivered", upload=u).collect()}
            report["redelivered"] = [f for f in report["corrected"] if f in same]
            report["corrected"] = [f for f in report["corrected"] if f not in same]
    w.landed(set(touched))
    return reports


def file_of(by_path: dict[str, tuple[dt.date, str, int]], path: str) -> tuple[dt.date, str, int]:
    """The (upload, name, version) a file landing reads, by its path."""
    return by_path[os.path.abspath(path)]


def in_upload_order(w: Warehouse, by_path: dict[str, tuple[dt.date, str, int]]) -> Any:
    """The files' paths as a frame whose tasks each take a run of consecutive files in upload
    order (a few tasks per core). A task then holds the lines of a few uploads, and bronze's
    write (a data file per upload a task holds) opens about one file per upload: Spark's
    binaryFile reader packed each task with files of many uploads, and the full world's 128
    uploads were written as 384 files, against 128 this way (on local[2] an Iceberg data file
    cost about 16 ms of the write; docs/performance.md). The executors read each file from its
    path (`contents`)."""
    paths = sorted(by_path, key=lambda p: (by_path[p], p))
    sc = w.spark.sparkContext
    slices = max(1, min(len(paths), 4 * sc.defaultParallelism))
    return w.spark.createDataFrame(sc.parallelize([(p,) for p in paths], slices), "path string")


def contents(batches: Iterator[Any]) -> Iterator[tuple[str, bytes]]:
    """In an executor: each path of a task's batches (in_upload_order's frame), in order, with
    its file's bytes."""
    for batch in batches:
        for path in batch.column("path").to_pylist():
            with open(path, "rb") as f:
                yield path, f.read()


LINES_DDL = "upload_date date, file_name string, file_version int, line int, text string, reason string"


def contract_rows(w: Warehouse, files: Any, by_path: dict[str, tuple[dt.date, str, int]], src: Source, b_stores: Any) -> tuple[Any, Any]:
    """The contract's shape without Python per line: the executors' Python inflates each file and
    splits it into lines (C speed, no parsing), the JVM reads and judges every line with column
    expressions (recount_spark.lines), and only the lines it does not accept come back to Python
    for their reason (or, for an unusual but valid line, its fields). The same rows as
    parse_file's, in the same schema; and the cached frame they are read from, to unpersist."""
    from pyspark.sql import functions as F

    def split(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        schema = pa.schema([("upload_date", pa.date32()), ("file_name", pa.string()), ("file_version", pa.int32()),
                            ("line", pa.int32()), ("text", pa.string()), ("reason", pa.string())])
        for path, data in contents(batches):
            u, name, version = file_of(by_path, path)
            lines: list[str | None]
            reasons: list[str | None]
            try:
                found = file_lines(src, u, name, data)
            except ValueError as e:
                lines, reasons, numbers = [None], [f"{HELD}{e}"], [0]
            else:
                # A line that is not UTF-8 comes with its reason, and no text to judge.
                lines, reasons = list(found.text), [None] * len(found.text)
                for i, why in found.not_utf8.items():
                    lines[i], reasons[i] = None, why
                numbers = list(range(1, len(lines) + 1))
            n = len(lines)
            yield pa.RecordBatch.from_arrays([
                pa.array([u] * n, pa.date32()), pa.array([name] * n, pa.string()), pa.array([version] * n, pa.int32()),
                pa.array(numbers, pa.int32()), pa.array(lines, pa.string()), pa.array(reasons, pa.string()),
            ], schema=schema)

    def settle(batches: Iterator[Any]) -> Iterator[Any]:
        # The lines the JVM did not accept, parsed here: a reason, or an unusual valid line's fields.
        import pyarrow as pa

        schema = arrow_schema()
        for batch in batches:
            rows = []
            for r in batch.to_pylist():
                base = {k: r[k] for k in ("upload_date", "file_name", "file_version")}
                if r["reason"] is not None:
                    rows.append({**base, "line": r["line"], "reason": r["reason"]})
                else:
                    rows.append(_row(base, r["line"], contract_line(r["text"], b_stores.value, r["upload_date"])))
            yield pa.RecordBatch.from_pylist(rows, schema=schema)

    lines = files.mapInArrow(split, LINES_DDL)
    stores = w.spark.table("stores_in")
    # Judged once and kept (the accepted lines without their text); the lines not accepted go
    # to Python, and only those.
    seen = judged(lines, stores).withColumn("text", F.when(~F.col("ok"), F.col("text"))).cache()
    rest = seen.where(~F.col("ok")).select("upload_date", "file_name", "file_version", "line", "text", "reason")
    return seen.where(F.col("ok")).select(*(c for c, _ in PARSED_FIELDS)).unionByName(rest.mapInArrow(settle, PARSED_DDL)), seen
