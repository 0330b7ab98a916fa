//! `recount audit --gold FILE`: a gold table another pipeline wrote, compared row by row with the
//! lab's gold on the grain (business date, store), each wrong row given the cause that explains
//! its difference exactly, tested against the landed raw zone: re-sent copies counted
//! (`duplicates_counted`), rows past the window kept (`beyond_window_included`), a build before
//! the late uploads landed (`late_arrivals_missed`) or before a corrected file
//! (`correction_not_applied`), a retried append (`appended_twice`), or a row on one side only.
//! Where none fits, the row is `unexplained`, with its residual.

use super::audit_spill::{Sorted, Sorter, SpilledRows};
pub use super::audit_where::{Cause, is_wrong};
use super::audit_where::{Counts, Verdicts};
use super::foreign::{self, GoldMap, IcebergFiles};
use super::{Cell, Note, Report, Table};
use crate::lake::Lab;
use crate::store::StoreFigures;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, eyre};
use std::collections::BTreeMap;
use std::path::Path;

/// One row of a foreign gold table, mapped onto the grain and the measures.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct ForeignRow {
    pub business_date: NaiveDate,
    pub store_id: String,
    pub baskets: i64,
    pub revenue_minor: i64,
    /// Why the row's figures cannot be read exactly (a float with a fraction, money of a store
    /// whose currency the lab does not know): then it is a wrong row of its own, with this
    /// reason, and `baskets` and `revenue_minor` are not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unread: Option<String>,
}

/// The columns a foreign gold must have (others are ignored).
const COLUMNS: [&str; 4] = ["business_date", "store_id", "baskets", "revenue_minor"];

/// Reads a foreign gold (`foreign::each_record`), its columns mapped by `map`; `currency_of` gives
/// a store's currency, for revenue in major units. The rows come back in (date, store) order,
/// sorted within the memory budget (`audit_spill::Sorter`, spilling to `spill`).
pub fn read_foreign(
    path: &Path,
    map: &GoldMap,
    currency_of: &dyn Fn(&str) -> Option<String>,
    iceberg: IcebergFiles<'_>,
    spill: &Path,
) -> Result<Sorted<'static, ForeignRow>> {
    map.check_columns(&COLUMNS.map(str::to_string))?;
    let needed: Vec<String> = COLUMNS.iter().map(|c| map.column(c).to_string()).collect();
    let mut sorter = Sorter::new(spill, super::audit_spill::share());
    foreign::each_record(path, &needed, iceberg, &mut |n, values| {
        let row = foreign_row(path, n, &values, map, currency_of)?;
        let bytes = std::mem::size_of::<ForeignRow>() + row.store_id.len() + row.unread.as_ref().map_or(0, String::len);
        sorter.push(row, bytes).wrap_err("spilling the foreign gold's rows")?;
        Ok(())
    })?;
    Ok(sorter.finish())
}

/// One row of a foreign gold, from its values in `COLUMNS`' order.
fn foreign_row(
    path: &Path,
    n: foreign::Place,
    values: &[crate::store::foreign::ForeignValue],
    map: &GoldMap,
    currency_of: &dyn Fn(&str) -> Option<String>,
) -> Result<ForeignRow> {
    let bad = |i: usize, why: String| eyre!("{} {n}: {} {why}", path.display(), map.column(COLUMNS[i]));
    let business_date = foreign::date(&values[0]).map_err(|e| bad(0, e))?;
    let store_id = foreign::id(&values[1]).map_err(|e| bad(1, e))?;
    // A figure that cannot be read exactly makes a wrong row of its own, not an error: the
    // audit reads the table that exists.
    let figures = || -> Result<(i64, i64), String> {
        let baskets = values[2].integer().map_err(|e| format!("{} {e}", map.column(COLUMNS[2])))?;
        let currency = match map.unit {
            crate::raw::source::Unit::Minor => None,
            crate::raw::source::Unit::Major => Some(currency_of(&store_id).ok_or_else(|| {
                "the store is not in the lab, so the digits of its currency, and its revenue in minor units, are unknown".to_string()
            })?),
        };
        let revenue = foreign::money(&values[3], map.unit, currency.as_deref()).map_err(|e| format!("{} {e}", map.column(COLUMNS[3])))?;
        Ok((baskets, revenue))
    };
    let (baskets, revenue_minor, unread) = match figures() {
        Ok((b, r)) => (b, r, None),
        Err(why) => (0, 0, Some(format!("{n}: {why}"))),
    };
    Ok(ForeignRow { business_date, store_id, baskets, revenue_minor, unread })
}

