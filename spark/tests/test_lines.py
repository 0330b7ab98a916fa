"""The JVM's line checks (recount_spark.lines) never accept a line the Python parser would refuse,
nor read an accepted line differently: over the shared corpus and thousands of mutations of real
lines, every line `judged` accepts gets parse_line's exact fields. Needs pyspark (the setup's
venv, as CI runs it); a plain python3 skips it."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import random
import sys
import tempfile
import unittest
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

try:
    import pyspark  # noqa: F401

    HAS_SPARK = True
except ImportError:
    HAS_SPARK = False

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
STORES = {
    "LON1": {"store_id": "LON1", "country": "GB", "timezone": "Europe/London", "currency": "GBP"},
    "BLR1": {"store_id": "BLR1", "country": "IN", "timezone": "Asia/Kolkata", "currency": "INR"},
    "TYO1": {"store_id": "TYO1", "country": "JP", "timezone": "Asia/Tokyo", "currency": "JPY"},
}
UPLOAD = dt.date(2026, 8, 15)
GOOD = (
    '{"event_id":"ev-1","basket_id":"LON1-20260815-T1-0017","store_id":"LON1","till_id":"LON1-T1",'
    '"event_ts":"2026-08-15T06:01:26.199Z","uploaded_at":"2026-08-15T06:01:47.199Z","currency":"GBP",'
    '"tenders":[{"method":"card","amount_minor":29173},{"method":"cash","amount_minor":-5}],'
    '"items":[{"sku":"SKU05645","qty":3,"unit_price_minor":2067}]}'
)
# What a mutation writes in: JSON's punctuation, digits and the letters of its literals and instants.
PIECES = ['"', "\\", "{", "}", "[", "]", ",", ":", "0", "9", "-", "+", " ", "\t", ".", "e", "n", "Z", "T", "é", "1"]


def mutations(base: str, n: int, rng: random.Random) -> list[str]:
    out = []
    for _ in range(n):
        s = base
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(s) + 1)
            kind = rng.randrange(4)
            if kind == 0 and i < len(s):
                s = s[:i] + s[i + 1:]
            elif kind == 1:
                s = s[:i] + rng.choice(PIECES) + s[i:]
            elif kind == 2 and i < len(s):
                s = s[:i] + rng.choice(PIECES) + s[i + 1:]
            else:
                # A field given again, or a time moved: the contract's own traps.
                s = rng.choice([
                    s.replace('"currency":"GBP"', '"currency":"GBP","currency":"GBP"'),
                    s.replace('"store_id":"LON1"', '"store_id":"TYO1"'),
                    s.replace("2026-08-15T06:01:47", rng.choice(["2026-08-16T00:00:00", "2026-08-14T23:59:59", "2026-02-29T00:00:00"])),
                    s.replace("06:01:26.199Z", rng.choice(["06:01:60Z", "06:01:26+23:59", "06:01:26-24:00", "06:01:26.1234567891Z"])),
                    s.replace("29173", rng.choice(["999999999999999999", "1e3", "01", "-0", "29173.0"])),
                    # Numbers beyond f64 in an ignored field: serde_json refuses the line.
                    s.replace('"qty":3', '"qty":' + rng.choice(["9" * 300 + "e99", "1" + "0" * 309, "1e400", "1.5E+308", "-0.0e-999"])),
                ])
        out.append(s)
    return out


@unittest.skipUnless(HAS_SPARK, "needs pyspark (the setup's venv)")
class Lines(unittest.TestCase):
    spark: Any = None

    @classmethod
    def setUpClass(cls) -> None:
        from pyspark.sql import SparkSession

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "spark"), os.environ.get("PYTHONPATH", "")])
        cls.spark = (
            SparkSession.builder.master("local[2]").appName("recount-lines-test")
            .config("spark.sql.session.timeZone", "UTC").config("spark.sql.ansi.enabled", "true")
            .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2").getOrCreate()
        )

    @classmethod
    def tearDownClass(cls) -> None:
        cls.spark.stop()

    def test_a_landing_through_the_jvm_gives_parse_files_rows(self) -> None:
        """contract_rows (split in Python, judged in the JVM, the rest in Python) over real
        files: the same rows as parse_file's, line for line, and a corrupt file held back."""
        from recount_spark.land import HELD, contract_rows, in_upload_order
        from recount_spark.source import Source, parse_file

        corpus = self._corpus()
        texts = [*corpus, "", "   ", GOOD + "\r", *mutations(GOOD, 300, random.Random(7))]
        with tempfile.TemporaryDirectory() as d:
            good, bad = os.path.join(d, "tills.jsonl.gz"), os.path.join(d, "cut.jsonl.gz")
            data = gzip.compress("\n".join(texts).encode("utf-8") + b"\n")
            with open(good, "wb") as f:
                f.write(data)
            with open(bad, "wb") as f:
                f.write(data[: len(data) // 2])
            by_path = {good: (UPLOAD, "tills.jsonl.gz", 1), bad: (UPLOAD, "cut.jsonl.gz", 2)}
            self.spark.createDataFrame(list(STORES.values())).createOrReplaceTempView("stores_in")
            w = type("W", (), {"spark": self.spark})()
            files = in_upload_order(w, by_path)
            parsed, kept = contract_rows(w, files, by_path, Source(), self.spark.sparkContext.broadcast(STORES))
            got = {(r.file_name, r.line): r.asDict() for r in parsed.collect()}
            kept.unpersist()
        want = {(r["file_name"], r["line"]): r for r in parse_file(Source(), UPLOAD, "tills.jsonl.gz", 1, data, STORES)}
        self.assertEqual(len(want), len(texts))
        self.assertEqual(set(got) - {("cut.jsonl.gz", 0)}, set(want))
        self.assertTrue(got[("cut.jsonl.gz", 0)]["reason"].startswith(HELD + "2026-08-15/cut.jsonl.gz: truncated or corrupt"))
        wrong = []
        for key, w_row in want.items():
            # PySpark gives instants back naive, in this process's local time: astimezone reads
            # them so, and both sides compare as aware UTC.
            g = {k: (v.astimezone(dt.UTC) if isinstance(v, dt.datetime) else v) for k, v in got[key].items() if v is not None}
            w_row = {k: (v.astimezone(dt.UTC) if isinstance(v, dt.datetime) else v) for k, v in w_row.items() if v is not None}
            if g != w_row:
                wrong.append(f"line {key[1]}: {g} against {w_row}")
        self.assertEqual(wrong, [], "\n".join(wrong[:10]))
        self.assertGreater(sum(r["reason"] is None for r in want.values()), 50)

    def test_each_task_takes_a_run_of_files_in_upload_order(self) -> None:
        """in_upload_order: read task by task, the paths come in upload order (then name), each
        task a run of consecutive ones, so a task holds the lines of a few uploads."""
        from recount_spark.land import in_upload_order

        rng = random.Random(3)
        by_path = {f"/raw/{u}/{n}": (dt.date(2026, 8, 1) + dt.timedelta(days=u), n, 1)
                   for u in range(40) for n in ("b.jsonl.gz", "a.jsonl.gz")}
        shuffled = dict(rng.sample(sorted(by_path.items()), len(by_path)))
        w = type("W", (), {"spark": self.spark})()
        tasks = in_upload_order(w, shuffled).rdd.glom().collect()
        self.assertGreater(len(tasks), 1)
        got = [r.path for task in tasks for r in task]
        self.assertEqual(got, sorted(by_path, key=lambda p: (by_path[p], p)))
        self.assertEqual(got[:2], ["/raw/0/a.jsonl.gz", "/raw/0/b.jsonl.gz"])

    def _corpus(self) -> list[str]:
        with open(os.path.join(ROOT, "tests", "corpus", "lines.jsonl"), encoding="utf-8") as f:
            corpus = [json.loads(line)["line"] for line in f]
        return [t for t in corpus if "\n" not in t and "\r" not in t and t.encode("utf-8", "surrogatepass").decode("utf-8", "replace") == t]

    def test_every_line_the_jvm_accepts_reads_as_parse_line_reads_it(self) -> None:
        from recount_spark.lines import judged
        from recount_spark.parse import parse_line

        corpus = self._corpus()
        rng = random.Random(20261202)
        texts = [*corpus, GOOD, *mutations(GOOD, 4000, rng), *(m for t in corpus[:40] for m in mutations(t, 25, rng))]
        texts = [t for t in texts if t.encode("utf-8", "surrogatepass").decode("utf-8", "replace") == t]
        spark = self.spark
        rows = [(UPLOAD, "f", 1, i + 1, t, None) for i, t in enumerate(texts)]
        ddl = "upload_date date, file_name string, file_version int, line int, text string, reason string"
        lines = spark.createDataFrame(rows, ddl)
        stores = spark.createDataFrame([(s["store_id"], s["currency"]) for s in STORES.values()], "store_id string, currency string")
        got = judged(lines, stores).collect()
        self.assertEqual(len(got), len(texts))
        accepted = refused = 0
        wrong = []
        for r in got:
            want = parse_line(texts[r.line - 1], STORES, UPLOAD)
            if not r.ok:
                refused += isinstance(want, str)
                continue
            accepted += 1
            if isinstance(want, str):
                wrong.append(f"accepted, but parse_line says {want!r}: {texts[r.line - 1]}")
                continue
            mine = {k: getattr(r, k) for k in ("event_id", "basket_id", "store_id", "till_id", "currency", "uploaded_at_ns",
                                               "revenue_minor", "tenders")}
            mine["event_ts"], mine["uploaded_at"] = r.event_ts.astimezone(dt.UTC), r.uploaded_at.astimezone(dt.UTC)
            theirs = {k: want[k] for k in mine}
            if mine != theirs:
                wrong.append(f"read differently: {mine} against {theirs}: {texts[r.line - 1]}")
        self.assertEqual(wrong, [], "\n".join(wrong[:20]))
        # Not vacuous: many lines take the fast path, and many bad ones are left to Python.
        self.assertGreater(accepted, 300)
        self.assertGreater(refused, 1000)


if __name__ == "__main__":
    unittest.main()
