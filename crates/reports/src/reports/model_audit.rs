//! `recount audit --gold SOURCE` on a model lab: a foreign gold in the model's columns (by name),
//! compared row by row with the lab's gold on the model's grain, each wrong row given every
//! cause that gives it exactly, tested against the landed files: copies counted
//! (`duplicates_counted`), events dated in UTC (`utc_business_date`), rows past the window kept
//! (`beyond_window_included`), a build before late uploads or a corrected file
//! (`late_arrivals_missed`, `correction_not_applied`), a retried append (`appended_twice`), or a
//! row on one side only. The causes are retail's (`audit::Cause`); the alternatives are the model
//! lab's statements (queries/model.sql).

use super::audit::Cause;
use super::audit_spill::{Sorted, Sorter, SpilledRows};
use super::audit_where::{Counts, Verdicts};
use super::foreign::{self, GoldMap, IcebergFiles};
use super::{Cell, Note, Report, Table};
use crate::lake::Lab;
use crate::lake::model::rows_of;
use crate::model::Model;
use crate::model::recount::ModelRow;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, eyre};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Measures by grain on one date.
type ByGrain = BTreeMap<Vec<String>, Vec<i64>>;

/// A row of a model's foreign gold: its date, its grain and its measures, or why its measures
/// cannot be read exactly (a wrong row of its own, `unreadable_value`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct ModelForeignRow {
    pub business_date: NaiveDate,
    pub grain: Vec<String>,
    pub measures: Vec<i64>,
    #[serde(default)]
    pub unread: Option<String>,
}

/// Reads a foreign gold of `model`: its date, grain and measures, by the model's names or the
/// foreign names `map` gives (the attributes are the lab's, as the grain's dimension row gives
/// them, so a gold need not carry them); a money measure in major units turned into minor ones by
/// the currency the lab's dimension names for its grain. The rows come back in (date, grain)
/// order, sorted within the budget (`audit_spill::Sorter`).
pub fn read_foreign(
    path: &Path,
    lab: &Lab,
    model: &Model,
    map: &GoldMap,
    iceberg: IcebergFiles<'_>,
    spill: &Path,
) -> Result<Sorted<'static, ModelForeignRow>> {
    map.check_columns(&model.gold_columns())?;
    let currency_of = currency_by_dimension(model, crate::lake::model::dimension_table(lab, model)?);
    let ours: Vec<&str> = std::iter::once("business_date")
        .chain(model.grain.iter().map(String::as_str))
        .chain(model.measures.iter().map(|m| m.name.as_str()))
        .collect();
    let columns: Vec<String> = ours.iter().map(|c| map.column(c).to_string()).collect();
    let g = model.grain.len();
    let mut sorter = Sorter::new(spill, super::audit_spill::share());
    foreign::each_record(path, &columns, iceberg, &mut |n, values| {
        // The values come in that order: the date, the grain, the measures.
        let bad = |i: usize, why: String| eyre!("{} {n}: {} {why}", path.display(), columns[i]);
        let business_date = foreign::date(&values[0]).map_err(|e| bad(0, e))?;
        let grain = (1..1 + g).map(|i| foreign::id(&values[i]).map_err(|e| bad(i, e))).collect::<Result<Vec<_>>>()?;
        // A measure that cannot be read exactly makes a wrong row of its own, not an error.
        let measures = model
            .measures
            .iter()
            .enumerate()
            .map(|(k, m)| {
                let i = 1 + g + k;
                let currency = match (map.unit, &m.currency) {
                    (crate::raw::source::Unit::Major, Some(_)) => Some(currency_of(&grain, k).ok_or_else(|| {
                        format!(
                            "{n}: its grain is not in the lab, so the digits of its currency, and its {} in minor units, are unknown",
                            columns[i]
                        )
                    })?),
                    _ => None,
                };
                foreign::money(&values[i], map.unit, currency.as_deref()).map_err(|e| format!("{n}: {} {e}", columns[i]))
            })
            .collect::<Result<Vec<i64>, String>>();
        let (measures, unread) = match measures {
            Ok(m) => (m, None),
            Err(why) => (Vec::new(), Some(why)),
        };
        let bytes = std::mem::size_of::<ModelForeignRow>()
            + grain.iter().map(|k| k.len() + 24).sum::<usize>()
            + 8 * measures.len()
            + unread.as_ref().map_or(0, String::len);
        sorter.push(ModelForeignRow { business_date, grain, measures, unread }, bytes).wrap_err("spilling the foreign gold's rows")?;
        Ok(())
    })?;
    Ok(sorter.finish())
}

