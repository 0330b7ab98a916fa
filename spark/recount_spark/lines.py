r"""The contract's checks on a line of the contract's shape as Spark column expressions: the JVM
reads the JSON (`from_json` with an explicit schema) and judges the line, and only a line it
cannot accept goes to the Python parser (parse.parse_line) for its reason, word for word the
lab's. This is the lab's own split (crates/raw/src/raw/fast_line.rs beside slow_line.rs): a fast reader
that accepts only lines of a plain shape on which it and the careful reader cannot disagree, and
gives every other line to the careful one.

A line is accepted here only when all of this holds, each a column expression (byte searches,
Jackson's parse and integer arithmetic; one small regular expression):
- it starts with `{` and ends with `}`, and Jackson reads it, made as strict as serde_json, as
  one object and nothing after it: its last brace is replaced by a sentinel member that is read
  back only when the object ends exactly there;
- it is at most 64 KiB, opens at most 127 arrays and objects, holds no `\u` escape (so no lone
  surrogate) and no number that might be out of f64's range, which serde_json refuses (any
  exponent, or 309 digits in a row);
- each of the contract's eight fields is named exactly once in the whole line, and each string
  field as `"name":"` (a string value);
- every required field is there, not empty and at most 256 bytes;
- 1 to 9 tenders, each with one string method and one amount_minor below 10^18 in magnitude, and
  no other "method" or "amount_minor" key in the line (so no sum can overflow 64 bits);
- both instants are `YYYY-MM-DDTHH:MM:SS[.f{1,9}](Z|±HH:MM)` in years 1678..2261, a real date
  and time, second below 60, the offset below 24 hours;
- the store is known and its currency is the line's; uploaded_at's UTC date is the upload's.

Whatever fails any of these is decided by parse.parse_line, so a rare line costs Python and a
common one does not. spark/tests/test_lines.py holds the two to the same answer on the shared
corpus (tests/corpus/lines.jsonl) and thousands of mutated lines, and lands real files through
both readers, line for line."""

from __future__ import annotations

import functools
import operator
from typing import Any

from recount_spark.parse import MAX_DEPTH, MAX_ID_BYTES, MAX_LINE_BYTES
from recount_spark.parse import STRING_FIELDS as STRINGS

# The sentinel member put in place of the line's last brace: read back only when the line is one
# JSON object and nothing after it (Jackson stops at the end of the first value, and a line
# read here holds no `\\u`, so it cannot hold the sentinel itself).
SENTINEL = "\x00"
KEYS = (*STRINGS, "tenders")
# What one regular expression finds in a line, in one scan: each contract key's name (with `:"`
# when a string follows), a number that might be beyond f64, which serde_json (and Python's
# float) refuse and Jackson skips unread in an ignored field (any exponent, or 309 digits in a
# row: without an exponent only 309 integer digits reach 1e308), and any `\u` escape (a lone
# surrogate, or the sentinel). Possessive and anchored to a run's start, so that it scans each
# digit once.
HUGE_NUMBER = r"[:,\[][ \t]*+-?+[0-9]++(?:\.[0-9]++)?+[eE]|(?<![0-9])[0-9]{309}"
MARKS = rf'"(?:{"|".join(KEYS)})"(?::")?|{HUGE_NUMBER}|\\u'
# The shapes of an instant's text after its seconds, digits written as 9: a zone, after a
# fraction of 1 to 9 digits or none.
ZONES = ("Z", "+99:99", "-99:99")
INSTANT_TAILS = [f"{frac}{zone}" for frac in ["", *("." + "9" * n for n in range(1, 10))] for zone in ZONES]
# Beside the parser's limits (imported above), these two keep a sum of amounts inside 64 bits.
MAX_TENDERS = 9
MAX_AMOUNT = 10**18 - 1
NANOS = 1_000_000_000
# Jackson as strict as serde_json where Spark's defaults are not.
JSON_OPTIONS = {"allowNonNumericNumbers": "false", "allowSingleQuotes": "false", "allowComments": "false",
                "allowUnquotedFieldNames": "false", "allowNumericLeadingZeros": "false",
                "allowBackslashEscapingAnyCharacter": "false", "allowUnquotedControlChars": "false"}


