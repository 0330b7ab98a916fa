"""The lateness window's shared corpus (tests/corpus/window.jsonl): the driver's `fate` gives
every verdict, as the lab's crates/core/src/rules.rs does in tests/models.rs. Plain python3, no Spark."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark.model_warehouse import fate

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "corpus", "window.jsonl")


class Window(unittest.TestCase):
    def test_every_case_gets_the_corpus_verdict(self) -> None:
        with open(CORPUS, encoding="utf-8") as f:
            cases = [json.loads(line) for line in f if line.strip()]
        self.assertGreater(len(cases), 100)
        for c in cases:
            got = fate(dt.date.fromisoformat(c["upload"]), dt.date.fromisoformat(c["business_date"]), c["late_days"])
            self.assertEqual(got, c["fate"], c)


if __name__ == "__main__":
    unittest.main()
