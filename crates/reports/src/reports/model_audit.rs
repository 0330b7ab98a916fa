//! `recount audit --gold SOURCE` on a model lab: a foreign gold in the model's columns (by name),
//! compared row by row with the lab's gold on the model's grain, each wrong row given every
//! cause that gives it exactly, tested against the landed files: copies counted
//! (`duplicates_counted`), events dated in UTC (`utc_business_date`), rows past the window kept
//! (`beyond_window_included`), a build before late uploads or a corrected file
//! (`late_arrivals_missed`, `correction_not_applied`), a retried append (`appended_twice`), or a
//! row on one side only. The causes are retail's (`audit::Cause`); the alternatives are the model
//! lab's statements (queries/model.sql).

use super::audit::Cause;
use super::foreign::{self, GoldMap, IcebergFiles};
use super::{Cell, Note, Report, Table};
use crate::lake::Lab;
use crate::lake::model::rows_of;
use crate::model::Model;
use crate::model::recount::ModelRow;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, bail, eyre};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Measures by grain on one date.
type ByGrain = BTreeMap<Vec<String>, Vec<i64>>;

/// A foreign gold of a model: the rows read, and the rows whose measures cannot be read exactly,
/// each with why (a wrong row of its own, `unreadable_value`).
#[derive(Debug, Default)]
pub struct ModelForeign {
    pub rows: Vec<ModelRow>,
    pub unread: BTreeMap<(NaiveDate, Vec<String>), String>,
}

/// Reads a foreign gold of `model`: its columns by the model's names, or the foreign names `map`
/// gives; a money measure in major units turned into minor ones by its row's currency.
pub fn read_foreign(path: &Path, model: &Model, map: &GoldMap, iceberg: IcebergFiles<'_>) -> Result<ModelForeign> {
    let ours = model.gold_columns();
    map.check_columns(&ours)?;
    let columns: Vec<String> = ours.iter().map(|c| map.column(c).to_string()).collect();
    let (g, a) = (model.grain.len(), model.attributes.len());
    let mut out = ModelForeign::default();
    let mut budget = foreign::RowBudget::default();
    foreign::each_record(path, &columns, iceberg, &mut |n, values| {
        // The values come in gold's column order: the date, the grain, attributes, measures.
        let bad = |i: usize, why: String| eyre!("{} {n}: {} {why}", path.display(), columns[i]);
        let business_date = foreign::date(&values[0]).map_err(|e| bad(0, e))?;
        let ids =
            |from: usize, k: usize| (from..from + k).map(|i| foreign::id(&values[i]).map_err(|e| bad(i, e))).collect::<Result<Vec<_>>>();
        let grain = ids(1, g)?;
        let attributes = ids(1 + g, a)?;
        // A measure that cannot be read exactly makes a wrong row of its own, not an error.
        let measures = model
            .measures
            .iter()
            .enumerate()
            .map(|(k, m)| {
                let currency =
                    m.currency.as_ref().and_then(|c| model.attributes.iter().position(|x| x == c)).map(|i| attributes[i].as_str());
                let i = 1 + g + a + k;
                foreign::money(&values[i], map.unit, currency).map_err(|e| format!("{n}: {} {e}", columns[i]))
            })
            .collect::<Result<Vec<i64>, String>>();
        let bytes = grain.iter().chain(&attributes).map(String::len).sum::<usize>() + 8 * model.measures.len();
        budget.charge(std::mem::size_of::<ModelRow>() + bytes)?;
        match measures {
            Ok(measures) => out.rows.push(ModelRow { business_date, grain, attributes, measures }),
            Err(why) => {
                if out.unread.insert((business_date, grain.clone()), why).is_some() {
                    bail!("{}: {business_date} {} is given twice", path.display(), grain.join("/"));
                }
            }
        }
        Ok(())
    })?;
    Ok(out)
}

/// One (date, grain) of the audit.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelAuditRow {
    pub business_date: NaiveDate,
    pub grain: Vec<String>,
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
    pub rows: Vec<ModelAuditRow>,
    #[serde(skip)]
    pub all: bool,
}

