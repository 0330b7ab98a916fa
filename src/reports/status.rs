//! Is a business date final? Closed once every upload that can feed it (d-1 .. d+late_days) has
//! landed and gold was built from all of them; provisional before that. The rules themselves
//! live in `crate::rules`; this reads what they need from the lab.

use crate::lake::{Lab, v2};
use crate::rules::LatenessWindow;
use chrono::NaiveDate;
use color_eyre::eyre::Result;

pub use crate::rules::Finality;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DateStatus {
    pub business_date: NaiveDate,
    pub late_days: u32,
    pub window_first_upload: NaiveDate,
    pub window_last_upload: NaiveDate,
    pub newest_upload: Option<NaiveDate>,
    /// v2 has written a version of this date.
    pub built: bool,
    pub finality: Finality,
}

impl DateStatus {
    pub fn describe(&self) -> String {
        let newest = self.newest_upload.map(|d| d.to_string()).unwrap_or_else(|| "none".into());
        match &self.finality {
            Finality::Closed => format!(
                "closed: uploads {} to {} have all landed and v2 has built them (newest upload {newest})",
                self.window_first_upload, self.window_last_upload
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
pub(crate) fn date_status_at(lab: &Lab, d: NaiveDate, as_of: Option<i64>) -> Result<DateStatus> {
    let current = lab.store().version_at(d, as_of)?;
    let window = LatenessWindow::as_built(current.as_ref().and_then(|c| c.late_days));
    let landed = match as_of {
        None => lab.store().landed_uploads()?,
        Some(s) => lab.store().landed_uploads_as_of(s)?,
    };
    let built_from = current.as_ref().map(|c| c.input_hash.as_str());
    let finality = Finality::of(window.missing_uploads(&landed, d), built_from, || {
        let hashes = v2::input_hashes_at(lab.store(), window.late_days, &[d], as_of)?;
        Ok::<_, color_eyre::Report>(hashes.into_iter().next().map(|(_, _, hash)| hash))
    })?;
    Ok(DateStatus {
        business_date: d,
        late_days: window.late_days,
        window_first_upload: window.first_upload(d),
        window_last_upload: window.last_upload(d),
        newest_upload: landed.last().copied(),
        built: current.is_some(),
        finality,
    })
}
