"""Writes tests/corpus/lines.jsonl: the contract's verdict on each line, decided here from the
contract (docs/data-contract.md, "Reading a line"), not by running either engine. The lab's parser
(crates/raw/src/raw/event.rs, tested in its unit tests) and the Spark driver's (spark/recount_spark/parse.py,
tested by spark/tests/test_corpus.py) must each give every verdict exactly.

    python3 tests/corpus/cases.py      # rewrites lines.jsonl

Each case: {"case", "upload_date", "line", "expect": {"reason": TEXT} | {"fields": {...}}}. Accepted
fields: the seven strings, event_ts in UTC to the microsecond, uploaded_at_ns, revenue_minor and
the number of tenders. Stores: LON1 (GB, GBP), BLR1 (IN, INR), TYO1 (JP, JPY)."""

import json
import os

UPLOAD = "2026-08-15"
BASE = {
    "event_id": "e1", "basket_id": "b1", "store_id": "LON1", "till_id": "t1",
    "event_ts": "2026-08-15T10:00:00.000Z", "uploaded_at": "2026-08-15T10:00:09.000Z", "currency": "GBP",
    "tenders": [{"method": "card", "amount_minor": 1250}],
}
STRINGS = ["event_id", "basket_id", "store_id", "till_id", "event_ts", "uploaded_at", "currency"]
UP_NS = 1786788009000000000  # 2026-08-15T10:00:09Z in nanoseconds since 1970
cases = []


def fields(**over):
    f = {"event_id": "e1", "basket_id": "b1", "store_id": "LON1", "till_id": "t1", "currency": "GBP",
         "event_ts": "2026-08-15T10:00:00.000000Z", "uploaded_at_ns": UP_NS, "revenue_minor": 1250, "tenders": 1}
    f.update(over)
    return f


def line(**over):
    d = dict(BASE)
    for k, v in over.items():
        if v is DROP:
            d.pop(k, None)
        else:
            d[k] = v
    return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


DROP = object()


def ok(name, text, **over):
    cases.append({"case": name, "upload_date": UPLOAD, "line": text, "expect": {"fields": fields(**over)}})


def bad(name, text, reason):
    cases.append({"case": name, "upload_date": UPLOAD, "line": text, "expect": {"reason": reason}})


# --- accepted ------------------------------------------------------------------------------------
ok("the usual line", line())
ok("split tenders past 2^31", line(tenders=[{"method": "card", "amount_minor": 3000000000}, {"method": "cash", "amount_minor": 5}]),
   revenue_minor=3000000005, tenders=2)
ok("a refund", line(tenders=[{"method": "card", "amount_minor": -500}]), revenue_minor=-500)
ok("a zero tender", line(tenders=[{"method": "card", "amount_minor": 0}]), revenue_minor=0)
ok("the largest amount", line(tenders=[{"amount_minor": 9223372036854775807}]), revenue_minor=9223372036854775807)
ok("the smallest amount", line(tenders=[{"amount_minor": -9223372036854775808}]), revenue_minor=-9223372036854775808)
ok("a sum that returns within 64 bits", line(tenders=[{"amount_minor": 9223372036854775807}, {"amount_minor": -10}]),
   revenue_minor=9223372036854775797, tenders=2)
ok("items and extra fields are ignored",
   line(items=[{"sku": "x", "qty": 1, "unit_price_minor": 1250}], extra=True, note=None), )
