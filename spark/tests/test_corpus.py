"""The Spark driver's line parser gives the contract's verdict on every line of the shared corpus
(tests/corpus/lines.jsonl), as the lab's parser does in its own test. Plain python3, no Spark."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from recount_spark.parse import parse_line

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

    def test_the_corpus_holds_both_verdicts(self) -> None:
        with open(CORPUS, encoding="utf-8") as f:
            kinds = [next(iter(json.loads(line)["expect"])) for line in f]
        self.assertGreater(kinds.count("fields"), 30)
        self.assertGreater(kinds.count("reason"), 100)


if __name__ == "__main__":
    unittest.main()
