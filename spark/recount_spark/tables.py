"""The warehouse's tables and the summary properties a run writes on its snapshots."""

from __future__ import annotations

from typing import Any

CATALOG = "lake"
NS = f"{CATALOG}.recount"
GOLD = f"{NS}.daily_store_sales"
SILVER = f"{NS}.silver_baskets"
BRONZE = f"{NS}.bronze_events"
QUARANTINE = f"{NS}.quarantine"
RAW_FILES = f"{NS}.raw_files"
STORES = f"{NS}.stores"
STORE_CHANGES = f"{NS}.store_changes"
NAIVE = f"{NS}.naive_daily_sales"
SKIPPED = f"{NS}.skipped_runs"
TABLES = ["stores", "store_changes", "raw_files", "bronze_events", "silver_baskets", "daily_store_sales", "naive_daily_sales",
          "skipped_runs"]
# A warehouse written before these tables were has none until its next write makes them.
OPTIONAL = ["naive_daily_sales", "skipped_runs"]
PROP = "recount."  # every summary property this job writes starts with it
# The properties' names after PROP, each written through `prop`; tests/corpus/properties.jsonl
# lists them with what they mean, for the driver's tests and the lab's reader alike. A name
# ending in "." is a prefix: a business date or a currency follows it.
KEYS = frozenset({
    "run", "upload", "uploads", "trigger", "detail", "corrected", "late-days", "dates", "skipped-dates",
    "beyond-window-rows", "silver-snapshot", "store-changes", "files", "reason", "by", "reopened", "taken-baskets",
    "taken-revenue.", "input-hash.", "window.",
})


def prop(name: str) -> str:
    """The summary property `name` (one of KEYS), with its prefix."""
    if name not in KEYS:
        raise ValueError(f"{name!r} is not a property recount writes (tables.KEYS)")
    return PROP + name


HASH = prop("input-hash.")  # then a business date: that date's input hash
WINDOW = prop("window.")  # then a business date: the wider window a reopening gave it, kept


# Above this many partitions in one write, each task writes its rows a partition at a time
# (sorted within the task, one Parquet writer open) instead of a fanout writer per partition held
# in memory. The full world's 128 uploads ran the driver out of its 2 GB heap with fanout
# writers; silver's 128 dates wrote in 7.9-8.2 s sorted against 13.4-15.8 s with them.
FANOUT_PARTITIONS = 8


def writer(df: Any, table: str, column: str, partitions: int) -> Any:
    """`df`'s writer into `table`, partitioned by `column`, for a write of `partitions` of them."""
    if partitions > FANOUT_PARTITIONS:
        return df.sortWithinPartitions(column).writeTo(table).option("fanout-enabled", "false")
    return df.writeTo(table)


def summary_of(snapshot: Any) -> dict[str, str]:
    """A pyiceberg snapshot's summary properties (none for a snapshot without a summary)."""
    return dict(snapshot.summary.additional_properties) if snapshot is not None and snapshot.summary else {}


def hashes_in(props: dict[str, str]) -> dict[str, str]:
    """{business date (text): input hash} that a gold snapshot's properties name."""
    return {k[len(HASH):]: v for k, v in props.items() if k.startswith(HASH)}


def dates_in(props: dict[str, str]) -> list[str]:
    """The business dates (text, sorted) that a gold snapshot's properties name as written."""
    return sorted(d for d in props.get(prop("dates"), "").split(",") if d)


def in_commit_order(table: Any) -> list[Any]:
    """A table's snapshots in the order they were committed: sequence number, then time."""
    return sorted(table.snapshots(), key=lambda s: (s.sequence_number or 0, s.timestamp_ms))


def windows_in(props: dict[str, str]) -> dict[str, int]:
    """{business date (text): kept window} that a gold snapshot's properties name."""
    return {k[len(WINDOW):]: int(v) for k, v in props.items() if k.startswith(WINDOW)}
