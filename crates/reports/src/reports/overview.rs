//! The lab at a glance, for the explorer: every business date with its marks, the lateness
//! histograms, the quarantine, and where the uploads stand.

use super::check::SummaryVerdicts;
use super::lateness::{self, LatenessReport};
use super::listings::{self, QuarantineReport};
use super::model_day::DatesReport;
use crate::lake::{Lab, snapshot};
use crate::rules::{Finality, LatenessWindow};
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use std::collections::BTreeMap;
use std::path::Path;

/// One line of the date navigator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DateSummary {
    pub business_date: NaiveDate,
    /// Uploads of the date's window (the window it was built with) have not landed.
    pub provisional: bool,
    /// Its window has landed, but its inputs changed since v2 built it (a rollback, a landing
    /// not run yet): not closed until v2 runs again (`Finality::Stale`).
    pub stale: bool,
    /// v1 (all its appends) differs from the recompute in some currency: the bug on show.
    pub v1_off: bool,
    /// v2 gold differs from the recompute in some currency.
    pub v2_off: bool,
    pub v1_ran: bool,
}

#[derive(Debug, Clone)]
pub struct LabOverview {
    pub dates: Vec<DateSummary>,
    pub lateness: LatenessReport,
    pub lateness_by_country: LatenessReport,
    pub quarantine: QuarantineReport,
    pub newest_upload: Option<NaiveDate>,
    /// The first upload of `world` not landed yet: what "land the next upload" lands.
    pub next_upload: Option<NaiveDate>,
    pub head_snapshot: Option<i64>,
    /// What the newest write of gold did, in one line (`summary::banner`): the explorer opens
    /// with it.
    pub banner: String,
    /// Revenue per date and country, v1, v2 and the recompute: the Trend screen.
    pub trend: super::trend::TrendReport,
}

pub fn overview(lab: &Lab, world: &Path) -> Result<LabOverview> {
    crate::recompute::ensure_cached(lab)?;
    let landed = lab.store().landed_uploads()?;
    let mut dates: BTreeMap<NaiveDate, DateSummary> = BTreeMap::new();
    // Built dates whose window has landed, by the window they were built with: stale ones are
    // found below, from their input hashes.
    let mut closed_by_window: BTreeMap<u32, Vec<NaiveDate>> = BTreeMap::new();
    let rows = lab.store().date_summaries()?;
    for r in &rows {
        let d = r.business_date;
        let window = LatenessWindow::as_built(r.late_days);
        let provisional = r.provisional(&landed);
        if !provisional && r.late_days.is_some() && !dates.contains_key(&d) {
            closed_by_window.entry(window.late_days).or_default().push(d);
        }
        let e = dates.entry(d).or_insert(DateSummary {
            business_date: d,
            provisional,
            stale: false,
            v1_off: false,
            v2_off: false,
            v1_ran: r.v1_ran,
        });
        e.v2_off |= !r.v2_explained();
        e.v1_off |= r.v1_ran && r.v1_revenue_minor != r.recompute_revenue_minor;
        e.v1_ran |= r.v1_ran;
    }
    for (late_days, ds) in closed_by_window {
        let (Some(&first), Some(&last)) = (ds.first(), ds.last()) else { continue };
        let built: BTreeMap<NaiveDate, String> =
            lab.store().current_versions(first, last)?.into_iter().map(|(d, v)| (d, v.input_hash)).collect();
        for (d, _, hash) in crate::lake::v2::input_hashes(lab.store(), late_days, &ds)? {
            if let Some(e) = dates.get_mut(&d) {
                e.stale = built.get(&d).is_some_and(|b| *b != hash);
            }
        }
    }
    let world_uploads = crate::raw::source::uploads_of(world).unwrap_or_default();
    let trend = super::trend::TrendReport::from_rows(&rows, &landed);
    Ok(LabOverview {
        trend,
        dates: dates.into_values().collect(),
        lateness: lateness::lateness(lab, false, None)?,
        lateness_by_country: lateness::lateness(lab, true, None)?,
        quarantine: listings::quarantine(lab, None)?,
        newest_upload: landed.last().copied(),
        next_upload: world_uploads.into_iter().find(|u| landed.binary_search(u).is_err()),
        head_snapshot: snapshot::head(lab)?,
        banner: super::summary::banner(lab)?,
    })
}

/// A lab's lateness histograms: over every row, and by part of a date (retail's country).
pub type Histograms = (LatenessReport, LatenessReport);

impl LabOverview {
    /// The explorer's navigator over a model lab: each date's finality and marks (v1 differs from
    /// v2; v2 differs from the recount by more than the rows past the window), and the lateness
    /// histograms in the model's words (`model_histograms`: over every record, and by the
    /// attribute that names a part of a date, when the model has one).
    pub fn of_model(
        lab: &Lab,
        model: &crate::model::Model,
        report: &DatesReport,
        late_days: u32,
        histograms: Histograms,
    ) -> Result<LabOverview> {
        let mut dates: BTreeMap<NaiveDate, DateSummary> = BTreeMap::new();
        for line in &report.dates {
            let d = dates.entry(line.business_date).or_insert(DateSummary {
                business_date: line.business_date,
                provisional: matches!(line.finality, Finality::Provisional { .. }),
                stale: matches!(line.finality, Finality::Stale | Finality::Unbuilt),
                v1_off: false,
                v2_off: false,
                v1_ran: false,
            });
            d.v1_ran |= line.v1.is_some();
            d.v1_off |= line.v1.is_some() && line.v1 != line.v2;
            d.v2_off |= !line.agrees() && !line.explained();
        }
        let (every, by_part) = histograms;
        Ok(LabOverview {
            dates: dates.into_values().collect(),
            lateness: every,
            lateness_by_country: by_part,
            quarantine: super::listings::quarantine(lab, None)?,
            newest_upload: report.newest_upload,
            next_upload: None,
            head_snapshot: None,
            // The morning's line, as on a retail lab: what the newest write did.
            banner: super::summary::model_banner(lab, model, late_days)?,
            trend: super::trend::TrendReport::of_model(report),
        })
    }

    /// A model lab's lateness histograms: over every record, and by the attribute that names a
    /// part of a date (empty when the model has none). A scan of every record: the explorer
    /// keeps them until a file lands.
    pub fn model_histograms(lab: &Lab, model: &crate::model::Model, late_days: u32) -> Result<Histograms> {
        let has_part = !super::model::part_positions(model, &super::model::shown_measures(model)).is_empty();
        let by_part = match has_part {
            true => lateness::model_lateness(lab, model, true, late_days)?,
            false => LatenessReport { entity: model.entity.clone(), late_days: None, by: None, buckets: Vec::new() },
        };
        Ok((lateness::model_lateness(lab, model, false, late_days)?, by_part))
    }

    /// The date to show first: yesterday, as a controller reads the morning's lab: the business
    /// date of the newest landed upload (the day whose sales it carries). Else the newest date
    /// that is closed, else the newest.
    pub fn default_date(&self) -> Option<NaiveDate> {
        let yesterday = self.newest_upload.filter(|u| self.dates.iter().any(|d| d.business_date == *u));
        yesterday.or_else(|| self.dates.iter().rev().find(|d| !d.provisional && !d.stale).or(self.dates.last()).map(|d| d.business_date))
    }
}
