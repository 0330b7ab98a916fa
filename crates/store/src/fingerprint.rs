//! fingerprint.sql: the contract's gold fingerprint, whole or as per-date text.

use super::{Exec, Query, Store, Tx, row, statements};
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use duckdb::named_params;

row! {
    pub struct FingerprintRow { pub rows: i64, pub md5: String }
}

row! {
    /// One business date of gold as the fingerprint's text: its rows, joined by newlines.
    pub struct GoldChunk { pub business_date: NaiveDate, pub rows: i64, pub text: String }
}

row! {
    /// The dates gold's versions span.
    pub struct GoldSpan { pub first: Option<NaiveDate>, pub last: Option<NaiveDate> }
}

/// The most days of gold one chunk query reads: a whole long history at once outgrew DuckDB's
/// first limit.
const DAYS_PER_READ: i64 = 64;

row! {
    /// A date's text in a gold version (rows 0 and no text: the version emptied it).
    pub struct VersionText { pub business_date: NaiveDate, pub rows: i64, pub text: Option<String> }
}

row! {
    /// Where hashing gold's text may resume: the MD5 state at the end of `business_date`, with
    /// gold's rows up to it.
    pub struct GoldPrefix { pub business_date: NaiveDate, pub rows: i64, pub state: Vec<u8> }
}

statements! {
    PREFIX_BEFORE: Query<GoldPrefix> = fingerprint::PREFIX_BEFORE;
    FORGET_PREFIX: Exec = fingerprint::FORGET_PREFIX;
    KEEP_PREFIX: Exec = fingerprint::KEEP_PREFIX;
    CARRY_PREFIX: Exec = fingerprint::CARRY_PREFIX;
    VERSION_TEXT: Query<VersionText> = fingerprint::VERSION_TEXT;
    GOLD_SPAN: Query<GoldSpan> = fingerprint::GOLD_SPAN;
    CHUNKS: Query<GoldChunk> = fingerprint::CHUNKS;
    LATEST_RECORD: Query<FingerprintRow> = fingerprint::LATEST_RECORD;
    MODEL_PREFIX_BEFORE: Query<GoldPrefix> = model::PREFIX_BEFORE;
    MODEL_FORGET_PREFIX: Exec = model::FORGET_PREFIX;
    MODEL_KEEP_PREFIX: Exec = model::KEEP_PREFIX;
}

/// Whose gold a hash state is kept for: retail's tables (`audit.*`) or a model's (`model.*`).
/// The states mean the same in both, and one Rust path reads and keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoldTables {
    Retail,
    Model,
}

/// `first..=last` as consecutive slices of at most `DAYS_PER_READ` days.
fn day_slices(first: NaiveDate, last: NaiveDate) -> Vec<(NaiveDate, NaiveDate)> {
    let mut out = Vec::new();
    let mut from = first;
    while from <= last {
        let to = (from + chrono::Duration::days(DAYS_PER_READ - 1)).min(last);
        out.push((from, to));
        match to.succ_opt() {
            Some(next) => from = next,
            None => break,
        }
    }
    out
}

/// A date's text in a version as a chunk of gold's text: none when the date holds no rows.
fn chunk(business_date: NaiveDate, rows: i64, text: Option<String>) -> Option<GoldChunk> {
    text.filter(|_| rows > 0).map(|text| GoldChunk { business_date, rows, text })
}

impl Store {
    /// Every date of gold as the fingerprint's text, in date order, as it stood at `as_of` (None:
    /// now), read a slice of days at a time.
    pub fn gold_chunks(&self, as_of: Option<i64>, f: impl FnMut(GoldChunk)) -> Result<()> {
        self.gold_chunks_from(as_of, None, f)
    }

    /// The same, from date `from` on (None: gold's first date).
    pub fn gold_chunks_from(&self, as_of: Option<i64>, from: Option<NaiveDate>, f: impl FnMut(GoldChunk)) -> Result<()> {
        let mut f = f;
        let GoldSpan { first: Some(first), last: Some(last) } = GOLD_SPAN.one(self, &[])? else { return Ok(()) };
        for (from, to) in day_slices(from.map_or(first, |d| d.max(first)), last) {
            CHUNKS.each(self, named_params! { "snapshot_id": as_of, "first": from, "last": to }, |c| {
                f(c);
                Ok(())
            })?;
        }
        Ok(())
    }

    /// The recorded state hashing may resume from for a write of `tables`' gold whose first
    /// date is `first`.
    pub fn prefix_before(&self, tables: GoldTables, first: NaiveDate) -> Result<Option<GoldPrefix>> {
        let statement = match tables {
            GoldTables::Retail => &PREFIX_BEFORE,
            GoldTables::Model => &MODEL_PREFIX_BEFORE,
        };
        statement.optional(self, named_params! { "first": first })
    }

    /// The fingerprint the newest record carries; None before the first write.
    pub fn latest_recorded_fingerprint(&self) -> Result<Option<FingerprintRow>> {
        LATEST_RECORD.optional(self, &[])
    }
}

impl Tx<'_> {
    /// The fingerprint text of the gold version `snapshot_id` wrote, for those of its `dates` that
    /// hold rows.
    pub fn version_text(&mut self, snapshot_id: i64, dates: &[NaiveDate]) -> Result<Vec<GoldChunk>> {
        let mut text = Vec::new();
        for slice in dates.chunks(DAYS_PER_READ as usize) {
            let list = super::date_list(slice);
            VERSION_TEXT.each(self.store, named_params! { "snapshot_id": snapshot_id, "dates": list }, |v| {
                text.extend(chunk(v.business_date, v.rows, v.text));
                Ok(())
            })?;
            self.step("reading the written dates' text")?;
        }
        Ok(text)
    }

    /// Write `snapshot_id` left gold's text from `first` (its first date) on as it was: the states
    /// that held before it hold after it.
    pub fn carry_gold_prefix(&mut self, snapshot_id: i64, first: NaiveDate) -> Result<()> {
        let params = named_params! { "snapshot_id": snapshot_id, "first": first };
        self.exec("gold's text unchanged: carrying its hash states", &CARRY_PREFIX, params).map(|_| ())
    }

    /// Records the states write `snapshot_id` reached at the end of each of its dates, in place
    /// of every state from `first` on (its first rewritten date, or gold's first date when it
    /// hashed gold whole): at most one state per date is kept.
    pub fn keep_gold_prefix(&mut self, tables: GoldTables, snapshot_id: i64, first: NaiveDate, states: &[GoldPrefix]) -> Result<()> {
        let (forget, keep) = match tables {
            GoldTables::Retail => (&FORGET_PREFIX, &KEEP_PREFIX),
            GoldTables::Model => (&MODEL_FORGET_PREFIX, &MODEL_KEEP_PREFIX),
        };
        self.exec("dropping stale hash states", forget, named_params! { "first": first })?;
        if states.is_empty() {
            return Ok(());
        }
        let dates = super::listed(states.iter().map(|p| p.business_date));
        let rows = super::listed(states.iter().map(|p| p.rows));
        let hexes = super::listed(states.iter().map(|p| super::hex(&p.state)));
        let params = named_params! { "snapshot_id": snapshot_id, "dates": dates, "rows": rows, "states": hexes };
        self.exec("keeping gold's hash states", keep, params)?;
        Ok(())
    }
}
