//! `diff DATE`: a change of a number attributed basket by basket, and the parts shown to sum to
//! the change.

use super::{Cell, Note, Report, Status, Table, resolve_as_of};
use crate::lake::Lab;
use crate::lake::snapshot;
use crate::money;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, bail, eyre};
use std::collections::{BTreeMap, BTreeSet};

pub use crate::store::ChangeKind;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DiffBasket {
    pub basket_id: String,
    pub store_id: String,
    pub country: String,
    pub currency: String,
    pub kind: ChangeKind,
    /// The upload the newer winning copy arrived in (the older one for a removal).
    pub upload_date: Option<NaiveDate>,
    /// For a change a correction made: the file version it came from or that withdrew it.
    pub correction: Option<FileVersion>,
    pub baskets_delta: i64,
    pub revenue_delta_minor: i64,
    /// Change in discarded re-sent copies.
    pub copies_discarded_delta: i64,
    pub event_before: Option<String>,
    pub event_after: Option<String>,
}

/// A version of a raw file: what a change a correction made is attributed to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct FileVersion {
    /// The file's name in its upload partition.
    pub file: String,
    pub version: i32,
}

impl FileVersion {
    /// From a diff row's raw-zone path and version (both set for the kinds a correction causes).
    fn of(path: Option<String>, version: Option<i32>) -> Option<FileVersion> {
        let (path, version) = (path?, version?);
        let file = crate::raw::name_in_upload(&path).to_string();
        Some(FileVersion { file, version })
    }
}

impl std::fmt::Display for FileVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} v{}", self.file, self.version)
    }
}

/// One line of the attribution: a kind of change from one upload (and file version).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DiffPart {
    pub kind: ChangeKind,
    pub upload_date: Option<NaiveDate>,
    pub correction: Option<FileVersion>,
    pub baskets: i64,
    pub baskets_delta: i64,
    pub revenue_delta_minor: i64,
    pub copies_discarded_delta: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CountryDiff {
    pub country: String,
    pub currency: String,
    pub baskets_before: i64,
    pub revenue_before_minor: i64,
    pub baskets_after: i64,
    pub revenue_after_minor: i64,
    pub parts: Vec<DiffPart>,
    /// The parts add up to the change in gold, in baskets and revenue.
    pub parts_sum_to_change: bool,
}