ok("a key repeated inside items is ignored", line()[:-1] + ',"items":[{"sku":"a","sku":"b","qty":1}]}')
ok("an unknown key given twice is ignored", line()[:-1] + ',"x":1,"x":[2]}')
ok("whitespace between every token", " \t" + json.dumps(BASE, separators=(" ,\t", " : ")).replace("[", "[ ").replace("{", "{ ") + " \t")
ok("an escape in a string", line(basket_id="b\\u00e9").replace("b\\\\u00e9", "b\\u00e9"), basket_id="bé")
ok("non-ASCII ids", line(event_id="é€", till_id="レジ1"), event_id="é€", till_id="レジ1")
ok("an offset east of UTC", line(event_ts="2026-08-15T11:00:00+01:00"))
ok("an offset west of UTC", line(event_ts="2026-08-15T04:30:00-05:30"))
ok("lower-case t and z", line(event_ts="2026-08-15t10:00:00.000z"))
ok("a space for the T", line(event_ts="2026-08-15 10:00:00.000Z"))
ok("no fraction", line(event_ts="2026-08-15T10:00:00Z"))
ok("a one-digit fraction", line(event_ts="2026-08-15T10:00:00.5Z"), event_ts="2026-08-15T10:00:00.500000Z")
ok("microseconds kept", line(event_ts="2026-08-15T10:00:00.123456Z"), event_ts="2026-08-15T10:00:00.123456Z")
ok("nanoseconds: the instant to the microsecond, the upload to the nanosecond",
   line(event_ts="2026-08-15T10:00:00.123456789Z", uploaded_at="2026-08-15T10:00:09.987654321Z"),
   event_ts="2026-08-15T10:00:00.123456Z", uploaded_at_ns=UP_NS + 987654321)
ok("a twelve-digit fraction is kept to the nanosecond", line(uploaded_at="2026-08-15T10:00:09.123456789999Z"),
   uploaded_at_ns=UP_NS + 123456789)
ok("uploaded_at with an offset, in the partition in UTC", line(uploaded_at="2026-08-16T00:30:00+01:00"),
   uploaded_at_ns=UP_NS + (13 * 3600 + 29 * 60 + 51) * 10**9)
ok("a tender's method null", line(tenders=[{"method": None, "amount_minor": 1250}]))
ok("a tender without a method", line(tenders=[{"amount_minor": 1250}]))
ok("a tender with other fields", line(tenders=[{"method": "card", "amount_minor": 1250, "last4": "1234", "x": [1, {"y": None}]}]))
ok("fields in another order", json.dumps(dict(reversed(list(BASE.items()))), separators=(",", ":")))
ok("nesting 100 deep in an ignored field", line()[:-1] + ',"deep":' + "[" * 100 + "]" * 100 + "}")
ok("brackets inside a string do not nest", line()[:-1] + ',"deep":"' + "[" * 300 + '"}')
ok("nesting 127 deep, the object included", line()[:-1] + ',"deep":' + "[" * 126 + "]" * 126 + "}")
ok("a sale dated 2099 (a run calls it future-dated)", line(event_ts="2099-01-01T10:00:00Z"), event_ts="2099-01-01T10:00:00.000000Z")
ok("the last instant nanoseconds hold", line(event_ts="2262-04-11T23:47:16.854775807Z"), event_ts="2262-04-11T23:47:16.854775Z")
ok("the first instant nanoseconds hold", line(event_ts="1677-09-21T00:12:43.145224192Z"), event_ts="1677-09-21T00:12:43.145224Z")
ok("a till_id of 256 bytes", line(till_id="t" * 256), till_id="t" * 256)
ok("yen in a Tokyo store", line(store_id="TYO1", currency="JPY", tenders=[{"amount_minor": 1091969}]),
   store_id="TYO1", currency="JPY", revenue_minor=1091969)
ok("an id with spaces inside", line(basket_id="b 1 2"), basket_id="b 1 2")
ok("the largest double in an ignored field", line()[:-1] + ',"x":1.7976931348623157e308}')
ok("a 20-digit integer in an ignored field", line()[:-1] + ',"x":99999999999999999999}')
ok("a leap day", line(event_ts="2028-02-29T10:00:00Z"), event_ts="2028-02-29T10:00:00.000000Z")
pad = 65536 - len(line()[:-1] + ',"pad":""}')
ok("a line of exactly 65536 bytes", line()[:-1] + ',"pad":"' + "p" * pad + '"}')
ok("an escaped quote and backslash in an id", line()[:-1].replace('"b1"', '"b\\"1\\\\"') + "}", basket_id='b"1\\')
ok("null for an ignored field", line(items=None))
ok("a time stamp exactly at midnight UTC", line(event_ts="2026-08-15T00:00:00Z"), event_ts="2026-08-15T00:00:00.000000Z")

