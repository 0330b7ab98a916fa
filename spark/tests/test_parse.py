"""The driver's file reading (recount_spark.parse): gzip members and limits, blank lines, CRLF,
and a file that cannot be read whole; instants written in UTC. Plain python3."""

from __future__ import annotations

import datetime as dt
import gzip
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark.parse import gunzip, instant, is_blank, printable
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


class Instants(unittest.TestCase):
    def test_a_time_in_utc_reads_as_the_same_time_written_with_offset_zero(self) -> None:
        # "Z" takes a path of its own (integers, no datetime arithmetic); "+00:00" the general
        # one. Every answer must agree: the instant, or the reason for the same text.
        days = ["1677-09-21", "1677-09-22", "1970-01-01", "1969-12-31", "2024-02-29", "2026-02-29", "2026-08-15",
                "2262-04-11", "2262-04-12", "0001-01-01", "9999-12-31", "2026-13-01", "2026-04-31"]
        times = ["00:00:00", "00:12:43", "23:47:16", "23:59:59", "23:59:60", "24:00:00", "12:60:00"]
        fractions = ["", ".5", ".145224191", ".8547758091", ".000000001"]
        seen = set()
        for day in days:
            for time_ in times:
                for frac in fractions:
                    text = f"{day}T{time_}{frac}"
                    z, zero = instant(text + "Z", "event_ts"), instant(text + "+00:00", "event_ts")
                    if isinstance(zero, str):
                        self.assertEqual(z, zero.replace("+00:00'", "Z'"), text)
                    else:
                        self.assertEqual(z, zero, text)
                        self.assertEqual(zero[0].isoformat()[:19], text[:19], text)
                    seen.add("ok" if isinstance(z, tuple) else z.split("' ", 1)[1])
        self.assertEqual(seen, {"ok", "is not an ISO-8601 instant", "is out of range",
                                "is a leap second (second 60), which recount refuses"})
        self.assertEqual(instant("1970-01-01T00:00:01.5Z", "x")[1], 1_500_000_000)
        self.assertEqual(instant("1969-12-31T23:59:59.000000001Z", "x")[1], -999_999_999)


if __name__ == "__main__":
    unittest.main()