/// One (date, store) of the audit.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct AuditRow {
    pub business_date: NaiveDate,
    pub store_id: String,
    /// The store's currency; empty for a store the lab does not know (null in JSON, as a
    /// missing amount's currency is).
    #[serde(serialize_with = "empty_as_null", deserialize_with = "null_as_empty")]
    pub currency: String,
    /// The store's country; empty for a store the lab does not know.
    #[serde(serialize_with = "empty_as_null", deserialize_with = "null_as_empty")]
    pub country: String,
    /// Whether the foreign gold has the row (`foreign` is None for one it has but cannot read).
    pub in_foreign: bool,
    /// Every cause that explains the difference exactly (one, `matches`, for a right row).
    pub causes: Vec<Cause>,
    pub detail: String,
    pub foreign: Option<(i64, i64)>,
    pub right: Option<(i64, i64)>,
}

fn empty_as_null<S: serde::Serializer>(s: &str, to: S) -> Result<S::Ok, S::Error> {
    if s.is_empty() { to.serialize_none() } else { to.serialize_str(s) }
}

fn null_as_empty<'de, D: serde::Deserializer<'de>>(from: D) -> Result<String, D::Error> {
    Ok(<Option<String> as serde::Deserialize>::deserialize(from)?.unwrap_or_default())
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct AuditReport {
    pub source: String,
    /// In (date, store) order; past a share of the memory budget, on disk (`audit_spill`).
    pub rows: SpilledRows<AuditRow>,
    /// Every row in the table (machines' formats), not only the wrong ones.
    #[serde(skip)]
    pub all: bool,
    #[serde(skip)]
    pub counts: Counts,
}

impl AuditReport {
    /// The report of `rows`, counted once.
    pub fn of(source: &str, rows: SpilledRows<AuditRow>, counts: Counts) -> AuditReport {
        AuditReport { source: source.to_string(), rows, all: false, counts }
    }

    pub fn wrong(&self) -> usize {
        self.counts.wrong()
    }

    /// The audit of one business date: its rows, every one listed, the wrong ones first (the
    /// explorer's Audit screen).
    pub fn of_date(&self, d: NaiveDate) -> Result<AuditReport> {
        let mut rows = self.rows.of_date(d, |r| r.business_date).wrap_err("reading the audit's spilled rows")?;
        rows.sort_by_key(|r| r.causes == [Cause::Matches]);
        let mut counts = Counts::default();
        for r in &rows {
            counts.add(d, &r.causes, r.in_foreign, &places(r))?;
        }
        counts.finish()?;
        Ok(AuditReport { source: self.source.clone(), rows: SpilledRows::held(rows), all: true, counts })
    }
}

/// A row's fields for where the wrong rows fall: its store, then the store's attributes, as a
/// model's rows give theirs (`model_audit::places`).
fn places(r: &AuditRow) -> [(&str, &str); 3] {
    if r.country.is_empty() {
        let not = super::audit_where::NOT_IN_LAB;
        return [("store_id", r.store_id.as_str()), ("country", not), ("currency", not)];
    }
    [("store_id", r.store_id.as_str()), ("country", r.country.as_str()), ("currency", r.currency.as_str())]
}

/// A wrong row's verdict from the causes that give it exactly: each named, after `extra_row`
/// when the lab has no such row; none fits, `extra_row` or `unexplained` with `residual`.
pub fn verdict(found: Vec<(Cause, String)>, right_missing: bool, residual: impl FnOnce() -> String) -> (Vec<Cause>, String) {
    if found.is_empty() {
        return (vec![if right_missing { Cause::ExtraRow } else { Cause::Unexplained }], residual());
    }
    let mut causes: Vec<Cause> = found.iter().map(|c| c.0).collect();
    if right_missing {
        causes.insert(0, Cause::ExtraRow);
    }
    (causes, found.iter().map(|c| c.1.as_str()).collect::<Vec<_>>().join("; "))
}

/// What the lab knows of one date: its gold now, and the alternatives each cause would give.
pub(super) struct DateFacts {
    pub(super) right: BTreeMap<String, StoreFigures>,
    pub(super) copies: BTreeMap<String, StoreFigures>,
    pub(super) utc: BTreeMap<String, StoreFigures>,
    pub(super) recount: BTreeMap<String, StoreFigures>,
    /// Gold as of each earlier version of the date, oldest first.
    pub(super) earlier: Vec<Earlier>,
}

/// An earlier version of a date's gold, and the snapshot that replaced it.
pub(super) struct Earlier {
    pub(super) snapshot: i64,
    pub(super) gold: BTreeMap<String, StoreFigures>,
    pub(super) replaced_by: i64,
    /// The upload whose run replaced it, and whether that upload carried a corrected file.
    pub(super) upload: Option<NaiveDate>,
    pub(super) corrected: bool,
}

impl DateFacts {
    /// A date whose every row matches: its gold, and no alternatives.
    fn only(right: BTreeMap<String, StoreFigures>) -> DateFacts {
        DateFacts { right, copies: BTreeMap::new(), utc: BTreeMap::new(), recount: BTreeMap::new(), earlier: Vec::new() }
    }
}

pub(super) fn by_store(rows: Vec<StoreFigures>) -> BTreeMap<String, StoreFigures> {
    rows.into_iter().map(|r| (r.store_id.clone(), r)).collect()
}

/// Every snapshot of the lab by id, read once for an audit: the runs that replaced a version.
pub(super) type Snapshots = BTreeMap<i64, crate::store::SnapshotRow>;

pub(super) fn snapshots(lab: &Lab) -> Result<Snapshots> {
    Ok(lab.store().snapshots(i64::MAX)?.into_iter().map(|s| (s.snapshot_id, s)).collect())
}

/// What the lab says of date `d` whose gold now is `right`.
pub(super) fn facts(
    lab: &Lab,
    d: NaiveDate,
    late_days: u32,
    right: BTreeMap<String, StoreFigures>,
    snapshots: &Snapshots,
) -> Result<DateFacts> {
    let store = lab.store();
    let newest = snapshots.keys().next_back().copied().unwrap_or(0);
    let versions = store.versions_of_date(d, newest)?;
    let mut earlier = Vec::new();
    for pair in versions.windows(2) {
        let (then, next) = (pair[0], pair[1]);
        let s = snapshots.get(&next);
        let upload = s.and_then(|s| s.trigger_upload);
        let corrected = match upload {
            Some(u) => !store.corrected_files(u)?.is_empty(),
            None => false,
        };
        earlier.push(Earlier { snapshot: then, gold: by_store(store.gold_by_store(d, Some(then))?), replaced_by: next, upload, corrected });
    }
    Ok(DateFacts {
        right,
        copies: by_store(store.copies_counted(d, late_days)?),
        utc: by_store(store.utc_dated(d, late_days)?),
        recount: by_store(store.recompute_by_store(d)?),
        earlier,
    })
}

pub(super) fn pair(f: Option<&StoreFigures>) -> Option<(i64, i64)> {
    f.map(|f| (f.baskets, f.revenue_minor))
}

/// The causes that give `foreign` exactly, with what each names.
pub(super) fn causes_of(foreign: (i64, i64), store_id: &str, f: &DateFacts) -> Vec<(Cause, String)> {
    let right = pair(f.right.get(store_id));
    let mut found = Vec::new();
    if pair(f.copies.get(store_id)) == Some(foreign) && right != Some(foreign) {
        found.push((Cause::DuplicatesCounted, "every copy of a re-sent basket counted".to_string()));
    }
    if pair(f.utc.get(store_id)) == Some(foreign) && right != Some(foreign) {
        found.push((Cause::UtcBusinessDate, "events dated in UTC, not in the store's zone".to_string()));
    }
    if pair(f.recount.get(store_id)) == Some(foreign) && right != Some(foreign) {
        found.push((Cause::BeyondWindowIncluded, "rows that arrived past the window kept".to_string()));
    }
    // The newest earlier version that gives the row: the pipeline is current as of it.
    if let Some(e) = f.earlier.iter().rev().find(|e| pair(e.gold.get(store_id)) == Some(foreign)) {
        let (then, next) = (e.snapshot, e.replaced_by);
        let upload = e.upload.map(|u| format!(" (upload {u})")).unwrap_or_default();
        let (cause, what) = if e.corrected {
            (Cause::CorrectionNotApplied, format!("gold as of snapshot {then}, before snapshot {next}{upload} applied a corrected file"))
        } else {
            (Cause::LateArrivalsMissed, format!("gold as of snapshot {then}, before snapshot {next}{upload} added late rows"))
        };
        if right != Some(foreign) {
            found.push((cause, what));
        }
    }
    // A retried append: an exact multiple of the right row, or of another cause's.
    let mut bases: Vec<(String, (i64, i64))> = right.map(|r| vec![("the right row".to_string(), r)]).unwrap_or_default();
    if let Some(c) = pair(f.copies.get(store_id)) {
        bases.push(("the duplicates_counted row".to_string(), c));
    }
    for (name, (b, r)) in bases {
        if b > 0 && foreign.0 % b == 0 && foreign.0 / b >= 2 && r.checked_mul(foreign.0 / b) == Some(foreign.1) {
            found.push((Cause::AppendedTwice, format!("{} times {name}", foreign.0 / b)));
            break;
        }
    }
    found
}

/// Audits `foreign`, in (date, store) order (`read_foreign`), against the lab's gold, window
/// `late_days` for the causes that need one: a date at a time, its rows merged with the lab's by
/// store as they come (`audit_spill::walk`), the verdicts past a share of the budget spilled.
pub fn audit(
    lab: &Lab,
    source: &str,
    foreign: impl IntoIterator<Item = std::io::Result<ForeignRow>>,
    late_days: u32,
) -> Result<AuditReport> {
    let snapshots = snapshots(lab)?;
    let out = Verdicts::new(&super::audit_spill::spill_of(lab));
    let mut walk = Retail { lab, source, late_days, snapshots: &snapshots, day: None, out };
    super::audit_spill::walk(&mut walk, lab.store().business_dates()?, foreign.into_iter())?;
    let (rows, counts) = walk.out.finish()?;
    Ok(AuditReport::of(source, rows, counts))
}

/// The retail audit's side of the walk.
struct Retail<'a> {
    lab: &'a Lab,
    source: &'a str,
    late_days: u32,
    snapshots: &'a Snapshots,
    day: Option<AuditDay<'a>>,
    out: Verdicts<AuditRow>,
}