# --- not one valid JSON value --------------------------------------------------------------------
NOT_JSON = "malformed JSON: not one valid JSON value"
for name, text in [
    ("not JSON at all", "{not json"),
    ("an empty line", ""),
    ("cut short", line()[:-10]),
    ("a trailing comma", line()[:-1] + ",}"),
    ("text after the object", line() + " x"),
    ("two objects", line() + line()),
    ("NaN in an ignored field", line()[:-1] + ',"x":NaN}'),
    ("Infinity in an ignored field", line()[:-1] + ',"x":Infinity}'),
    ("single quotes", line().replace('"', "'")),
    ("a lone surrogate in an id", line()[:-1].replace('"b1"', '"b\\ud800"') + "}"),
    ("a lone surrogate in an ignored field", line()[:-1] + ',"x":"\\udc00"}'),
    ("nesting 200 deep", line()[:-1] + ',"deep":' + "[" * 200 + "]" * 200 + "}"),
    ("nesting 128 deep, the object included", line()[:-1] + ',"deep":' + "[" * 127 + "]" * 127 + "}"),
    ("a byte-order mark", "\ufeff" + line()),
    ("a raw control character in a string", line().replace('"b1"', '"b\u00011"')),
    ("an invalid escape", line().replace('"b1"', '"b\\x1"')),
    ("a double out of range", line()[:-1] + ',"x":1e309}'),
    ("a 400-digit integer", line()[:-1] + ',"x":' + "9" * 400 + "}"),
    ("a leading zero", line()[:-1] + ',"x":012}'),
    ("a bare word", line()[:-1] + ',"x":nul}'),
    ("an unquoted key", line()[:-1] + ",x:1}"),
    ("a lone minus", line()[:-1] + ',"x":-}'),
]:
    bad(name, text, NOT_JSON)

# --- not an object -------------------------------------------------------------------------------
for name, text in [("an array", "[]"), ("a number", "5"), ("a string", '"event"'), ("null", "null"), ("true", "true"),
                   ("an array of the event", "[" + line() + "]")]:
    bad(f"{name}, not an object", text, "malformed JSON: not an object")

# --- a field the contract reads, given twice -----------------------------------------------------
bad("event_id twice", line()[:-1] + ',"event_id":"e2"}', "malformed JSON: duplicate field `event_id`")
bad("currency twice, the first null", '{"currency":null,' + line()[1:], "malformed JSON: duplicate field `currency`")
bad("tenders twice", line()[:-1] + ',"tenders":[]}', "malformed JSON: duplicate field `tenders`")
bad("the first key repeated, in line order", '{"till_id":"a","basket_id":"x",' + line()[1:], "malformed JSON: duplicate field `basket_id`")
bad("a tender's method twice", line(tenders=[{"method": "card", "amount_minor": 1}]).replace('"method":"card"', '"method":"card","method":"cash"'),
    "malformed JSON: tender 1 has a duplicate field `method`")
bad("the second tender's amount twice", line(tenders=[{"amount_minor": 1}, {"amount_minor": 2}])[:-3] + ',"amount_minor":3}]}',
    "malformed JSON: tender 2 has a duplicate field `amount_minor`")

# --- a field of another type ---------------------------------------------------------------------
for f in STRINGS:
    bad(f"{f} a number", line(**{f: 5}), f"malformed JSON: {f} is not a string")
    bad(f"{f} an object", line(**{f: {"v": "x"}}), f"malformed JSON: {f} is not a string")
bad("a boolean store_id", line(store_id=True), "malformed JSON: store_id is not a string")
bad("an array event_ts", line(event_ts=["2026-08-15T10:00:00Z"]), "malformed JSON: event_ts is not a string")
bad("the type of the first field in the contract's order", line(currency=1, event_id=2), "malformed JSON: event_id is not a string")
bad("a type fault before a missing field", line(basket_id=DROP, till_id=7), "malformed JSON: till_id is not a string")
bad("tenders an object", line(tenders={"amount_minor": 1}), "malformed JSON: tenders is not an array")
bad("tenders a string", line(tenders="1250"), "malformed JSON: tenders is not an array")
bad("tenders a number", line(tenders=1250), "malformed JSON: tenders is not an array")
bad("a tender a number", line(tenders=[1250]), "malformed JSON: tender 1 is not an object")
bad("the second tender null", line(tenders=[{"amount_minor": 1}, None]), "malformed JSON: tender 2 is not an object")
bad("a tender an array", line(tenders=[[1250]]), "malformed JSON: tender 1 is not an object")
bad("a method a number", line(tenders=[{"method": 4, "amount_minor": 1}]), "malformed JSON: tender 1: method is not a string")
bad("an amount as text", line(tenders=[{"amount_minor": "1250"}]), "malformed JSON: tender 1: amount_minor is not a number")
bad("an amount true", line(tenders=[{"amount_minor": True}]), "malformed JSON: tender 1: amount_minor is not a number")
bad("an amount an array", line(tenders=[{"amount_minor": [1]}]), "malformed JSON: tender 1: amount_minor is not a number")

