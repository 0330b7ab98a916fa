"""The Spark SQL loader (recount_spark.sql) on the real files and on small ones. Plain python3."""

from __future__ import annotations

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark.sql import load_queries

QUERIES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "queries", "spark")


def write(files: dict[str, str]) -> str:
    d = tempfile.mkdtemp(prefix="recount-sql-")
    for name, text in files.items():
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(text)
    return d


def lambda_calls(text: str) -> list[str]:
    """The text of each call that holds a lambda (`->`): from the function's name to its closing
    parenthesis."""
    calls = []
    for at in (i for i in range(len(text)) if text.startswith("->", i)):
        depth, start = 0, at
        while start > 0 and not (text[start - 1] == "(" and depth == 0):
            start -= 1
            depth += {")": 1, "(": -1}.get(text[start], 0)
        end, depth = at, 0
        while end < len(text) and not (text[end] == ")" and depth == 0):
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        name = start - 1
        while name > 0 and (text[name - 1].isalnum() or text[name - 1] == "_"):
            name -= 1
        calls.append(text[name:end + 1])
    return calls


class Loader(unittest.TestCase):
    def test_the_real_files_load_with_every_define_put_in(self) -> None:
        q = load_queries(QUERIES)
        self.assertEqual(sorted(q), ["fingerprint", "land", "model", "schema", "v2"])
        for file, blocks in q.items():
            self.assertTrue(blocks, file)
            for name, text in blocks.items():
                self.assertNotIn("@", text, f"{file}.{name}: a define left unexpanded")
                self.assertFalse(text.rstrip().endswith(";"), f"{file}.{name}")
        self.assertIn("THEN datediff(upload_date, business_date) END) <= :late_days", q["v2"]["silver_rows"], "the window, nested")
        self.assertIn(":rules", q["v2"]["input_hashes"], "every input hash covers the rules' version")

    def test_no_lambda_reads_a_bound_parameter(self) -> None:
        # Spark folds a parameter's expression into a literal when it plans a statement, but never
        # one inside a lambda: transform(split(:dates, ','), x -> to_date(x)) parsed every date
        # again for every row (about 50 s of the full world's one pass). A list is a cast instead.
        for file, blocks in load_queries(QUERIES).items():
            for name, text in blocks.items():
                for call in lambda_calls(text):
                    self.assertNotRegex(call, r"(?<![:\w]):[a-z_]+", f"{file}.{name}: a lambda over a parameter: {call}")
        self.assertEqual(lambda_calls("SELECT transform(split(:d, ','), x -> to_date(x)) FROM t"),
                         ["transform(split(:d, ','), x -> to_date(x))"])

    def test_a_define_is_put_in_as_written_and_comments_are_left_out(self) -> None:
        d = write({"a.sql": "-- define: order\n-- the order\nx, y\n\n-- name: one\n-- a comment\nSELECT 1 ORDER BY @order;\n",
                   "b.sql": "-- name: two\nSELECT * FROM t WHERE @order IS NOT NULL\n"})
        q = load_queries(d)
        self.assertEqual(q["a"]["one"], "SELECT 1 ORDER BY x, y")
        self.assertEqual(q["b"]["two"], "SELECT * FROM t WHERE x, y IS NOT NULL", "defines are shared across files, unwrapped")

    def test_a_define_may_use_another_but_not_itself(self) -> None:
        q = load_queries(write({"a.sql": "-- define: days\n(d - u)\n-- define: inside\n(@days <= :late)\n-- name: one\nSELECT @inside\n"}))
        self.assertEqual(q["a"]["one"], "SELECT ((d - u) <= :late)")
        with self.assertRaisesRegex(ValueError, r"a\.sql one: @loop is put in within itself"):
            load_queries(write({"a.sql": "-- define: loop\n(@loop)\n-- name: one\nSELECT @loop\n"}))

    def test_an_undefined_name_or_a_name_written_twice_is_an_error_naming_it(self) -> None:
        with self.assertRaisesRegex(ValueError, r"a\.sql one: @nope is defined by no"):
            load_queries(write({"a.sql": "-- name: one\nSELECT @nope\n"}))
        with self.assertRaisesRegex(ValueError, r"a\.sql: `-- name: one` is written twice"):
            load_queries(write({"a.sql": "-- name: one\nSELECT 1\n-- name: one\nSELECT 2\n"}))


if __name__ == "__main__":
    unittest.main()
