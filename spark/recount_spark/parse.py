"""The contract's validation of one raw line, and of a file's bytes: the same verdicts and
reason texts as the lab's parser (crates/raw/src/raw/event.rs), held together by tests/corpus/lines.jsonl.
No Spark here: the executors run it, and plain python3 tests it."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import unicodedata
import zlib
from typing import Any, NamedTuple

# The same limits as the Rust parser (crates/raw/src/raw/mod.rs): a file, a line, an id.
MAX_INFLATED_BYTES = 256 << 20
MAX_LINE_BYTES = 64 << 10
MAX_ID_BYTES = 256
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
# A file's name in its upload: a plain name, or a path through the folders below the day
# (`hour=07/pos-events+0+0000000000.json.gz`, a Kafka Connect sink's default layout).
FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=-]*(/[A-Za-z0-9][A-Za-z0-9._+=-]*)*$")

# ASCII digits only, and the whole text (fullmatch): no Unicode digits, no trailing newline.
INSTANT = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
EPOCH_ORDINAL = EPOCH.toordinal()

# Each store by id: its row of stores.csv, and its currency's ISO-4217 digits ("digits").
Stores = dict[str, dict[str, Any]]
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
    # The reasons are built only when one is given: printable() walks the text in Python, and
    # building them for every line was half of the parser's time.
    def bad() -> str:
        return f"{name} '{printable(text)}' is not an ISO-8601 instant"

    def out_of_range() -> str:
        return f"{name} '{printable(text)}' is out of range"

    m = INSTANT.fullmatch(text)
    if not m:
        return bad()
    y, mo, d, h, mi, s = map(int, m.group(1, 2, 3, 4, 5, 6))
    frac, zone = m.group(7), m.group(8)
    utc = zone in ("Z", "z")
    if not utc:
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            return bad()
    if s == 60:
        return f"{name} '{printable(text)}' is a leap second (second 60), which recount refuses"
    nanos_frac = int((frac[1:] + "000000000")[:9]) if frac else 0
    try:
        local = dt.datetime(y, mo, d, h, mi, s, tzinfo=dt.UTC)
    except ValueError:
        return bad()
    if utc:
        # Nearly every line's shape: the seconds in integers, without the datetime arithmetic an
        # offset needs (5.3 -> 3.2 µs an instant, two a line).
        seconds = (local.toordinal() - EPOCH_ORDINAL) * 86_400 + h * 3_600 + mi * 60 + s
        t = local
    else:
        try:
            t = local - (1 if zone[0] == "+" else -1) * dt.timedelta(hours=zh, minutes=zm)
        except OverflowError:
            return out_of_range()
        seconds = (t - EPOCH) // dt.timedelta(seconds=1)
    ns = seconds * 1_000_000_000 + nanos_frac
    # Kept as nanoseconds since 1970, as the lab does: 1677..2262 only.
    if not (I64_MIN <= ns <= I64_MAX):
        return out_of_range()
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


# The contract's JSON reader, made once: json.loads with these hooks builds a decoder and its
# scanner for every line (1.6 of its 6.8 µs a line).
CONTRACT_JSON = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_no_constant, parse_float=_float, parse_int=_int)

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
    word for word the lab's (crates/raw/src/raw/event.rs)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_LINE_BYTES:
        return f"line of {size} bytes, longer than the {MAX_LINE_BYTES} recount parses"
    try:
        if _too_deep(text):
            raise _Invalid("too deep")
        raw = CONTRACT_JSON.decode(text)
        if "\\u" in text and _lone_surrogate(raw):
            raise _Invalid("lone surrogate")
    except (ValueError, RecursionError):
        return "malformed JSON: not one valid JSON value"
    reason = _structure(raw)
    if reason is not None:
        return reason
    fields = {name: raw.get(name) for name in STRING_FIELDS}
    stamps = {name: ("iso", fields.pop(name)) for name in ("event_ts", "uploaded_at")}
    tenders = raw.get("tenders")
    return check(fields, stamps, None if tenders is None else ("tenders", tenders), CONTRACT_LABELS, stores, upload_date)


# How a reason names each field: the contract's names; a mapped source adds its path
# ("basket_id (transaction.id)"), and maps no till when it has none (till_id None).
CONTRACT_LABELS: dict[str, str | None] = {
    **{n: n for n in STRING_FIELDS}, "amount": "tenders",
}


def _required(v: str | None, name: str) -> str:
    if v is None:
        raise _Reason(f"missing required field {name}")
    if v == "":
        raise _Reason(f"empty required field {name}")
    return v


class _Reason(Exception):
    """A line's quarantine reason, raised from deep in a check."""


