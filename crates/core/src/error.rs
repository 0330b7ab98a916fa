//! Errors that code branches on, as types. Everything else is an eyre report with context.

use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabError {
    /// Another recount process holds the lab's lock.
    LockHeld { lab: PathBuf, pid: Option<u32> },
    /// The running statement was interrupted (Esc in the explorer); nothing it wrote stays.
    Interrupted,
    /// The failure-injection hook failed a write after one of its statements.
    Injected { after: usize, step: String },
    /// The lab's database is open in another process that DuckDB will not share it with (a
    /// reader while this one writes, or a writer while this one reads).
    DatabaseInUse { db: PathBuf, pid: Option<u32> },
    /// A reader found the lab not as this build writes it; a writing command brings it up to date.
    NeedsWriter(String),
    /// The lab was written by a layout this build does not read.
    Layout { found: i32, reads: i32 },
    /// A landing committed, then failed to put its files in place (`lake::recovery` finishes it).
    LandedUnfinished(String),
    /// DuckDB ran out of its share of the memory budget in a statement (`queries/FILE.sql: NAME`).
    OutOfMemory { statement: String, budget: u64 },
}

impl std::fmt::Display for LabError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LabError::LockHeld { lab, pid } => write!(
                f,
                "the lab at {} is in use by another recount process ({}); wait for it to finish or close it",
                lab.display(),
                pid.map(|p| format!("pid {p}")).unwrap_or_else(|| "pid unknown".into())
            ),
            LabError::Interrupted => write!(f, "cancelled: the query was interrupted; nothing changed"),
            LabError::Injected { after, step } => write!(f, "injected failure after statement {after} ({step})"),
            LabError::DatabaseInUse { db, pid } => write!(
                f,
                "the lab database {} is open in another process ({}); DuckDB lets one process write a lab or several read it",
                db.display(),
                pid.map(|p| format!("pid {p}")).unwrap_or_else(|| "pid unknown".into())
            ),
            LabError::LandedUnfinished(why) => write!(
                f,
                "landed: bronze and the file versions are committed, but finishing the landing failed ({why}); \
                 the next command that writes the lab finishes it, once that is mended"
            ),
            LabError::OutOfMemory { statement, budget } => write!(
                f,
                "out of memory in {statement}: the work needed more than DuckDB was given within the memory budget of \
                 {} MiB (it spills to the lab's recount.spill/ what it can); raise the budget with --memory, RECOUNT_MEMORY \
                 or `memory` in the config file, or free disk. Nothing of the statement's write was kept, and the next \
                 command runs as usual",
                budget >> 20
            ),
            LabError::NeedsWriter(why) => write!(f, "the lab cannot be read as it is: {why}"),
            // A newer lab is someone's current data: never advise deleting it.
            LabError::Layout { found, reads } if found > reads => write!(
                f,
                "this lab was written by a newer recount (layout {found}; this build reads layout {reads}): \
                 open it with that recount, or land its world into a new lab (--lab) with this one"
            ),
            LabError::Layout { found, reads } => write!(
                f,
                "this lab was written by another recount (layout {found}; this build reads layout {reads}): \
                 delete the lab directory and land the world again"
            ),
        }
    }
}

impl std::error::Error for LabError {}

/// The `LabError` behind a report, if any (through any context added since).
pub fn lab_error(report: &color_eyre::Report) -> Option<&LabError> {
    report.downcast_ref::<LabError>()
}
