"""`evidence`: three files from Iceberg's metadata, no JVM: the run-to-snapshot map, the date's
current gold, and the last snapshot that rewrote it against its parent (store by store, and every
other partition's data files before and after, for gold and silver)."""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
from typing import Any, TypedDict

from recount_spark.answers import (
    EvidenceAnswer,
    EvidenceComparison,
    EvidenceFile,
    EvidencePartition,
    EvidencePartitions,
    EvidenceStore,
    IcebergSnapshot,
)
from recount_spark.state import files_by_partition, gold_rows, snapshot_rows, static_table
from recount_spark.tables import hashes_in, prop
from recount_spark.wire import emit


class SnapshotRun(TypedDict):
    """A gold snapshot as the run that wrote it: a line of the run-to-snapshot map, an evidence
    file for people (Rust reads only its path and MD5)."""

    run: int | None
    snapshot_id: int
    parent_id: int | None
    committed_at: str
    operation: str | None
    current_ancestor: bool
    upload: str | None
    trigger: str | None
    late_days: str | None
    dates: list[str]
    corrected: list[str]
    silver_snapshot_id: str | None
    input_hashes: dict[str, str]


def runs_of(snaps: list[IcebergSnapshot]) -> list[SnapshotRun]:
    """Each gold snapshot as the run that wrote it, from its summary properties."""
    return [
        {
            "run": int(s["properties"].get(prop("run"), 0)) or None,
            "snapshot_id": s["snapshot_id"],
            "parent_id": s["parent_id"],
            "committed_at": s["committed_at"],
            "operation": s["operation"],
            "current_ancestor": s["current_ancestor"],
            "upload": s["properties"].get(prop("upload")),
            "trigger": s["properties"].get(prop("trigger")),
            "late_days": s["properties"].get(prop("late-days")),
            "dates": [d for d in s["properties"].get(prop("dates"), "").split(",") if d],
            "corrected": [c for c in s["properties"].get(prop("corrected"), "").split(",") if c],
            "silver_snapshot_id": s["properties"].get(prop("silver-snapshot")),
            "input_hashes": hashes_in(s["properties"]),
        }
        for s in snaps
    ]


def store_changes(table: Any, date: dt.date, before: int | None, after: int | None) -> list[EvidenceStore]:
    """Each store's gold of `date` at two snapshots, and the change."""
    rows_before = {r["store_id"]: r for r in gold_rows(table, snapshot_id=before, date=date)} if before else {}
    rows_after = {r["store_id"]: r for r in gold_rows(table, snapshot_id=after, date=date)} if after else {}
    stores: list[EvidenceStore] = []
    for sid in sorted(set(rows_before) | set(rows_after), key=lambda s: s.encode("utf-8")):
        b, n = rows_before.get(sid), rows_after.get(sid)
        stores.append({
            "store_id": sid,
            "currency": (n or b or {})["currency"],
            "baskets_before": b["baskets"] if b else 0,
            "baskets_after": n["baskets"] if n else 0,
            "revenue_before_minor": b["revenue_minor"] if b else 0,
            "revenue_after_minor": n["revenue_minor"] if n else 0,
            "revenue_delta_minor": (n["revenue_minor"] if n else 0) - (b["revenue_minor"] if b else 0),
        })
    return stores


def partitions(t: Any, snap_before: int | None, snap_after: int | None, rewritten: list[str]) -> EvidencePartitions:
    """Which partitions a commit rewrote, and that it left every other one's files as they were."""
    fb, fa = files_by_partition(t, snap_before), files_by_partition(t, snap_after)
    others: list[EvidencePartition] = [
        {"business_date": d, "files_before": len(fb.get(d, [])), "files_after": len(fa.get(d, [])),
         "same_files": fb.get(d) == fa.get(d)}
        for d in sorted(set(fb) | set(fa)) if d not in rewritten
    ]
    return {
        "rewritten": sorted(rewritten),
        "rewritten_files_changed": all(fb.get(d) != fa.get(d) for d in rewritten),
        "other_partitions": others,
        "other_partitions_untouched": all(o["same_files"] for o in others),
    }


def write_json(path: str, body: Any) -> EvidenceFile:
    """Writes one evidence file whole (a rename after the write) and returns its path and MD5."""
    text = json.dumps(body, indent=2, sort_keys=False, default=str) + "\n"
    with open(path + ".part", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".part", path)
    return {"path": path, "md5": hashlib.md5(text.encode("utf-8")).hexdigest()}


def cmd_evidence(a: argparse.Namespace) -> None:
    table = static_table(a.warehouse, "daily_store_sales")
    date = dt.date.fromisoformat(a.date)
    runs = runs_of(snapshot_rows(table))
    # The last change of the date: the newest snapshot in gold's current line that rewrote it,
    # against its parent, the state just before that commit.
    writers = [r for r in runs if r["current_ancestor"] and a.date in r["dates"]]
    current = table.current_snapshot()
    gold_now = gold_rows(table, snapshot_id=current.snapshot_id, date=date) if current else []
    last = writers[-1] if writers else None
    after = last["snapshot_id"] if last else None
    before = last["parent_id"] if last else None
    comparison: EvidenceComparison = {
        "business_date": a.date,
        "snapshot_before": before,
        "snapshot_after": after,
        "run": last["run"] if last else None,
        "upload": last["upload"] if last else None,
        "corrected": last["corrected"] if last else [],
        "stores": store_changes(table, date, before, after),
        "gold": partitions(table, before, after, last["dates"]) if last else None,
    }
    if last and last["silver_snapshot_id"]:
        silver = static_table(a.warehouse, "silver_baskets")
        snap = silver.snapshot_by_id(int(last["silver_snapshot_id"]))
        if snap is not None:
            comparison["silver"] = partitions(silver, snap.parent_snapshot_id, snap.snapshot_id, last["dates"])
    os.makedirs(a.out, exist_ok=True)
    gold_file = {"business_date": a.date, "snapshot_id": current.snapshot_id if current else None,
                 "rows": [{k: (str(v) if k == "business_date" else v) for k, v in r.items()} for r in gold_now]}
    files = [
        write_json(os.path.join(a.out, "run_snapshot_map.json"), {"table": "recount.daily_store_sales", "runs": runs}),
        write_json(os.path.join(a.out, f"gold_{a.date}.json"), gold_file),
        write_json(os.path.join(a.out, f"snapshot_comparison_{a.date}.json"), comparison),
    ]
    answer: EvidenceAnswer = {"files": files, "comparison": comparison}
    emit("result", **answer)
