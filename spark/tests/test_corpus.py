"""The Spark driver's line parser gives the contract's verdict on every line of the shared corpus
(tests/corpus/lines.jsonl), as the lab's parser does in its own test. Plain python3, no Spark."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import tomllib
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark.model import fingerprint_line
from recount_spark.parse import parse_line, split_lines
from recount_spark.source import _Mapped
from recount_spark.state import describe_change
from recount_spark.v2 import name_runs

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "corpus", "lines.jsonl")
STORES = {
    "LON1": {"store_id": "LON1", "country": "GB", "timezone": "Europe/London", "currency": "GBP"},
    "BLR1": {"store_id": "BLR1", "country": "IN", "timezone": "Asia/Kolkata", "currency": "INR"},
    "TYO1": {"store_id": "TYO1", "country": "JP", "timezone": "Asia/Tokyo", "currency": "JPY"},
}


def verdict(got: object) -> dict[str, object]:
    """A parse as the corpus writes its expectation."""
    if isinstance(got, str):
        return {"reason": got}
    assert isinstance(got, dict)
    fields = {k: got[k] for k in ("event_id", "basket_id", "store_id", "till_id", "currency")}
    fields["event_ts"] = got["event_ts"].astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    fields.update(uploaded_at_ns=got["uploaded_at_ns"], revenue_minor=got["revenue_minor"], tenders=got["tenders"])
    return {"fields": fields}


class Corpus(unittest.TestCase):
    def test_every_case_gets_the_contracts_verdict(self) -> None:
        with open(CORPUS, encoding="utf-8") as f:
            cases = [json.loads(line) for line in f]
        self.assertGreaterEqual(len(cases), 150)
        wrong = []
        for c in cases:
            got = verdict(parse_line(c["line"], STORES, dt.date.fromisoformat(c["upload_date"])))
            if got != c["expect"]:
                wrong.append(f"{c['case']}: expected {c['expect']}, got {got}")
        self.assertEqual(wrong, [], "\n".join(wrong))

    def test_every_mapped_case_gets_its_verdict(self) -> None:
        """tests/corpus/mapped.jsonl, read through the Kafka Connect shape's description, as the
        lab's crates/raw/src/raw/mapped.rs test reads it."""
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        with open(os.path.join(root, "crates", "world", "src", "world", "shapes", "kafka-connect.toml"), "rb") as t:
            fields = tomllib.load(t)["files"]["fields"]
        stores = {
            "LON1": {"store_id": "LON1", "country": "GB", "timezone": "Europe/London", "currency": "GBP", "digits": 2},
            "TYO1": {"store_id": "TYO1", "country": "JP", "timezone": "Asia/Tokyo", "currency": "JPY", "digits": 0},
            "KWI1": {"store_id": "KWI1", "country": "KW", "timezone": "Asia/Kuwait", "currency": "KWD", "digits": 3},
        }
        m = _Mapped(fields)
        with open(os.path.join(root, "tests", "corpus", "mapped.jsonl"), encoding="utf-8") as f:
            cases = [json.loads(line) for line in f]
        self.assertGreaterEqual(len(cases), 35)
        wrong = []
        for c in cases:
            got = m.parse_json(c["line"], stores, dt.date.fromisoformat(c["upload_date"]))
            if isinstance(got, str):
                seen: dict[str, object] = {"reason": got}
            else:
                seen = {"fields": {
                    "basket_id": got["basket_id"], "event_ts": got["event_ts"].astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                    "uploaded_at_ns": got["uploaded_at_ns"], "revenue_minor": got["revenue_minor"], "tenders": got["tenders"]}}
            if seen != c["expect"]:
                wrong.append(f"{c['case']}: expected {c['expect']}, got {seen}")
        self.assertEqual(wrong, [], "\n".join(wrong))

    def test_the_corpus_holds_both_verdicts(self) -> None:
        with open(CORPUS, encoding="utf-8") as f:
            kinds = [next(iter(json.loads(line)["expect"])) for line in f]
        self.assertGreater(kinds.count("fields"), 30)
        self.assertGreater(kinds.count("reason"), 100)


WORDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "corpus", "words.jsonl")


class Words(unittest.TestCase):
    """The words both engines write (tests/corpus/words.jsonl; the lab reads the same cases in
    crates/lab/src/lake/v2.rs): run names, a store's change, the fingerprint's line."""

    def test_every_case_gets_the_corpus_answer(self) -> None:
        with open(WORDS, encoding="utf-8") as f:
            cases = [json.loads(line) for line in f]
        rules = set()
        for c in cases:
            if c["rule"] == "name_runs":
                got = name_runs([dt.date.fromisoformat(d) for d in c["dates"]])
            elif c["rule"] == "describe_change":
                got = describe_change(c["store_id"], tuple(c["old"]), tuple(c["new"]))
            elif c["rule"] == "fingerprint_line":
                got = fingerprint_line(c["gold"], c["rows"], c["md5"])
            else:
                self.fail(f"a rule the corpus does not know: {c['rule']}")
            self.assertEqual(got, c["expect"], c)
            rules.add(c["rule"])
        self.assertEqual(rules, {"name_runs", "describe_change", "fingerprint_line"})
        self.assertGreaterEqual(len(cases), 18)


SPLIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "corpus", "split.jsonl")


class Split(unittest.TestCase):
    """A raw file's bytes as lines (tests/corpus/split.jsonl; the lab reads the same cases in
    crates/raw/src/raw/mod.rs): split at the newline byte, each line decoded on its own."""

    def test_every_case_gets_the_corpus_lines(self) -> None:
        with open(SPLIT, encoding="utf-8") as f:
            cases = [json.loads(line) for line in f]
        for c in cases:
            got = split_lines(bytes.fromhex(c["hex"]))
            lines = [{"reason": got.not_utf8[i]} if i in got.not_utf8 else {"text": t} for i, t in enumerate(got.text)]
            self.assertEqual(lines, c["lines"], c["case"])
        self.assertGreaterEqual(sum(1 for c in cases for x in c["lines"] if "reason" in x), 10)


if __name__ == "__main__":
    unittest.main()
