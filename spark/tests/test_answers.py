"""The answers' shared schema (tests/corpus/answers.jsonl): every TypedDict of
`recount_spark.answers` has exactly the fields the schema lists, each of its type, and which the
driver may leave out; the Rust structs that read them are held to the same file
(crates/spark/src/spark/answers.rs). Plain python3, no Spark."""

from __future__ import annotations

import json
import os
import sys
import typing
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark import answers

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "tests", "corpus", "answers.jsonl")

BASE: dict[str, object] = {"int": int, "str": str, "bool": bool, "date": str}


def schema_type(text: str) -> object:
    """The Python type a schema type names: `X?` may be null, `[X]` is a list, `{X}` a map from
    text to X, a capitalised name is another answer."""
    if text.endswith("?"):
        return schema_type(text[:-1]) | None  # type: ignore[operator]
    if text.startswith("["):
        return list[schema_type(text[1:-1])]  # type: ignore[misc]
    if text.startswith("{"):
        return dict[str, schema_type(text[1:-1])]  # type: ignore[misc]
    return BASE.get(text) or getattr(answers, text)


def cases() -> list[dict[str, typing.Any]]:
    with open(CORPUS, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Answers(unittest.TestCase):
    def test_every_answer_is_in_the_schema_and_the_schema_names_no_other(self) -> None:
        typed = {n for n, v in vars(answers).items() if typing.is_typeddict(v)}
        self.assertEqual(typed, {c["answer"] for c in cases()})

    def test_each_answer_has_the_schema_s_fields_types_and_optional_keys(self) -> None:
        for c in cases():
            cls = getattr(answers, c["answer"])
            hints = typing.get_type_hints(cls)
            want = {k.rstrip("?"): schema_type(t) for k, t in c["fields"].items()}
            self.assertEqual(hints, want, c["answer"])
            optional = {k.rstrip("?") for k in c["fields"] if k.endswith("?")}
            self.assertEqual(set(cls.__optional_keys__), optional, c["answer"])
            self.assertEqual(list(hints), [k.rstrip("?") for k in c["fields"]], f"{c['answer']}: the fields in the schema's order")


if __name__ == "__main__":
    unittest.main()
