//! The summary properties (`recount.*`) a Spark run writes on its gold snapshot, as the mirror
//! reads them: only the named keys exist.

use crate::lake::snapshot::{Trigger, TriggerKind};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, eyre};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The summary properties a Spark run writes start with this.
const PROP: &str = "recount.";

/// The name of a summary property the lab reads, after `recount.`: only the `keys` below exist,
/// and tests/corpus/properties.jsonl, which the Spark driver's names are held to, lists each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PropKey(&'static str);

impl PropKey {
    /// The property's full name.
    pub(crate) fn full(self) -> String {
        format!("{PROP}{}", self.0)
    }
}

pub(crate) mod keys {
    use super::PropKey;
    pub(crate) const RUN: PropKey = PropKey("run");
    pub(crate) const UPLOAD: PropKey = PropKey("upload");
    pub(crate) const TRIGGER: PropKey = PropKey("trigger");
    pub(crate) const DETAIL: PropKey = PropKey("detail");
    pub(crate) const CORRECTED: PropKey = PropKey("corrected");
    pub(crate) const LATE_DAYS: PropKey = PropKey("late-days");
    pub(crate) const DATES: PropKey = PropKey("dates");
    pub(crate) const SKIPPED_DATES: PropKey = PropKey("skipped-dates");
    pub(crate) const BEYOND_WINDOW_ROWS: PropKey = PropKey("beyond-window-rows");
    /// A prefix: then a business date.
    pub(crate) const WINDOW: PropKey = PropKey("window.");
    #[cfg(test)]
    pub(crate) const ALL: [PropKey; 10] =
        [RUN, UPLOAD, TRIGGER, DETAIL, CORRECTED, LATE_DAYS, DATES, SKIPPED_DATES, BEYOND_WINDOW_ROWS, WINDOW];
}

/// A run's summary properties (`recount.*`), as a Spark run writes them on its gold snapshot (or
/// in the skipped runs' log).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub(crate) struct Props(BTreeMap<String, String>);

impl Props {
    pub(super) fn get(&self, key: PropKey) -> Option<&str> {
        self.0.get(&key.full()).map(String::as_str)
    }

    pub(super) fn date(&self, key: PropKey) -> Result<Option<NaiveDate>> {
        self.get(key).map(crate::reports::day::parse_date).transpose().map_err(|e| eyre!("{}: {e}", key.full()))
    }

    /// Dates joined by commas.
    pub(super) fn dates(&self, key: PropKey) -> Result<Vec<NaiveDate>> {
        let text = self.get(key).unwrap_or("");
        let parse = |d: &str| crate::reports::day::parse_date(d).map_err(|e| eyre!("{}: {e}", key.full()));
        text.split(',').filter(|d| !d.is_empty()).map(parse).collect()
    }

    /// The run's trigger, as the lab words it: a run of an upload names the corrected file
    /// versions it took in.
    pub(super) fn trigger(&self) -> Result<Trigger> {
        let kind = TriggerKind::parse(self.get(keys::TRIGGER).unwrap_or("upload")).map_err(|e| eyre!("recount.trigger: {e}"))?;
        let upload = self.date(keys::UPLOAD)?;
        let trigger = match (self.get(keys::DETAIL), upload) {
            (Some(d), _) => Trigger { kind, upload, detail: d.to_string() },
            (None, Some(u)) => Trigger::upload(kind, u),
            (None, None) => Trigger { kind, upload, detail: String::new() },
        };
        let corrected: Vec<&str> = self.get(keys::CORRECTED).unwrap_or("").split(',').filter(|c| !c.is_empty()).collect();
        Ok(trigger.with_corrected(&corrected))
    }

    /// A count the run recorded (`default` when a run written before it did not).
    pub(super) fn count(&self, key: PropKey, default: i64) -> Result<i64> {
        match self.get(key) {
            None => Ok(default),
            Some(text) => text.parse().map_err(|_| eyre!("{} is '{text}', not a count", key.full())),
        }
    }

    pub(super) fn late_days(&self) -> Result<u32> {
        let days = self.count(keys::LATE_DAYS, i64::from(crate::rules::DEFAULT_LATE_DAYS))?;
        u32::try_from(days).map_err(|_| eyre!("recount.late-days is {days}"))
    }

    /// Each date the run keeps a wider window for (a reopening's).
    pub(super) fn kept_windows(&self) -> Result<BTreeMap<NaiveDate, u32>> {
        let prefix = keys::WINDOW.full();
        let mut out = BTreeMap::new();
        for (k, v) in &self.0 {
            if let Some(d) = k.strip_prefix(&prefix) {
                let d = crate::reports::day::parse_date(d).map_err(|e| eyre!("{k}: {e}"))?;
                out.insert(d, v.parse().map_err(|_| eyre!("{k} is '{v}', not a number of days"))?);
            }
        }
        Ok(out)
    }
}