impl<'a> super::audit_spill::Walk for Retail<'a> {
    type Key = String;
    type Foreign = ForeignRow;
    fn key(row: &ForeignRow) -> (NaiveDate, &String) {
        (row.business_date, &row.store_id)
    }
    fn begin(&mut self, d: NaiveDate) -> Result<Vec<String>> {
        let right = by_store(self.lab.store().gold_by_store(d, None)?);
        let keys = right.keys().cloned().collect();
        let (lab, late_days, snapshots) = (self.lab, self.late_days, self.snapshots);
        self.day = Some(AuditDay { lab, d, late_days, snapshots, facts: DateFacts::only(right), full: false, windows: None });
        Ok(keys)
    }
    fn row(&mut self, _: NaiveDate, store: &String, theirs: Option<ForeignRow>) -> Result<()> {
        let day = self.day.as_mut().ok_or_else(|| eyre!("a row before its date"))?;
        let row = day.row(store, theirs.as_ref())?;
        let bytes = std::mem::size_of::<AuditRow>() + row.store_id.len() + row.detail.len() + 16 + 8 * row.causes.len();
        self.out.push(row, bytes, |r: &AuditRow, counts: &mut Counts| counts.add(r.business_date, &r.causes, r.in_foreign, &places(r)))
    }
    fn twice(&self, d: NaiveDate, store: &String) -> String {
        format!("{}: {d} {store} is given twice; a gold table has one row per business date and store", self.source)
    }
}

