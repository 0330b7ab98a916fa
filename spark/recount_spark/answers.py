"""What the driver answers, as types: each command's result and the parts it is made of.

Rust reads these answers into its own structs (`crates/spark/src/spark/answers.rs`). One schema holds both
sides together: `tests/corpus/answers.jsonl` names every field of every answer and its type,
spark/tests/test_answers.py holds these TypedDicts to it, and a test beside the Rust structs
holds those to it, so a field added, dropped or retyped on one side fails a test.

A key that a TypedDict marks `NotRequired` is one the driver may leave out (the schema writes it
with a trailing `?`); a type `X | None` is one it may send as null (the schema's `X?`). Dates
travel as ISO text.
"""

# No `from __future__ import annotations` here: TypedDict reads `NotRequired` only from
# annotations that are evaluated (Python 3.11).
from typing import NotRequired, TypedDict


class Fingerprint(TypedDict):
    """Gold's fingerprint: its rows and the MD5 of its text, as of a snapshot (None: now)."""

    rows: int
    md5: str
    as_of: int | None
    reader: str


class HeldFile(TypedDict):
    """The file that held an upload back, and why."""

    file: str
    reason: str


class Landing(TypedDict):
    """What landing one upload did to its files."""

    upload: str
    new: list[str]
    corrected: list[str]
    # A path's next version holding the same rows (compressed again): no correction, as the lab says.
    redelivered: list[str]
    unchanged: list[str]
    missing: list[str]
    events: int
    quarantined: int
    held: HeldFile | None


class StoresLanded(TypedDict):
    """What the landings did to the stores."""

    changed: list[str]
    readmitted: list[str]
    removed: list[str]
    rederived_files: int


class RunDate(TypedDict):
    """One date a v2 run looked at: rewritten or skipped, and its input hash."""

    business_date: str
    action: str
    input_rows: int
    input_hash: str
    silver_rows: NotRequired[int]
    gold_rows: NotRequired[int]


class BeyondWindow(TypedDict):
    """A run's rows that arrived past their date's window, per date and currency."""

    upload: NotRequired[str]
    business_date: str
    currency: str
    rows: int
    revenue_minor: int


class Run(TypedDict):
    """One v2 run: what it was for, each date's fate, and the snapshots it wrote."""

    upload: str | None
    trigger: str
    detail: NotRequired[str]
    late_days: int
    action: str
    dates: list[RunDate]
    beyond_window: list[BeyondWindow]
    run: NotRequired[int]
    snapshot_id: NotRequired[int | None]
    silver_snapshot_id: NotRequired[int | None]
    corrected: NotRequired[list[str]]


class RunAnswer(TypedDict):
    """`run`: the landings, the stores, the runs and gold's fingerprint after them."""

    landings: list[Landing]
    stores: StoresLanded
    runs: list[Run]
    fingerprint: Fingerprint


class RollbackAnswer(TypedDict):
    """`rollback`: the snapshots, gold as of the target read before, and gold after."""

    snapshot_id: int
    silver_snapshot_id: int | None
    target_fingerprint: Fingerprint
    fingerprint: Fingerprint


class ReopenAnswer(TypedDict):
    """`reopen`: its run, and gold before and after."""

    runs: list[Run]
    before: Fingerprint
    fingerprint: Fingerprint


class RebuildAnswer(TypedDict):
    """`rebuild`: its run, and gold after."""

    runs: list[Run]
    fingerprint: Fingerprint


class NaiveAnswer(TypedDict):
    """`naive`: what v1 appended, and gold's fingerprint (v1 never touches gold)."""

    run_date: str
    rows_added: int
    snapshot_id: int | None
    fingerprint: Fingerprint


class ModelLandedFile(TypedDict):
    """One file a model's landing looked at, and what became of it."""

    upload_date: str
    file: str
    version: int
    status: str
    records: int
    quarantined: int


class ModelHeld(TypedDict):
    """An upload a model's landing held back, by its first file that cannot be read whole."""

    upload_date: str
    file: str
    reason: str


class ModelLanding(TypedDict):
    """What a model's landing did: its files, the dimension rows that changed, the uploads the
    world lacks, the uploads held back."""

    model: str
    files: list[ModelLandedFile]
    dimension_changed: list[str]
    dimension_removed: list[str]
    missing: list[str]
    held: list[ModelHeld]


class ModelRun(TypedDict):
    """One v2 run of a model: the dates it rewrote and skipped, and gold's fingerprint after it."""

    uploads: list[str]
    snapshot: int | None
    rewritten: list[str]
    skipped: list[str]
    beyond_window: int
    future_dated: int
    fingerprint: str


class ModelRunAnswer(TypedDict):
    """`model-run`: the landing, the runs and gold's fingerprint after them."""

    landing: ModelLanding
    runs: list[ModelRun]
    fingerprint: str


class ModelRollbackAnswer(TypedDict):
    """`model-rollback`: gold as of the snapshot, read before the rollback, and after it."""

    model: str
    snapshot_id: int
    target: str
    line: str


class ModelFingerprintAnswer(TypedDict):
    """`model-fingerprint`: gold's fingerprint line, in the model's table."""

    line: str


class TableState(TypedDict):
    """One table of a warehouse and the metadata file it is at: a plan of the same states
    describes the same warehouse."""

    table: str
    metadata: str