/// Money measure `k`'s currency for a grain: the attribute that names it in the dimension row of
/// the grain's dimension key (None: the key is not in the lab).
fn currency_by_dimension(model: &Model, dims: crate::model::read::DimensionTable) -> impl Fn(&[String], usize) -> Option<String> {
    let key = model.dimension.as_ref().and_then(|d| model.grain.iter().position(|g| *g == d.key));
    let at: Vec<Option<usize>> = model.measures.iter().map(|m| model.currency_at(m)).collect();
    move |grain, k| {
        let row = dims.rows.get(grain.get(key?)?)?;
        row.attributes.get(at[k]?).cloned()
    }
}

/// One (date, grain) of the audit.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ModelAuditRow {
    pub business_date: NaiveDate,
    pub grain: Vec<String>,
    /// The grain's attributes in the lab's gold (a money measure's currency among them); none
    /// for a grain the lab's gold does not have.
    #[serde(default)]
    pub attributes: Vec<String>,
    pub causes: Vec<Cause>,
    pub detail: String,
    /// Whether the foreign gold has the row (`foreign` is None for one it has but cannot read).
    pub in_foreign: bool,
    pub foreign: Option<Vec<i64>>,
    pub right: Option<Vec<i64>>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelAuditReport {
    pub source: String,
    pub model: Model,
    /// In (date, grain) order; past a share of the memory budget, on disk (`audit_spill`).
    pub rows: SpilledRows<ModelAuditRow>,
    #[serde(skip)]
    pub all: bool,
    #[serde(skip)]
    pub counts: Counts,
}

impl ModelAuditReport {
    pub fn wrong(&self) -> usize {
        self.counts.wrong()
    }

    /// Where the wrong rows fall: by each field of the grain, by week.
    pub fn where_wrong(&self) -> &super::audit_where::WhereWrong {
        &self.counts.places
    }

    /// The audit of one business date, as retail's `AuditReport::of_date`: its rows, every one
    /// listed, the wrong ones first (the explorer's Audit screen).
    pub fn of_date(&self, d: NaiveDate) -> Result<ModelAuditReport> {
        let mut rows = self.rows.of_date(d, |r| r.business_date).wrap_err("reading the audit's spilled rows")?;
        rows.sort_by_key(|r| r.causes == [Cause::Matches]);
        let mut counts = Counts::default();
        for r in &rows {
            counts.add(d, &r.causes, r.in_foreign, &places(&self.model, r))?;
        }
        counts.finish()?;
        Ok(ModelAuditReport { source: self.source.clone(), model: self.model.clone(), rows: SpilledRows::held(rows), all: true, counts })
    }
}

/// A row's fields for where the wrong rows fall: each field of its grain, then each attribute
/// of the grain in the lab (`NOT_IN_LAB` for a grain the lab does not have).
fn places<'r>(model: &'r Model, r: &'r ModelAuditRow) -> Vec<(&'r str, &'r str)> {
    let grain = model.grain.iter().map(String::as_str).zip(r.grain.iter().map(String::as_str));
    let attributes = model
        .attributes
        .iter()
        .enumerate()
        .map(|(i, a)| (a.as_str(), r.attributes.get(i).map_or(super::audit_where::NOT_IN_LAB, String::as_str)));
    grain.chain(attributes).collect()
}

/// What the lab gives for one date, by each cause's rule.
struct Facts {
    right: ByGrain,
    copies: ByGrain,
    utc: ByGrain,
    recount: ByGrain,
    /// Each earlier version's gold, with what replaced it: (snapshot, gold, by snapshot, upload, corrected).
    earlier: Vec<(i64, ByGrain, i64, Option<NaiveDate>, bool)>,
}

