"""The contract's validation of one raw line, and of a file's bytes: the same verdicts and
reason texts as the lab's parser (src/raw/event.rs), held together by tests/corpus/lines.jsonl.
No Spark here: the executors run it, and plain python3 tests it."""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import os
import re
import unicodedata
import zlib
from collections.abc import Iterator
from typing import Any

# The same limits as the Rust parser (src/raw/mod.rs): a file, a line, an id.
MAX_INFLATED_BYTES = 256 << 20
MAX_LINE_BYTES = 64 << 10
MAX_ID_BYTES = 256
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.jsonl\.gz$")

# ASCII digits only, and the whole text (fullmatch): no Unicode digits, no trailing newline.
INSTANT = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

Stores = dict[str, dict[str, str]]
# A parsed line: its fields, or the quarantine reason.
Parsed = dict[str, Any] | str


def printable(text: str) -> str:
    """Text as a reason quotes it: control (Cc) and bidi characters replaced with U+FFFD, as the
    lab's sanitize::for_terminal does."""
    return "".join("\ufffd" if (unicodedata.category(c) == "Cc" or _is_bidi(c)) else c for c in text)


def _is_bidi(c: str) -> bool:
    return c in "\u061c\u200e\u200f" or "\u202a" <= c <= "\u202e" or "\u2066" <= c <= "\u2069"


