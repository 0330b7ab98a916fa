//! `recount audit --gold FILE`: a gold table another pipeline wrote, compared row by row with the
//! lab's gold on the grain (business date, store), each wrong row given the cause that explains
//! its difference exactly, tested against the landed raw zone: re-sent copies counted
//! (`duplicates_counted`), rows past the window kept (`beyond_window_included`), a build before
//! the late uploads landed (`late_arrivals_missed`) or before a corrected file
//! (`correction_not_applied`), a retried append (`appended_twice`), or a row on one side only.
//! Where none fits, the row is `unexplained`, with its residual.

use super::foreign::{self, GoldMap, IcebergFiles};
use super::{Cell, Note, Report, Status, Table};
use crate::lake::Lab;
use crate::store::StoreFigures;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, bail, eyre};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One row of a foreign gold table, mapped onto the grain and the measures.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ForeignRow {
    pub business_date: NaiveDate,
    pub store_id: String,
    pub baskets: i64,
    pub revenue_minor: i64,
    /// Why the row's figures cannot be read exactly (a float with a fraction, money of a store
    /// whose currency the lab does not know): then it is a wrong row of its own, with this
    /// reason, and `baskets` and `revenue_minor` are not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unread: Option<String>,
}

/// The columns a foreign gold must have (others are ignored).
const COLUMNS: [&str; 4] = ["business_date", "store_id", "baskets", "revenue_minor"];

/// Reads a foreign gold (`foreign::each_record`), its columns mapped by `map`; `currency_of` gives
/// a store's currency, for revenue in major units.
pub fn read_foreign(
    path: &Path,
    map: &GoldMap,
    currency_of: &dyn Fn(&str) -> Option<String>,
    iceberg: IcebergFiles<'_>,
) -> Result<Vec<ForeignRow>> {
    map.check_columns(&COLUMNS.map(str::to_string))?;
    let needed: Vec<String> = COLUMNS.iter().map(|c| map.column(c).to_string()).collect();
    let mut out = Vec::new();
    let mut budget = foreign::RowBudget::default();
    foreign::each_record(path, &needed, iceberg, &mut |n, values| {
        let row = foreign_row(path, n, &values, map, currency_of)?;
        budget.charge(std::mem::size_of::<ForeignRow>() + row.store_id.len())?;
        out.push(row);
        Ok(())
    })?;
    Ok(out)
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

/// A row's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Matches,
    DuplicatesCounted,
    UtcBusinessDate,
    BeyondWindowIncluded,
    LateArrivalsMissed,
    CorrectionNotApplied,
    AppendedTwice,
    MissingRow,
    ExtraRow,
    /// A row whose figures cannot be read exactly (a float with a fraction): wrong on its own.
    UnreadableValue,
    Unexplained,
}

impl Cause {
    pub fn word(self) -> &'static str {
        match self {
            Cause::Matches => "matches",
            Cause::DuplicatesCounted => "duplicates_counted",
            Cause::UtcBusinessDate => "utc_business_date",
            Cause::BeyondWindowIncluded => "beyond_window_included",
            Cause::LateArrivalsMissed => "late_arrivals_missed",
            Cause::CorrectionNotApplied => "correction_not_applied",
            Cause::AppendedTwice => "appended_twice",
            Cause::MissingRow => "missing_row",
            Cause::ExtraRow => "extra_row",
            Cause::UnreadableValue => "unreadable_value",
            Cause::Unexplained => "unexplained",
        }
    }
}

/// One (date, store) of the audit.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AuditRow {
    pub business_date: NaiveDate,
    pub store_id: String,
    /// The store's currency; empty for a store the lab does not know (null in JSON, as a
    /// missing amount's currency is).
    #[serde(serialize_with = "empty_as_null")]
    pub currency: String,
    /// The store's country; empty for a store the lab does not know.
    #[serde(serialize_with = "empty_as_null")]
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

#[derive(Debug, Clone, serde::Serialize)]
pub struct AuditReport {
    pub source: String,
    pub rows: Vec<AuditRow>,
    /// Every row in the table (machines' formats), not only the wrong ones.
    #[serde(skip)]
    pub all: bool,
}

impl AuditReport {
    pub fn wrong(&self) -> usize {
        wrong(self.rows.iter().map(|r| r.causes.as_slice()))
    }

    /// The audit of one business date: its rows, every one listed, the wrong ones first (the
    /// explorer's Audit screen).
    pub fn of_date(&self, d: NaiveDate) -> AuditReport {
        let mut rows: Vec<AuditRow> = self.rows.iter().filter(|r| r.business_date == d).cloned().collect();
        rows.sort_by_key(|r| r.causes == [Cause::Matches]);
        AuditReport { source: self.source.clone(), rows, all: true }
    }
}

