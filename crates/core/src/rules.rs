//! The contract's rules that Rust applies, each written once: the lateness window and whether a
//! business date is final. (The SQL side has its own single homes: `in_window` and
//! `audit.versions_as_of` in schema.sql.)

use chrono::{Days, NaiveDate};

/// The window when none is named.
pub const DEFAULT_LATE_DAYS: u32 = 2;

/// The widest window recount accepts: a year. A date's window is walked day by day (its missing
/// uploads, its status), so the bound keeps every command's work and output bounded.
pub const MAX_LATE_DAYS: u32 = 366;

/// Whether a row of `upload` dated `d` is future-dated: after `upload + 1`, so it cannot have
/// been sold yet (a till's clock). Such a row never enters silver or gold, whatever the window,
/// and is reported under that name, not as late.
#[inline]
pub fn future_dated(upload: NaiveDate, d: NaiveDate) -> bool {
    upload.checked_add_days(Days::new(1)).is_some_and(|next| d > next)
}

/// THE order of an entity's copies, first one wins, as the columns of the frame Rust sorts: the
/// smallest arrival, then event id; an exact tie (the same message twice) goes to the copy first in
/// the raw zone: its file's rank by upload date and name, then its line. The recompute and every
/// model's recount sort by the entity's key and then these (the SQL's `@copy_order`).
pub const COPY_ORDER: [&str; 4] = ["arrival", "event_id", "file_rank", "line"];

/// The columns to sort a frame of copies by: the entity's key, then [`COPY_ORDER`].
pub fn copy_sort(key: &str) -> [&str; 5] {
    let [a, b, c, d] = COPY_ORDER;
    [key, a, b, c, d]
}

/// What to call rows outside every window: future-dated, or beyond the window.
pub fn outside_window_word(future_dated: bool) -> &'static str {
    if future_dated { "future-dated (clock error?)" } else { "beyond the window" }
}

/// The lateness window: business date `d` is built from the uploads `d-1 ..= d+late_days`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct LatenessWindow {
    pub late_days: u32,
}

impl Default for LatenessWindow {
    fn default() -> Self {
        LatenessWindow { late_days: DEFAULT_LATE_DAYS }
    }
}

impl LatenessWindow {
    pub fn new(late_days: u32) -> Self {
        LatenessWindow { late_days }
    }

    /// The window a write builds a date with: the run's, or the date's kept window (a
    /// reopening's) when it is wider. `recount late` lists a date's rows by the same rule.
    pub fn with_kept(run: u32, kept: Option<u32>) -> Self {
        Self::new(kept.map_or(run, |k| k.max(run)))
    }

    /// The window a date was last built with (`None`: never built, or only restored): the
    /// default then.
    pub fn as_built(late_days: Option<i32>) -> Self {
        late_days.and_then(|l| u32::try_from(l).ok()).map(|l| Self::new(l.min(MAX_LATE_DAYS))).unwrap_or_default()
    }

    /// The first upload that can feed `d`.
    #[inline]
    pub fn first_upload(self, d: NaiveDate) -> NaiveDate {
        d.checked_sub_days(Days::new(1)).unwrap_or(NaiveDate::MIN)
    }

    /// The last upload that can feed `d`.
    #[inline]
    pub fn last_upload(self, d: NaiveDate) -> NaiveDate {
        d.checked_add_days(Days::new(self.late_days.into())).unwrap_or(NaiveDate::MAX)
    }

    /// Whether rows of `upload` feed business date `d`.
    #[inline]
    pub fn contains(self, upload: NaiveDate, d: NaiveDate) -> bool {
        self.first_upload(d) <= upload && upload <= self.last_upload(d)
    }

    /// The oldest business date a run of `upload` rebuilds: older rows of it are beyond the window.
    #[inline]
    pub fn oldest_affected(self, upload: NaiveDate) -> NaiveDate {
        upload.checked_sub_days(Days::new(self.late_days.into())).unwrap_or(NaiveDate::MIN)
    }

    /// What a run of `upload` does with its rows dated `d` (tests/corpus/window.jsonl holds the
    /// Spark driver's `fate` to the same verdicts).
    #[inline]
    pub fn fate(self, upload: NaiveDate, d: NaiveDate) -> Fate {
        if future_dated(upload, d) {
            Fate::FutureDated
        } else if d < self.oldest_affected(upload) {
            Fate::BeyondWindow
        } else {
            Fate::Affected
        }
    }

    /// The fate of rows that arrived `days` after their business date (before it, negative), as
    /// `fate` gives it for any date: the lateness histogram's buckets.
    pub fn fate_after(self, days: i64) -> Fate {
        let d = NaiveDate::from_ymd_opt(2000, 1, 1).unwrap_or_default();
        match chrono::TimeDelta::try_days(days).and_then(|t| d.checked_add_signed(t)) {
            Some(upload) => self.fate(upload, d),
            None if days < 0 => Fate::FutureDated,
            None => Fate::BeyondWindow,
        }
    }

    /// Uploads of `d`'s window that have not landed. Days before the first landed upload are not
    /// awaited: the lab's history starts there.
    pub fn missing_uploads(self, landed: &[NaiveDate], d: NaiveDate) -> Vec<NaiveDate> {
        let (first, last) = (self.first_upload(d), self.last_upload(d));
        let window = first.iter_days().take_while(move |u| *u <= last);
        match landed.first() {
            None => window.collect(),
            Some(&first_landed) => window.filter(|u| *u >= first_landed && landed.binary_search(u).is_err()).collect(),
        }
    }
}