# --- missing, null or empty ----------------------------------------------------------------------
for f in STRINGS:
    bad(f"{f} missing", line(**{f: DROP}), f"missing required field {f}")
    bad(f"{f} null", line(**{f: None}), f"missing required field {f}")
    bad(f"{f} empty", line(**{f: ""}), f"empty required field {f}")
bad("a missing field before a bad instant", line(currency=DROP, event_ts="yesterday"), "missing required field currency")

# --- instants ------------------------------------------------------------------------------------
def not_instant(name, value, field="event_ts"):
    bad(name, line(**{field: value}), f"{field} '{value}' is not an ISO-8601 instant")


not_instant("a word", "yesterday")
not_instant("a date alone", "2026-08-15")
not_instant("no zone", "2026-08-15T10:00:00")
not_instant("month 13", "2026-13-15T10:00:00Z")
not_instant("day 32", "2026-08-32T10:00:00Z")
not_instant("February 30", "2026-02-30T10:00:00Z")
not_instant("February 29 of a common year", "2026-02-29T10:00:00Z")
not_instant("hour 24", "2026-08-15T24:00:00Z")
not_instant("minute 60", "2026-08-15T10:60:00Z")
not_instant("an offset of 24 hours", "2026-08-15T10:00:00+24:00")
not_instant("an offset of 60 minutes", "2026-08-15T10:00:00+01:60")
not_instant("an offset without its colon", "2026-08-15T10:00:00+0100")
not_instant("a two-digit year", "26-08-15T10:00:00Z")
not_instant("a point and no digits", "2026-08-15T10:00:00.Z")
not_instant("a comma for the point", "2026-08-15T10:00:00,5Z")
not_instant("a leading space", " 2026-08-15T10:00:00Z")
not_instant("a trailing space", "2026-08-15T10:00:00Z ")
not_instant("year 0", "0000-08-15T10:00:00Z")
not_instant("a missing second", "2026-08-15T10:00Z")
not_instant("uploaded_at a word", "soon", field="uploaded_at")
bad("fullwidth digits", line(event_ts="２０２６-08-15T10:00:00Z"), "event_ts '２０２６-08-15T10:00:00Z' is not an ISO-8601 instant")
bad("Arabic-Indic digits", line(event_ts="٢٠٢٦-08-15T10:00:00Z"), "event_ts '٢٠٢٦-08-15T10:00:00Z' is not an ISO-8601 instant")
bad("a trailing newline", line(event_ts="2026-08-15T10:00:00Z\n"), "event_ts '2026-08-15T10:00:00Z\ufffd' is not an ISO-8601 instant")
bad("a leap second", line(event_ts="2026-12-31T23:59:60Z"),
    "event_ts '2026-12-31T23:59:60Z' is a leap second (second 60), which recount refuses")
bad("a leap second with an offset", line(event_ts="2027-01-01T00:59:60+01:00"),
    "event_ts '2027-01-01T00:59:60+01:00' is a leap second (second 60), which recount refuses")
bad("a leap second in uploaded_at", line(uploaded_at="2026-08-15T23:59:60.500Z"),
    "uploaded_at '2026-08-15T23:59:60.500Z' is a leap second (second 60), which recount refuses")
bad("before nanoseconds can hold", line(event_ts="1677-09-21T00:12:43.145224191Z"),
    "event_ts '1677-09-21T00:12:43.145224191Z' is out of range")