/// How many rows of an audit are wrong, by their causes (a right row's are `[matches]`): the
/// retail audit's and a model's.
pub fn wrong<'a>(rows: impl Iterator<Item = &'a [Cause]>) -> usize {
    rows.filter(|c| is_wrong(c)).count()
}

/// Whether a row with these causes is wrong: any cause but a match.
pub fn is_wrong(causes: &[Cause]) -> bool {
    causes != [Cause::Matches]
}

/// An audit's headline, the retail audit's and a model's: how many rows the foreign gold has,
/// how many of them match and how many are wrong, then the lab's rows it lacks. Each row comes as
/// its causes and whether the foreign gold has it.
pub fn counts_line<'a>(source: &str, rows: impl Iterator<Item = (&'a [Cause], bool)>) -> String {
    let (mut read, mut matched, mut lacked) = (0usize, 0usize, 0usize);
    for (causes, theirs) in rows {
        read += usize::from(theirs);
        lacked += usize::from(!theirs);
        matched += usize::from(causes == [Cause::Matches]);
    }
    let n = |k: usize| crate::money::format_count(i64::try_from(k).unwrap_or(i64::MAX));
    let mut line = format!("audit of {source}: {} of its {} rows match, {} wrong", n(matched), n(read), n(read - matched));
    if lacked > 0 {
        line.push_str(&format!("; it lacks {} row(s) of the lab's gold", n(lacked)));
    }
    line
}

