"""One Spark session on one warehouse, and what a session's runs share.

The Warehouse knows nothing of the jobs that use it: `land` and `v2` take it and read its state
(its cells, input hashes, landed versions), and it calls neither back."""

from __future__ import annotations

import argparse
import datetime as dt
from typing import Any, TypedDict

from recount_spark import state
from recount_spark.answers import Fingerprint
from recount_spark.rules import window_uploads
from recount_spark.session import session
from recount_spark.sql import Sql
from recount_spark.tables import GOLD, SILVER, TABLES, prop, summary_of
from recount_spark.wire import progress, timed

# Per upload its cells; per date its (input hash, rows).
Cells = dict[dt.date, list[Any]]
Hashes = dict[dt.date, tuple[str, int]]


class RolledBack(TypedDict):
    """What a rollback moved gold and silver back to."""

    snapshot_id: int
    silver_snapshot_id: int | None


class Warehouse:
    """One Spark session on one warehouse, and what a session's runs share: the current events
    (cached until a landing changes them), the per-upload cells and per-date input hashes of that
    state of bronze, the landed file versions, and each date's input hash as gold holds it. Small
    metadata (snapshots, raw_files, stores) is read with pyiceberg: no Spark job for it."""

    def __init__(self, a: argparse.Namespace, writes: bool = True, input_bytes: int = 0) -> None:
        self.path: str = a.warehouse
        self.rules: str = a.rules
        with timed("session"):
            self.spark = session(a.warehouse, a.master, a.jar, input_bytes)
        self.sql = Sql(self.spark, a.queries)
        with timed("schema"):
            if not all(state.has_table(a.warehouse, t) for t in TABLES):
                for name in self.sql.q["schema"]:
                    self.sql("schema", name)
        self._events: Any = None
        self._state: tuple[int, Cells, Hashes] | None = None
        self._dirty: set[dt.date] = set()
        self.few = False
        self.hashes: dict[dt.date, str] = {}
        # Each reopened date's kept window, as gold's lineage names it.
        self.windows: dict[dt.date, int] = {}
        self.last_run = 0
        self.files: dict[tuple[dt.date, str], tuple[int, str]] = {}
        self.md5s: dict[tuple[dt.date, str, int], str] = {}
        # Each store currency's ISO-4217 minor digits, as the lab passes them (--digits).
        self.digits: dict[str, int] = {}
        if writes:
            with timed("gold state"):
                self.recover()
                self.hashes, self.windows, self.last_run = state.gold_state(a.warehouse)
                self.files, self.md5s = state.landed_versions(a.warehouse)

    def table(self, name: str) -> Any:
        """The Iceberg table itself (Java), for its current snapshot id."""
        jvm = self.spark._jvm
        return jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(self.spark._jsparkSession, name)

    def rollback_to(self, name: str, snapshot: int) -> None:
        """Iceberg's rollback_to_snapshot (the procedure `CALL lake.system.rollback_to_snapshot`
        runs), through the table API: a procedure's arguments cannot be bound parameters, and
        nothing is formatted into SQL text here."""
        t = self.table(name)
        t.refresh()
        t.manageSnapshots().rollbackTo(int(snapshot)).commit()

    def current_snapshot(self, name: str) -> int | None:
        t = self.table(name)
        t.refresh()
        snap = t.currentSnapshot()
        return None if snap is None else int(snap.snapshotId())

    def recover(self) -> None:
        """A run commits silver, then gold. One killed between the two leaves silver ahead of
        gold: silver is put back to the snapshot gold's current one names."""
        from pyspark.sql import functions as F

        gold = state.static_table(self.path, "daily_store_sales").current_snapshot()
        silver = state.static_table(self.path, "silver_baskets").current_snapshot()
        if gold is None:
            if silver is not None and self.spark.table(SILVER).limit(1).count():
                self.spark.table(SILVER).limit(0).writeTo(SILVER).overwrite(F.lit(True))
                progress("recovered: silver emptied, as no gold snapshot was committed")
            return
        want = summary_of(gold).get(prop("silver-snapshot"))
        if want and silver is not None and int(want) != silver.snapshot_id:
            self.rollback_to(SILVER, int(want))
            progress(f"recovered: silver put back to snapshot {want}, the one gold's current snapshot names")

    def events(self) -> Any:
        """The current events as view `events`: cached for a backfill, which reads them run after
        run; read straight from Iceberg (each statement pruned to the uploads it needs) for a
        command of a few uploads, which would otherwise cache all of bronze for one run."""
        if self._events is None:
            df = self.sql("v2", "current_events")
            self._events = df if self.few else df.cache()
            self._events.createOrReplaceTempView("events")
        return self._events

    def forget_events(self) -> None:
        """A landing changed bronze: the cached events go."""
        if self._events is not None:
            self._events.unpersist()
            self._events = None

    def only(self, uploads: list[dt.date], late_days: int) -> None:
        """A command that runs just `uploads`: its state is computed for them alone."""
        self.few = True
        self._state, self._dirty = (late_days, {}, {}), set(uploads)

    def state(self, late_days: int) -> tuple[Cells, Hashes]:
        """Per upload, its cells; per date, its input hash and rows. Runs do not change bronze, so
        this is computed once per state of it: whole at first, then after a landing only for the
        uploads it wrote and the dates their rows carry."""
        self.events()
        if self._state is not None and self._state[0] == late_days and not self._dirty:
            return self._state[1], self._state[2]
        whole = self._state is None or self._state[0] != late_days
        ulo, uhi = (dt.date(1000, 1, 1), dt.date(9999, 12, 31)) if whole else (min(self._dirty), max(self._dirty))
        args = {"late_days": late_days, "all": whole, "uploads": sorted(self._dirty) if not whole else [], "ulo": ulo, "uhi": uhi}
        cells: Cells = {} if whole or self._state is None else dict(self._state[1])
        hashes: Hashes = {} if whole or self._state is None else dict(self._state[2])
        with timed("state: cells"):
            fresh: Cells = {}
            for c in self.sql("v2", "upload_cells", **args).collect():
                fresh.setdefault(c.upload_date, []).append(c)
            for u in ([] if whole else self._dirty):
                cells.pop(u, None)
            cells.update(fresh)
        if whole:
            lo, hi = dt.date(1000, 1, 1), dt.date(9999, 12, 31)  # py4j passes dates as YYYY-MM-DD text
        else:
            dates = [c.business_date for rows in fresh.values() for c in rows] or [min(self._dirty)]
            lo, hi = window_uploads(min(dates), max(dates), late_days)
        with timed("state: hashes"):
            hashes.update({r.business_date: (r.input_hash, r.rows)
                           for r in self.sql("v2", "input_hashes", lo=lo, hi=hi, rules=self.rules, **args).collect()})
        self._state, self._dirty = (late_days, cells, hashes), set()
        return cells, hashes

    def landed(self, uploads: set[dt.date]) -> None:
        """A landing wrote these uploads: their cells and the dates they carry are read again."""
        self._dirty |= uploads

    def window_hashes(self, dates: list[dt.date], late_days: int) -> Hashes:
        """The input hashes of `dates` under window `late_days` (a reopened date's own), as
        `state` computes them under the run's."""
        self.events()
        lo, hi = window_uploads(min(dates), max(dates), late_days)
        rows = self.sql("v2", "window_hashes", dates=",".join(map(str, dates)), late_days=late_days, lo=lo, hi=hi, rules=self.rules)
        return {r.business_date: (r.input_hash, r.rows) for r in rows.collect()}

    def corrected(self, upload: dt.date) -> list[str]:
        """The current files of `upload` that are corrections: version 2 or later, with bytes
        other than the version before (a store correction re-derives a version from the same
        bytes) and other rows (a re-delivery of the same rows is none), as the lab's
        corrected_files."""
        other = sorted(
            (n, v) for (u, n), (v, md5) in self.files.items() if u == upload and v > 1 and self.md5s.get((u, n, v - 1)) != md5
        )
        if not other:
            return []
        same = {(r.file_name, r.file_version) for r in self.sql("v2", "redelivered", upload=upload).collect()}
        return [f"{n} v{v}" for n, v in other if (n, v) not in same]

    def fingerprint(self, as_of: int | None = None) -> Fingerprint:
        if as_of is None:
            self.spark.table(GOLD).createOrReplaceTempView("gold")
        else:
            # Time travel, as SQL's `SELECT ... FROM gold VERSION AS OF s`.
            self.spark.read.option("snapshot-id", int(as_of)).table(GOLD).createOrReplaceTempView("gold")
        with timed("fingerprint"):
            rows, md5 = state.text_md5((r.rows, r.text) for r in self.sql("fingerprint", "chunks").toLocalIterator())
        return {"rows": rows, "md5": md5, "as_of": as_of, "reader": "spark"}

    def rollback(self, snapshot: int) -> RolledBack:
        """Gold back to `snapshot` with Iceberg's rollback_to_snapshot, and silver to the snapshot
        that run wrote (silver first: gold's current snapshot is what runs read hashes from)."""
        gold = state.static_table(self.path, "daily_store_sales")
        snap = gold.snapshot_by_id(snapshot)
        if snap is None:
            raise ValueError(f"gold has no snapshot {snapshot}; `recount spark snapshots` lists them")
        silver = summary_of(snap).get(prop("silver-snapshot"))
        if silver:
            self.rollback_to(SILVER, int(silver))
        self.rollback_to(GOLD, snapshot)
        self.hashes, self.windows, self.last_run = state.gold_state(self.path)
        return {"snapshot_id": snapshot, "silver_snapshot_id": int(silver) if silver else None}