# Unicode's White_Space property, which the lab's `str::trim` uses to tell a blank line: Python's
# str.isspace counts U+001C..U+001F too, so it is not used.
WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def instant(text: str, name: str) -> tuple[dt.datetime, int] | str:
    """An instant as the contract writes it, as (aware datetime, nanoseconds since 1970), or the
    quarantine reason (the lab's raw::event::instant, word for word)."""
    m = INSTANT.fullmatch(text)
    bad = f"{name} '{printable(text)}' is not an ISO-8601 instant"
    if not m:
        return bad
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    frac, zone = m.group(7), m.group(8)
    offset = dt.timedelta(0)
    if zone not in ("Z", "z"):
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            return bad
        offset = (1 if zone[0] == "+" else -1) * dt.timedelta(hours=zh, minutes=zm)
    if s == 60:
        return f"{name} '{printable(text)}' is a leap second (second 60), which recount refuses"
    try:
        local = dt.datetime(y, mo, d, h, mi, s, tzinfo=dt.UTC)
    except ValueError:
        return bad
    out_of_range = f"{name} '{printable(text)}' is out of range"
    try:
        t = local - offset
    except OverflowError:
        return out_of_range
    nanos_frac = int((frac[1:] + "000000000")[:9]) if frac else 0
    ns = (t - EPOCH) // dt.timedelta(seconds=1) * 1_000_000_000 + nanos_frac
    # Kept as nanoseconds since 1970, as the lab does: 1677..2262 only.
    if not (I64_MIN <= ns <= I64_MAX):
        return out_of_range
    return t + dt.timedelta(microseconds=nanos_frac // 1000), ns


class _Object(dict[str, Any]):
    """A JSON object, remembering its keys that were given more than once, in line order."""

    dups: list[str]


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    out = _Object()
    out.dups = []
    for k, v in pairs:
        if k in out:
            out.dups.append(k)
        else:
            out[k] = v
    return out


class _Invalid(ValueError):
    pass


def _no_constant(name: str) -> Any:
    raise _Invalid(name)  # NaN, Infinity: not JSON


def _float(text: str) -> float:
    x = float(text)
    if math.isinf(x):
        raise _Invalid(text)  # serde_json refuses a number out of f64's range
    return x


def _int(text: str) -> int:
    if len(text) > 20 and math.isinf(float(text)):
        raise _Invalid(text)
    return int(text)


# serde_json refuses nesting 128 deep; Python's json goes deeper.
MAX_DEPTH = 127


def _too_deep(text: str) -> bool:
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return False
    depth, in_string, escaped = 0, False, False
    for c in text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif c in "]}":
            depth -= 1
    return False


def _lone_surrogate(v: Any) -> bool:
    """Whether any string of the value (keys too) holds a lone surrogate, which serde_json refuses."""
    if isinstance(v, str):
        return any("\ud800" <= c <= "\udfff" for c in v)
    if isinstance(v, dict):
        return any(_lone_surrogate(k) or _lone_surrogate(x) for k, x in v.items())
    if isinstance(v, list):
        return any(_lone_surrogate(x) for x in v)
    return False


STRING_FIELDS = ("event_id", "basket_id", "store_id", "till_id", "event_ts", "uploaded_at", "currency")


def _structure(raw: Any) -> str | None:
    """The structural reason a parsed line is refused, in the contract's order (slow_line.rs)."""
    if not isinstance(raw, dict):
        return "malformed JSON: not an object"
    dup = next((k for k in getattr(raw, "dups", []) if k in STRING_FIELDS or k == "tenders"), None)
    if dup is not None:
        return f"malformed JSON: duplicate field `{dup}`"
    for name in STRING_FIELDS:
        v = raw.get(name)
        if v is not None and not isinstance(v, str):
            return f"malformed JSON: {name} is not a string"
    tenders = raw.get("tenders")
    if tenders is None:
        return None
    if not isinstance(tenders, list):
        return "malformed JSON: tenders is not an array"
    for n, t in enumerate(tenders, 1):
        if not isinstance(t, dict):
            return f"malformed JSON: tender {n} is not an object"
        tdup = next((k for k in getattr(t, "dups", []) if k in ("method", "amount_minor")), None)
        if tdup is not None:
            return f"malformed JSON: tender {n} has a duplicate field `{tdup}`"
        method = t.get("method")
        if method is not None and not isinstance(method, str):
            return f"malformed JSON: tender {n}: method is not a string"
        amount = t.get("amount_minor")
        if amount is not None and (isinstance(amount, bool) or not isinstance(amount, (int, float))):
            return f"malformed JSON: tender {n}: amount_minor is not a number"
    return None


def parse_line(text: str, stores: Stores, upload_date: dt.date) -> Parsed:
    """One line against the contract: a dict of the row's fields, or a quarantine reason (str),
    word for word the lab's (src/raw/event.rs)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_LINE_BYTES:
        return f"line of {size} bytes, longer than the {MAX_LINE_BYTES} recount parses"
    try:
        if _too_deep(text):
            raise _Invalid("too deep")
        raw = json.loads(text, object_pairs_hook=_object, parse_constant=_no_constant, parse_float=_float, parse_int=_int)
        if "\\u" in text and _lone_surrogate(raw):
            raise _Invalid("lone surrogate")
    except (ValueError, RecursionError):
        return "malformed JSON: not one valid JSON value"
    reason = _structure(raw)
    if reason is not None:
        return reason
    fields: dict[str, str] = {}
    for name in STRING_FIELDS:
        v = raw.get(name)
        if v is None:
            return f"missing required field {name}"
        if v == "":
            return f"empty required field {name}"
        fields[name] = v
    ev = instant(fields["event_ts"], "event_ts")
    if isinstance(ev, str):
        return ev
    up = instant(fields["uploaded_at"], "uploaded_at")
    if isinstance(up, str):
        return up
    (event_ts, _), (uploaded_at, up_ns) = ev, up
    for name in ("event_id", "basket_id", "store_id", "till_id", "currency"):
        n = len(fields[name].encode("utf-8"))
        if n > MAX_ID_BYTES:
            return f"{name} of {n} bytes, longer than the {MAX_ID_BYTES} recount keeps"
    tenders = raw.get("tenders")
    if tenders is None:
        return "missing required field tenders"
    if not tenders:
        return "tenders is empty: a basket needs at least one payment"
    revenue = 0
    for i, t in enumerate(tenders, 1):
        amount = t.get("amount_minor")
        if amount is None:
            return f"tender {i}: missing amount_minor"
        if not isinstance(amount, int) or not (I64_MIN <= amount <= I64_MAX):
            return f"tender {i}: amount_minor is not a 64-bit integer"
        revenue += amount
        if not (I64_MIN <= revenue <= I64_MAX):
            return f"tender {i}: revenue overflows 64 bits"
    store = stores.get(fields["store_id"])
    if store is None:
        return f"unknown store_id '{printable(fields['store_id'])}'"
    if fields["currency"] != store["currency"]:
        return f"currency '{printable(fields['currency'])}' differs from store {store['store_id']}'s {store['currency']}"
    if uploaded_at.date() != upload_date:
        stamp = uploaded_at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{uploaded_at.microsecond // 1000:03d}Z"
        return f"uploaded_at {stamp} is not in partition upload_date={upload_date}"
    return {
        **fields,
        "event_ts": event_ts,
        "uploaded_at": uploaded_at,
        "uploaded_at_ns": up_ns,
        "revenue_minor": revenue,
        "tenders": len(tenders),
    }


def is_blank(line: str) -> bool:
    """A blank line, as the lab tells one (`str::trim`, Unicode's White_Space)."""
    return not line.strip(WHITE_SPACE)


def gunzip(data: bytes, limit: int = MAX_INFLATED_BYTES) -> bytes:
    """Every member of a gzip file, never inflating past `limit` bytes."""
    if not data:
        raise ValueError("empty file: not a gzip stream")
    out, rest = [], data
    total = 0
    while rest:
        d = zlib.decompressobj(wbits=31)
        while True:
            chunk = d.decompress(rest, limit + 1 - total)
            total += len(chunk)
            out.append(chunk)
            if total > limit:
                raise ValueError(f"inflates to more than {limit >> 20} MiB, the most one raw file may hold")
            if d.eof:
                rest = d.unused_data
                break
            if d.unconsumed_tail:
                rest = d.unconsumed_tail
                continue
            raise ValueError("not a complete gzip stream (bad header, data or checksum, or cut short)")
    return b"".join(out)


def parse_file(upload_date: dt.date, file_name: str, version: int, data: bytes, stores: Stores) -> Iterator[dict[str, Any]]:
    """Every line of one file as a row: an event, or a quarantined line with its reason."""
    try:
        text = gunzip(data).decode("utf-8")
    except (ValueError, zlib.error, UnicodeDecodeError) as e:
        raise ValueError(f"{upload_date}/{file_name}: truncated or corrupt .gz file ({e})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, line in enumerate(lines, 1):
        if line.endswith("\r"):
            line = line[:-1]
        base = {"upload_date": upload_date, "file_name": file_name, "file_version": version, "line": i}
        parsed = "blank line" if is_blank(line) else parse_line(line, stores, upload_date)
        if isinstance(parsed, str):
            yield {**base, "reason": parsed}
        else:
            yield {**base, **parsed, "reason": None}


def read_stores(world: str) -> list[dict[str, str]]:
    path = os.path.join(world, "stores.csv")
    with open(path, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or list(rows[0].keys()) != ["store_id", "country", "timezone", "currency"]:
        raise ValueError(f"{path}: header must be store_id,country,timezone,currency")
    return rows


PARSED_FIELDS = [
    ("upload_date", "date"), ("file_name", "string"), ("file_version", "int"), ("line", "int"),
    ("event_id", "string"), ("basket_id", "string"), ("store_id", "string"), ("till_id", "string"),
    ("event_ts", "timestamp"), ("uploaded_at", "timestamp"), ("uploaded_at_ns", "bigint"), ("currency", "string"),
    ("revenue_minor", "bigint"), ("tenders", "int"), ("reason", "string"),
]


def arrow_schema() -> Any:
    import pyarrow as pa

    types = {"date": pa.date32(), "string": pa.string(), "int": pa.int32(), "bigint": pa.int64(),
             "timestamp": pa.timestamp("us", tz="UTC")}
    return pa.schema([(c, types[t]) for c, t in PARSED_FIELDS])
