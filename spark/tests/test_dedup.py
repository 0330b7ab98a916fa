"""The dedup order's shared corpus (tests/corpus/dedup.jsonl): a world written from its cases,
recounted by the driver's model reader, gives every case's winner, as the lab's SQL and polars
recount do in tests/models.rs. Plain python3, no Spark."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark import model as m

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "corpus")


def write_world(world: str) -> dict[str, int]:
    """The cases as a world: each copy on its line of its file (blank lines before it). Returns
    each key's winning copy's number."""
    shutil.copy(os.path.join(CORPUS, "dedup_model.toml"), os.path.join(world, "recount.toml"))
    files: dict[tuple[str, str], dict[int, str]] = {}
    want: dict[str, int] = {}
    with open(os.path.join(CORPUS, "dedup.jsonl"), encoding="utf-8") as f:
        for case in (json.loads(line) for line in f if line.strip()):
            for i, c in enumerate(case["copies"]):
                line = {"key": case["key"], "event_id": c["event_id"], "arrival": c["arrival"], "day": case["day"], "copy": i + 1}
                files.setdefault((c["upload_date"], c["file"]), {})[c["line"]] = json.dumps(line)
            want[case["key"]] = case["winner"] + 1
    for (upload, name), lines in files.items():
        folder = os.path.join(world, "events", f"upload_date={upload}")
        os.makedirs(folder, exist_ok=True)
        body = "\n".join(lines.get(n, "") for n in range(1, max(lines) + 1)) + "\n"
        with gzip.open(os.path.join(folder, name), "wt", encoding="utf-8") as out:
            out.write(body)
    return want


class Dedup(unittest.TestCase):
    def test_the_recount_keeps_every_case_s_winner(self) -> None:
        world = tempfile.mkdtemp()
        try:
            want = write_world(world)
            self.assertGreaterEqual(len(want), 10)
            rows = m.recount(world, m.model_of(world))
            got = {grain[0]: measures[0] for _, grain, _, measures in rows}
            self.assertEqual(got, want)
        finally:
            shutil.rmtree(world)


if __name__ == "__main__":
    unittest.main()
