"""The driver's words for a store correction are the lab's (raw::stores::describe_change, tested
with the same texts in crates/raw/src/raw/stores.rs), and so is its fingerprint's rule for joining gold's
text. Plain python3."""

from __future__ import annotations

import hashlib
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark.state import describe_change, text_md5


class StoreChanges(unittest.TestCase):
    def test_a_change_names_each_field_that_moved(self) -> None:
        london = ("GB", "Europe/London", "GBP")
        self.assertEqual(describe_change("S1", london, ("GB", "America/New_York", "GBP")),
                         "store S1: time zone Europe/London → America/New_York")
        self.assertEqual(describe_change("S1", london, ("US", "America/New_York", "USD")),
                         "store S1: country GB → US, time zone Europe/London → America/New_York, currency GBP → USD")
        self.assertEqual(describe_change("N1", (None, None, None), london), "store N1: added (GB, Europe/London, GBP)")


class Fingerprint(unittest.TestCase):
    def test_the_dates_text_is_joined_by_newlines_and_an_empty_date_adds_nothing(self) -> None:
        whole = "2026-10-01|S1|GB|GBP|3|1200\n2026-10-01|S2|GB|GBP|1|50\n2026-10-03|S1|GB|GBP|2|700"
        chunks = [(2, "2026-10-01|S1|GB|GBP|3|1200\n2026-10-01|S2|GB|GBP|1|50"), (0, ""), (1, "2026-10-03|S1|GB|GBP|2|700")]
        self.assertEqual(text_md5(chunks), (3, hashlib.md5(whole.encode()).hexdigest()))
        self.assertEqual(text_md5([]), (0, hashlib.md5(b"").hexdigest()))


if __name__ == "__main__":
    unittest.main()