fn by_grain(model: &Model, cells: Vec<crate::store::model::ModelCells>) -> ByGrain {
    rows_of(model, cells).into_iter().map(|r| (r.grain, r.measures)).collect()
}

fn facts(lab: &Lab, model: &Model, d: NaiveDate, late_days: u32, right: ByGrain, recount: &[ModelRow]) -> Result<Facts> {
    let store = lab.store();
    let versions = store.model_date_versions(d)?;
    let mut earlier = Vec::new();
    for pair in versions.windows(2) {
        let (then, next) = (&pair[0], &pair[1]);
        // A run whose files include a second version or later applied a correction.
        let corrected = next.files.split(", ").any(|f| f.rsplit_once(" v").is_some_and(|(_, v)| v.parse::<i32>().is_ok_and(|v| v > 1)));
        earlier.push((
            then.snapshot_id,
            by_grain(model, store.model_version_gold(then.snapshot_id, d)?),
            next.snapshot_id,
            next.upload,
            corrected,
        ));
    }
    Ok(Facts {
        right,
        copies: by_grain(model, store.model_copies_counted(d, late_days)?),
        utc: by_grain(model, store.model_utc_dated(d, late_days)?),
        recount: recount.iter().filter(|r| r.business_date == d).map(|r| (r.grain.clone(), r.measures.clone())).collect(),
        earlier,
    })
}

/// The causes that give `foreign` exactly, with what each names.
fn causes_of(foreign: &[i64], grain: &[String], f: &Facts) -> Vec<(Cause, String)> {
    let right = f.right.get(grain);
    let gives = |m: &ByGrain| m.get(grain).is_some_and(|v| v == foreign) && right.is_none_or(|r| r != foreign);
    let mut found = Vec::new();
    if gives(&f.copies) {
        found.push((Cause::DuplicatesCounted, "every copy of a re-sent entity counted".to_string()));
    }
    if gives(&f.utc) {
        found.push((Cause::UtcBusinessDate, "events dated in UTC, not in the dimension's zone".to_string()));
    }
    if gives(&f.recount) {
        found.push((Cause::BeyondWindowIncluded, "rows that arrived past the window kept".to_string()));
    }
    if let Some((then, _, next, upload, corrected)) = f.earlier.iter().rev().find(|e| gives(&e.1)) {
        let upload = upload.map(|u| format!(" (upload {u})")).unwrap_or_default();
        found.push(if *corrected {
            (Cause::CorrectionNotApplied, format!("gold as of snapshot {then}, before snapshot {next}{upload} applied a corrected file"))
        } else {
            (Cause::LateArrivalsMissed, format!("gold as of snapshot {then}, before snapshot {next}{upload} added late rows"))
        });
    }
    let mut bases: Vec<(&str, &Vec<i64>)> = right.map(|r| vec![("the right row", r)]).unwrap_or_default();
    if let Some(c) = f.copies.get(grain) {
        bases.push(("the duplicates_counted row", c));
    }
    for (name, base) in bases {
        if let Some(k) = multiple(foreign, base) {
            found.push((Cause::AppendedTwice, format!("{k} times {name}")));
            break;
        }
    }
    found
}

/// `k` when `foreign` is exactly `k` (2 or more) times `base`, measure by measure.
fn multiple(foreign: &[i64], base: &[i64]) -> Option<i64> {
    let (f, b) = foreign.iter().zip(base).find(|(_, b)| **b != 0)?;
    let k = (f % b == 0).then(|| f / b).filter(|k| *k >= 2)?;
    foreign.iter().zip(base).all(|(f, b)| b.checked_mul(k) == Some(*f)).then_some(k)
}

