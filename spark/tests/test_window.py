"""The lateness window's shared corpus (tests/corpus/window.jsonl): the driver's `fate` gives
every verdict, as the lab's crates/core/src/rules.rs and DuckDB's `in_window` do in
tests/models.rs (plain python3); and with pyspark (the setup's venv, as CI runs it), the Spark
SQL rule itself, queries/spark/v2.sql's `in_window`, gives every verdict on a local session."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sys
import tempfile
import unittest
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark.rules import fate
from recount_spark.sql import Sql

try:
    import pyspark  # noqa: F401

    HAS_SPARK = True
except ImportError:
    HAS_SPARK = False

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CORPUS = os.path.join(ROOT, "tests", "corpus", "window.jsonl")
# A statement over the corpus's cases that uses the rules' own defines, read beside the real files.
VERDICTS = """-- name: verdicts
SELECT upload_date, business_date, @in_window AS in_window FROM window_cases
"""


class Window(unittest.TestCase):
    def test_every_case_gets_the_corpus_verdict(self) -> None:
        with open(CORPUS, encoding="utf-8") as f:
            cases = [json.loads(line) for line in f if line.strip()]
        self.assertGreater(len(cases), 100)
        for c in cases:
            got = fate(dt.date.fromisoformat(c["upload"]), dt.date.fromisoformat(c["business_date"]), c["late_days"])
            self.assertEqual(got, c["fate"], c)


@unittest.skipUnless(HAS_SPARK, "needs pyspark (the setup's venv)")
class SparkSqlWindow(unittest.TestCase):
    spark: Any = None

    @classmethod
    def setUpClass(cls) -> None:
        from pyspark.sql import SparkSession

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        cls.spark = (
            SparkSession.builder.master("local[1]").appName("recount-window-test")
            .config("spark.sql.session.timeZone", "UTC").config("spark.sql.ansi.enabled", "true")
            .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1").getOrCreate()
        )

    @classmethod
    def tearDownClass(cls) -> None:
        cls.spark.stop()

    def test_the_spark_sql_rule_gives_every_verdict(self) -> None:
        with open(CORPUS, encoding="utf-8") as f:
            cases = [json.loads(line) for line in f if line.strip()]
        queries = os.path.join(tempfile.mkdtemp(prefix="recount-window-"), "queries")
        self.addCleanup(shutil.rmtree, os.path.dirname(queries))
        shutil.copytree(os.path.join(ROOT, "queries", "spark"), queries)
        with open(os.path.join(queries, "cases.sql"), "w", encoding="utf-8") as f:
            f.write(VERDICTS)
        sql = Sql(self.spark, queries)
        checked = 0
        for late in sorted({c["late_days"] for c in cases}):
            these = [c for c in cases if c["late_days"] == late]
            rows = [(dt.date.fromisoformat(c["upload"]), dt.date.fromisoformat(c["business_date"])) for c in these]
            self.spark.createDataFrame(rows, "upload_date DATE, business_date DATE").createOrReplaceTempView("window_cases")
            got = {(r.upload_date, r.business_date): r.in_window for r in sql("cases", "verdicts", late_days=late).collect()}
            for c, key in zip(these, rows, strict=True):
                self.assertEqual(got[key], c["in_window"], c)
                checked += 1
        self.assertEqual(checked, len(cases))


if __name__ == "__main__":
    unittest.main()