impl CountryDiff {
    pub fn summary(&self) -> String {
        let m = |v| money::format_delta(v, &self.currency);
        let bits: Vec<String> = self
            .parts
            .iter()
            .filter(|p| p.baskets_delta != 0 || p.revenue_delta_minor != 0)
            .map(|p| {
                let from = p.upload_date.map(|u| format!(" from upload {u}")).unwrap_or_default();
                let by = p.correction.as_ref().map(|c| format!(" ({c})")).unwrap_or_default();
                let noun = if p.baskets_delta.abs() == 1 { "basket" } else { "baskets" };
                format!("{} {noun}, {} {}{by}{from}", money::format_count_delta(p.baskets_delta), m(p.revenue_delta_minor), p.kind.word())
            })
            .collect();
        if bits.is_empty() { "no change in baskets or revenue".into() } else { bits.join("; ") }
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct DiffReport {
    pub business_date: NaiveDate,
    pub from_snapshot: Option<i64>,
    pub to_snapshot: i64,
    /// The versions of the date those snapshots held (the snapshot that last rewrote it).
    pub from_version: Option<i64>,
    pub to_version: Option<i64>,
    pub countries: Vec<CountryDiff>,
    pub baskets: Vec<DiffBasket>,
}

/// What changed in date `d` between the versions held at snapshots `from` and `to`.
/// Defaults: `to` is the newest snapshot, `from` the version before the one `to` holds.
pub fn diff(lab: &Lab, d: NaiveDate, from: Option<i64>, to: Option<i64>) -> Result<DiffReport> {
    let to_snapshot = resolve_as_of(lab, to)?;
    let to_version = snapshot::version_at(lab, d, to_snapshot)?;
    let (from_snapshot, from_version) = match from {
        Some(f) => {
            resolve_as_of(lab, Some(f))?;
            (Some(f), snapshot::version_at(lab, d, f)?)
        }
        None => {
            let Some(tv) = to_version else {
                bail!("no snapshot has built {d} yet");
            };
            let prev = lab.store().versions_of_date(d, tv - 1)?.last().copied();
            (prev, prev)
        }
    };
    diff_versions(lab, d, Compared { from_snapshot, to_snapshot, from_version, to_version })
}

/// Two versions of a date compared: the snapshots named, and the versions they held (the
/// snapshot that last rewrote the date by then; None: not built yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compared {
    pub from_snapshot: Option<i64>,
    pub to_snapshot: i64,
    pub from_version: Option<i64>,
    pub to_version: Option<i64>,
}

impl Compared {
    /// Version `to` against `from`, each named by the snapshot that wrote it.
    pub fn versions(from: Option<i64>, to: i64) -> Compared {
        Compared { from_snapshot: from, to_snapshot: to, from_version: from, to_version: Some(to) }
    }
}

pub fn diff_versions(lab: &Lab, d: NaiveDate, c: Compared) -> Result<DiffReport> {
    let mut report = diff_summary(lab, d, c)?;
    report.baskets = lab
        .store()
        .diff_baskets(d, c.from_version, c.to_version)?
        .into_iter()
        .map(|r| DiffBasket {
            basket_id: r.basket_id,
            kind: r.kind,
            upload_date: r.upload_date,
            correction: FileVersion::of(r.file, r.file_version),
            country: r.country.unwrap_or_default(),
            currency: r.currency.unwrap_or_default(),
            store_id: r.store_id.unwrap_or_default(),
            event_before: r.event_before,
            event_after: r.event_after,
            baskets_delta: r.baskets_delta,
            revenue_delta_minor: r.revenue_delta_minor,
            copies_discarded_delta: r.copies_discarded_delta,
        })
        .collect();
    Ok(report)
}

/// The diff without its basket list: the parts per country (summed by DuckDB from the same rows
/// `diff_versions` lists) against the change in gold. What `history` shows for each version.
pub fn diff_summary(lab: &Lab, d: NaiveDate, c: Compared) -> Result<DiffReport> {
    let mut reports = diff_summaries(lab, d, &[c])?;
    reports.pop().ok_or_else(|| eyre!("no diff of {d}"))
}

/// Several diffs of one date in two queries (the parts of every pair, and gold of every version):
/// a date's whole history costs about what one diff does. The pairs' `to_version`s must differ,
/// since the parts name their pair by it.
pub fn diff_summaries(lab: &Lab, d: NaiveDate, cs: &[Compared]) -> Result<Vec<DiffReport>> {
    let key = |v: Option<i64>| v.unwrap_or(crate::store::NO_VERSION);
    let to_versions: BTreeSet<i64> = cs.iter().map(|c| key(c.to_version)).collect();
    if to_versions.len() != cs.len() {
        bail!("the diffs of {d} compared together must end at different versions");
    }
    let pairs: Vec<(Option<i64>, Option<i64>)> = cs.iter().map(|c| (c.from_version, c.to_version)).collect();
    let mut parts: BTreeMap<(i64, String), Vec<DiffPart>> = BTreeMap::new();
    for r in lab.store().diff_parts(d, &pairs)? {
        let part = DiffPart {
            kind: r.kind,
            upload_date: r.upload_date,
            correction: FileVersion::of(r.file, r.file_version),
            baskets: r.baskets,
            baskets_delta: r.baskets_delta,
            revenue_delta_minor: r.revenue_delta_minor,
            copies_discarded_delta: r.copies_discarded_delta,
        };
        parts.entry((r.version, r.country.unwrap_or_default())).or_default().push(part);
    }
    let versions: BTreeSet<(NaiveDate, i64)> = cs.iter().flat_map(|c| [c.from_version, c.to_version]).flatten().map(|v| (d, v)).collect();
    let gold = GoldByVersion::read(lab, versions)?;
    Ok(cs
        .iter()
        .map(|&c| {
            let mine: BTreeMap<&String, &[DiffPart]> = parts
                .range((key(c.to_version), String::new())..)
                .take_while(|((v, _), _)| *v == key(c.to_version))
                .map(|((_, k), p)| (k, p.as_slice()))
                .collect();
            let countries = countries(gold.of(d, c.from_version), gold.of(d, c.to_version), &mine);
            let Compared { from_snapshot, to_snapshot, from_version, to_version } = c;
            DiffReport { business_date: d, from_snapshot, to_snapshot, from_version, to_version, countries, baskets: Vec::new() }
        })
        .collect())
}

/// Gold of one date in one version, by country: (currency, baskets, revenue).
type ByCountry = BTreeMap<String, (String, i64, i64)>;

/// Gold of some dates, each in some of its versions.
struct GoldByVersion(BTreeMap<(NaiveDate, i64), ByCountry>);

impl GoldByVersion {
    /// In one query, whatever the number of dates.
    fn read(lab: &Lab, versions: BTreeSet<(NaiveDate, i64)>) -> Result<GoldByVersion> {
        let mut gold: BTreeMap<(NaiveDate, i64), ByCountry> = BTreeMap::new();
        for g in lab.store().gold_versions(&versions.into_iter().collect::<Vec<_>>())? {
            gold.entry((g.business_date, g.version)).or_default().insert(g.country, (g.currency, g.baskets, g.revenue_minor));
        }
        Ok(GoldByVersion(gold))
    }