def check(fields: dict[str, str | None], stamps: dict[str, tuple[str, str | None]], amount: tuple[Any, ...] | None,
          labels: dict[str, str | None], stores: Stores, upload_date: dt.date) -> Parsed:
    """The contract's checks on a line's fields, whatever its shape, in the lab's order
    (crates/raw/src/raw/event.rs `check`): the same reasons word for word. `stamps`: each time stamp as
    (form, text), form "iso" or an epoch unit; `amount`: ("tenders", the contract's list) or
    ("totals", [decimal texts], unit)."""
    try:
        got: dict[str, str] = {}
        for name in ("event_id", "basket_id", "store_id"):
            got[name] = _required(fields.get(name), labels[name] or name)
        till_label = labels["till_id"]
        got["till_id"] = _required(fields.get("till_id"), till_label) if till_label is not None else ""
        for name in ("event_ts", "uploaded_at"):
            form, text = stamps[name]
            _required(text, labels[name] or name)
        got["currency"] = _required(fields.get("currency"), labels["currency"] or "currency")
        times = {}
        for name in ("event_ts", "uploaded_at"):
            form, text = stamps[name]
            assert text is not None
            t = instant(text, labels[name] or name) if form == "iso" else epoch_instant(text, form, labels[name] or name)
            if isinstance(t, str):
                return t
            times[name] = t
    except _Reason as why:
        return str(why)
    (event_ts, _), (uploaded_at, up_ns) = times["event_ts"], times["uploaded_at"]
    for name in ("event_id", "basket_id", "store_id", "till_id", "currency"):
        label = labels[name]
        if label is None:
            continue
        n = len(got[name].encode("utf-8"))
        if n > MAX_ID_BYTES:
            return f"{label} of {n} bytes, longer than the {MAX_ID_BYTES} recount keeps"
    if amount is None:
        return f"missing required field {labels['amount']}"
    revenue, count, totals = 0, 0, None
    if amount[0] == "tenders":
        tenders = amount[1]
        if not tenders:
            return "tenders is empty: a basket needs at least one payment"
        for i, t in enumerate(tenders, 1):
            a = t.get("amount_minor")
            if a is None:
                return f"tender {i}: missing amount_minor"
            if not isinstance(a, int) or not (I64_MIN <= a <= I64_MAX):
                return f"tender {i}: amount_minor is not a 64-bit integer"
            revenue += a
            if not (I64_MIN <= revenue <= I64_MAX):
                return f"tender {i}: revenue overflows 64 bits"
        count = len(tenders)
    else:
        totals = amount[1], amount[2]
        count = len(amount[1])
    store = stores.get(got["store_id"])
    if store is None:
        return f"unknown store_id '{printable(got['store_id'])}'"
    if got["currency"] != store["currency"]:
        return f"currency '{printable(got['currency'])}' differs from store {store['store_id']}'s {store['currency']}"
    if totals is not None:
        summed = totals_revenue(totals[0], totals[1], store["currency"], store.get("digits"))
        if isinstance(summed, str):
            return f"{labels['amount']}: {summed}"
        revenue = summed
    if uploaded_at.date() != upload_date:
        stamp = uploaded_at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{uploaded_at.microsecond // 1000:03d}Z"
        return f"uploaded_at {stamp} is not in partition upload_date={upload_date}"
    return {
        **got,
        "event_ts": event_ts,
        "uploaded_at": uploaded_at,
        "uploaded_at_ns": up_ns,
        "revenue_minor": revenue,
        "tenders": count,
    }


def totals_revenue(texts: list[str], unit: str, currency: str, digits: Any) -> int | str:
    """A mapped amount's revenue: each exact decimal in minor units, summed (crates/raw/src/raw/event.rs)."""
    if not texts:
        return "no tenders: a basket needs at least one payment"
    revenue = 0
    for i, t in enumerate(texts, 1):
        a = amount_minor(t, unit, currency, digits)
        if isinstance(a, str):
            return f"tender {i}: {a}" if len(texts) > 1 else a
        revenue += a
        if not (I64_MIN <= revenue <= I64_MAX):
            return f"tender {i}: revenue overflows 64 bits"
    return revenue


DECIMAL = re.compile(r"(\d+)(?:\.(\d*))?", re.ASCII)


def amount_minor(text: str, unit: str, currency: str, digits: int | None) -> int | str:
    """An exact decimal in minor units of `currency`, whose ISO-4217 `digits` the lab passes
    with each store (crates/raw/src/raw/source.rs `amount_minor`)."""
    shown = printable(text)
    neg = text.startswith("-")
    body = text[1:] if neg else text
    m = DECIMAL.fullmatch(body)
    if not m or body.endswith(".") or (m.group(2) is not None and m.group(2) == ""):
        return f"'{shown}' is not a plain decimal number"
    whole, frac = m.group(1), m.group(2) or ""
    if unit == "minor":
        digits = 0
    elif digits is None:
        return f"currency '{currency}' has no ISO-4217 digits"
    significant = frac.rstrip("0")
    if len(significant) > digits:
        if unit == "minor":
            return f"'{shown}' is not a whole number of minor units"
        return f"'{shown}' has more decimal places than {currency}'s {digits}"
    n = int(whole + significant + "0" * (digits - len(significant)))
    n = -n if neg else n
    if not (I64_MIN <= n <= I64_MAX):
        return f"'{shown}' is too large for 64-bit minor units"
    return n


EPOCH_NANOS = {"epoch_s": 1_000_000_000, "epoch_ms": 1_000_000, "epoch_us": 1_000}
EPOCH_UNITS = {"epoch_s": "seconds", "epoch_ms": "milliseconds", "epoch_us": "microseconds"}


def epoch_instant(text: str, form: str, name: str) -> tuple[dt.datetime, int] | str:
    """A count since 1970 as (aware datetime, nanoseconds since 1970), or the reason
    (crates/raw/src/raw/source.rs `epoch_instant`, with the field's label in front)."""
    shown = printable(text)
    neg = text.startswith("-")
    body = text[1:] if neg else text
    m = DECIMAL.fullmatch(body)
    if not m or body.endswith(".") or len(m.group(1)) > 20 or (m.group(2) is not None and m.group(2) == ""):
        return f"{name} '{shown}' is not a time since 1970 in {EPOCH_UNITS[form]}"
    per = EPOCH_NANOS[form]
    frac_digits = len(str(per)) - 1
    f = (m.group(2) or "").rstrip("0")
    if len(f) > frac_digits:
        return f"{name} '{shown}' is finer than a nanosecond"
    n = int(m.group(1)) * per + (int(f) * 10 ** (frac_digits - len(f)) if f else 0)
    n = -n if neg else n
    if not (I64_MIN <= n <= I64_MAX):
        return f"{name} '{shown}' is out of range"
    return EPOCH + dt.timedelta(microseconds=n // 1000), n


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


def unreadable(kind: str, e: Exception) -> str:
    """Why a compressed file cannot be read whole, in one phrase (crates/raw/src/raw/mod.rs,
    unreadable): one that inflates past the limit says so; anything else is truncated or corrupt."""
    text = str(e)
    return f"the {kind} file {text}" if text.startswith("inflates to more than") else f"truncated or corrupt {kind} file ({text})"


PARSED_FIELDS = [
    ("upload_date", "date"), ("file_name", "string"), ("file_version", "int"), ("line", "int"),
    ("event_id", "string"), ("basket_id", "string"), ("store_id", "string"), ("till_id", "string"),
    ("event_ts", "timestamp"), ("uploaded_at", "timestamp"), ("uploaded_at_ns", "bigint"), ("currency", "string"),
    ("revenue_minor", "bigint"), ("tenders", "int"), ("reason", "string"),
]
# The same columns as Spark's DDL, for mapInArrow's result.
PARSED_DDL = ", ".join(f"{c} {t}" for c, t in PARSED_FIELDS)


def arrow_schema() -> Any:
    import pyarrow as pa

    types = {"date": pa.date32(), "string": pa.string(), "int": pa.int32(), "bigint": pa.int64(),
             "timestamp": pa.timestamp("us", tz="UTC")}
    return pa.schema([(c, types[t]) for c, t in PARSED_FIELDS])


class Lines(NamedTuple):
    """A file's lines: each one's text ("" for a line that is not UTF-8), and the reason of each
    line that is not, by its index."""

    text: list[str]
    not_utf8: dict[int, str]


def split_lines(data: bytes) -> Lines:
    """A file's lines as the lab splits them (crates/raw/src/raw/mod.rs, split_lines): at the
    newline byte before anything is decoded, one carriage return before each newline dropped, no
    line after a final newline. Each line is decoded on its own: one that is not UTF-8 is
    quarantined alone, `not UTF-8 at byte N` from the line's first byte (0), and the rest of its
    file lands. tests/corpus/files.jsonl holds both readers to the same lines."""
    try:
        whole = data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        # The usual file, decoded at once: a newline byte is never inside a UTF-8 character, so
        # these are the same lines as the bytes' below.
        lines = whole.split("\n")
        done = lines[-1] == ""
        if done:
            lines.pop()
        if "\r" in whole:
            end = len(lines) - (0 if done else 1)
            lines = [line[:-1] if i < end and line.endswith("\r") else line for i, line in enumerate(lines)]
        return Lines(lines, {})
    parts = data.split(b"\n")
    ended = parts[-1] == b""
    if ended:
        parts.pop()
    # Only a line that a newline ended loses its carriage return, as Rust's str::lines.
    last = len(parts) - (0 if ended else 1)
    raw = [p[:-1] if i < last and p.endswith(b"\r") else p for i, p in enumerate(parts)]
    text: list[str] = []
    bad: dict[int, str] = {}
    for i, line in enumerate(raw):
        try:
            text.append(line.decode("utf-8"))
        except UnicodeDecodeError as e:
            text.append("")
            bad[i] = f"not UTF-8 at byte {e.start}"
    return Lines(text, bad)
