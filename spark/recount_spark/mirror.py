"""What a reader needs to mirror a warehouse into a lab-shaped database, planned by pyiceberg with
no JVM: the Parquet data files of each table's current snapshot, and for every gold snapshot its
properties, the dates it wrote and the data files of those dates in it and in the silver snapshot
it names. The order in which gold's current snapshot moved (Iceberg's snapshot log) tells a write
from a rollback. recount reads the files with DuckDB (crates/spark/src/warehouse/)."""

from __future__ import annotations

import os
from typing import Any

from recount_spark.answers import MirrorAppend, MirrorLogEntry, MirrorPlan, MirrorSnapshot
from recount_spark.state import MAX_METADATA_BYTES, Refused, has_table, metadata_file, regular_file, static_table
from recount_spark.tables import OPTIONAL, PROP, TABLES, dates_in, in_commit_order, prop, summary_of

# The tables read whole at their current snapshot; silver and gold are read per gold snapshot.
WHOLE = ["stores", "store_changes", "raw_files", "bronze_events"]


def local(path: str) -> str:
    """A data file's path as DuckDB opens it: a Hadoop catalog on local disk names `file:` URIs."""
    for scheme in ("file://", "file:"):
        if path.startswith(scheme):
            return path[len(scheme):]
    return path


def data_files(table: Any, snapshot_id: int | None, dates: list[str] | None) -> list[str]:
    """The data files a scan of `table` at `snapshot_id` (None: current) reads, pruned to the
    business dates `dates` (None: every row). A file with row-level deletes is refused: recount's
    tables are written copy-on-write, and a reader that ignored the deletes would count wrong."""
    if snapshot_id is None and table.current_snapshot() is None:
        return []
    if dates is not None and not dates:
        return []
    if dates is None:
        scan = table.scan(snapshot_id=snapshot_id)
    else:
        from pyiceberg.expressions import In

        scan = table.scan(snapshot_id=snapshot_id, row_filter=In("business_date", dates))
    out = []
    for task in scan.plan_files():
        if task.delete_files:
            raise ValueError(f"{task.file.file_path} has row-level deletes, which recount does not read (write copy-on-write)")
        out.append(local(task.file.file_path))
    return sorted(out)


CATALOG = "catalog:"


def tables_of(warehouse: str) -> dict[str, Any]:
    """The warehouse's tables, by name: from a Hadoop catalog's directory, or, for
    `catalog:NAME`, from the catalog pyiceberg's load_catalog(NAME) configures (~/.pyiceberg.yaml
    or PYICEBERG_CATALOG__NAME__* variables: REST, Hive, Glue, SQL), namespace `recount`."""
    if warehouse.startswith(CATALOG):
        from pyiceberg.catalog import load_catalog

        name = warehouse[len(CATALOG):]
        catalog = load_catalog(name)
        out = {}
        for t in TABLES:
            if catalog.table_exists(("recount", t)):
                out[t] = catalog.load_table(("recount", t))
            elif t not in OPTIONAL:
                raise ValueError(f"catalog {name} holds no Iceberg table recount.{t}")
        return out
    missing = [t for t in TABLES if not has_table(warehouse, t) and t not in OPTIONAL]
    if missing:
        raise ValueError(f"{warehouse} holds no Iceberg table recount.{missing[0]}: run `recount spark run` first")
    return {t: static_table(warehouse, t) for t in TABLES if has_table(warehouse, t)}


def foreign_table(warehouse: str, name: str) -> Any:
    """Another pipeline's Iceberg table, `namespace.table`: in a warehouse directory (Spark's Hadoop
    catalog writes WAREHOUSE/namespace/table, pyiceberg's SQL catalog WAREHOUSE/namespace.db/table)
    at its version hint or else its newest metadata file, or, for `catalog:NAME`, loaded from
    that catalog."""
    namespace, dot, table = name.rpartition(".")
    if not dot or not namespace or not table:
        raise ValueError(f"{name!r} is not namespace.table")
    if warehouse.startswith(CATALOG):
        from pyiceberg.catalog import load_catalog

        catalog = load_catalog(warehouse[len(CATALOG):])
        if not catalog.table_exists((namespace, table)):
            raise ValueError(f"{warehouse} holds no Iceberg table {name}")
        return catalog.load_table((namespace, table))
    root = os.path.abspath(warehouse)
    for meta in (os.path.join(root, *namespace.split("."), table, "metadata"), os.path.join(root, namespace + ".db", table, "metadata")):
        metadata = metadata_file(meta)
        if metadata is not None:
            regular_file(metadata)
            from pyiceberg.table import StaticTable

            try:
                return StaticTable.from_metadata(metadata)
            except Refused:
                raise
            # Whatever pyiceberg raises on a hostile file (its validation errors quote the file's
            # content): only the file's name and the error's kind reach the user.
            except Exception as e:  # noqa: BLE001
                raise ValueError(f"{metadata}: not an Iceberg table's metadata ({type(e).__name__})") from None
    raise ValueError(f"{warehouse} holds no Iceberg table {name}")