/// Audits `foreign`, in (date, grain) order (`read_foreign`), against a model lab's gold: a date
/// at a time, its rows merged with the lab's by grain as they come (`audit_spill::walk`), the
/// verdicts past a share of the budget spilled.
pub fn audit(
    lab: &Lab,
    model: &Model,
    source: &str,
    foreign: impl IntoIterator<Item = std::io::Result<ModelForeignRow>>,
    late_days: u32,
) -> Result<ModelAuditReport> {
    let mut gold: BTreeMap<NaiveDate, ByGrain> = BTreeMap::new();
    // Each grain's attributes, for a residual's money in its currency.
    let mut attributes: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    for r in rows_of(model, lab.store().model_gold(None)?) {
        attributes.entry(r.grain.clone()).or_insert(r.attributes);
        gold.entry(r.business_date).or_default().insert(r.grain, r.measures);
    }
    let dates: Vec<NaiveDate> = gold.keys().copied().collect();
    let out = Verdicts::new(&super::audit_spill::spill_of(lab));
    let mut walk = Models { lab, model, source, late_days, gold, attributes, recount: None, day: ModelAuditDay::default(), out };
    super::audit_spill::walk(&mut walk, dates, foreign.into_iter())?;
    let (rows, counts) = walk.out.finish()?;
    Ok(ModelAuditReport { source: source.to_string(), model: model.clone(), rows, all: false, counts })
}

/// A model audit's side of the walk.
struct Models<'a> {
    lab: &'a Lab,
    model: &'a Model,
    source: &'a str,
    late_days: u32,
    /// The lab's gold by date, each date's taken as the walk reaches it.
    gold: BTreeMap<NaiveDate, ByGrain>,
    attributes: BTreeMap<Vec<String>, Vec<String>>,
    /// The recount (every landed file), read once, for the first date with a wrong row.
    recount: Option<Vec<ModelRow>>,
    day: ModelAuditDay,
    out: Verdicts<ModelAuditRow>,
}

/// The date the walk is on: its gold, then the alternatives once a row is wrong, then gold built
/// with each narrower window once a row is unexplained.
#[derive(Default)]
struct ModelAuditDay {
    right: ByGrain,
    facts: Option<Facts>,
    windows: Option<Vec<(u32, ByGrain)>>,
}

impl super::audit_spill::Walk for Models<'_> {
    type Key = Vec<String>;
    type Foreign = ModelForeignRow;
    fn key(row: &ModelForeignRow) -> (NaiveDate, &Vec<String>) {
        (row.business_date, &row.grain)
    }
    fn begin(&mut self, d: NaiveDate) -> Result<Vec<Vec<String>>> {
        self.day = ModelAuditDay { right: self.gold.remove(&d).unwrap_or_default(), facts: None, windows: None };
        Ok(self.day.right.keys().cloned().collect())
    }
    fn row(&mut self, d: NaiveDate, grain: &Vec<String>, theirs: Option<ModelForeignRow>) -> Result<()> {
        let unread = theirs.as_ref().and_then(|r| r.unread.clone());
        let foreign = theirs.filter(|r| r.unread.is_none()).map(|r| r.measures);
        let right = self.day.facts.as_ref().map_or(&self.day.right, |f| &f.right).get(grain).cloned();
        if self.day.facts.is_none() && (foreign != right || unread.is_some()) {
            if self.recount.is_none() {
                self.recount = Some(crate::lake::model::recompute(self.lab, self.model)?);
            }
            let right = std::mem::take(&mut self.day.right);
            let recount = self.recount.as_deref().unwrap_or_default();
            self.day.facts = Some(facts(self.lab, self.model, d, self.late_days, right, recount)?);
        }
        let mut r = row((self.model, &self.attributes), d, grain.clone(), foreign, right, self.day.facts.as_ref());
        if let Some(why) = unread {
            let cause = if r.right.is_some() { Cause::UnreadableValue } else { Cause::ExtraRow };
            (r.causes, r.detail, r.in_foreign) = (vec![cause], why, true);
        }
        if r.causes == [Cause::Unexplained] && r.foreign.is_some() {
            self.narrower(d, &mut r)?;
        }
        let bytes = std::mem::size_of::<ModelAuditRow>()
            + r.grain.iter().map(|k| k.len() + 24).sum::<usize>()
            + r.detail.len()
            + 16 * self.model.measures.len();
        let model = self.model;
        self.out.push(r, bytes, |r: &ModelAuditRow, counts: &mut Counts| counts.add(d, &r.causes, r.in_foreign, &places(model, r)))
    }
    fn twice(&self, d: NaiveDate, grain: &Vec<String>) -> String {
        format!("{}: {d} {} is given twice; a gold table has one row per business date and grain", self.source, grain.join("/"))
    }
}