    /// Date `d`'s gold in version `v` (empty: no version, or one that held no row of the date).
    fn of(&self, d: NaiveDate, v: Option<i64>) -> &ByCountry {
        static NONE: ByCountry = BTreeMap::new();
        v.and_then(|v| self.0.get(&(d, v))).unwrap_or(&NONE)
    }
}

/// Each country's change between gold `before` and `after`, with the parts it is attributed to
/// (`parts`; none for a country no basket moved).
fn countries(before: &ByCountry, after: &ByCountry, parts: &BTreeMap<&String, &[DiffPart]>) -> Vec<CountryDiff> {
    let names: BTreeSet<&String> = before.keys().chain(after.keys()).chain(parts.keys().copied()).collect();
    names.into_iter().map(|country| country_diff(country, before.get(country), after.get(country), parts.get(country).copied())).collect()
}

/// Each date's change by country between two of its versions, (date, from, to), from gold alone:
/// a diff's countries without the baskets' attribution (the morning summary's figures, which need
/// no basket). Gold of every date is read in one query.
pub fn gold_changes(lab: &Lab, changes: &[(NaiveDate, Option<i64>, Option<i64>)]) -> Result<Vec<Vec<CountryDiff>>> {
    let versions = changes.iter().flat_map(|&(d, from, to)| [from, to].into_iter().flatten().map(move |v| (d, v))).collect();
    let gold = GoldByVersion::read(lab, versions)?;
    Ok(changes.iter().map(|&(d, from, to)| countries(gold.of(d, from), gold.of(d, to), &BTreeMap::new())).collect())
}

/// One country's change between two versions (gold before and after: currency, baskets,
/// revenue) and the parts it is attributed to.
fn country_diff(
    country: &str,
    before: Option<&(String, i64, i64)>,
    after: Option<&(String, i64, i64)>,
    parts: Option<&[DiffPart]>,
) -> CountryDiff {
    let (cur_b, bb, rb) = before.cloned().unwrap_or_default();
    let (cur_a, ba, ra) = after.cloned().unwrap_or_default();
    let currency = if cur_a.is_empty() { cur_b } else { cur_a };
    let mut parts: Vec<DiffPart> = parts.unwrap_or_default().to_vec();
    parts.sort_by(|a, b| (a.kind, a.upload_date, &a.correction).cmp(&(b.kind, b.upload_date, &b.correction)));
    let sum_b: i64 = parts.iter().map(|p| p.baskets_delta).sum();
    let sum_r: i64 = parts.iter().map(|p| p.revenue_delta_minor).sum();
    CountryDiff {
        country: country.to_string(),
        currency,
        baskets_before: bb,
        revenue_before_minor: rb,
        baskets_after: ba,
        revenue_after_minor: ra,
        parts_sum_to_change: sum_b == ba - bb && sum_r == ra - rb,
        parts,
    }
}

/// A change's kind in words, with the file version a correction's change is attributed to.
fn change_words(kind: ChangeKind, correction: Option<&FileVersion>) -> String {
    match correction {
        Some(c) => format!("{} ({c})", kind.word()),
        None => kind.word().to_string(),
    }
}

impl DiffReport {
    pub fn parts_table(&self) -> Table {
        let mut t = Table::new(
            "",
            &[
                ("country", "country"),
                ("change", "change"),
                ("upload_date", "upload"),
                ("baskets", "baskets"),
                ("baskets_delta", "Δ baskets"),
                ("revenue_delta_minor", "Δ revenue"),
                ("copies_discarded_delta", "Δ copies discarded"),
            ],
        );
        for c in &self.countries {
            for p in &c.parts {
                t.push(vec![
                    Cell::text(&c.country),
                    Cell::Term { text: change_words(p.kind, p.correction.as_ref()), key: p.kind.as_str().to_string() },
                    p.upload_date.map(Cell::Date).unwrap_or(Cell::Empty),
                    Cell::Int(p.baskets),
                    Cell::IntDelta(p.baskets_delta),
                    Cell::delta(p.revenue_delta_minor, &c.currency),
                    Cell::IntDelta(p.copies_discarded_delta),
                ]);
            }
            let sum_b: i64 = c.parts.iter().map(|p| p.baskets_delta).sum();
            let sum_r: i64 = c.parts.iter().map(|p| p.revenue_delta_minor).sum();
            t.push_summary(
                vec![
                    Cell::text(&c.country),
                    Cell::text("= total change"),
                    Cell::Empty,
                    Cell::Empty,
                    Cell::IntDelta(sum_b),
                    Cell::delta(sum_r, &c.currency),
                    Cell::Empty,
                ],
                Some(if c.parts_sum_to_change { Status::Pass } else { Status::Fail }),
            );
        }
        t
    }
}

impl DiffReport {
    pub fn baskets_table(&self) -> Table {
        let mut t = Table::new(
            "baskets behind the parts",
            &[
                ("country", "country"),
                ("change", "change"),
                ("basket_id", "basket_id"),
                ("store_id", "store"),
                ("upload_date", "upload"),
                ("revenue_delta_minor", "Δ revenue"),
                ("event_before", "event before"),
                ("event_after", "event after"),
            ],
        );
        for b in &self.baskets {
            t.push(vec![
                Cell::text(&b.country),
                Cell::text(change_words(b.kind, b.correction.as_ref())),
                Cell::text(&b.basket_id),
                Cell::text(&b.store_id),
                b.upload_date.map(Cell::Date).unwrap_or(Cell::Empty),
                Cell::delta(b.revenue_delta_minor, &b.currency),
                Cell::text(b.event_before.clone().unwrap_or_default()),
                Cell::text(b.event_after.clone().unwrap_or_default()),
            ]);
        }
        t
    }
}

impl Report for DiffReport {
    fn kind(&self) -> &'static str {
        "diff"
    }
    fn business_date(&self) -> Option<chrono::NaiveDate> {
        Some(self.business_date)
    }
    /// Each side names the snapshot that wrote the date as compared, and the snapshot it was read
    /// at when that is a later one that left the date alone: "the date as snapshot 3 wrote it
    /// (still so at snapshot 15)", never a "version" the reader was not told of.
    fn headline(&self) -> String {
        let side = |at: i64, wrote: i64| {
            if at == wrote {
                format!("as snapshot {wrote} wrote it")
            } else {
                format!("as snapshot {wrote} wrote it (still so at snapshot {at})")
            }
        };
        let from = match (self.from_snapshot, self.from_version) {
            (Some(s), Some(v)) => side(s, v),
            (Some(s), None) => format!("not built at snapshot {s}"),
            (None, _) => "nothing (its first build)".into(),
        };
        let to = match self.to_version {
            Some(v) => side(self.to_snapshot, v),
            None => format!("not built at snapshot {}", self.to_snapshot),
        };
        format!("diff {}: the date {from} → {to}", self.business_date)
    }
    fn tables(&self) -> Vec<Table> {
        vec![self.parts_table()]
    }
    fn notes(&self) -> Vec<Note> {
        self.countries
            .iter()
            .map(|c| {
                let m = |v| money::format_major(v, &c.currency);
                Note {
                    status: if c.parts_sum_to_change { Status::Pass } else { Status::Fail },
                    text: format!(
                        "{}: {} baskets {} → {} baskets {} ({}, {}); the parts {} the change",
                        c.country,
                        money::format_count(c.baskets_before),
                        m(c.revenue_before_minor),
                        money::format_count(c.baskets_after),
                        m(c.revenue_after_minor),
                        money::format_count_delta(c.baskets_after - c.baskets_before),
                        money::format_delta(c.revenue_after_minor - c.revenue_before_minor, &c.currency),
                        if c.parts_sum_to_change { "sum exactly to" } else { "DO NOT sum to" }
                    ),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(kind: ChangeKind, baskets_delta: i64, revenue_delta_minor: i64) -> DiffPart {
        DiffPart {
            kind,
            upload_date: NaiveDate::from_ymd_opt(2026, 10, 2),
            correction: None,
            baskets: baskets_delta.abs(),
            baskets_delta,
            revenue_delta_minor,
            copies_discarded_delta: 0,
        }
    }

    #[test]
    fn the_attribution_groups_thousands_and_says_one_basket() {
        let c = CountryDiff {
            country: "GB".into(),
            currency: "GBP".into(),
            baskets_before: 0,
            revenue_before_minor: 0,
            baskets_after: 7_217,
            revenue_after_minor: 130_979_266 + 500,
            parts: vec![
                part(ChangeKind::Added, 7_216, 130_979_266),
                part(ChangeKind::Added, 1, 500),
                part(ChangeKind::CopiesDiscarded, 0, 0),
            ],
            parts_sum_to_change: true,
        };
        assert_eq!(
            c.summary(),
            "+7,216 baskets, +£1,309,792.66 added from upload 2026-10-02; +1 basket, +£5.00 added from upload 2026-10-02"
        );
    }
}