impl ModelAuditReport {
    pub fn wrong(&self) -> usize {
        super::audit::wrong(self.rows.iter().map(|r| r.causes.as_slice()))
    }
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

/// Audits `foreign` against a model lab's gold.
pub fn audit(lab: &Lab, model: &Model, source: &str, foreign: &ModelForeign, late_days: u32) -> Result<ModelAuditReport> {
    let unread = &foreign.unread;
    let mut theirs: BTreeMap<(NaiveDate, Vec<String>), Vec<i64>> = BTreeMap::new();
    for r in &foreign.rows {
        let key = (r.business_date, r.grain.clone());
        if unread.contains_key(&key) || theirs.insert(key, r.measures.clone()).is_some() {
            bail!(
                "{source}: {} {} is given twice; a gold table has one row per business date and grain",
                r.business_date,
                r.grain.join("/")
            );
        }
    }
    let mut gold: BTreeMap<NaiveDate, ByGrain> = BTreeMap::new();
    // Each grain's attributes, for a residual's money in its currency.
    let mut attributes: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    for r in rows_of(model, lab.store().model_gold(None)?) {
        attributes.entry(r.grain.clone()).or_insert(r.attributes);
        gold.entry(r.business_date).or_default().insert(r.grain, r.measures);
    }
    let ctx = (model, &attributes);
    let dates: BTreeSet<NaiveDate> = gold.keys().copied().chain(theirs.keys().chain(unread.keys()).map(|k| k.0)).collect();
    let mut recount: Option<Vec<ModelRow>> = None;
    let mut rows = Vec::new();
    for d in dates {
        let right = gold.remove(&d).unwrap_or_default();
        let grains: BTreeSet<Vec<String>> =
            right.keys().cloned().chain(theirs.keys().chain(unread.keys()).filter(|k| k.0 == d).map(|k| k.1.clone())).collect();
        let all_match = grains.iter().all(|g| theirs.get(&(d, g.clone())) == right.get(g));
        if all_match {
            for g in grains {
                let (foreign, mine) = (theirs.get(&(d, g.clone())).cloned(), right.get(&g).cloned());
                rows.push(unreadable(row(ctx, d, g, foreign, mine, None), unread));
            }
            continue;
        }
        // The recount (every landed file) is read once, for the first date with a wrong row.
        if recount.is_none() {
            recount = Some(crate::lake::model::recompute(lab, model)?);
        }
        let f = facts(lab, model, d, late_days, right, recount.as_deref().unwrap_or_default())?;
        let mut day: Vec<ModelAuditRow> = grains
            .into_iter()
            .map(|g| {
                let foreign = theirs.get(&(d, g.clone())).cloned();
                let right = f.right.get(&g).cloned();
                unreadable(row(ctx, d, g, foreign, right, Some(&f)), unread)
            })
            .collect();
        if day.iter().any(|r| r.causes == [Cause::Unexplained]) {
            narrower_windows(lab, model, d, late_days, &mut day)?;
        }
        rows.extend(day);
    }
    Ok(ModelAuditReport { source: source.to_string(), model: model.clone(), rows, all: false })
}

/// A row nothing else explains, tested against gold built with each narrower window than the
/// lab's: a job that stops waiting for late uploads sooner (`late_arrivals_missed`, naming it).
fn narrower_windows(lab: &Lab, model: &Model, d: NaiveDate, late_days: u32, day: &mut [ModelAuditRow]) -> Result<()> {
    for w in (0..late_days).rev() {
        let alt = by_grain(model, lab.store().model_windowed(d, w)?);
        for r in day.iter_mut().filter(|r| r.causes == [Cause::Unexplained]) {
            if r.foreign.is_some() && alt.get(&r.grain) == r.foreign.as_ref() {
                (r.causes, r.detail) = super::audit::narrower_window(d, w, late_days);
            }
        }
    }
    Ok(())
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
    ModelAuditRow { business_date: d, grain, causes, detail, in_foreign: foreign.is_some(), foreign, right }
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

/// `row` for a grain whose foreign measures cannot be read: wrong on its own, with why (an
/// extra row where the lab has no such grain).
fn unreadable(mut row: ModelAuditRow, unread: &BTreeMap<(NaiveDate, Vec<String>), String>) -> ModelAuditRow {
    if let Some(why) = unread.get(&(row.business_date, row.grain.clone())) {
        let cause = if row.right.is_some() { Cause::UnreadableValue } else { Cause::ExtraRow };
        (row.causes, row.detail, row.in_foreign) = (vec![cause], why.clone(), true);
    }
    row
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

impl Report for ModelAuditReport {
    fn kind(&self) -> &'static str {
        "audit"
    }
    fn headline(&self) -> String {
        let source = format!("{} (model {})", self.source, self.model.name);
        super::audit::counts_line(&source, self.rows.iter().map(|r| (r.causes.as_slice(), r.in_foreign)))
    }
    fn tables(&self) -> Vec<Table> {
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
        let title = if self.all { "every row against the lab's gold" } else { "rows that differ from the lab's gold" };
        let mut t = Table::new(title, &refs);
        for r in self.rows.iter().filter(|r| self.all || r.causes != [Cause::Matches]) {
            let mut cells = vec![Cell::Date(r.business_date)];
            cells.extend(r.grain.iter().map(Cell::text));
            cells.push(Cell::text(r.causes.iter().map(|c| c.word()).collect::<Vec<_>>().join(", ")));
            cells.push(Cell::text(&r.detail));
            for i in 0..self.model.measures.len() {
                for side in [&r.foreign, &r.right] {
                    cells.push(side.as_ref().and_then(|v| v.get(i)).map_or(Cell::Empty, |v| Cell::Int(*v)));
                }
            }
            t.push(cells);
        }
        vec![t]
    }
    fn summary_tables(&self) -> Vec<Table> {
        self.where_wrong().table().into_iter().collect()
    }
    fn notes(&self) -> Vec<Note> {
        let mut notes = super::audit::causes_note(self.rows.iter().map(|r| r.causes.as_slice()));
        notes.extend(self.where_wrong().note());
        notes
    }
}

impl ModelAuditReport {
    /// Where the wrong rows fall: by each field of the grain, by week.
    pub fn where_wrong(&self) -> super::audit_where::WhereWrong {
        let fields = &self.model.grain;
        super::audit_where::WhereWrong::of(self.rows.iter().map(|r| {
            (
                r.business_date,
                fields.iter().map(String::as_str).zip(r.grain.iter().map(String::as_str)).collect(),
                super::audit::is_wrong(&r.causes),
            )
        }))
    }
}