/// What a run of an upload does with its rows of one business date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fate {
    /// The date is rebuilt from every upload in its window.
    Affected,
    /// Older than the run's window: never in silver or gold, reported.
    BeyondWindow,
    /// After the upload's next day (a clock error): never in silver or gold, reported.
    FutureDated,
}

impl Fate {
    /// In people's words, as the lateness histogram says it.
    pub fn word(self) -> &'static str {
        match self {
            Fate::Affected => "in the window",
            Fate::BeyondWindow => outside_window_word(false),
            Fate::FutureDated => outside_window_word(true),
        }
    }
}

/// Is a business date final?
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
    /// The rule: provisional while an upload of the window is missing; else closed when the
    /// current version was built from exactly the inputs that feed the date now.
    /// `built_from`: the input hash of the current version (None: never built); `inputs_now`:
    /// the input hash of what feeds the date now.
    /// `inputs_now` is asked only when the answer depends on it.
    pub fn of<E>(
        missing_uploads: Vec<NaiveDate>,
        built_from: Option<&str>,
        inputs_now: impl FnOnce() -> Result<Option<String>, E>,
    ) -> Result<Finality, E> {
        if !missing_uploads.is_empty() {
            return Ok(Finality::Provisional { missing_uploads });
        }
        Ok(match built_from {
            None => Finality::Unbuilt,
            Some(h) if inputs_now()?.as_deref() == Some(h) => Finality::Closed,
            Some(_) => Finality::Stale,
        })
    }

    pub fn word(&self) -> &'static str {
        match self {
            Finality::Closed => "closed",
            Finality::Provisional { .. } => "provisional",
            Finality::Stale => "stale",
            Finality::Unbuilt => "unbuilt",
        }
    }

    #[cfg(test)]
    fn is_provisional(&self) -> bool {
        matches!(self, Finality::Provisional { .. })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_row_dated_after_its_upload_and_the_next_day_is_future_dated() {
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        assert!(!future_dated(d("2026-08-15"), d("2026-08-16")), "a till east of UTC sells tomorrow's date today");
        assert!(future_dated(d("2026-08-15"), d("2026-08-17")));
        assert!(future_dated(d("2026-08-15"), d("2099-01-01")));
        assert!(!future_dated(d("2026-08-15"), d("2026-08-01")));
        assert!(!future_dated(NaiveDate::MAX, NaiveDate::MAX));
        assert_eq!(outside_window_word(future_dated(d("2026-08-15"), d("2099-01-01"))), "future-dated (clock error?)");
        assert_eq!(outside_window_word(future_dated(d("2026-08-15"), d("2026-08-01"))), "beyond the window");
    }

    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn a_bucket_s_fate_is_the_fate_of_its_rows_on_any_date() {
        for late_days in [0, 2, 7] {
            let w = LatenessWindow::new(late_days);
            for upload in [d("2026-08-15"), d("2024-02-29"), d("1999-12-31")] {
                for days in -4..12_i64 {
                    let business = upload - chrono::TimeDelta::days(days);
                    assert_eq!(w.fate_after(days), w.fate(upload, business), "{late_days} {upload} {days}");
                }
            }
            assert_eq!((w.fate_after(i64::MAX), w.fate_after(i64::MIN)), (Fate::BeyondWindow, Fate::FutureDated));
        }
        assert_eq!(LatenessWindow::new(2).fate_after(3).word(), "beyond the window");
    }

    #[test]
    fn the_window_is_the_day_before_to_late_days_after() {
        let w = LatenessWindow::new(2);
        assert!(!w.contains(d("2026-08-13"), d("2026-08-15")));
        assert!(w.contains(d("2026-08-14"), d("2026-08-15")));
        assert!(w.contains(d("2026-08-17"), d("2026-08-15")));
        assert!(!w.contains(d("2026-08-18"), d("2026-08-15")));
        assert_eq!(w.oldest_affected(d("2026-08-17")), d("2026-08-15"));
    }

    #[test]
    fn a_date_waits_for_the_uploads_of_its_window_from_the_first_landed_one() {
        let w = LatenessWindow::new(2);
        let landed = [d("2026-08-14"), d("2026-08-15"), d("2026-08-16")];
        assert_eq!(w.missing_uploads(&landed, d("2026-08-15")), vec![d("2026-08-17")]);
        assert_eq!(w.missing_uploads(&landed, d("2026-08-14")), Vec::<NaiveDate>::new(), "08-13 predates the lab");
        assert_eq!(LatenessWindow::new(0).missing_uploads(&landed, d("2026-08-15")), Vec::<NaiveDate>::new());
        assert_eq!(w.missing_uploads(&[], d("2026-08-15")).len(), 4);
    }

    #[test]
    fn finality_is_provisional_then_unbuilt_stale_or_closed() {
        let hash = |h: &str| -> Result<Option<String>, ()> { Ok(Some(h.to_string())) };
        assert!(Finality::of(vec![d("2026-08-17")], Some("h"), || hash("h")).unwrap().is_provisional());
        assert_eq!(Finality::of(vec![], None, || hash("h")), Ok(Finality::Unbuilt));
        assert_eq!(Finality::of(vec![], Some("h"), || hash("h")), Ok(Finality::Closed));
        assert_eq!(Finality::of(vec![], Some("h"), || hash("g")), Ok(Finality::Stale));
    }

    #[test]
    fn a_huge_window_saturates_instead_of_panicking() {
        let w = LatenessWindow::new(u32::MAX);
        assert_eq!(w.last_upload(d("2026-08-15")), NaiveDate::MAX);
        assert!(w.contains(d("2100-01-01"), d("2026-08-15")));
    }
}
