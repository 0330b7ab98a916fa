"""The driver JVM's options by a command's size, and the size of a command's raw input. Plain
python3: no Spark."""

from __future__ import annotations

import datetime as dt
import os
import tempfile
import unittest
from unittest import mock

from recount_spark import cli
from recount_spark import session as sessions


class JavaOptions(unittest.TestCase):
    def test_a_short_command_gets_c1_alone_and_a_long_one_the_full_jit(self) -> None:
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("RECOUNT_SPARK_JAVA_OPTIONS", None)
            small = sessions.java_options(sessions.FULL_JIT_BYTES - 1)
            large = sessions.java_options(sessions.FULL_JIT_BYTES)
        self.assertIn("-XX:TieredStopAtLevel=1", small)
        self.assertNotIn("TieredStopAtLevel", large)
        self.assertIn("-XX:+UseParallelGC", large)

    def test_the_environment_chooses_over_the_size(self) -> None:
        with mock.patch.dict(os.environ, {"RECOUNT_SPARK_JAVA_OPTIONS": "-Xss4m"}):
            self.assertEqual(sessions.java_options(0), "-Xss4m")
            self.assertEqual(sessions.java_options(sessions.FULL_JIT_BYTES * 4), "-Xss4m")


class InputBytes(unittest.TestCase):
    def test_the_files_of_the_named_uploads_only_markers_and_other_uploads_left_out(self) -> None:
        world = tempfile.mkdtemp(prefix="recount-world-")

        def put(day: str, name: str, size: int) -> None:
            part = os.path.join(world, "pos", "events", f"upload_date={day}")
            os.makedirs(part, exist_ok=True)
            with open(os.path.join(part, name), "wb") as f:
                f.write(b"x" * size)

        put("2026-10-01", "a.jsonl.gz", 100)
        put("2026-10-01", "b.jsonl.gz", 20)
        put("2026-10-01", "_SUCCESS", 7)
        put("2026-10-02", "a.jsonl.gz", 3)
        put("2026-10-03", "a.jsonl.gz", 5000)
        got = cli.input_bytes(world, [dt.date(2026, 10, 1), dt.date(2026, 10, 2), dt.date(2026, 10, 4)])
        self.assertEqual(got, 123)


if __name__ == "__main__":
    unittest.main()
