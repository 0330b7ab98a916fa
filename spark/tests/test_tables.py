"""How a write is laid out by its number of partitions (recount_spark.tables.writer). Plain
python3: a recording stand-in for a DataFrame, no Spark."""

from __future__ import annotations

import unittest
from typing import Any

from recount_spark.tables import FANOUT_PARTITIONS, writer


class Recorder:
    """Records the calls a writer is built with; every call returns the recorder."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any) -> Recorder:
            self.calls.append((name, args))
            return self

        return call


class Writers(unittest.TestCase):
    def test_a_few_partitions_fan_out_and_many_are_written_one_at_a_time_per_task(self) -> None:
        few = Recorder()
        writer(few, "lake.recount.t", "business_date", FANOUT_PARTITIONS)
        self.assertEqual(few.calls, [("writeTo", ("lake.recount.t",))])
        many = Recorder()
        writer(many, "lake.recount.t", "business_date", FANOUT_PARTITIONS + 1)
        self.assertEqual(many.calls, [("sortWithinPartitions", ("business_date",)), ("writeTo", ("lake.recount.t",)),
                                      ("option", ("fanout-enabled", "false"))])


if __name__ == "__main__":
    unittest.main()
