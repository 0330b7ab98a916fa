"""The snapshot properties' shared corpus (tests/corpus/properties.jsonl): the driver writes
exactly the names it lists, each through `tables.prop`, as the lab's reader (crates/spark/src/warehouse/props.rs)
reads those it marks `lab_reads`. Plain python3, no Spark."""

from __future__ import annotations

import glob
import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark.tables import KEYS, PROP, prop

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "tests", "corpus", "properties.jsonl")


class Properties(unittest.TestCase):
    def test_the_driver_s_names_are_the_corpus_s(self) -> None:
        with open(CORPUS, encoding="utf-8") as f:
            cases = [json.loads(line) for line in f if line.strip()]
        self.assertEqual({PROP + k for k in KEYS}, {c["key"] for c in cases})
        for c in cases:
            self.assertEqual(c["key"].endswith("."), c["prefix"], c)
            self.assertEqual(prop(c["key"].removeprefix(PROP)), c["key"])
        with self.assertRaises(ValueError):
            prop("late_days")

    def test_every_property_the_driver_writes_goes_through_prop(self) -> None:
        named = re.compile(r'PROP \+ "|f"\{PROP\}[a-z]')
        for path in glob.glob(os.path.join(HERE, "..", "recount_spark", "*.py")):
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    self.assertIsNone(named.search(line), f"{path}:{n} names a property without tables.prop: {line.strip()}")


if __name__ == "__main__":
    unittest.main()
