"""A file of the contract's JSON Lines as one Arrow batch, with the common line judged a column at
a time: the Spark landing's fast path, as crates/raw/src/raw/fast_line.rs is the lab's.

One regular expression (Python's `re`, in C) accepts only lines of the generator's plain shape:
the contract's fields in their usual order, strings without escapes, instants in UTC written
`YYYY-MM-DDTHH:MM:SS[.f]Z`, one to three tenders, integer amounts of at most 18 digits, and
optionally the items array of the usual shape. Its captures become Arrow columns, and Arrow's
kernels do the rest of the contract's checks for all of them at once: each date exists, each id
fits in 256 bytes, the store is known and its currency matches, uploaded_at is in the upload's
partition. A line that is not of that shape, or fails any check, goes to the careful parser
(parse.parse_line) line by line, which gives every reason. So a line gets the same row either way,
and spark/tests/test_fast.py holds the two together on the corpus and on mutated lines.
No Spark here: the executors' Python workers run it."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from recount_spark.parse import MAX_ID_BYTES, MAX_LINE_BYTES, PARSED_FIELDS, Stores, arrow_schema

_STR = r'[^"\\\x00-\x1f]'  # a JSON string's character that needs no escape
_INT = r"-?(?:0|[1-9][0-9]{0,17})"  # |n| < 10^18: three of them sum within 64 bits


def _instant(n: str) -> str:
    # Years 1900-2199 only, so that nanoseconds since 1970 fit in 64 bits; the date's existence
    # (30 February) is checked after, on the few distinct dates a file holds. One capture: its
    # parts are at fixed places (`_instants`), and each capture costs a Python string a line.
    return rf"(?P<{n}>(?:19|20|21)[0-9]{{2}}-[0-9]{{2}}-[0-9]{{2}}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{{1,9}})?)Z"


def _tender(k: int) -> str:
    return rf'\{{"method":"{_STR}*","amount_minor":(?P<a{k}>{_INT})\}}'


_ITEM = rf'\{{"sku":"{_STR}*","qty":{_INT},"unit_price_minor":{_INT}\}}'
PLAIN_LINE = re.compile(
    rf'\{{"event_id":"(?P<event_id>{_STR}+)","basket_id":"(?P<basket_id>{_STR}+)","store_id":"(?P<store_id>{_STR}+)",'
    rf'"till_id":"(?P<till_id>{_STR}+)","event_ts":"{_instant("e")}","uploaded_at":"{_instant("u")}",'
    rf'"currency":"(?P<currency>{_STR}+)","tenders":\[{_tender(1)}(?:,{_tender(2)})?(?:,{_tender(3)})?\]'
    rf'(?:,"items":\[(?:{_ITEM}(?:,{_ITEM})*)?\])?\}}'
)
GROUPS = list(PLAIN_LINE.groupindex)
EPOCH = dt.date(1970, 1, 1)
# A line this many characters long holds at most MAX_LINE_BYTES bytes (4 bytes a character).
_SURELY_SHORT = MAX_LINE_BYTES // 4


def plain_lines(lines: list[str]) -> tuple[list[int], list[tuple[str | None, ...]]]:
    """The indexes of the lines of the plain shape (within the byte limit), and their captures."""
    match = PLAIN_LINE.fullmatch
    at, captures = [], []
    for i, line in enumerate(lines):
        m = match(line)
        if m is not None and (len(line) <= _SURELY_SHORT or len(line.encode("utf-8")) <= MAX_LINE_BYTES):
            at.append(i)
            captures.append(m.groups())
    return at, captures


def _days(dates: Any) -> Any:
    """Days since 1970 of each `YYYY-MM-DD`, null where no such date exists (2026-02-30)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    distinct = pc.unique(dates)
    days: list[int | None] = []
    for d in distinct.to_pylist():
        try:
            days.append((dt.date.fromisoformat(d) - EPOCH).days)
        except ValueError:
            days.append(None)
    return pc.take(pa.array(days, pa.int64()), pc.index_in(dates, value_set=distinct))


