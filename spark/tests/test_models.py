"""The Spark driver's model reader gives the manufacturing model's verdict on every line of the
shared corpus (tests/corpus/models.jsonl), as the lab's reader does in tests/models.rs. Plain
python3, no Spark."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark.model import MANUFACTURING, read_line

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "corpus", "models.jsonl")
PLANTS: dict[str, tuple[str, list[str]]] = {
    "plant-a": ("Europe/Berlin", []), "plant-b": ("America/Chicago", []), "plant-c": ("Asia/Kolkata", []),
}


class ModelCorpus(unittest.TestCase):
    def test_every_case_gets_the_corpus_verdict(self) -> None:
        with open(CORPUS, encoding="utf-8") as f:
            cases = [json.loads(line) for line in f]
        self.assertGreater(len(cases), 25)
        self.assertGreaterEqual(sum(1 for c in cases if "model" in c), 10)
        for c in cases:
            with self.subTest(case=c["case"]):
                got = read_line(c.get("model", MANUFACTURING), PLANTS, c["line"], dt.date.fromisoformat(c["upload_date"]))
                want = c["expect"]
                if "reason" in want:
                    self.assertEqual(got, want["reason"])
                elif "reason_starts" in want:
                    self.assertIsInstance(got, str)
                    assert isinstance(got, str)
                    self.assertTrue(got.startswith(want["reason_starts"]), got)
                else:
                    self.assertEqual(got, want["record"])


if __name__ == "__main__":
    unittest.main()
