"""The driver's file reading (recount_spark.parse): gzip members and limits, blank lines, CRLF,
and a file that cannot be read whole. Plain python3."""

from __future__ import annotations

import datetime as dt
import gzip
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark.parse import gunzip, is_blank, printable
from recount_spark.source import Source, parse_file

STORES = {"LON1": {"store_id": "LON1", "country": "GB", "timezone": "Europe/London", "currency": "GBP"}}
GOOD = ('{"event_id":"e1","basket_id":"b1","store_id":"LON1","till_id":"t1","event_ts":"2026-08-15T10:00:00Z",'
        '"uploaded_at":"2026-08-15T10:00:09Z","currency":"GBP","tenders":[{"amount_minor":5}]}')
DAY = dt.date(2026, 8, 15)


class Files(unittest.TestCase):
    def test_every_member_of_a_gzip_file_is_read_and_a_limit_holds(self) -> None:
        two = gzip.compress(b"a\n") + gzip.compress(b"b\n")
        self.assertEqual(gunzip(two), b"a\nb\n")
        with self.assertRaisesRegex(ValueError, "inflates to more than"):
            gunzip(gzip.compress(b"x" * (3 << 20)), limit=1 << 20)
        with self.assertRaisesRegex(ValueError, "not a complete gzip stream"):
            gunzip(gzip.compress(b"abc" * 1000)[:-9])
        with self.assertRaisesRegex(ValueError, "empty file"):
            gunzip(b"")

    def test_lines_are_numbered_from_1_blank_and_crlf_lines_as_the_lab_reads_them(self) -> None:
        data = gzip.compress(f"{GOOD}\r\n\n \t\n\x1c\n{GOOD}\n".encode())
        rows = list(parse_file(Source(), DAY, "a.jsonl.gz", 1, data, STORES))
        self.assertEqual([r["line"] for r in rows], [1, 2, 3, 4, 5])
        self.assertEqual([r["reason"] for r in rows][:3], [None, "blank line", "blank line"])
        # U+001C is whitespace to Python's str.isspace, not to Unicode's White_Space (the lab's).
        self.assertEqual(rows[3]["reason"], "malformed JSON: not one valid JSON value")
        self.assertIsNone(rows[4]["reason"])
        self.assertTrue(is_blank("\u3000 \u00a0") and not is_blank("\x1f"))

    def test_a_file_that_cannot_be_read_whole_is_an_error_naming_it(self) -> None:
        with self.assertRaisesRegex(ValueError, r"2026-08-15/b\.jsonl\.gz: truncated or corrupt \.gz file"):
            list(parse_file(Source(), DAY, "b.jsonl.gz", 1, b"not gzip at all", STORES))

    def test_reasons_quote_text_without_control_or_bidi_characters(self) -> None:
        self.assertEqual(printable("a\x1b[2J\u202eb\u00a0c"), "a\ufffd[2J\ufffdb\u00a0c")


if __name__ == "__main__":
    unittest.main()
