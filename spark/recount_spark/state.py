"""The warehouse's metadata read with pyiceberg, no JVM: snapshots and their properties, the
landed file versions, the stores, gold's rows at a snapshot."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import stat
from collections.abc import Iterable, Iterator
from typing import Any

from recount_spark.answers import Fingerprint, IcebergSnapshot
from recount_spark.tables import hashes_in, prop, summary_of, windows_in


def has_table(warehouse: str, name: str) -> bool:
    return os.path.exists(os.path.join(os.path.abspath(warehouse), "recount", name, "metadata", "version-hint.text"))


# The largest Iceberg metadata file (table metadata, a version hint, a manifest list, a manifest)
# recount opens: past it, the file is refused before it is read.
MAX_METADATA_BYTES = 64 << 20


class Refused(ValueError):
    """A file refused before it was read, with a reason of recount's own (no content of it)."""


def regular_file(path: str, bound: int = MAX_METADATA_BYTES) -> str:
    """`path`, once it is known to be a regular file (links followed) of at most `bound` bytes: a
    FIFO or a device is refused at once, never opened and waited on."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise Refused(f"{path} is not a regular file (a folder, a FIFO or a device): recount reads only regular files")
    if st.st_size > bound:
        raise Refused(f"{path} holds {st.st_size} bytes, more than the {bound >> 20} MiB such a file may hold")
    return path


def metadata_file(meta: str) -> str | None:
    """A table's current metadata file in its metadata directory: the one its version hint names,
    or the newest by name (pyiceberg numbers them 00000-…, 00001-…). None: no table there."""
    hint = os.path.join(meta, "version-hint.text")
    if os.path.exists(hint):
        with open(regular_file(hint)) as f:
            return os.path.join(meta, f"v{f.read().strip()}.metadata.json")
    if not os.path.isdir(meta):
        return None
    files = sorted(n for n in os.listdir(meta) if n.endswith(".metadata.json"))
    return os.path.join(meta, files[-1]) if files else None


def static_table(warehouse: str, name: str) -> Any:
    from pyiceberg.table import StaticTable

    # recount's own tables are Spark's, which always write a version hint: none means no table.
    if not has_table(warehouse, name):
        raise ValueError(f"{warehouse} holds no Iceberg table recount.{name}: run `recount spark run` first")
    return StaticTable.from_metadata(metadata_file(os.path.join(os.path.abspath(warehouse), "recount", name, "metadata")))


def lineage(table: Any) -> list[Any]:
    """The table's current snapshot and its ancestors, newest first: the line a rollback keeps."""
    by_id = {s.snapshot_id: s for s in table.snapshots()}
    out, s = [], table.current_snapshot()
    while s is not None:
        out.append(s)
        s = by_id.get(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
    return out


def gold_state(warehouse: str) -> tuple[dict[dt.date, str], dict[dt.date, int], int]:
    """Each date's input hash, its kept window (a reopening's), and the last run id, from gold's
    current snapshot and its ancestors: the newest one that wrote a date names its hash, and its
    window when the date keeps one (every write of a reopened date names it again, and a
    rollback past the reopening leaves it out of the lineage). Gold's commit is a run's commit
    point, so this is what the last finished run left."""
    table = static_table(warehouse, "daily_store_sales")
    hashes: dict[dt.date, str] = {}
    windows: dict[dt.date, int] = {}
    for snap in lineage(table):
        props = summary_of(snap)
        kept = windows_in(props)
        for d, h in hashes_in(props).items():
            day = dt.date.fromisoformat(d)
            if day not in hashes:
                hashes[day] = h
                if d in kept:
                    windows[day] = kept[d]
    # Run ids keep counting past a rollback: a run id names one run, ever.
    last_run = max((int(summary_of(snap).get(prop("run"), 0)) for snap in table.snapshots()), default=0)
    return hashes, windows, last_run


def landed_versions(warehouse: str) -> tuple[dict[tuple[dt.date, str], tuple[int, str]], dict[tuple[dt.date, str, int], str]]:
    """From raw_files: {(upload_date, file_name): (current version, its md5)}, and every
    version's md5 by (upload_date, file_name, version)."""
    out: dict[tuple[dt.date, str], tuple[int, str]] = {}
    md5s: dict[tuple[dt.date, str, int], str] = {}
    for r in static_table(warehouse, "raw_files").scan().to_arrow().to_pylist():
        key = (r["upload_date"], r["file_name"])
        md5s[(r["upload_date"], r["file_name"], r["version"])] = r["md5"]
        if key not in out or r["version"] > out[key][0]:
            out[key] = (r["version"], r["md5"])
    return out, md5s


def stores_now(warehouse: str) -> list[dict[str, Any]]:
    rows = static_table(warehouse, "stores").scan().to_arrow().to_pylist()
    return sorted(rows, key=lambda r: r["store_id"])


def pending_store_changes(warehouse: str) -> list[dict[str, Any]]:
    """The store corrections landed and not yet rebuilt for ('landed' rows of the store_changes
    log with no 'rebuilt' row), oldest first."""
    rows = static_table(warehouse, "store_changes").scan().to_arrow().to_pylist()
    rebuilt = {r["change_id"] for r in rows if r["event"] == "rebuilt"}
    return sorted((r for r in rows if r["event"] == "landed" and r["change_id"] not in rebuilt), key=lambda r: r["change_id"])


def last_store_change(warehouse: str) -> int:
    rows = static_table(warehouse, "store_changes").scan().to_arrow().to_pylist()
    return max((r["change_id"] for r in rows), default=0)


def describe_change(store_id: str, old: tuple[str | None, str | None, str | None], new: tuple[str, str, str]) -> str:
    """A store's change in words, as the lab's raw::stores::describe_change: each field that
    changed, "name old → new"; from no row, a store added."""
    if not any(old):
        return f"store {store_id}: added ({new[0]}, {new[1]}, {new[2]})"
    parts = [f"{name} {o} → {n}" for name, o, n in zip(("country", "time zone", "currency"), old, new, strict=True) if o != n]
    return f"store {store_id}: {', '.join(parts)}"


def snapshot_rows(table: Any) -> list[IcebergSnapshot]:
    """Every snapshot of `table`, oldest first, with every summary property."""
    current = table.current_snapshot()
    ancestors = {s.snapshot_id for s in lineage(table)}
    rows: list[IcebergSnapshot] = []
    for s in sorted(table.snapshots(), key=lambda s: (s.timestamp_ms, s.sequence_number or 0)):
        summary = summary_of(s)
        rows.append({
            "snapshot_id": s.snapshot_id,
            "parent_id": s.parent_snapshot_id,
            "committed_at": dt.datetime.fromtimestamp(s.timestamp_ms / 1000, dt.UTC).isoformat(timespec="milliseconds"),
            "operation": s.summary.operation.value if s.summary else None,
            "current": current is not None and s.snapshot_id == current.snapshot_id,
            "current_ancestor": s.snapshot_id in ancestors,
            "properties": {k: v for k, v in sorted(summary.items())},
        })
    return rows


def gold_rows(table: Any, snapshot_id: int | None = None, date: dt.date | None = None) -> list[dict[str, Any]]:
    from pyiceberg.expressions import AlwaysTrue, EqualTo

    scan = table.scan(snapshot_id=snapshot_id, row_filter=EqualTo("business_date", date.isoformat()) if date else AlwaysTrue())
    rows: list[dict[str, Any]] = scan.to_arrow().to_pylist()
    rows.sort(key=lambda r: (r["business_date"], r["store_id"].encode("utf-8")))
    return rows


def text_md5(chunks: Iterable[tuple[int, str]]) -> tuple[int, str]:
    """The contract's fingerprint of gold's text given one chunk (rows, text) per business date in
    date order: the chunks joined by newlines, hashed as they come, and the rows summed. A date
    without rows adds nothing. The lab's rule is the same (TextHash in crates/lab/src/lake/snapshot.rs)."""
    h, rows, started = hashlib.md5(), 0, False
    for n, text in chunks:
        if n == 0:
            continue
        if started:
            h.update(b"\n")
        h.update(text.encode("utf-8"))
        rows, started = rows + n, True
    return rows, h.hexdigest()


def gold_chunks(table: Any, snapshot_id: int | None = None) -> Iterator[tuple[int, str]]:
    """Gold's fingerprint text one business date at a time, in date order, as the lab's chunks:
    each date's rows sorted by store_id's bytes and joined by newlines, with their count. Gold is
    partitioned by business date, and each date's files are read alone, so no read holds more
    than one date of gold."""
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.io.pyarrow import ArrowScan

    scan = table.scan(snapshot_id=snapshot_id)
    by_date: dict[dt.date, list[Any]] = {}
    for task in scan.plan_files():
        by_date.setdefault(partition_date(task.file.partition[0]), []).append(task)
    arrow = ArrowScan(table.metadata, table.io, scan.projection(), AlwaysTrue())
    line = "{business_date:%Y-%m-%d}|{store_id}|{country}|{currency}|{baskets}|{revenue_minor}".format_map
    for d in sorted(by_date):
        rows: list[dict[str, Any]] = arrow.to_table(by_date[d]).to_pylist()
        rows.sort(key=lambda r: r["store_id"].encode("utf-8"))
        yield len(rows), "\n".join(line(r) for r in rows)


def pyiceberg_fingerprint(warehouse: str, as_of: int | None = None) -> Fingerprint:
    n, md5 = text_md5(gold_chunks(static_table(warehouse, "daily_store_sales"), as_of))
    return {"rows": n, "md5": md5, "as_of": as_of, "reader": "pyiceberg"}


def partition_date(value: Any) -> dt.date:
    """A business_date partition's value as pyiceberg gives it: days since 1970-01-01, or a date."""
    return dt.date(1970, 1, 1) + dt.timedelta(days=value) if isinstance(value, int) else dt.date.fromisoformat(str(value))


def files_by_partition(table: Any, snapshot_id: int | None) -> dict[str, list[str]]:
    """The data files each business_date partition holds at a snapshot (None: no snapshot)."""
    out: dict[str, list[str]] = {}
    if snapshot_id is None:
        return out
    for task in table.scan(snapshot_id=snapshot_id).plan_files():
        out.setdefault(str(partition_date(task.file.partition[0])), []).append(task.file.file_path)
    return {k: sorted(v) for k, v in out.items()}
