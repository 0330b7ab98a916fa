"""Writes tests/corpus/dedup.jsonl: which copy of a business key counts, decided here from the
contract's words (docs/data-contract.md, "Rules"), not by running either engine.

A key's copies are ordered by arrival time, then event id, then where the copy sits in the raw
zone: upload date, file name, line. An arrival is dated in its upload, so two copies of one
arrival are in one upload: the upload date never decides between copies that tie. Strings compare as their UTF-8 bytes (so "B" < "a" and
"ev-10" < "ev-9"); the first copy counts. Each case is one key's copies and the index of its
winner. An arrival is in its copy's upload (its date is the upload date), and every copy of a
case is uploaded on the case's day or the two days after it, so that all of them are in the
window of the day the case's rows are dated.

The lab (the model SQL in queries/model.sql and the polars recount in crates/raw/src/model/recount.rs, in
tests/models.rs) and the Spark driver's recount (spark/recount_spark/model.py, in
spark/tests/test_dedup.py) each land a world written from these cases and give every winner.

    python3 tests/corpus/dedup_cases.py > tests/corpus/dedup.jsonl
"""

import json

DAY = "2026-05-04"


def copy(arrival: str, event_id: str, upload: str, file: str, line: int) -> dict:
    return {"arrival": arrival, "event_id": event_id, "upload_date": upload, "file": file, "line": line}


def at(upload: str, time: str) -> str:
    return f"{upload}T{time}Z"


U0, U1, U2 = "2026-05-04", "2026-05-05", "2026-05-06"
CASES = {
    "one copy": [copy(at(U0, "08:00:00.000"), "e1", U0, "a.jsonl.gz", 1)],
    "the earlier arrival, though its line is later": [
        copy(at(U0, "09:00:00.000"), "e1", U0, "a.jsonl.gz", 2),
        copy(at(U0, "08:59:59.999"), "e2", U0, "a.jsonl.gz", 5),
    ],
    "the earlier arrival, though its upload is later": [
        copy(at(U1, "00:00:00.001"), "e1", U1, "a.jsonl.gz", 3),
        copy(at(U0, "23:59:59.999"), "e9", U0, "z.jsonl.gz", 9),
    ],
    "a microsecond apart": [
        copy(at(U0, "10:00:00.000002"), "e1", U0, "a.jsonl.gz", 4),
        copy(at(U0, "10:00:00.000001"), "e2", U0, "a.jsonl.gz", 6),
    ],
    "the same arrival: event ids by bytes, ev-10 before ev-9": [
        copy(at(U0, "11:00:00.000"), "ev-9", U0, "a.jsonl.gz", 7),
        copy(at(U0, "11:00:00.000"), "ev-10", U0, "a.jsonl.gz", 8),
    ],
    "the same arrival: upper case before lower case": [
        copy(at(U0, "12:00:00.000"), "a", U0, "a.jsonl.gz", 10),
        copy(at(U0, "12:00:00.000"), "B", U0, "a.jsonl.gz", 11),
    ],
    "the same arrival: z before an accented letter": [
        copy(at(U0, "13:00:00.000"), "\u00e9", U0, "a.jsonl.gz", 12),
        copy(at(U0, "13:00:00.000"), "z", U0, "a.jsonl.gz", 13),
    ],
    "a later upload's file name sorts first, but the earlier arrival decides": [
        copy(at(U1, "14:00:00.000"), "same", U1, "a.jsonl.gz", 14),
        copy(at(U1, "14:00:00.000"), "same", U1, "b.jsonl.gz", 1),
        copy(at(U0, "14:00:00.000"), "same", U0, "z.jsonl.gz", 15),
    ],
    "an exact tie in one upload: file names by bytes, B before a": [
        copy(at(U2, "15:00:00.000"), "same", U2, "a.jsonl.gz", 1),
        copy(at(U2, "15:00:00.000"), "same", U2, "B.jsonl.gz", 2),
    ],
    "an exact tie in one upload: f-10 before f-9": [
        copy(at(U2, "16:00:00.000"), "same", U2, "f-9.jsonl.gz", 1),
        copy(at(U2, "16:00:00.000"), "same", U2, "f-10.jsonl.gz", 3),
    ],
    "an exact tie in one file: the earlier line": [
        copy(at(U1, "17:00:00.000"), "same", U1, "c.jsonl.gz", 9),
        copy(at(U1, "17:00:00.000"), "same", U1, "c.jsonl.gz", 4),
        copy(at(U1, "17:00:00.000"), "same", U1, "c.jsonl.gz", 12),
    ],
    "decided by the last rule after three ties": [
        copy(at(U2, "18:00:00.000"), "x", U2, "d.jsonl.gz", 6),
        copy(at(U2, "18:00:00.001"), "a", U2, "d.jsonl.gz", 1),
        copy(at(U2, "18:00:00.000"), "y", U2, "d.jsonl.gz", 2),
        copy(at(U2, "18:00:00.000"), "x", U2, "d.jsonl.gz", 3),
    ],
}


def order(c: dict) -> tuple:
    # The arrival's text orders as its instant here: one zone (Z), one day, and the fractions
    # compared as numbers (a shorter fraction is padded with zeros).
    date, time = c["arrival"].rstrip("Z").split("T")
    whole, _, fraction = time.partition(".")
    return (date, whole, fraction.ljust(9, "0"), c["event_id"].encode(), c["upload_date"], c["file"].encode(), c["line"])


places = [(c["upload_date"], c["file"], c["line"]) for copies in CASES.values() for c in copies]
assert len(places) == len(set(places)), "one world holds every case: no two copies share a line"
for n, (name, copies) in enumerate(CASES.items(), 1):
    winner = min(range(len(copies)), key=lambda i: order(copies[i]))
    print(json.dumps({"case": name, "key": f"k{n:02}", "day": DAY, "copies": copies, "winner": winner}, ensure_ascii=False))
