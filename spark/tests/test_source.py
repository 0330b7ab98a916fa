"""The Spark driver reads a world through its source description as the lab does: partition
templates, writer markers, CSV rows and Parquet records mapped into the contract's checks, and
zstd. Plain python3 (pyarrow for Parquet and zstd, as the driver's venv has it), no Spark."""

from __future__ import annotations

import datetime as dt
import importlib.util
import os
import sys
import tempfile
import tomllib
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark.source import Source, load, parse_file

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DAY = dt.date(2026, 10, 24)
# Parquet and zstd are pyarrow's: the Spark venv has it (.ci/run runs these tests on its python);
# a plain python3 without it skips those two.
HAS_PYARROW = importlib.util.find_spec("pyarrow") is not None
STORES = {"LON1": {"store_id": "LON1", "country": "GB", "timezone": "Europe/London", "currency": "GBP", "digits": 2}}


def shape(name: str) -> Source:
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(ROOT, "crates", "world", "src", "world", "shapes", f"{name}.toml"), "rb") as f:
            text = f.read()
        with open(os.path.join(d, "recount.toml"), "wb") as f:
            f.write(text)
        tomllib.loads(text.decode())
        return load(d)


class Sources(unittest.TestCase):
    def test_templates_name_partitions_and_markers_are_skipped(self) -> None:
        src = shape("kafka-connect")
        with tempfile.TemporaryDirectory() as world:
            part = src.partition_dir(world, DAY)
            self.assertTrue(part.endswith(os.path.join("topics", "pos-events", "year=2026", "month=10", "day=24")))
            os.makedirs(part)
            for n in ("b.json.gz", "a.json.gz", "_SUCCESS", ".a.json.gz.crc", "notes.txt"):
                open(os.path.join(part, n), "w").close()
            self.assertEqual(src.files(world, DAY), ["a.json.gz", "b.json.gz"])

    def test_hourly_folders_below_the_day_are_walked_and_name_each_file_by_its_path(self) -> None:
        src = shape("kafka-connect-hourly")
        with tempfile.TemporaryDirectory() as world:
            part = src.partition_dir(world, DAY)
            self.assertTrue(part.endswith(os.path.join("year=2026", "month=10", "day=24")), part)
            for hour, n in (("hour=07", "b.json.gz"), ("hour=07", "a.json.gz"), ("hour=23", "a.json.gz"), ("hour=24", "x.json.gz"),
                            ("_tmp", "y.json.gz")):
                os.makedirs(os.path.join(part, hour), exist_ok=True)
                open(os.path.join(part, hour, n), "w").close()
            open(os.path.join(part, "stray.json.gz"), "w").close()
            # hour=24 is no hour and a file beside the hours is in no hour: neither is taken.
            self.assertEqual(src.files(world, DAY), ["hour=07/a.json.gz", "hour=07/b.json.gz", "hour=23/a.json.gz"])

    def test_a_csv_row_maps_with_its_line_number_and_reasons(self) -> None:
        text = ("txn_id,basket,store,till,sold_at,received_at,currency,amount\n"
                "m1,B1,LON1,T1,2026-10-24T11:00:00+01:00,1792836000.5,GBP,12.50\n"
                "m2,B2,LON1,T1,2026-10-24T11:00:00+01:00,1792836000,GBP,12.505\n"
                "m3,,LON1,T1,2026-10-24T11:00:00+01:00,1792836000,GBP,1\n"
                "m4,B4,LON1\n")
        rows = list(parse_file(shape("csv"), DAY, "x.csv", 1, text.encode(), STORES))
        self.assertEqual([r["line"] for r in rows], [2, 3, 4, 5])
        self.assertEqual(rows[0]["revenue_minor"], 1250)
        self.assertEqual(rows[0]["uploaded_at_ns"], 1792836000_500_000_000)
        self.assertEqual(rows[1]["reason"], "amount (amount): '12.505' has more decimal places than GBP's 2")
        self.assertEqual(rows[2]["reason"], "empty required field basket_id (basket)")
        self.assertEqual(rows[3]["reason"], "CSV row has 3 fields, the header has 8")

    def test_a_csv_row_or_json_line_that_is_not_utf8_is_quarantined_alone(self) -> None:
        # As crates/raw/src/raw/mapped/mod.rs's test: the first bad byte from the row's start (m2,B2,LON1,"T is 13 bytes).
        data = (b"txn_id,basket,store,till,sold_at,received_at,currency,amount\n"
                b"m1,B1,LON1,T1,2026-10-24T11:00:00+01:00,1792836000,GBP,1\n")
        data += b'm2,B2,LON1,"T\xe9",2026-10-24T11:00:00+01:00,1792836000,GBP,1\n'
        data += b"m3,B3,LON1,T1,2026-10-24T11:00:00+01:00,1792836000,GBP,1\n"
        rows = list(parse_file(shape("csv"), DAY, "x.csv", 1, data, STORES))
        self.assertEqual([(r["line"], r["reason"]) for r in rows], [(2, None), (3, "not UTF-8 at byte 13"), (4, None)])
        lines = b'{"a":1}\n{"b":"\xff"}\r\n{"c":3}\n'
        rows = list(parse_file(Source(), DAY, "a.jsonl", 1, lines, STORES))
        self.assertEqual([(r["line"], r["reason"]) for r in rows][1], (2, "not UTF-8 at byte 6"))
        self.assertTrue(all("UTF-8" not in (r["reason"] or "") for i, r in enumerate(rows) if i != 1), rows)

    @unittest.skipUnless(HAS_PYARROW, "pyarrow reads Parquet")
    def test_parquet_records_map_and_a_float_column_holds_the_file_back(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        def write(amount: pa.Array) -> bytes:
            t = pa.table({"event_id": ["e1"], "basket_id": ["B1"], "store_id": ["LON1"], "till_id": ["T1"],
                          "event_ts_us": pa.array([1792836000000000], pa.int64()), "uploaded_at": ["2026-10-24T10:00:00.000Z"],
                          "currency": ["GBP"], "amount_minor": amount})
            sink = pa.BufferOutputStream()
            pq.write_table(t, sink)
            return bytes(sink.getvalue().to_pybytes())

        rows = list(parse_file(shape("parquet"), DAY, "x.parquet", 1, write(pa.array([1250], pa.int64())), STORES))
        self.assertEqual((rows[0]["line"], rows[0]["revenue_minor"], rows[0]["reason"]), (1, 1250, None))
        with self.assertRaisesRegex(ValueError, "column 'amount_minor' holds floating-point numbers"):
            list(parse_file(shape("parquet"), DAY, "x.parquet", 1, write(pa.array([12.5], pa.float64())), STORES))

    @unittest.skipUnless(HAS_PYARROW, "pyarrow reads zstd")
    def test_zstd_json_lines_read_as_the_text_they_hold(self) -> None:
        import pyarrow as pa

        line = ('{"event_id":"e1","basket_id":"b1","store_id":"LON1","till_id":"t1","event_ts":"2026-10-24T10:00:00Z",'
                '"uploaded_at":"2026-10-24T10:00:09Z","currency":"GBP","tenders":[{"amount_minor":7}]}\n')
        data = pa.compress(line.encode(), codec="zstd", asbytes=True)
        src = Source(glob="*.jsonl.zst")
        rows = list(parse_file(src, DAY, "a.jsonl.zst", 1, data, STORES))
        self.assertEqual(rows[0]["revenue_minor"], 7)
        with self.assertRaisesRegex(ValueError, "truncated or corrupt .zst file"):
            list(parse_file(src, DAY, "a.jsonl.zst", 1, data[: len(data) // 2], STORES))


if __name__ == "__main__":
    unittest.main()