bad("after nanoseconds can hold", line(event_ts="2262-04-11T23:47:16.854775808Z"),
    "event_ts '2262-04-11T23:47:16.854775808Z' is out of range")
bad("year 1 and an offset east", line(event_ts="0001-01-01T00:00:00+01:00"), "event_ts '0001-01-01T00:00:00+01:00' is out of range")
bad("year 9999 and an offset west", line(event_ts="9999-12-31T23:00:00-02:00"), "event_ts '9999-12-31T23:00:00-02:00' is out of range")
bad("a control character in an instant", line(event_ts="2026-08-15T10:00:00\u001bZ"),
    "event_ts '2026-08-15T10:00:00\ufffdZ' is not an ISO-8601 instant")
bad("event_ts judged before uploaded_at", line(event_ts="x", uploaded_at="y"), "event_ts 'x' is not an ISO-8601 instant")

# --- lengths -------------------------------------------------------------------------------------
bad("a line of 65537 bytes", line()[:-1] + ',"pad":"' + "p" * (pad + 1) + '"}', "line of 65537 bytes, longer than the 65536 recount parses")
for f in ["event_id", "basket_id", "store_id", "till_id", "currency"]:
    bad(f"{f} of 257 bytes", line(**{f: "x" * 257}), f"{f} of 257 bytes, longer than the 256 recount keeps")
bad("bytes, not characters", line(basket_id="é" * 129), "basket_id of 258 bytes, longer than the 256 recount keeps")

# --- tenders -------------------------------------------------------------------------------------
bad("no tenders", line(tenders=DROP), "missing required field tenders")
bad("tenders null", line(tenders=None), "missing required field tenders")
bad("tenders empty", line(tenders=[]), "tenders is empty: a basket needs at least one payment")
bad("a tender without an amount", line(tenders=[{"method": "card"}]), "tender 1: missing amount_minor")
bad("an amount null", line(tenders=[{"amount_minor": 1}, {"amount_minor": None}]), "tender 2: missing amount_minor")
for name, v in [("a fraction", "12.5"), ("an exponent", "1e2"), ("a point zero", "12.0"), ("2^63", "9223372036854775808"),
                ("below -2^63", "-9223372036854775809"), ("a 20-digit amount", "99999999999999999999")]:
    bad(f"an amount with {name}", line(tenders=[{"amount_minor": 0}]).replace('"amount_minor":0', f'"amount_minor":{v}'),
        "tender 1: amount_minor is not a 64-bit integer")
bad("a sum past 2^63", line(tenders=[{"amount_minor": 9223372036854775807}, {"amount_minor": 1}]), "tender 2: revenue overflows 64 bits")
bad("a sum below -2^63", line(tenders=[{"amount_minor": -9223372036854775808}, {"amount_minor": -1}]), "tender 2: revenue overflows 64 bits")

# --- the store, the currency, the partition ------------------------------------------------------
bad("an unknown store", line(store_id="ZZZ9"), "unknown store_id 'ZZZ9'")
bad("an unknown store with an escape in its id", line(store_id="Z\u001b[2JZ"), "unknown store_id 'Z\ufffd[2JZ'")
bad("an unknown store with a bidi control", line(store_id="Z\u202eZ"), "unknown store_id 'Z\ufffdZ'")
bad("another currency than the store's", line(currency="INR"), "currency 'INR' differs from store LON1's GBP")
bad("a currency in lower case", line(currency="gbp"), "currency 'gbp' differs from store LON1's GBP")
bad("uploaded the next day", line(uploaded_at="2026-08-16T00:00:09Z"),
    "uploaded_at 2026-08-16T00:00:09.000Z is not in partition upload_date=2026-08-15")
bad("uploaded the day before in UTC", line(uploaded_at="2026-08-15T00:30:00.250+01:00"),
    "uploaded_at 2026-08-14T23:30:00.250Z is not in partition upload_date=2026-08-15")
bad("the store judged before the partition", line(store_id="ZZZ9", uploaded_at="2026-08-20T00:00:00Z"), "unknown store_id 'ZZZ9'")

if __name__ == "__main__":
    names = [c["case"] for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"case names must be unique: {dup}"
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lines.jsonl")
    with open(out, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases written to {out}")
