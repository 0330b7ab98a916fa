//! Is a business date final? Closed once every upload that can feed it (d-1 .. d+late_days) has
//! landed and gold was built from all of them; provisional before that. The rules themselves
//! live in `crate::rules`; this reads what they need from the lab.

use crate::lake::{Lab, v2};
use crate::rules::LatenessWindow;
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use std::collections::BTreeMap;

pub use crate::rules::Finality;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DateStatus {
    pub business_date: NaiveDate,
    pub late_days: u32,
    pub window_first_upload: NaiveDate,
    pub window_last_upload: NaiveDate,
    /// The window's first upload the lab awaits: its first, or the lab's first landed upload when
    /// that is later (the lab's history starts there, so no earlier upload can come).
    pub window_awaited_from: NaiveDate,
    pub newest_upload: Option<NaiveDate>,
    /// v2 has written a version of this date.
    pub built: bool,
    pub finality: Finality,
}

impl DateStatus {
    pub fn describe(&self) -> String {
        let newest = self.newest_upload.map(|d| d.to_string()).unwrap_or_else(|| "none".into());
        match &self.finality {
            // Only uploads that landed are named: a day before the lab's first upload is none.
            Finality::Closed if self.window_awaited_from >= self.window_last_upload => {
                format!("closed: upload {} has landed and v2 has built it (newest upload {newest})", self.window_last_upload)
            }
            Finality::Closed => format!(
                "closed: uploads {} to {} have all landed and v2 has built them (newest upload {newest})",
                self.window_awaited_from, self.window_last_upload
            ),
            Finality::Provisional { missing_uploads } => {
                let m: Vec<String> = missing_uploads.iter().map(|d| d.to_string()).collect();
                let built = if self.built { "" } else { "; v2 has not built it yet" };
                format!("provisional: waiting for upload(s) {}{built} (newest upload {newest})", m.join(", "))
            }
            Finality::Stale => format!("stale: inputs changed since v2 last built this date; run v2 (newest upload {newest})"),
            Finality::Unbuilt => format!("unbuilt: v2 has not built this date yet (newest upload {newest})"),
        }
    }
}

/// The status of `d` as it was when snapshot `as_of` was recorded (None: now): the uploads that
/// had landed then, the version the date held then, and the inputs then.
pub fn date_status_at(lab: &Lab, d: NaiveDate, as_of: Option<i64>) -> Result<DateStatus> {
    let mut one = statuses_at(lab, &[d], as_of)?;
    one.pop().ok_or_else(|| color_eyre::eyre::eyre!("no status of {d}"))
}

/// `date_status_at` of several dates: the landed uploads and the dates' versions are read once,
/// and the inputs now of every date whose window has landed and that v2 has built in one read per
/// window (the morning summary after a backfill asks for every date it wrote).
pub fn statuses_at(lab: &Lab, dates: &[NaiveDate], as_of: Option<i64>) -> Result<Vec<DateStatus>> {
    let landed = match as_of {
        None => lab.store().landed_uploads()?,
        Some(s) => lab.store().landed_uploads_as_of(s)?,
    };
    let current_versions = lab.store().versions_at(dates, as_of)?;
    let mut versions = Vec::with_capacity(dates.len());
    let mut needing_inputs: BTreeMap<u32, Vec<NaiveDate>> = BTreeMap::new();
    for &d in dates {
        let current = current_versions.get(&d).cloned();
        let window = LatenessWindow::as_built(current.as_ref().and_then(|c| c.late_days));
        let missing = window.missing_uploads(&landed, d);
        if current.is_some() && missing.is_empty() {
            needing_inputs.entry(window.late_days).or_default().push(d);
        }
        versions.push((d, current, window, missing));
    }
    let mut inputs: BTreeMap<(u32, NaiveDate), String> = BTreeMap::new();
    for (late_days, ds) in needing_inputs {
        for (d, _, hash) in v2::input_hashes_at(lab.store(), late_days, &ds, as_of)? {
            inputs.insert((late_days, d), hash);
        }
    }
    versions
        .into_iter()
        .map(|(d, current, window, missing)| {
            let built_from = current.as_ref().map(|c| c.input_hash.as_str());
            let finality = Finality::of(missing, built_from, || Ok::<_, color_eyre::Report>(inputs.get(&(window.late_days, d)).cloned()))?;
            Ok(status_of(d, window, &landed, current.is_some(), finality))
        })
        .collect()
}

/// The status of each of `dates` on a model lab, by the same rules: the uploads landed, and the
/// version gold holds against the inputs now, under the date's window (the lab's `late_days`, or
/// the wider one a reopening kept for the date).
pub fn model_statuses(lab: &Lab, late_days: u32, dates: &[NaiveDate], as_of: Option<i64>) -> Result<Vec<DateStatus>> {
    let store = lab.store();
    let landed = store.model_uploads(as_of)?;
    let built: BTreeMap<NaiveDate, String> =
        store.model_current_versions(dates, as_of)?.into_iter().map(|v| (v.business_date, v.input_hash)).collect();
    // The model's input hashes apply each date's kept window themselves.
    let inputs = match as_of {
        None => store.model_input_hashes(dates, late_days)?,
        Some(_) => store.model_input_hashes_at(dates, late_days, as_of)?,
    };
    let now: BTreeMap<NaiveDate, String> = inputs.into_iter().map(|h| (h.business_date, h.input_hash)).collect();
    let kept = store.model_kept_windows(as_of)?;
    dates
        .iter()
        .map(|&d| {
            let window = LatenessWindow::new(late_days.max(kept.get(&d).copied().unwrap_or(0)));
            let built_from = built.get(&d).map(String::as_str);
            let finality =
                Finality::of(window.missing_uploads(&landed, d), built_from, || Ok::<_, color_eyre::Report>(now.get(&d).cloned()))?;
            Ok(status_of(d, window, &landed, built_from.is_some(), finality))
        })
        .collect()
}

/// A date's status from its window, the landed uploads (sorted), whether v2 built it and its finality.
fn status_of(d: NaiveDate, window: LatenessWindow, landed: &[NaiveDate], built: bool, finality: Finality) -> DateStatus {
    DateStatus {
        business_date: d,
        late_days: window.late_days,
        window_first_upload: window.first_upload(d),
        window_last_upload: window.last_upload(d),
        window_awaited_from: landed.first().map_or(window.first_upload(d), |&f| f.max(window.first_upload(d))),
        newest_upload: landed.last().copied(),
        built,
        finality,
    }
}
