"""The landing's fast path (recount_spark.fast) gives every line the row the careful parser gives
it: over the shared corpus, the sample world's files, lines at each check's edge and thousands of
mutations of a plain line. Needs pyarrow (the setup's venv, as CI runs it); a plain python3 skips
it."""

from __future__ import annotations

import datetime as dt
import glob
import gzip
import json
import os
import random
import sys
import unittest
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import pyarrow  # noqa: F401

    HAS_ARROW = True
except ImportError:
    HAS_ARROW = False

from test_lines import GOOD, ROOT, STORES, UPLOAD, mutations

# A plain line of one tender and no items, which the edge cases below change one thing at a time.
PLAIN = ('{"event_id":"ev-1","basket_id":"b-1","store_id":"LON1","till_id":"LON1-T1","event_ts":"2026-08-15T06:01:26.199Z",'
         '"uploaded_at":"2026-08-15T06:01:47.199Z","currency":"GBP","tenders":[{"method":"card","amount_minor":100}]}')
EDGES = [
    ("2026-08-15T06:01:26.199Z", [
        "2024-02-29T00:00:00Z", "2026-02-29T00:00:00Z", "2026-02-30T12:00:00Z", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
        "2026-00-10T00:00:00Z", "2026-08-00T00:00:00Z", "2100-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "1900-01-01T00:00:00Z",
        "1899-12-31T23:59:59Z", "2199-12-31T23:59:59.999999999Z", "2262-04-11T23:47:16Z", "1969-12-31T23:59:59.5Z",
        "2026-08-15T23:59:60Z", "2026-08-15T24:00:00Z", "2026-08-15T12:60:00Z", "2026-08-15T06:01:26.1234567891Z",
        "2026-08-15T06:01:26.Z", "2026-08-15t06:01:26Z", "2026-08-15 06:01:26Z", "2026-08-15T06:01:26z",
        "2026-08-15T06:01:26+00:00", "2026-08-15T06:01:26.000000001Z", "2026-08-15T06:01:26",
    ]),
    ("2026-08-15T06:01:47.199Z", [
        "2026-08-15T00:00:00Z", "2026-08-14T23:59:59.999999999Z", "2026-08-16T00:00:00Z", "2026-08-15T23:59:59.999999999Z",
        "2026-08-15T06:01:47.1994Z",
    ]),
    ('"event_id":"ev-1"', ['"event_id":""', '"event_id":"' + "é" * 128 + '"', '"event_id":"' + "é" * 129 + '"',
                           '"event_id":"' + "x" * 256 + '"', '"event_id":"' + "x" * 257 + '"', '"event_id":"a\\"b"',
                           '"event_id":"a\x7fb"', '"event_id":"a\x1fb"', '"event_id":null', '"event_id":7']),
    ('"store_id":"LON1"', ['"store_id":"TYO1"', '"store_id":"NOPE"', '"store_id":"lon1"']),
    ('"currency":"GBP"', ['"currency":"JPY"', '"currency":"gbp"', '"currency":""', '"currency":"GBP","currency":"GBP"']),
    ('"till_id":"LON1-T1"', ['"till_id":""', '"till_id":"' + "t" * 257 + '"']),
    ('[{"method":"card","amount_minor":100}]', [
        "[]", '[{"method":"card","amount_minor":100},{"method":"cash","amount_minor":-100}]',
        '[{"method":"a","amount_minor":1},{"method":"b","amount_minor":2},{"method":"c","amount_minor":3}]',
        '[{"method":"a","amount_minor":1},{"method":"b","amount_minor":2},{"method":"c","amount_minor":3},{"method":"d","amount_minor":4}]',
        '[{"method":"card","amount_minor":999999999999999999},{"method":"card","amount_minor":999999999999999999}]',
        '[{"method":"card","amount_minor":9223372036854775807},{"method":"card","amount_minor":1}]',
        '[{"method":"card","amount_minor":-0}]', '[{"method":"card","amount_minor":01}]', '[{"method":"card","amount_minor":1.0}]',
        '[{"method":"card","amount_minor":1e2}]', '[{"method":"card"}]', '[{"amount_minor":5,"method":"card"}]',
        '[{"method":null,"amount_minor":5}]', '[{"method":"","amount_minor":5}]',
    ]),
    ('100}]}', ['100}],"items":[]}', '100}],"items":[{"sku":"S","qty":1,"unit_price_minor":100}]}', '100}],"items":{}}',
                '100}],"items":[{"sku":"S","qty":1e999,"unit_price_minor":1}]}', '100}],"extra":1}', '100}]} ', '100}]}\r',
                '100}],"items":[{"sku":"S","qty":1,"unit_price_minor":1},{"sku":"T","qty":-2,"unit_price_minor":0}]}']),
]


