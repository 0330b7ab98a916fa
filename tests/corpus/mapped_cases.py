"""Writes tests/corpus/mapped.jsonl: the verdict on each line of a mapped source, decided here
from docs/data-contract.md section 6 (not by running either engine). Every line is read through
crates/world/src/world/shapes/kafka-connect.toml, the Kafka Connect shape's description. The lab (crates/raw/src/raw/mapped/,
`every_mapped_line_of_the_corpus_gets_its_verdict`) and the Spark driver
(spark/tests/test_corpus.py) must each give every verdict exactly.

    python3 tests/corpus/mapped_cases.py      # rewrites mapped.jsonl

Each case: {"case", "upload_date", "line", "expect": {"reason": TEXT} | {"fields": {...}}}.
Accepted fields: basket_id, event_ts in UTC to the microsecond, uploaded_at in nanoseconds since
1970, revenue_minor, tenders. The stores: LON1 (GBP), TYO1 (JPY), KWI1 (KWD)."""

import copy
import json
import os

UPLOAD = "2026-10-24"
RECEIVED = 1792836000123  # 2026-10-24T10:00:00.123Z in milliseconds
BASE = {
    "message_id": "m1",
    "transaction": {"id": "B1", "till": "T1", "completed_at": "2026-10-24T11:00:00.5+01:00", "total": "12.50", "currency": "GBP"},
    "store": {"code": "LON1"},
    "received_at": RECEIVED,
}
DROP = object()
cases = []


def line(**over):
    d = copy.deepcopy(BASE)
    for path, v in over.items():
        keys = path.split("__")
        at = d
        for k in keys[:-1]:
            at = at[k]
        if v is DROP:
            at.pop(keys[-1], None)
        else:
            at[keys[-1]] = v
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


def ok(name, text, revenue=1250, event_ts="2026-10-24T10:00:00.500000Z", up_ns=RECEIVED * 1_000_000, basket="B1"):
    cases.append({"case": name, "upload_date": UPLOAD, "line": text, "expect": {"fields": {
        "basket_id": basket, "event_ts": event_ts, "uploaded_at_ns": up_ns, "revenue_minor": revenue, "tenders": 1}}})


def bad(name, text, reason):
    cases.append({"case": name, "upload_date": UPLOAD, "line": text, "expect": {"reason": reason}})


# --- accepted ------------------------------------------------------------------------------------
ok("the usual line", line())
ok("a total as a JSON number keeps its own text", line(transaction__total=12.5))
ok("a whole total", line(transaction__total="12"), revenue=1200)
ok("zeros past the digits are exact", line(transaction__total="12.500"))
ok("a refund", line(transaction__total="-0.07"), revenue=-7)
ok("yen have no minor digits", line(transaction__total="1250", transaction__currency="JPY", store__code="TYO1"))
ok("dinars have three", line(transaction__total="1.234", transaction__currency="KWD", store__code="KWI1"), revenue=1234)
ok("an offset west of UTC", line(transaction__completed_at="2026-10-24T05:00:00-05:00"), event_ts="2026-10-24T10:00:00.000000Z")
ok("epoch milliseconds as text", line(received_at=str(RECEIVED)))
ok("a numeric basket id is its text", line(transaction__id=123456), basket="123456")
ok("a key escaped the JSON way", line().replace('"message_id"', '"message\\u005fid"'))
ok("fields the mapping does not read are skipped", line(extra={"a": [1, {"b": "}"}]}))

# --- refused, in the order the checks run -------------------------------------------------------
bad("not JSON", "{not json", "malformed JSON: not one valid JSON value")
bad("an array", "[1,2]", "malformed JSON: not an object")
bad("a mapped key twice", line().replace('"message_id":"m1"', '"message_id":"m1","message_id":"m2"'),
    "malformed JSON: duplicate field `message_id`")
bad("the basket id missing", line(transaction__id=DROP), "missing required field basket_id (transaction.id)")
bad("the basket id null", line(transaction__id=None), "missing required field basket_id (transaction.id)")
bad("the basket id empty", line(transaction__id=""), "empty required field basket_id (transaction.id)")
bad("the store not an object", line(store=7), "store_id (store.code): store is not an object")
bad("a boolean id", line(message_id=True), "event_id (message_id) is a boolean")
bad("an object for a value", line(transaction__till={"n": 1}), "till_id (transaction.till) is a list or an object, not a value")
bad("no arrival time", line(received_at=DROP), "missing required field uploaded_at (received_at)")
bad("a sale time as a number", line(transaction__completed_at=1792836000),
    "event_ts (transaction.completed_at) is a number, not an ISO-8601 text")
bad("a sale time not ISO", line(transaction__completed_at="24/10/2026 11:00"),
    "event_ts (transaction.completed_at) '24/10/2026 11:00' is not an ISO-8601 instant")
bad("a leap second", line(transaction__completed_at="2026-10-24T10:59:60+01:00"),
    "event_ts (transaction.completed_at) '2026-10-24T10:59:60+01:00' is a leap second (second 60), which recount refuses")
bad("an arrival time not a count", line(received_at="soon"),
    "uploaded_at (received_at) 'soon' is not a time since 1970 in milliseconds")
bad("an arrival time finer than a nanosecond", line(received_at="1792836000123.0000001"),
    "uploaded_at (received_at) '1792836000123.0000001' is finer than a nanosecond")
bad("an arrival time out of range", line(received_at=99999999999999999),
    "uploaded_at (received_at) '99999999999999999' is out of range")
bad("no total", line(transaction__total=DROP), "missing required field amount (transaction.total)")
bad("an unknown store", line(store__code="ZZZ9"), "unknown store_id 'ZZZ9'")
bad("another currency than the store's", line(transaction__currency="JPY"), "currency 'JPY' differs from store LON1's GBP")
bad("a comma for a point", line(transaction__total="12,50"), "amount (transaction.total): '12,50' is not a plain decimal number")
bad("an exponent", line(transaction__total="1e3"), "amount (transaction.total): '1e3' is not a plain decimal number")
bad("a plus sign", line(transaction__total="+1"), "amount (transaction.total): '+1' is not a plain decimal number")
bad("a trailing point", line(transaction__total="1."), "amount (transaction.total): '1.' is not a plain decimal number")
bad("too many decimals", line(transaction__total="12.505"),
    "amount (transaction.total): '12.505' has more decimal places than GBP's 2")
bad("decimals on yen", line(transaction__total="12.5", transaction__currency="JPY", store__code="TYO1"),
    "amount (transaction.total): '12.5' has more decimal places than JPY's 0")
bad("past 64 bits", line(transaction__total="92233720368547758.08"),
    "amount (transaction.total): '92233720368547758.08' is too large for 64-bit minor units")
bad("arrived on another day", line(received_at=RECEIVED + 86_400_000),
    "uploaded_at 2026-10-25T10:00:00.123Z is not in partition upload_date=2026-10-24")

if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mapped.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"{len(cases)} cases written to {out}")