/// An audit's summary: how many rows each cause names, failing when any row is wrong.
pub fn causes_note<'a>(rows: impl Iterator<Item = &'a [Cause]> + Clone) -> Vec<Note> {
    let mut counts: BTreeMap<Cause, usize> = BTreeMap::new();
    for c in rows.clone().flatten() {
        *counts.entry(*c).or_default() += 1;
    }
    let list: Vec<String> = counts.iter().map(|(c, n)| format!("{} {n}", c.word())).collect();
    vec![Note { status: if wrong(rows) == 0 { Status::Pass } else { Status::Fail }, text: list.join(", ") }]
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
struct DateFacts {
    right: BTreeMap<String, StoreFigures>,
    copies: BTreeMap<String, StoreFigures>,
    utc: BTreeMap<String, StoreFigures>,
    recount: BTreeMap<String, StoreFigures>,
    /// Gold as of each earlier version of the date, oldest first.
    earlier: Vec<Earlier>,
}

/// An earlier version of a date's gold, and the snapshot that replaced it.
struct Earlier {
    snapshot: i64,
    gold: BTreeMap<String, StoreFigures>,
    replaced_by: i64,
    /// The upload whose run replaced it, and whether that upload carried a corrected file.
    upload: Option<NaiveDate>,
    corrected: bool,
}

impl DateFacts {
    /// A date whose every row matches: its gold, and no alternatives.
    fn only(right: BTreeMap<String, StoreFigures>) -> DateFacts {
        DateFacts { right, copies: BTreeMap::new(), utc: BTreeMap::new(), recount: BTreeMap::new(), earlier: Vec::new() }
    }
}

fn by_store(rows: Vec<StoreFigures>) -> BTreeMap<String, StoreFigures> {
    rows.into_iter().map(|r| (r.store_id.clone(), r)).collect()
}

/// Every snapshot of the lab by id, read once for an audit: the runs that replaced a version.
type Snapshots = BTreeMap<i64, crate::store::SnapshotRow>;

fn snapshots(lab: &Lab) -> Result<Snapshots> {
    Ok(lab.store().snapshots(i64::MAX)?.into_iter().map(|s| (s.snapshot_id, s)).collect())
}

/// What the lab says of date `d` whose gold now is `right`.
fn facts(lab: &Lab, d: NaiveDate, late_days: u32, right: BTreeMap<String, StoreFigures>, snapshots: &Snapshots) -> Result<DateFacts> {
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

fn pair(f: Option<&StoreFigures>) -> Option<(i64, i64)> {
    f.map(|f| (f.baskets, f.revenue_minor))
}

/// The causes that give `foreign` exactly, with what each names.
fn causes_of(foreign: (i64, i64), store_id: &str, f: &DateFacts) -> Vec<(Cause, String)> {
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

/// Audits `foreign` against the lab's gold, window `late_days` for the causes that need one.
pub fn audit(lab: &Lab, source: &str, foreign: &[ForeignRow], late_days: u32) -> Result<AuditReport> {
    let mut theirs: BTreeMap<(NaiveDate, String), (i64, i64)> = BTreeMap::new();
    let mut unread: BTreeMap<(NaiveDate, String), String> = BTreeMap::new();
    for r in foreign {
        let key = (r.business_date, r.store_id.clone());
        if theirs.contains_key(&key) || unread.contains_key(&key) {
            bail!("{source}: {} {} is given twice; a gold table has one row per business date and store", r.business_date, r.store_id);
        }
        if let Some(why) = &r.unread {
            unread.insert(key, why.clone());
        } else {
            theirs.insert(key, (r.baskets, r.revenue_minor));
        }
    }
    let snapshots = snapshots(lab)?;
    let mut dates: BTreeSet<NaiveDate> = lab.store().business_dates()?.into_iter().collect();
    dates.extend(foreign.iter().map(|r| r.business_date));
    let mut rows = Vec::new();
    for d in dates {
        let right = by_store(lab.store().gold_by_store(d, None)?);
        let theirs_on = |d: NaiveDate| theirs.range((d, String::new())..).take_while(move |(k, _)| k.0 == d);
        let unread_on = unread.range((d, String::new())..).take_while(|(k, _)| k.0 == d).map(|(k, _)| k.1.clone());
        let stores: BTreeSet<String> = right.keys().cloned().chain(theirs_on(d).map(|(k, _)| k.1.clone())).chain(unread_on).collect();
        let all_match = stores.iter().all(|s| theirs.get(&(d, s.clone())).copied() == pair(right.get(s)));
        // The alternatives are asked of the raw zone only for a date with a wrong row.
        let f = if all_match { DateFacts::only(right) } else { facts(lab, d, late_days, right, &snapshots)? };
        let mut day: Vec<AuditRow> = stores
            .iter()
            .map(|s| {
                let mut row = audit_row(d, s, theirs.get(&(d, s.clone())).copied(), &f);
                if let Some(why) = unread.get(&(d, s.clone())) {
                    let causes = if row.right.is_some() { Cause::UnreadableValue } else { Cause::ExtraRow };
                    (row.causes, row.detail, row.in_foreign) = (vec![causes], why.clone(), true);
                }
                row
            })
            .collect();
        if day.iter().any(|r| r.causes == [Cause::Unexplained]) {
            narrower_windows(lab, d, late_days, &mut day)?;
        }
        rows.extend(day);
    }
    Ok(AuditReport { source: source.to_string(), rows, all: false })
}

/// The verdict on a row that date `d` built with window `w`, narrower than the lab's, gives: the
/// retail audit's and a model's.
pub fn narrower_window(d: NaiveDate, w: u32, late_days: u32) -> (Vec<Cause>, String) {
    let last = d.checked_add_days(chrono::Days::new(w.into())).unwrap_or(d);
    (vec![Cause::LateArrivalsMissed], format!("gold with a {w}-day window, not {late_days}: uploads after {last} not counted"))
}

/// A row nothing else explains, tested against gold built with each narrower window than the
/// lab's (from `late_days - 1` down to 0): a pipeline that stops waiting for late uploads sooner
/// misses them (`late_arrivals_missed`, naming the window). Asked only for such a row: each
/// window is a recount of the date.
fn narrower_windows(lab: &Lab, d: NaiveDate, late_days: u32, day: &mut [AuditRow]) -> Result<()> {
    for w in (0..late_days).rev() {
        let alt: BTreeMap<String, (i64, i64)> =
            lab.store().windowed(d, w)?.into_iter().map(|r| (r.store_id, (r.baskets, r.revenue_minor))).collect();
        for r in day.iter_mut().filter(|r| r.causes == [Cause::Unexplained]) {
            if r.foreign.is_some() && alt.get(&r.store_id).copied() == r.foreign {
                (r.causes, r.detail) = narrower_window(d, w, late_days);
            }
        }
    }
    Ok(())
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

/// A row put wrong on purpose: its date, its store and its cause.
pub type Fault = (NaiveDate, String, Cause);

/// A foreign gold for a walkthrough: the lab's gold with one row of each fault put in, each
/// fault's row taken from what the lab says that bug gives (so `audit` names exactly these rows).
/// Returns the rows, and each faulty row with its cause.
pub fn example(lab: &Lab, late_days: u32) -> Result<(Vec<ForeignRow>, Vec<Fault>)> {
    let mut gold: BTreeMap<(NaiveDate, String), (i64, i64)> = BTreeMap::new();
    let snapshots = snapshots(lab)?;
    let dates = lab.store().business_dates()?;
    let mut all = Vec::new();
    for &d in &dates {
        let f = facts(lab, d, late_days, by_store(lab.store().gold_by_store(d, None)?), &snapshots)?;
        gold.extend(f.right.values().map(|r| ((d, r.store_id.clone()), (r.baskets, r.revenue_minor))));
        all.push((d, f));
    }
    let mut faults: Vec<Fault> = Vec::new();
    let taken = |faults: &[Fault], d: NaiveDate, s: &str| faults.iter().any(|(fd, fs, _)| *fd == d && fs == s);
    // One row for each cause the raw zone can show: the first whose figures only that cause gives.
    for cause in [Cause::DuplicatesCounted, Cause::UtcBusinessDate, Cause::BeyondWindowIncluded, Cause::LateArrivalsMissed] {
        let found = all.iter().find_map(|(d, f)| {
            f.right.keys().find_map(|s| {
                let alt = match cause {
                    Cause::DuplicatesCounted => pair(f.copies.get(s)),
                    Cause::UtcBusinessDate => pair(f.utc.get(s)),
                    Cause::BeyondWindowIncluded => pair(f.recount.get(s)),
                    _ => f.earlier.iter().rev().find_map(|e| pair(e.gold.get(s)).filter(|_| !e.corrected)),
                }?;
                let only = causes_of(alt, s, f).iter().map(|c| c.0).collect::<Vec<_>>() == [cause];
                (only && !taken(&faults, *d, s)).then(|| (*d, s.clone(), alt))
            })
        });
        if let Some((d, s, alt)) = found {
            gold.insert((d, s.clone()), alt);
            faults.push((d, s, cause));
        }
    }
    // A retried append, a row left out, a row off by one minor unit, and a store there is none of.
    let mut rest: Vec<(NaiveDate, String)> = gold.keys().filter(|(d, s)| !taken(&faults, *d, s)).cloned().collect();
    rest.sort();
    for (i, cause) in
        [(rest.len() / 5, Cause::AppendedTwice), (2 * rest.len() / 5, Cause::MissingRow), (3 * rest.len() / 5, Cause::Unexplained)]
    {
        let Some(key) = rest.get(i).cloned() else { continue };
        let (b, r) = gold[&key];
        match cause {
            Cause::AppendedTwice => gold.insert(key.clone(), (b * 2, r.checked_mul(2).ok_or_else(|| eyre!("revenue overflows"))?)),
            Cause::MissingRow => gold.remove(&key),
            _ => gold.insert(key.clone(), (b, r.checked_add(1).ok_or_else(|| eyre!("revenue overflows"))?)),
        };
        faults.push((key.0, key.1, cause));
    }
    if let Some(d) = dates.first() {
        gold.insert((*d, "EXTRA-1".to_string()), (1, 100));
        faults.push((*d, "EXTRA-1".to_string(), Cause::ExtraRow));
    }
    faults.sort();
    let rows = gold.into_iter().map(|((business_date, store_id), (baskets, revenue_minor))| ForeignRow {
        business_date,
        store_id,
        baskets,
        revenue_minor,
        unread: None,
    });
    Ok((rows.collect(), faults))
}

impl Report for AuditReport {
    fn kind(&self) -> &'static str {
        "audit"
    }
    fn headline(&self) -> String {
        counts_line(&self.source, self.rows.iter().map(|r| (r.causes.as_slice(), r.in_foreign)))
    }
    fn tables(&self) -> Vec<Table> {
        let mut t = Table::new(
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
        );
        // A store the lab does not know has no currency: its amount is minor units of none.
        let money = |v: Option<(i64, i64)>, cur: &str| match v {
            Some((_, r)) if cur.is_empty() => Cell::Int(r),
            Some((_, r)) => Cell::Money { minor: r, currency: cur.to_string() },
            None => Cell::Empty,
        };
        let count = |v: Option<(i64, i64)>| v.map(|(b, _)| Cell::Int(b)).unwrap_or(Cell::Empty);
        for r in self.rows.iter().filter(|r| self.all || r.causes != [Cause::Matches]) {
            let causes: Vec<&str> = r.causes.iter().map(|c| c.word()).collect();
            t.push(vec![
                Cell::Date(r.business_date),
                Cell::text(&r.store_id),
                Cell::text(causes.join(", ")),
                Cell::text(&r.detail),
                count(r.foreign),
                money(r.foreign, &r.currency),
                count(r.right),
                money(r.right, &r.currency),
            ]);
        }
        vec![t]
    }
    fn summary_tables(&self) -> Vec<Table> {
        self.where_wrong().table().into_iter().collect()
    }
    fn notes(&self) -> Vec<Note> {
        let mut notes = causes_note(self.rows.iter().map(|r| r.causes.as_slice()));
        notes.extend(self.where_wrong().note());
        notes
    }
}

impl AuditReport {
    /// Where the wrong rows fall: by store, by the store's country, by week.
    pub fn where_wrong(&self) -> super::audit_where::WhereWrong {
        super::audit_where::WhereWrong::of(self.rows.iter().map(|r| {
            (
                r.business_date,
                vec![
                    ("store_id", r.store_id.as_str()),
                    ("country", if r.country.is_empty() { "(a store not in the lab)" } else { r.country.as_str() }),
                ],
                is_wrong(&r.causes),
            )
        }))
    }
}