def _schema() -> Any:
    from pyspark.sql import types as T

    tender = T.StructType([T.StructField("method", T.StringType()), T.StructField("amount_minor", T.LongType())])
    return T.StructType([*(T.StructField(n, T.StringType()) for n in STRINGS),
                         T.StructField("tenders", T.ArrayType(tender)), T.StructField(SENTINEL, T.IntegerType())])


def _count(text: Any, token: str) -> Any:
    """How many times `token` occurs in `text`, by bytes (no regular expression)."""
    from pyspark.sql import functions as F

    return (F.octet_length(text) - F.octet_length(F.replace(text, F.lit(token), F.lit("")))) / len(token.encode())


def _parts(text: Any, short: str) -> list[Any]:
    """An instant's text as columns `{short}_shaped` (the form this path reads, by bytes) and its
    numbers: year, month, day, hour, minute, second, the zone's hours and minutes and its sign,
    and the fraction in nanoseconds. A number is cast only where the shape says it is digits
    (the when() is inside the cast), so nothing raises under ANSI mode."""
    from pyspark.sql import functions as F

    tail = F.substring(text, 20, 64)
    nines = F.translate(text, "0123456789", "9999999999")
    shaped = F.coalesce((F.substring(nines, 1, 19) == "9999-99-99T99:99:99") & F.substring(nines, 20, 64).isin(INSTANT_TAILS), F.lit(False))
    zoned = shaped & ~text.endswith("Z")

    def num(start: int, length: int, when: Any = shaped) -> Any:
        return F.when(when, F.substring(text, start, length)).cast("long")

    sign = F.when(zoned & (F.substring(text, -6, 1) == "-"), -1).otherwise(1)
    fraction = F.when(shaped & tail.startswith("."), F.rpad(F.regexp_extract(tail, r"^\.([0-9]+)", 1), 9, "0")).cast("long")
    names = ("y", "mo", "d", "h", "mi", "s", "oh", "om")
    zone = [F.coalesce(num(-5, 2, zoned), F.lit(0)), F.coalesce(num(-2, 2, zoned), F.lit(0))]
    nums = [num(1, 4), num(6, 2), num(9, 2), num(12, 2), num(15, 2), num(18, 2), *zone]
    return [shaped.alias(f"{short}_shaped"), *(n.alias(f"{short}_{name}") for n, name in zip(nums, names, strict=True)),
            sign.alias(f"{short}_sign"), F.coalesce(fraction, F.lit(0)).alias(f"{short}_ns")]


def _instant(short: str) -> tuple[Any, Any]:
    """(whether the instant whose parts _parts made is one this path reads, its whole seconds
    since 1970 UTC): plain integer arithmetic, days from the civil date as chrono counts them."""
    from pyspark.sql import functions as F

    def c(name: str) -> Any:
        return F.col(f"{short}_{name}")

    def div(a: Any, b: int) -> Any:
        return F.floor(a / b)  # exact: every value here is far below 2^53

    y, mo, d, h, mi, s = (c(n) for n in ("y", "mo", "d", "h", "mi", "s"))
    leap = ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)
    month_days = F.when(mo == 2, F.when(leap, 29).otherwise(28)).otherwise(31 - (mo - 1) % 7 % 2)
    oh, om = c("oh"), c("om")
    offset = c("sign") * (oh * 3600 + om * 60)
    ok = F.coalesce(
        c("shaped") & y.between(1678, 2261) & mo.between(1, 12) & d.between(1, month_days)
        & (h <= 23) & (mi <= 59) & (s <= 59) & (oh <= 23) & (om <= 59),
        F.lit(False),
    )
    yy = y - F.when(mo <= 2, 1).otherwise(0)
    era = div(yy, 400)
    yoe = yy - era * 400
    doy = div(153 * ((mo + 9) % 12) + 2, 5) + d - 1
    days = era * 146097 + yoe * 365 + div(yoe, 4) - div(yoe, 100) + doy - 719468
    return ok, F.when(ok, days * 86400 + h * 3600 + mi * 60 + s - offset)


