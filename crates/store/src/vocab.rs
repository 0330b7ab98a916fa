//! The words the audit trail stores, as enums: converted to and from SQL text, where an unknown
//! word is an error (a lab written by a newer recount, or a bad edit), never a fallback.

use duckdb::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

macro_rules! sql_enum {
    ($(#[$m:meta])* pub enum $name:ident { $($(#[$vm:meta])* $variant:ident = $text:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
        pub enum $name { $($(#[$vm])* #[serde(rename = $text)] $variant),* }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),*];
            /// The word stored in the lab.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),* }
            }
            pub fn parse(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok($name::$variant),)*
                    other => Err(format!("unknown {} '{}' (known: {})", stringify!($name), other, [$($text),*].join(", "))),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> duckdb::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                let text = value.as_str()?;
                $name::parse(text).map_err(|e| FromSqlError::Other(e.into()))
            }
        }
    };
}

sql_enum! {
    /// What a snapshot did, as Iceberg names its operations.
    pub enum Operation {
        /// v1 appended rows.
        Append = "append",
        /// v2 replaced the versions of some dates.
        Overwrite = "overwrite",
        /// Silver and gold were restored as of an earlier snapshot.
        Rollback = "rollback",
        /// A v2 run whose inputs were unchanged: nothing written but the record.
        Skipped = "skipped",
    }
}

sql_enum! {
    /// What started a write.
    pub enum TriggerKind {
        /// `recount run` of one upload.
        Upload = "upload",
        /// `recount run` of a range of uploads.
        Backfill = "backfill",
        /// `recount daily`: land, then run.
        Daily = "daily",
        /// `recount rebuild` of named dates.
        Manual = "manual",
        /// v1, the naive job.
        Naive = "naive",
        /// `recount rollback`.
        Rollback = "rollback",
        /// A store correction: the dates a changed stores.csv row moves.
        Store = "store",
        /// `recount reopen`: finance took a closed date's late rows in, with a reason.
        Reopen = "reopen",
    }
}

sql_enum! {
    /// What a snapshot did to one business date.
    pub enum DateAction {
        /// v2 wrote a new version of the date.
        Overwrite = "overwrite",
        /// v2 found the inputs unchanged and wrote nothing.
        Skip = "skip",
        /// A rollback made an earlier version current again.
        Restore = "restore",
    }
}

impl DateAction {
    /// Whether the date has a new version after this action.
    pub fn writes(self) -> bool {
        self != DateAction::Skip
    }
}

sql_enum! {
    /// Why one basket of a date differs between two versions (`diff_rows` in schema.sql). The
    /// order is the order the parts of a change are listed in.
    pub enum ChangeKind {
        /// In the newer version only: a late till, a first build.
        Added = "added",
        /// In the older version only: a rollback, a basket whose copies left the window.
        Removed = "removed",
        /// Another copy wins now (an earlier copy arrived), possibly with another amount.
        WinnerChanged = "winner_changed",
        /// Same winner, but more (or fewer) re-sent copies were discarded.
        CopiesDiscarded = "copies_discarded",
        /// The same basket and message with another amount: a corrected file version said so.
        RevenueCorrected = "revenue_corrected",
        /// A corrected file version no longer holds the basket.
        Withdrawn = "withdrawn",
        /// A corrected file version holds a basket its earlier version did not.
        AddedByCorrection = "added_by_correction",
        /// A store correction brought the basket to this date (another time zone), country or
        /// currency, or made its line valid.
        StoreMovedIn = "store_moved_in",
        /// A store correction took the basket to another date, country or currency, or made its
        /// line invalid.
        StoreMovedOut = "store_moved_out",
    }
}

impl ChangeKind {
    /// The words a person reads in history and diff.
    pub fn word(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::WinnerChanged => "winner changed",
            ChangeKind::CopiesDiscarded => "re-sent copies discarded",
            ChangeKind::RevenueCorrected => "revenue corrected",
            ChangeKind::Withdrawn => "withdrawn",
            ChangeKind::AddedByCorrection => "added by a correction",
            ChangeKind::StoreMovedIn => "in by a store correction",
            ChangeKind::StoreMovedOut => "out by a store correction",
        }
    }

    /// Whether a store correction caused it (a file version re-derived under the store's new row).
    pub fn by_store_correction(self) -> bool {
        matches!(self, ChangeKind::StoreMovedIn | ChangeKind::StoreMovedOut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_round_trips_and_an_unknown_word_is_an_error() {
        for op in Operation::ALL {
            assert_eq!(Operation::parse(op.as_str()), Ok(*op));
        }
        for k in TriggerKind::ALL {
            assert_eq!(TriggerKind::parse(k.as_str()), Ok(*k));
        }
        for a in DateAction::ALL {
            assert_eq!(DateAction::parse(a.as_str()), Ok(*a));
        }
        for c in ChangeKind::ALL {
            assert_eq!(ChangeKind::parse(c.as_str()), Ok(*c));
        }
        assert!(Operation::parse("merge").unwrap_err().contains("unknown Operation 'merge'"));
        assert!(ChangeKind::parse("4").is_err());
        assert!(DateAction::parse("").is_err());
    }

    #[test]
    fn reading_an_unknown_word_from_the_lab_fails_the_read() {
        let conn = duckdb::Connection::open_in_memory().unwrap();
        let ok: Operation = conn.query_row("SELECT 'rollback'", [], |r| r.get(0)).unwrap();
        assert_eq!(ok, Operation::Rollback);
        let err = conn.query_row("SELECT 'merge'", [], |r| r.get::<_, Operation>(0)).unwrap_err();
        assert!(err.to_string().contains("unknown Operation 'merge'"), "{err}");
    }
}
