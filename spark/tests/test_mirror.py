"""What the mirror's plan says of a warehouse's files, with stand-ins for pyiceberg's tables (the
whole plan is tested on a real warehouse in tests/spark.rs). Plain python3."""

from __future__ import annotations

import os
import sys
import unittest
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import importlib.util
import tempfile

from recount_spark.mirror import appends, data_files, foreign_table, local
from recount_spark.state import Refused, metadata_file


class Table:
    """A stand-in for a pyiceberg table: each snapshot's data files, and some with deletes."""

    def __init__(self, files: dict[int, list[str]], parents: dict[int, int | None], deletes: set[str] | None = None) -> None:
        self.files, self.parents, self.deletes = files, parents, deletes or set()

    def current_snapshot(self) -> Any:
        return SimpleNamespace(snapshot_id=max(self.files)) if self.files else None

    def snapshots(self) -> list[Any]:
        return [SimpleNamespace(snapshot_id=s, parent_snapshot_id=self.parents[s], sequence_number=s, timestamp_ms=1000 * s,
                                summary=SimpleNamespace(additional_properties={"recount.upload": "2026-10-14", "other": "x"}))
                for s in self.files]

    def scan(self, snapshot_id: int | None = None, row_filter: Any = None) -> Any:
        chosen = self.files[snapshot_id if snapshot_id is not None else max(self.files)]
        tasks = [SimpleNamespace(file=SimpleNamespace(file_path=p), delete_files=["d"] if p in self.deletes else []) for p in chosen]
        return SimpleNamespace(plan_files=lambda: tasks)


class Mirror(unittest.TestCase):
    def test_a_file_uri_is_a_path_duckdb_opens(self) -> None:
        self.assertEqual(local("file:/wh/recount/t/data/a.parquet"), "/wh/recount/t/data/a.parquet")
        self.assertEqual(local("file:///wh/a.parquet"), "/wh/a.parquet")
        self.assertEqual(local("/wh/a.parquet"), "/wh/a.parquet")
        self.assertEqual(local("s3://bucket/a.parquet"), "s3://bucket/a.parquet")

    def test_an_append_brings_the_files_its_parent_lacked(self) -> None:
        t = Table({1: ["file:/a"], 2: ["file:/a", "file:/b"], 3: ["file:/a", "file:/b", "file:/c"]}, {1: None, 2: 1, 3: 2})
        runs = appends(t)
        self.assertEqual([r["files"] for r in runs], [["/a"], ["/b"], ["/c"]])
        self.assertEqual(runs[0]["properties"], {"recount.upload": "2026-10-14"}, "only recount's own properties")

    def test_row_level_deletes_are_refused_not_ignored(self) -> None:
        t = Table({1: ["file:/a", "file:/b"]}, {1: None}, deletes={"file:/b"})
        with self.assertRaisesRegex(ValueError, "row-level deletes"):
            data_files(t, 1, None)

    def test_an_empty_date_list_reads_nothing(self) -> None:
        t = Table({1: ["file:/a"]}, {1: None})
        self.assertEqual(data_files(t, 1, []), [])


class MetadataFile(unittest.TestCase):
    """Which metadata file a foreign table's directory is read at."""

    def test_the_version_hint_then_the_newest_file_then_none(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            self.assertIsNone(metadata_file(os.path.join(d, "absent")))
            self.assertIsNone(metadata_file(d))
            for n in ("00000-a.metadata.json", "00002-c.metadata.json", "00001-b.metadata.json"):
                open(os.path.join(d, n), "w").close()
            self.assertEqual(metadata_file(d), os.path.join(d, "00002-c.metadata.json"))
            with open(os.path.join(d, "version-hint.text"), "w") as f:
                f.write("7\n")
            self.assertEqual(metadata_file(d), os.path.join(d, "v7.metadata.json"))


class ForeignTable(unittest.TestCase):
    """Another pipeline's table is read as data: a FIFO is refused at once, never waited on, and a
    file that is not Iceberg metadata is named, never quoted."""

    def test_a_fifo_version_hint_is_refused_before_it_is_opened(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            meta = os.path.join(d, "ns", "t", "metadata")
            os.makedirs(meta)
            os.mkfifo(os.path.join(meta, "version-hint.text"))
            with self.assertRaisesRegex(Refused, "is not a regular file"):
                foreign_table(d, "ns.t")

    @unittest.skipUnless(importlib.util.find_spec("pyiceberg") is not None, "needs pyiceberg (the setup's venv)")
    def test_metadata_that_is_not_iceberg_s_is_named_and_not_quoted(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            meta = os.path.join(d, "ns", "t", "metadata")
            os.makedirs(meta)
            with open(os.path.join(meta, "00000-a.metadata.json"), "w") as f:
                f.write('{"format-version": 2, "secret": "root:x:0:0:TOP-SECRET"}')
            with self.assertRaises(ValueError) as caught:
                foreign_table(d, "ns.t")
            said = str(caught.exception)
            self.assertIn("not an Iceberg table's metadata", said)
            self.assertNotIn("TOP-SECRET", said)


if __name__ == "__main__":
    unittest.main()