def judged(lines: Any, stores: Any) -> Any:
    """`lines` (upload_date, file_name, file_version, line, text, reason) with every field of an
    event, and `ok`: whether the line is accepted here. `stores`: store_id and currency. Built in
    steps, each a projection of the one before, so that Spark computes each value once."""
    from pyspark.sql import functions as F

    text, marks = F.col("text"), F.col("marks")
    found = lines.select("*", F.regexp_extract_all(text, F.lit(MARKS), 0).alias("marks"))

    def is_key(m: Any) -> Any:
        return m.startswith('"')

    plain = [
        F.col("reason").isNull(), text.startswith("{"), text.endswith("}"), F.octet_length(text) <= MAX_LINE_BYTES,
        # Each of the eight named once (each must be there too), the seven strings as strings.
        F.size(F.filter(marks, is_key)) == len(KEYS), F.size(F.filter(marks, lambda m: m.endswith(':"'))) == len(STRINGS),
        _count(text, "{") + _count(text, "[") <= MAX_DEPTH, F.forall(marks, is_key),
    ]
    gate = F.coalesce(functools.reduce(operator.and_, plain), F.lit(False))
    closed = F.concat(F.expr("substr(text, 1, length(text) - 1)"), F.lit(',"\\u0000":1}'))
    base = ["upload_date", "file_name", "file_version", "line", "reason", "text"]
    parsed = found.select(*base, F.when(gate, F.from_json(closed, _schema(), JSON_OPTIONS)).alias("j"))
    fields = parsed.select(*base, *(F.col(f"j.{n}").alias(n) for n in (*STRINGS, "tenders")), F.col("j").getField(SENTINEL).alias("closed"))
    return _judge(_instants(fields), stores)


def _instants(fields: Any) -> Any:
    """Both instants' parts as columns of their own, then what they say (two projections, so
    that each part is computed once)."""
    from pyspark.sql import functions as F

    parts = fields.select("*", *_parts(F.col("event_ts"), "ev"), *_parts(F.col("uploaded_at"), "up"))
    (ev_ok, ev_s), (up_ok, up_s) = _instant("ev"), _instant("up")
    return parts.select(*fields.columns, ev_ok.alias("ev_ok"), ev_s.alias("ev_s"), F.col("ev_ns"),
                        up_ok.alias("up_ok"), up_s.alias("up_s"), F.col("up_ns"))


def _judge(fields: Any, stores: Any) -> Any:
    from pyspark.sql import functions as F

    col, tenders = F.col, F.col("tenders")
    n_tenders = F.size(tenders)
    has = [F.coalesce((F.length(col(n)) > 0) & (F.octet_length(col(n)) <= MAX_ID_BYTES), F.lit(False))
           for n in ("event_id", "basket_id", "store_id", "till_id", "currency")]
    # Every tender one amount below 10^18 and one string method, and no other "method" or
    # "amount_minor" key: nine such amounts cannot overflow 64 bits, whatever their order.
    amounts_ok = F.coalesce(
        n_tenders.between(1, MAX_TENDERS)
        & F.forall(tenders, lambda t: t["amount_minor"].between(-MAX_AMOUNT, MAX_AMOUNT) & t["method"].isNotNull())
        & (_count(col("text"), '"amount_minor"') == n_tenders) & (_count(col("text"), '"method":"') == n_tenders)
        & (_count(col("text"), '"method"') == n_tenders),
        F.lit(False),
    )
    up_s = col("up_s")
    upload_day = F.date_from_unix_date(F.floor(up_s / 86400).cast("int"))
    stores = F.broadcast(stores.select(col("store_id").alias("s_id"), col("currency").alias("s_currency")))
    return fields.join(stores, col("store_id") == col("s_id"), "left").select(
        "upload_date", "file_name", "file_version", "line", "reason", "event_id", "basket_id", "store_id", "till_id",
        F.timestamp_micros(col("ev_s") * 1_000_000 + F.floor(col("ev_ns") / 1000)).alias("event_ts"),
        F.timestamp_micros(up_s * 1_000_000 + F.floor(col("up_ns") / 1000)).alias("uploaded_at"),
        (up_s * NANOS + col("up_ns")).alias("uploaded_at_ns"),
        "currency",
        F.when(amounts_ok, F.aggregate(tenders, F.lit(0).cast("long"), lambda acc, t: acc + t["amount_minor"])).alias("revenue_minor"),
        n_tenders.cast("int").alias("tenders"),
        F.coalesce(
            (col("closed") == 1) & col("s_id").isNotNull() & (col("s_currency") == col("currency")) & col("ev_ok") & col("up_ok")
            & (upload_day == col("upload_date")) & amounts_ok & functools.reduce(operator.and_, has),
            F.lit(False),
        ).alias("ok"),
        "text",
    )