def foreign_files(table: Any, warehouse: str) -> list[str]:
    """The data files of another pipeline's table at its current snapshot, each metadata file on
    the way (the manifest list, every manifest) checked to be a regular file within its bound
    before pyiceberg opens it. In a warehouse directory, every file must be inside it."""
    root = None if warehouse.startswith(CATALOG) else os.path.realpath(warehouse)

    def checked(path: str, bound: int | None) -> str:
        p = local(path)
        if root is not None and not os.path.realpath(p).startswith(root + os.sep):
            raise Refused(f"{p} is outside the warehouse {root}: recount reads only what is inside it")
        if bound is not None and "://" not in p:
            regular_file(p, bound)
        return p

    snapshot = table.current_snapshot()
    try:
        if snapshot is not None:
            checked(snapshot.manifest_list, MAX_METADATA_BYTES)
            for m in snapshot.manifests(table.io):
                checked(m.manifest_path, MAX_METADATA_BYTES)
        files = data_files(table, None, None)
    except Refused:
        raise
    except Exception as e:  # noqa: BLE001 (as in foreign_table: a manifest's error may quote it)
        raise ValueError(f"{table.metadata_location}: not a readable Iceberg table ({type(e).__name__})") from None
    # Data files are checked as regular files by the reader (DuckDB's, in Rust) before it opens them.
    return [checked(f, None) for f in files]


def appends(table: Any) -> list[MirrorAppend]:
    """Each snapshot of an append-only table (v1's), oldest first, with the data files it added."""
    out: list[MirrorAppend] = []
    planned: dict[int, set[str]] = {}  # each snapshot's files, planned once (a parent is the last one)

    def files(snapshot_id: int | None) -> set[str]:
        if snapshot_id is None:
            return set()
        if snapshot_id not in planned:
            planned[snapshot_id] = set(data_files(table, snapshot_id, None))
        return planned[snapshot_id]

    for s in in_commit_order(table):
        now, before = files(s.snapshot_id), files(s.parent_snapshot_id)
        out.append({
            "snapshot_id": s.snapshot_id,
            "timestamp_ms": s.timestamp_ms,
            "properties": {k: v for k, v in sorted(summary_of(s).items()) if k.startswith(PROP)},
            "files": sorted(now - before),
        })
    return out


def plan(warehouse: str) -> MirrorPlan:
    """The mirror's plan. `state` names each table's metadata file: a plan with the same state
    describes the same warehouse, so a mirror built from it is still true."""
    found = tables_of(warehouse)
    state = {t: found[t].metadata_location for t in TABLES if t in found}
    tables = {t: data_files(found[t], None, None) for t in WHOLE}
    gold = found["daily_store_sales"]
    silver = found["silver_baskets"]
    snapshots: list[MirrorSnapshot] = []
    for s in in_commit_order(gold):
        props = summary_of(s)
        dates = dates_in(props)
        silver_id = props.get(prop("silver-snapshot"))
        snapshots.append({
            "snapshot_id": s.snapshot_id,
            "properties": {k: v for k, v in sorted(props.items()) if k.startswith(PROP)},
            "dates": dates,
            "gold_files": data_files(gold, s.snapshot_id, dates),
            "silver_files": data_files(silver, int(silver_id), dates) if silver_id else [],
        })
    log: list[MirrorLogEntry] = [{"snapshot_id": e.snapshot_id, "timestamp_ms": e.timestamp_ms} for e in gold.metadata.snapshot_log]
    return {
        "warehouse": warehouse if warehouse.startswith(CATALOG) else os.path.abspath(warehouse),
        "state": state,
        "tables": tables,
        "snapshots": snapshots,
        "log": log,
        "naive": appends(found["naive_daily_sales"]) if "naive_daily_sales" in found else [],
        "skipped": appends(found["skipped_runs"]) if "skipped_runs" in found else [],
    }
