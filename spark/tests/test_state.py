"""The driver's words for a store correction are the lab's (raw::stores::describe_change, tested
with the same texts in src/raw/stores.rs). Plain python3."""

from __future__ import annotations

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark.state import describe_change


class StoreChanges(unittest.TestCase):
    def test_a_change_names_each_field_that_moved(self) -> None:
        london = ("GB", "Europe/London", "GBP")
        self.assertEqual(describe_change("S1", london, ("GB", "America/New_York", "GBP")),
                         "store S1: time zone Europe/London → America/New_York")
        self.assertEqual(describe_change("S1", london, ("US", "America/New_York", "USD")),
                         "store S1: country GB → US, time zone Europe/London → America/New_York, currency GBP → USD")
        self.assertEqual(describe_change("N1", (None, None, None), london), "store N1: added (GB, Europe/London, GBP)")


if __name__ == "__main__":
    unittest.main()
