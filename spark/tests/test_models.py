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


class MeasuresPastLimit(unittest.TestCase):
    """A landing is refused when a measure's total over every copy of a date and grain would leave
    64 bits, with the lab's words (crates/lab/src/lake/model_land.rs; tests/models.rs holds the
    lab's)."""

    def test_a_total_past_64_bits_is_refused_naming_the_date_grain_measure_and_file(self) -> None:
        from recount_spark.model_warehouse import past_limit

        model = {"grain": ["depot"], "measures": [{"name": "parcels", "of": "count"}, {"name": "weight_g", "of": "items[].grams"}]}
        day = dt.date(2026, 3, 9)

        def rec(file: str, grams: int) -> tuple[object, ...]:
            return (dt.date(2026, 3, 10), file, 1, 1, "k", "e", 0, day, "north", None, None, None,
                    None, None, None, None, 1, grams, None, None, None, None, 0)

        self.assertIsNone(past_limit(model, [rec("a.jsonl.gz", 5 * 10**18)], [], set()))
        why = past_limit(model, [rec("b.jsonl.gz", 5 * 10**18), rec("a.jsonl.gz", 5 * 10**18)], [], set())
        self.assertEqual(why, "business date 2026-03-09, depot north: weight_g over every landed copy would total 10000000000000000000, "
                              "past what 64 bits hold (file upload_date=2026-03-10/a.jsonl.gz); nothing was landed")
        # The warehouse's own copies count, but not those of a file the landing replaces.
        old = {"business_date": day, "g1": "north", "g2": None, "g3": None, "g4": None, "upload_date": dt.date(2026, 3, 9),
               "file_name": "old.jsonl.gz", "t1": 1, "t2": 5 * 10**18, "t3": None, "t4": None, "t5": None, "t6": None}
        self.assertIsNotNone(past_limit(model, [rec("a.jsonl.gz", 5 * 10**18)], [old], set()))
        self.assertIsNone(past_limit(model, [rec("a.jsonl.gz", 5 * 10**18)], [old], {(dt.date(2026, 3, 9), "old.jsonl.gz")}))


if __name__ == "__main__":
    unittest.main()
