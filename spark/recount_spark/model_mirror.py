"""What a reader needs to mirror the warehouse of a model other than retail, planned by pyiceberg
with no JVM (`model-plan`): the model, the dimension's versions and the file versions with the
time each landing committed, bronze's record files, every gold snapshot with the run that wrote
it and gold's fingerprint as of it, gold's snapshot log and the runs that wrote nothing. recount
replays them into a model lab with the lab's own writes (crates/spark/src/warehouse/model_mirror.rs)."""

from __future__ import annotations

import datetime as dt
import json
import os
from typing import Any

from recount_spark import model_warehouse as mw
from recount_spark.answers import (
    MirrorDimension,
    MirrorFile,
    MirrorGoldSnapshot,
    MirrorLogEntry,
    MirrorSkipped,
    ModelMirrorPlan,
    TableState,
)
from recount_spark.mirror import appends, data_files
from recount_spark.state import has_table, static_table
from recount_spark.tables import dates_in, in_commit_order, prop, summary_of, windows_in

TABLES = ["model_definition", "model_dimension", "model_files", "model_records", "model_skipped_runs", "model_naive"]


def _appended_rows(table: Any) -> list[tuple[int, dict[str, Any]]]:
    """Each row of an append-only table with the time of the snapshot that added it."""
    import pyarrow.parquet as pq

    out = []
    for a in appends(table):
        for path in a["files"]:
            out += [(a["timestamp_ms"], r) for r in pq.read_table(path).to_pylist()]
    return out


def _ms(at: dt.datetime) -> int:
    """A timestamp the driver wrote in UTC without a zone, as milliseconds since the epoch."""
    return int(at.replace(tzinfo=dt.UTC).timestamp() * 1000)


def plan(warehouse: str) -> ModelMirrorPlan:
    model = mw.warehouse_model(warehouse)
    if model is None:
        raise ValueError(f"{warehouse} holds no model's tables: its mirror is retail's (`plan`)")
    names = [*TABLES, model["gold"]]
    found = {t: static_table(warehouse, t) for t in names if has_table(warehouse, t)}
    state: list[TableState] = [{"table": t, "metadata": found[t].metadata_location} for t in names if t in found]
    dims: list[MirrorDimension] = [
        {"version": r["version"], "md5": r["md5"], "text": r["text"], "at_ms": at}
        for at, r in _appended_rows(found["model_dimension"])] if "model_dimension" in found else []
    files: list[MirrorFile] = [
        {"upload_date": str(r["upload_date"]), "file": r["file_name"], "version": r["version"], "md5": r["md5"],
         "records": r["records"], "quarantined": r["quarantined"], "at_ms": at}
        for at, r in _appended_rows(found["model_files"])] if "model_files" in found else []
    skipped: list[MirrorSkipped] = [
        {"upload": str(r["upload"]) if r["upload"] else None, "dates": [d for d in r["dates"].split(",") if d], "at_ms": _ms(r["at"])}
        for r in found["model_skipped_runs"].scan().to_arrow().to_pylist()] if "model_skipped_runs" in found else []
    gold: list[MirrorGoldSnapshot] = []
    log: list[MirrorLogEntry] = []
    if model["gold"] in found:
        table = found[model["gold"]]
        for s in in_commit_order(table):
            props = summary_of(s)
            dates = dates_in(props)
            reopened = props.get(prop("reopened"))
            gold.append({
                "snapshot_id": s.snapshot_id,
                # A run names its uploads (older warehouses: its one upload).
                "uploads": [u for u in props.get(prop("uploads"), props.get(prop("upload"), "")).split(",") if u] if dates else [],
                "trigger": props.get(prop("trigger"), ""),
                "reopened": reopened,
                "window": windows_in(props).get(reopened) if reopened else None,
                "reason": props.get(prop("reason"), ""),
                "by": props.get(prop("by"), ""),
                "late_days": int(props.get(prop("late-days"), "0")),
                "files": props.get(prop("files"), ""),
                "dates": dates,
                "beyond_window": int(props.get(prop("beyond-window-rows"), "0")),
                "fingerprint": mw.fingerprint(warehouse, model, s.snapshot_id),
            })
        log = [{"snapshot_id": e.snapshot_id, "timestamp_ms": e.timestamp_ms} for e in table.metadata.snapshot_log]
    return {
        "warehouse": os.path.abspath(warehouse),
        "state": state,
        "name": model["name"],
        "parts": json.dumps(model, sort_keys=True),
        "dimensions": dims,
        "files": files,
        "records": data_files(found["model_records"], None, None) if "model_records" in found else [],
        "gold": gold,
        "log": log,
        "skipped": skipped,
        "naive": [{"snapshot_id": a["snapshot_id"], "at_ms": a["timestamp_ms"], "files": a["files"]}
                  for a in appends(found["model_naive"])] if "model_naive" in found else [],
    }