impl Models<'_> {
    /// A row nothing else explains, tested against gold built with each narrower window than the
    /// lab's, widest first: a job that stops waiting for late uploads sooner
    /// (`late_arrivals_missed`, naming it). Each window is asked once for the date.
    fn narrower(&mut self, d: NaiveDate, r: &mut ModelAuditRow) -> Result<()> {
        let windows = match &mut self.day.windows {
            Some(w) => w,
            None => {
                let mut all = Vec::new();
                for w in (0..self.late_days).rev() {
                    all.push((w, by_grain(self.model, self.lab.store().model_windowed(d, w)?)));
                }
                self.day.windows.insert(all)
            }
        };
        if let Some((w, _)) = windows.iter().find(|(_, alt)| alt.get(&r.grain) == r.foreign.as_ref()) {
            (r.causes, r.detail) = super::audit::narrower_window(d, *w, self.late_days);
        }
        Ok(())
    }
}

/// The model, and each grain's attributes in the lab's gold.
type Context<'a> = (&'a Model, &'a BTreeMap<Vec<String>, Vec<String>>);

fn row(
    (model, attributes): Context<'_>,
    d: NaiveDate,
    grain: Vec<String>,
    foreign: Option<Vec<i64>>,
    right: Option<Vec<i64>>,
    f: Option<&Facts>,
) -> ModelAuditRow {
    let (causes, detail) = match (&foreign, &right, f) {
        (Some(a), Some(b), _) if a == b => (vec![Cause::Matches], String::new()),
        (None, None, _) => (vec![Cause::Matches], String::new()),
        (None, Some(_), _) => (vec![Cause::MissingRow], "the foreign gold has no row for this grain".to_string()),
        (Some(a), r, Some(f)) => super::audit::verdict(causes_of(a, &grain, f), r.is_none(), || match r {
            Some(b) => format!("{} against the lab's row", residual(model, attributes.get(&grain), a, b)),
            None => "a row the lab's gold does not have".to_string(),
        }),
        (Some(_), _, None) => (vec![Cause::Unexplained], String::new()),
    };
    let attributes = attributes.get(&grain).cloned().unwrap_or_default();
    ModelAuditRow { business_date: d, grain, attributes, causes, detail, in_foreign: foreign.is_some(), foreign, right }
}

/// How a foreign row's measures differ from the lab's, each by name as retail's residual says
/// them: `+1 records, +£0.01 revenue_minor` (money in its currency where the grain's row names it).
fn residual(model: &Model, attributes: Option<&Vec<String>>, theirs: &[i64], ours: &[i64]) -> String {
    let parts: Vec<String> = model
        .measures
        .iter()
        .zip(theirs.iter().zip(ours))
        .map(|(m, (x, y))| {
            let delta = i128::from(*x) - i128::from(*y);
            let currency = model.currency_at(m).and_then(|i| attributes.and_then(|a| a.get(i))).filter(|c| !c.is_empty());
            match (currency, i64::try_from(delta)) {
                (Some(c), Ok(d)) => format!("{} {}", crate::money::format_delta(d, c), m.name),
                _ => format!("{delta:+} {}", m.name),
            }
        })
        .collect();
    parts.join(", ")
}

/// A row `example` made wrong on purpose: its date, grain and cause.
pub type ModelFault = (NaiveDate, Vec<String>, Cause);