def edge_lines() -> list[str]:
    return [PLAIN] + [PLAIN.replace(old, new) for old, news in EDGES for new in news]


def batches(lines: list[str], upload: dt.date, stores: dict[str, Any]) -> tuple[Any, Any]:
    """A file of these lines through the fast path, and through the careful parser alone."""
    import pyarrow as pa

    from recount_spark.fast import file_batch
    from recount_spark.parse import arrow_schema
    from recount_spark.source import _row, contract_line

    base = {"upload_date": upload, "file_name": "f.jsonl.gz", "file_version": 1}

    def careful(i: int, line: str) -> dict[str, Any]:
        return _row(base, i + 1, contract_line(line, stores, upload))

    fast = file_batch(lines, base, stores, upload, careful)
    return fast, pa.Table.from_pylist([careful(i, t) for i, t in enumerate(lines)], schema=arrow_schema()).to_batches()[0]


@unittest.skipUnless(HAS_ARROW, "needs pyarrow (the setup's venv)")
class FastPath(unittest.TestCase):
    def same(self, lines: list[str], upload: dt.date = UPLOAD, stores: dict[str, Any] = STORES) -> None:
        fast, careful = batches(lines, upload, stores)
        self.assertEqual(fast.schema, careful.schema)
        wrong = [f"line {i + 1} {lines[i][:120]!r}: {a} against {b}"
                 for i, (a, b) in enumerate(zip(fast.to_pylist(), careful.to_pylist(), strict=True)) if a != b]
        self.assertEqual(len(fast), len(careful))
        self.assertEqual(wrong, [], "\n".join(wrong[:10]))
        self.assertTrue(fast.equals(careful))

    def accepted(self, lines: list[str], upload: dt.date = UPLOAD, stores: dict[str, Any] = STORES) -> int:
        """How many lines the fast path itself judged good."""
        import pyarrow.compute as pc

        from recount_spark.fast import judged, plain_lines

        _, captures = plain_lines(lines)
        return pc.sum(judged(captures, stores, upload)[0]).as_py() if captures else 0

    def test_lines_at_each_checks_edge_get_the_careful_parsers_rows(self) -> None:
        lines = edge_lines()
        self.same(lines)
        # The fast path decides many of them itself, and leaves many to the careful parser.
        good = sum(r["reason"] is None for r in batches(lines, UPLOAD, STORES)[1].to_pylist())
        self.assertGreaterEqual(self.accepted(lines), 20)
        self.assertLessEqual(self.accepted(lines), good)
        self.assertGreater(len(lines) - good, 30)

    def test_thousands_of_mutated_lines_and_the_corpus_get_the_careful_parsers_rows(self) -> None:
        rng = random.Random(20261203)
        plain = [PLAIN, GOOD, GOOD.replace(',"items":[{"sku":"SKU05645","qty":3,"unit_price_minor":2067}]', "")]
        lines = [m for base in plain for m in mutations(base, 1500, rng)]
        self.same(lines)
        self.assertGreater(self.accepted(lines), 300)
        with open(os.path.join(ROOT, "tests", "corpus", "lines.jsonl"), encoding="utf-8") as f:
            cases = [json.loads(line) for line in f]
        for upload in sorted({c["upload_date"] for c in cases}):
            texts = [c["line"] for c in cases if c["upload_date"] == upload and "\n" not in c["line"]]
            self.same(texts, dt.date.fromisoformat(upload))

    def test_the_sample_worlds_files_get_the_careful_parsers_rows(self) -> None:
        from recount_spark.source import Source, read_stores

        world = os.path.join(ROOT, "sample-data")
        stores = {s["store_id"]: s for s in read_stores(Source(), world)}
        files = sorted(glob.glob(os.path.join(world, "pos", "events", "upload_date=*", "*.jsonl.gz")))[:6]
        self.assertEqual(len(files), 6)
        for path in files:
            upload = dt.date.fromisoformat(path.split("upload_date=")[1][:10])
            with open(path, "rb") as f:
                lines = gzip.decompress(f.read()).decode("utf-8").split("\n")[:-1]
            self.same(lines, upload, stores)
            self.assertGreater(self.accepted(lines, upload, stores), len(lines) // 2)


if __name__ == "__main__":
    unittest.main()