/// Each store's (baskets, revenue) on a date.
type ByStore = BTreeMap<String, (i64, i64)>;

/// One date of the audit: the lab's gold, and the alternatives each cause would give, asked of
/// the raw zone only once a row of the date is wrong.
struct AuditDay<'a> {
    lab: &'a Lab,
    d: NaiveDate,
    late_days: u32,
    snapshots: &'a Snapshots,
    facts: DateFacts,
    /// Whether `facts` holds the alternatives, not only the date's gold.
    full: bool,
    /// Gold built with each window narrower than the lab's, widest first, once a row is
    /// unexplained.
    windows: Option<Vec<(u32, ByStore)>>,
}

impl AuditDay<'_> {
    /// The verdict on `store`, whose row in the foreign gold is `theirs`.
    fn row(&mut self, store: &str, theirs: Option<&ForeignRow>) -> Result<AuditRow> {
        let figures = theirs.filter(|r| r.unread.is_none()).map(|r| (r.baskets, r.revenue_minor));
        let unread = theirs.and_then(|r| r.unread.as_ref());
        if !self.full && (figures != pair(self.facts.right.get(store)) || unread.is_some()) {
            let right = std::mem::take(&mut self.facts.right);
            self.facts = facts(self.lab, self.d, self.late_days, right, self.snapshots)?;
            self.full = true;
        }
        let mut row = audit_row(self.d, store, figures, &self.facts);
        if let Some(why) = unread {
            let causes = if row.right.is_some() { Cause::UnreadableValue } else { Cause::ExtraRow };
            (row.causes, row.detail, row.in_foreign) = (vec![causes], why.clone(), true);
        }
        if row.causes == [Cause::Unexplained] && row.foreign.is_some() {
            self.narrower(&mut row)?;
        }
        Ok(row)
    }

    /// A row nothing else explains, tested against gold built with each narrower window than
    /// the lab's (from `late_days - 1` down to 0): a pipeline that stops waiting for late uploads
    /// sooner misses them (`late_arrivals_missed`, naming the window). Each window is a recount
    /// of the date, asked once for the date.
    fn narrower(&mut self, row: &mut AuditRow) -> Result<()> {
        let windows = match &mut self.windows {
            Some(w) => w,
            None => {
                let mut all = Vec::new();
                for w in (0..self.late_days).rev() {
                    let alt = self.lab.store().windowed(self.d, w)?.into_iter().map(|r| (r.store_id, (r.baskets, r.revenue_minor)));
                    all.push((w, alt.collect()));
                }
                self.windows.insert(all)
            }
        };
        if let Some((w, _)) = windows.iter().find(|(_, alt)| alt.get(&row.store_id).copied() == row.foreign) {
            (row.causes, row.detail) = narrower_window(self.d, *w, self.late_days);
        }
        Ok(())
    }
}