/// A model lab's gold with one row of each fault the raw zone can show, for a walkthrough of the
/// audit (`generate --foreign-gold` on a model's world): each fault's row is one that only its
/// cause gives; then a retried append, a row left out, one off by one and a grain there is none of.
pub fn example(lab: &Lab, model: &Model, late_days: u32) -> Result<(Vec<ModelRow>, Vec<ModelFault>)> {
    let mut gold: BTreeMap<(NaiveDate, Vec<String>), ModelRow> =
        rows_of(model, lab.store().model_gold(None)?).into_iter().map(|r| ((r.business_date, r.grain.clone()), r)).collect();
    let recount = crate::lake::model::recompute(lab, model)?;
    let dates: BTreeSet<NaiveDate> = gold.keys().map(|k| k.0).collect();
    let mut all = Vec::new();
    for &d in &dates {
        let right: ByGrain =
            gold.range((d, Vec::new())..).take_while(|(k, _)| k.0 == d).map(|(k, r)| (k.1.clone(), r.measures.clone())).collect();
        all.push((d, facts(lab, model, d, late_days, right, &recount)?));
    }
    let mut faults: Vec<ModelFault> = Vec::new();
    let taken = |faults: &[ModelFault], d: NaiveDate, g: &[String]| faults.iter().any(|(fd, fg, _)| *fd == d && fg == g);
    for cause in [Cause::DuplicatesCounted, Cause::UtcBusinessDate, Cause::BeyondWindowIncluded, Cause::LateArrivalsMissed] {
        let found = all.iter().find_map(|(d, f)| {
            // Rows past the window may make a grain gold has not: then the row is extra as well.
            let extra = if cause == Cause::BeyondWindowIncluded {
                f.recount.keys().filter(|g| !f.right.contains_key(*g)).collect()
            } else {
                Vec::new()
            };
            f.right.keys().chain(extra).find_map(|g| {
                let alt = match cause {
                    Cause::DuplicatesCounted => f.copies.get(g),
                    Cause::UtcBusinessDate => f.utc.get(g),
                    Cause::BeyondWindowIncluded => f.recount.get(g),
                    _ => f.earlier.iter().rev().find_map(|e| e.1.get(g).filter(|_| !e.4)),
                }?;
                let only = causes_of(alt, g, f).iter().map(|c| c.0).collect::<Vec<_>>() == [cause];
                (only && !taken(&faults, *d, g)).then(|| (*d, g.clone(), alt.clone()))
            })
        });
        if let Some((d, g, alt)) = found {
            let attributes =
                recount.iter().find(|r| r.business_date == d && r.grain == g).map(|r| r.attributes.clone()).unwrap_or_default();
            let row =
                gold.entry((d, g.clone())).or_insert(ModelRow { business_date: d, grain: g.clone(), attributes, measures: Vec::new() });
            row.measures = alt;
            faults.push((d, g, cause));
        }
    }
    plain_faults(model, &mut gold, &all, &mut faults)?;
    if let Some(&d) = dates.first() {
        let grain: Vec<String> = model.grain.iter().enumerate().map(|(i, _)| format!("EXTRA-{}", i + 1)).collect();
        let attributes = gold.values().next().map(|r| r.attributes.clone()).unwrap_or_else(|| vec![String::new(); model.attributes.len()]);
        gold.insert(
            (d, grain.clone()),
            ModelRow { business_date: d, grain: grain.clone(), attributes, measures: vec![1; model.measures.len()] },
        );
        faults.push((d, grain, Cause::ExtraRow));
    }
    faults.sort();
    Ok((gold.into_values().collect(), faults))
}

/// A retried append, a row left out and a row off by one, each on the first row from a fifth,
/// two and three fifths of the way on whose changed figures no other cause gives.
fn plain_faults(
    model: &Model,
    gold: &mut BTreeMap<(NaiveDate, Vec<String>), ModelRow>,
    all: &[(NaiveDate, Facts)],
    faults: &mut Vec<ModelFault>,
) -> Result<()> {
    let taken = |faults: &[ModelFault], d: NaiveDate, g: &[String]| faults.iter().any(|(fd, fg, _)| *fd == d && fg == g);
    let rest: Vec<(NaiveDate, Vec<String>)> = gold.keys().filter(|(d, g)| !taken(faults, *d, g)).cloned().collect();
    for (at, cause) in
        [(rest.len() / 5, Cause::AppendedTwice), (2 * rest.len() / 5, Cause::MissingRow), (3 * rest.len() / 5, Cause::Unexplained)]
    {
        for key in rest.iter().skip(at) {
            let Some(row) = gold.get(key) else { continue };
            let changed = changed_by(model, cause, &row.measures)?;
            let fits = match (cause, all.iter().find(|(d, _)| *d == key.0)) {
                (Cause::MissingRow, _) => true,
                (_, Some((_, f))) => causes_of(&changed, &key.1, f).iter().all(|c| c.0 == cause),
                (_, None) => false,
            };
            if !fits || taken(faults, key.0, &key.1) {
                continue;
            }
            if cause == Cause::MissingRow {
                gold.remove(key);
            } else if let Some(r) = gold.get_mut(key) {
                r.measures = changed;
            }
            faults.push((key.0, key.1.clone(), cause));
            break;
        }
    }
    Ok(())
}

