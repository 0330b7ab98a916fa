//! Is a business date final? Closed once every upload that can feed it (d-1 .. d+late_days) has
//! landed and gold was built from all of them; provisional before that.

use crate::lake::Cached;
use crate::lake::Lab;
use crate::lake::v2;
use crate::queries::sql;
use chrono::{Duration, NaiveDate};
use color_eyre::eyre::Result;
use duckdb::OptionalExt;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum Finality {
    /// Every upload of the window has landed and gold reflects them all.
    Closed,
    /// Uploads that can still change the date have not landed.
    Provisional { missing_uploads: Vec<NaiveDate> },
    /// Everything landed, but v2 has not rebuilt the date since its inputs changed.
    Stale,
    /// v2 has never built the date.
    Unbuilt,
}

impl Finality {
    pub fn word(&self) -> &'static str {
        match self {
            Finality::Closed => "closed",
            Finality::Provisional { .. } => "provisional",
            Finality::Stale => "stale",
            Finality::Unbuilt => "unbuilt",
        }
    }
}

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
            Finality::Closed => format!("closed: uploads {} to {} have all landed and v2 has built them (newest upload {newest})", self.window_first_upload, self.window_last_upload),
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

/// The window the date was last built with, else the default.
fn late_days_of(lab: &Lab, d: NaiveDate) -> Result<u32> {
    let late: Option<i64> = lab
        .conn
        .row_cached(
            sql("snapshot", "late_days_of"),
            [d],
            |r| r.get(0),
        )
        .optional()?;
    Ok(late.map(|l| l as u32).unwrap_or(v2::DEFAULT_LATE_DAYS))
}

/// Uploads of d's window (d-1 .. d+late_days) that have not landed. Days before the first
/// landed upload are not awaited: the lab's history starts there.
pub fn missing_uploads(landed: &[NaiveDate], d: NaiveDate, late_days: u32) -> Vec<NaiveDate> {
    let Some(first_landed) = landed.first().copied() else {
        return (d - Duration::days(1)).iter_days().take(late_days as usize + 2).collect();
    };
    (d - Duration::days(1))
        .iter_days()
        .take(late_days as usize + 2)
        .filter(|u| *u >= first_landed && !landed.contains(u))
        .collect()
}

pub fn date_status(lab: &Lab, d: NaiveDate) -> Result<DateStatus> {
    let late_days = late_days_of(lab, d)?;
    let first = d - Duration::days(1);
    let last = d + Duration::days(late_days as i64);
    let mut stmt = lab.conn.prepare_cached(sql("land", "landed_uploads"))?;
    let landed: Vec<NaiveDate> = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    let newest_upload = landed.last().copied();
    let missing = missing_uploads(&landed, d, late_days);
    let built = crate::lake::snapshot::current_hash(&lab.conn, d)?;
    let is_built = built.is_some();
    let finality = if !missing.is_empty() {
        Finality::Provisional { missing_uploads: missing }
    } else {
        let now = v2::input_hashes(&lab.conn, late_days, &[d])?;
        match built {
            None => Finality::Unbuilt,
            Some(h) if now.first().is_some_and(|(_, _, x)| *x == h) => Finality::Closed,
            Some(_) => Finality::Stale,
        }
    };
    Ok(DateStatus { business_date: d, late_days, window_first_upload: first, window_last_upload: last, newest_upload, built: is_built, finality })
}