/// The verdict on a row that date `d` built with window `w`, narrower than the lab's, gives: the
/// retail audit's and a model's.
pub fn narrower_window(d: NaiveDate, w: u32, late_days: u32) -> (Vec<Cause>, String) {
    let last = d.checked_add_days(chrono::Days::new(w.into())).unwrap_or(d);
    (vec![Cause::LateArrivalsMissed], format!("gold with a {w}-day window, not {late_days}: uploads after {last} not counted"))
}

fn audit_row(d: NaiveDate, s: &str, foreign: Option<(i64, i64)>, f: &DateFacts) -> AuditRow {
    let right = pair(f.right.get(s));
    let known = [&f.right, &f.recount, &f.copies, &f.utc].iter().find_map(|m| m.get(s));
    let (currency, country) = known.map(|r| (r.currency.clone(), r.country.clone())).unwrap_or_default();
    let (causes, detail) = match (foreign, right) {
        (Some(a), Some(b)) if a == b => (vec![Cause::Matches], String::new()),
        (None, Some(_)) => (vec![Cause::MissingRow], "the foreign gold has no row for this store".to_string()),
        (Some(a), r) => verdict(causes_of(a, s, f), r.is_none(), || {
            let (rb, rr) = r.unwrap_or((0, 0));
            let baskets = i128::from(a.0) - i128::from(rb);
            let revenue = i128::from(a.1) - i128::from(rr);
            // In the store's currency where the lab knows it: `+₹0.01`, not `+1 minor units`.
            let money = match i64::try_from(revenue) {
                Ok(m) if !currency.is_empty() => crate::money::format_delta(m, &currency),
                _ => format!("{revenue:+} minor units"),
            };
            match r {
                Some(_) => format!("{baskets:+} baskets, {money} against the lab's row"),
                None => "a row the lab's gold does not have".to_string(),
            }
        }),
        (None, None) => (vec![Cause::Matches], String::new()),
    };
    AuditRow { business_date: d, store_id: s.to_string(), currency, country, in_foreign: foreign.is_some(), causes, detail, foreign, right }
}