def _instants(text: Any) -> tuple[Any, Any, Any]:
    """Instants `YYYY-MM-DDTHH:MM:SS[.fffffffff]` (the Z dropped) as (days since 1970,
    microseconds since 1970, nanoseconds since 1970)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def part(start: int, stop: int) -> Any:
        return pc.utf8_slice_codeunits(text, start, stop).cast(pa.int64())

    days = _days(pc.utf8_slice_codeunits(text, 0, 10))
    seconds = pc.add(pc.multiply(days, 86_400),
                     pc.add(pc.add(pc.multiply(part(11, 13), 3_600), pc.multiply(part(14, 16), 60)), part(17, 19)))
    frac = pc.utf8_rpad(pc.utf8_slice_codeunits(text, 20, 29), width=9, padding="0").cast(pa.int64())
    # frac >= 0, so Arrow's integer division (towards zero) is the floor the careful parser takes.
    micros = pc.add(pc.multiply(seconds, 1_000_000), pc.divide(frac, 1_000))
    nanos = pc.add(pc.multiply(seconds, 1_000_000_000), frac)
    return days, micros, nanos


def judged(captures: list[tuple[str | None, ...]], stores: Stores, upload_date: dt.date) -> tuple[Any, dict[str, Any]]:
    """The checks on the plain lines' captures, a column at a time: which lines pass, and the
    columns of their rows (PARSED_FIELDS' event fields), for every captured line."""
    import pyarrow as pa
    import pyarrow.compute as pc

    col = {g: pa.array(values, pa.string()) for g, values in zip(GROUPS, zip(*captures, strict=True), strict=True)}
    e_days, e_us, _ = _instants(col["e"])
    u_days, u_us, u_ns = _instants(col["u"])
    ids = ("event_id", "basket_id", "store_id", "till_id", "currency")
    checks = [pc.is_valid(e_days), pc.equal(u_days, (upload_date - EPOCH).days)]
    checks += [pc.less_equal(pc.binary_length(col[name]), MAX_ID_BYTES) for name in ids]
    known = list(stores)
    at = pc.index_in(col["store_id"], value_set=pa.array(known, pa.string()))
    checks.append(pc.equal(pc.take(pa.array([stores[s]["currency"] for s in known], pa.string()), at), col["currency"]))
    ok = checks[0]
    for c in checks[1:]:
        ok = pc.and_(ok, c)
    amounts = [col[f"a{k}"].cast(pa.int64()) for k in (1, 2, 3)]
    revenue = pc.add(pc.add(amounts[0], pc.fill_null(amounts[1], 0)), pc.fill_null(amounts[2], 0))
    tenders = pc.add(pc.add(pc.is_valid(amounts[1]).cast(pa.int32()), pc.is_valid(amounts[2]).cast(pa.int32())), 1).cast(pa.int32())
    ts = pa.timestamp("us", tz="UTC")
    out = {name: col[name] for name in ids}
    out |= {"event_ts": e_us.cast(ts), "uploaded_at": u_us.cast(ts), "uploaded_at_ns": u_ns, "revenue_minor": revenue,
            "tenders": tenders}
    return pc.fill_null(ok, False), out


def file_batch(lines: list[str], base: dict[str, Any], stores: Stores, upload_date: dt.date, careful: Any) -> Any:
    """Every line of one file as rows of PARSED_FIELDS, in line order: the plain lines that pass
    judged a column at a time, every other line by `careful(index, line)` (a row dict)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = arrow_schema()
    at, captures = plain_lines(lines)
    parts = []
    careful_at = np.ones(len(lines), dtype=bool)
    if captures:
        ok, cols = judged(captures, stores, upload_date)
        picked = pc.filter(pa.array(at, pa.int64()), ok)
        n = len(picked)
        if n:
            cols = {k: pc.filter(v, ok) for k, v in cols.items()}
            cols |= {
                "upload_date": pa.array([base["upload_date"]] * n, pa.date32()),
                "file_name": pa.array([base["file_name"]] * n, pa.string()),
                "file_version": pa.array([base["file_version"]] * n, pa.int32()),
                "line": pc.add(picked, 1).cast(pa.int32()),
                "reason": pa.nulls(n, pa.string()),
            }
            parts.append(pa.table([cols[c] for c, _ in PARSED_FIELDS], schema=schema))
            careful_at[picked.to_numpy()] = False
    rest = np.flatnonzero(careful_at).tolist()
    if rest:
        parts.append(pa.Table.from_pylist([careful(i, lines[i]) for i in rest], schema=schema))
    if not parts:
        return pa.RecordBatch.from_pylist([], schema=schema)
    table = pa.concat_tables(parts).combine_chunks() if len(parts) > 1 else parts[0]
    if len(parts) > 1:
        table = table.take(pc.sort_indices(table["line"]))
    return table.to_batches()[0]