/// A row's measures as `cause` leaves them: doubled (a retried append), or the last one plus one
/// (unexplained); none for any other.
fn changed_by(model: &Model, cause: Cause, measures: &[i64]) -> Result<Vec<i64>> {
    Ok(match cause {
        Cause::AppendedTwice => {
            measures.iter().map(|m| m.checked_mul(2)).collect::<Option<_>>().ok_or_else(|| eyre!("a measure overflows"))?
        }
        Cause::Unexplained => {
            let mut m = measures.to_vec();
            let last = m.last_mut().ok_or_else(|| eyre!("model {} has no measure", model.name))?;
            *last = last.checked_add(1).ok_or_else(|| eyre!("a measure overflows"))?;
            m
        }
        _ => Vec::new(),
    })
}

impl ModelAuditReport {
    /// The table's columns, without rows.
    fn head(&self) -> Table {
        let same = |c: &str| (c.to_string(), c.to_string());
        let mut cols: Vec<(String, String)> = vec![same("business_date")];
        cols.extend(self.model.grain.iter().map(|c| same(c)));
        cols.extend([same("cause"), same("detail")]);
        for m in &self.model.measures {
            for side in ["foreign", "right"] {
                cols.push((super::model::measure_key(m, Some(side)), format!("{side} {}", m.name)));
            }
        }
        let refs: Vec<(&str, &str)> = cols.iter().map(|(k, l)| (k.as_str(), l.as_str())).collect();
        Table::new(if self.all { "every row against the lab's gold" } else { "rows that differ from the lab's gold" }, &refs)
    }

    /// The rows the table lists (every one, or the wrong ones), in order.
    fn listed(&self) -> impl Iterator<Item = std::io::Result<ModelAuditRow>> + '_ {
        self.rows.iter().filter(|r| self.all || r.as_ref().map_or(true, |r| super::audit::is_wrong(&r.causes)))
    }

    fn cells(&self, r: &ModelAuditRow) -> Vec<Cell> {
        let mut cells = vec![Cell::Date(r.business_date)];
        cells.extend(r.grain.iter().map(Cell::text));
        cells.push(Cell::text(r.causes.iter().map(|c| c.word()).collect::<Vec<_>>().join(", ")));
        cells.push(Cell::text(&r.detail));
        // Money by its currency's digits where the lab's gold names the grain's currency.
        let sides = [&r.foreign, &r.right].map(|v| v.as_ref().map(|v| super::model::measure_cells(&self.model, &r.attributes, v)));
        for i in 0..self.model.measures.len() {
            for side in &sides {
                cells.push(side.as_ref().and_then(|v| v.get(i)).cloned().unwrap_or(Cell::Empty));
            }
        }
        cells
    }
}

impl Report for ModelAuditReport {
    fn kind(&self) -> &'static str {
        "audit"
    }
    fn headline(&self) -> String {
        self.counts.line(&format!("{} (model {})", self.source, self.model.name))
    }
    fn tables(&self) -> Vec<Table> {
        let mut t = self.head();
        super::audit_spill::hold_rows(&mut t, self.listed(), |r| self.cells(r));
        vec![t]
    }
    fn more_rows(&self, table: usize, each: &mut dyn FnMut(super::Row) -> std::io::Result<()>) -> std::io::Result<()> {
        if table == 0 { super::audit_spill::stream_rows(self.listed(), |r| self.cells(r), each) } else { Ok(()) }
    }
    fn summary_tables(&self) -> Vec<Table> {
        self.counts.places.table().into_iter().collect()
    }
    fn notes(&self) -> Vec<Note> {
        let mut notes = self.counts.notes();
        notes.extend(super::audit_spill::held_note(if self.all { self.rows.len() } else { self.counts.wrong() }));
        notes
    }
}