impl AuditReport {
    /// The table's columns, without rows.
    fn head(&self) -> Table {
        Table::new(
            if self.all { "every row against the lab's gold" } else { "rows that differ from the lab's gold" },
            &[
                ("business_date", "date"),
                ("store_id", "store"),
                ("cause", "cause"),
                ("detail", "detail"),
                ("foreign_baskets", "their baskets"),
                ("foreign_revenue_minor", "their revenue"),
                ("right_baskets", "right baskets"),
                ("right_revenue_minor", "right revenue"),
            ],
        )
    }

    /// The rows the table lists (every one, or the wrong ones), in order.
    fn listed(&self) -> impl Iterator<Item = std::io::Result<AuditRow>> + '_ {
        self.rows.iter().filter(|r| self.all || r.as_ref().map_or(true, |r| is_wrong(&r.causes)))
    }

    fn listed_count(&self) -> usize {
        if self.all { self.rows.len() } else { self.counts.wrong() }
    }
}

fn cells(r: &AuditRow) -> Vec<Cell> {
    // A store the lab does not know has no currency: its amount is minor units of none.
    let money = |v: Option<(i64, i64)>, cur: &str| match v {
        Some((_, r)) if cur.is_empty() => Cell::Int(r),
        Some((_, r)) => Cell::Money { minor: r, currency: cur.to_string() },
        None => Cell::Empty,
    };
    let count = |v: Option<(i64, i64)>| v.map(|(b, _)| Cell::Int(b)).unwrap_or(Cell::Empty);
    let causes: Vec<&str> = r.causes.iter().map(|c| c.word()).collect();
    vec![
        Cell::Date(r.business_date),
        Cell::text(&r.store_id),
        Cell::text(causes.join(", ")),
        Cell::text(&r.detail),
        count(r.foreign),
        money(r.foreign, &r.currency),
        count(r.right),
        money(r.right, &r.currency),
    ]
}

impl Report for AuditReport {
    fn kind(&self) -> &'static str {
        "audit"
    }
    fn headline(&self) -> String {
        self.counts.line(&self.source)
    }
    fn tables(&self) -> Vec<Table> {
        let mut t = self.head();
        super::audit_spill::hold_rows(&mut t, self.listed(), cells);
        vec![t]
    }
    fn more_rows(&self, table: usize, each: &mut dyn FnMut(super::Row) -> std::io::Result<()>) -> std::io::Result<()> {
        if table == 0 { super::audit_spill::stream_rows(self.listed(), cells, each) } else { Ok(()) }
    }
    fn summary_tables(&self) -> Vec<Table> {
        self.counts.places.table().into_iter().collect()
    }
    fn notes(&self) -> Vec<Note> {
        let mut notes = self.counts.notes();
        notes.extend(super::audit_spill::held_note(self.listed_count()));
        notes
    }
}

impl AuditReport {
    /// Where the wrong rows fall: by store, by the store's country, by week.
    pub fn where_wrong(&self) -> &super::audit_where::WhereWrong {
        &self.counts.places
    }
}