class MirrorFile(TypedDict):
    """One file version a model's warehouse recorded, with the time its landing committed."""

    upload_date: str
    file: str
    version: int
    md5: str
    records: int
    quarantined: int
    at_ms: int


class MirrorDimension(TypedDict):
    """One version of a model's dimension file, with the time it was kept."""

    version: int
    md5: str
    text: str
    at_ms: int


class MirrorSkipped(TypedDict):
    """A model's run that found every date unchanged and committed nothing to gold (upload None:
    a rebuild of named dates)."""

    upload: str | None
    dates: list[str]
    at_ms: int


class MirrorGoldSnapshot(TypedDict):
    """One snapshot of a model's gold: the run that wrote it (its uploads'; a rebuild of named
    dates, trigger `manual`; or a reopening of one date with the window it keeps and who decided
    why; none: the table's creation, which wrote nothing), and gold's fingerprint as of it."""

    snapshot_id: int
    uploads: list[str]
    trigger: str
    reopened: str | None
    window: int | None
    reason: str
    by: str
    late_days: int
    files: str
    dates: list[str]
    beyond_window: int
    fingerprint: str


class MirrorLogEntry(TypedDict):
    """A move of gold's current snapshot, in the order the warehouse made them."""

    snapshot_id: int
    timestamp_ms: int


class MirrorNaive(TypedDict):
    """One v1 append to a model's warehouse, with its commit time and the files it added."""

    snapshot_id: int
    at_ms: int
    files: list[str]


class ModelMirrorPlan(TypedDict):
    """`model-plan`: what a reader needs to mirror a model's warehouse (model_mirror.py)."""

    warehouse: str
    state: list[TableState]
    name: str
    parts: str
    dimensions: list[MirrorDimension]
    files: list[MirrorFile]
    records: list[str]
    gold: list[MirrorGoldSnapshot]
    log: list[MirrorLogEntry]
    skipped: list[MirrorSkipped]
    naive: list[MirrorNaive]


class ModelNaiveAnswer(TypedDict):
    """`model-naive`: v1 of a model for one run date, appended."""

    run_date: str
    rows_added: int


class IcebergSnapshot(TypedDict):
    """One Iceberg snapshot of a table, with every summary property."""

    snapshot_id: int
    parent_id: int | None
    committed_at: str
    operation: str | None
    current: bool
    current_ancestor: bool
    properties: dict[str, str]


class SnapshotsAnswer(TypedDict):
    """`snapshots`: a table's Iceberg snapshots, oldest first."""

    table: str
    snapshots: list[IcebergSnapshot]


class StoreGold(TypedDict):
    """One store's gold of a date."""

    store_id: str
    country: str
    currency: str
    baskets: int
    revenue_minor: int


class GoldAnswer(TypedDict):
    """`gold`: gold of one date, store by store, as of a snapshot."""

    business_date: str
    snapshot_id: int | None
    rows: list[StoreGold]


class EvidenceFile(TypedDict):
    """One evidence file written, and the MD5 of its bytes."""

    path: str
    md5: str


class EvidenceStore(TypedDict):
    """One store's gold of the date before and after the commit that last rewrote it."""

    store_id: str
    currency: str
    baskets_before: int
    baskets_after: int
    revenue_before_minor: int
    revenue_after_minor: int
    revenue_delta_minor: int


class EvidencePartition(TypedDict):
    """A partition the commit did not rewrite: its data files before and after."""

    business_date: str
    files_before: int
    files_after: int
    same_files: bool


class EvidencePartitions(TypedDict):
    """Which partitions a commit rewrote, and that it left every other one's files as they were."""

    rewritten: list[str]
    rewritten_files_changed: bool
    other_partitions: list[EvidencePartition]
    other_partitions_untouched: bool


class EvidenceComparison(TypedDict):
    """The commit that last rewrote the date, against its parent."""

    business_date: str
    snapshot_before: int | None
    snapshot_after: int | None
    run: int | None
    upload: str | None
    corrected: list[str]
    stores: list[EvidenceStore]
    gold: EvidencePartitions | None
    silver: NotRequired[EvidencePartitions]


class EvidenceAnswer(TypedDict):
    """`evidence`: the files written, and the comparison one of them holds."""

    files: list[EvidenceFile]
    comparison: EvidenceComparison


class TableFilesAnswer(TypedDict):
    """`table-files`: the Parquet data files of another pipeline's table at its current snapshot."""

    files: list[str]


class MirrorSnapshot(TypedDict):
    """One gold snapshot of retail's warehouse: its run's properties, the dates it wrote, and
    those dates' data files in it and in the silver snapshot it names."""

    snapshot_id: int
    properties: dict[str, str]
    dates: list[str]
    gold_files: list[str]
    silver_files: list[str]


class MirrorAppend(TypedDict):
    """One snapshot of an append-only table of retail's warehouse (v1's rows, the skipped runs'
    log) and the data files it added."""

    snapshot_id: int
    timestamp_ms: int
    properties: dict[str, str]
    files: list[str]


class MirrorPlan(TypedDict):
    """`plan`: what a reader needs to mirror retail's warehouse (mirror.py)."""

    warehouse: str
    state: dict[str, str]
    tables: dict[str, list[str]]
    snapshots: list[MirrorSnapshot]
    log: list[MirrorLogEntry]
    naive: list[MirrorAppend]
    skipped: list[MirrorAppend]
