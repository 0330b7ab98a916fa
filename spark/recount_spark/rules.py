"""The contract's rules the driver applies in Python, each written once here: the lateness window
(a row's fate under it, and the uploads a range of dates' windows take in). tests/corpus/window.jsonl
holds `fate` to crates/core/src/rules.rs and queries/schema.sql's in_window."""

from __future__ import annotations

import datetime as dt


def fate(upload: dt.date, d: dt.date, late_days: int) -> str:
    """What a run of `upload` does with its rows dated `d`: `affected` (rebuilt), `beyond_window`
    or `future_dated` (reported, never in gold). crates/core/src/rules.rs's `fate`; tests/corpus/window.jsonl
    holds both to the same verdicts."""
    first, last = window_uploads(d, d, late_days)
    if upload < first:
        return "future_dated"
    if upload > last:
        return "beyond_window"
    return "affected"


def window_uploads(first: dt.date, last: dt.date, late_days: int) -> tuple[dt.date, dt.date]:
    """The first and last upload the windows of the dates `first`..`last` take in under
    `late_days`, together: the eve of the first to the far end of the last (the window's one
    Python spelling, which `fate` and the warehouse's reads of a range share; queries/schema.sql's
    in_windows in SQL)."""
    return first - dt.timedelta(days=1), last + dt.timedelta(days=late_days)
