//! Reopening a closed date, governed: finance decides to take the rows that arrived past a
//! date's window into silver and gold. The date's window widens to the newest upload that holds
//! its rows, and the write is one v2 snapshot that names who decided, why, and what it took in.
//! Every later write of the date keeps the wider window (`audit.date_windows`); a rollback past
//! the reopening narrows it again.

use super::Lab;
use super::snapshot::Trigger;
use super::v2::{self, RunReport, V2Options};
use crate::rules::LatenessWindow;
use crate::store::TriggerKind;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, bail, eyre};
use std::collections::BTreeMap;

/// What reopening a date would take in, worked out without writing: the confirmation shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReopenPlan {
    pub business_date: NaiveDate,
    /// The window the date is built with now, and the one the reopening gives it.
    pub late_days: u32,
    pub wider_late_days: u32,
    /// Rows past the window, and the baskets among them that v2 has no copy of.
    pub rows: i64,
    pub baskets: i64,
    /// The revenue of those baskets, per currency (the copy the recompute counts).
    pub revenue: BTreeMap<String, i64>,
    /// The uploads that brought the rows, oldest first.
    pub uploads: Vec<NaiveDate>,
}

impl ReopenPlan {
    /// The baskets' revenue, currency by currency: "£12.50, ₹1,000.00".
    pub fn amounts(&self) -> String {
        amounts(&self.revenue)
    }

    /// The uploads that brought the rows: "2026-10-23, 2026-10-24".
    fn upload_list(&self) -> String {
        self.uploads.iter().map(|u| u.to_string()).collect::<Vec<_>>().join(", ")
    }

    /// The question the explorer asks before it reopens, naming the entities `entity`s
    /// ("basket" on retail's lab, the model's word on another).
    pub fn text(&self, entity: &str) -> String {
        format!(
            "Reopen {} and take in what arrived past its window?\n\n{} row(s), {} {entity}(s) missing from v2{}\nfrom upload(s) {}.\nThe window widens from {} to {} days, recorded as one snapshot with the reason.",
            self.business_date,
            self.rows,
            self.baskets,
            self.money(": "),
            self.upload_list(),
            self.late_days,
            self.wider_late_days
        )
    }

    /// What `recount reopen` says before it writes, on every lab.
    pub fn line(&self, entity: &str) -> String {
        format!(
            "reopening {}: {} {entity}(s){}, past its {}-day window (window now {} days)",
            self.business_date,
            self.baskets,
            self.money(", "),
            self.late_days,
            self.wider_late_days
        )
    }

    /// The amounts after `lead`, or nothing when no measure is money (a plant feed's).
    fn money(&self, lead: &str) -> String {
        if self.revenue.is_empty() { String::new() } else { format!("{lead}{}", self.amounts()) }
    }
}

/// The window `d` is built with now: its version's (a reopening's when kept), or the default.
pub fn window_now(lab: &Lab, d: NaiveDate) -> Result<LatenessWindow> {
    Ok(LatenessWindow::as_built(lab.store().version_at(d, None)?.and_then(|v| v.late_days)))
}

/// The window `recount late` lists `d`'s rows by: `late_days`, or the date's kept window when
/// a reopening widened it.
pub fn listing_window(lab: &Lab, d: NaiveDate, late_days: u32) -> Result<u32> {
    Ok(LatenessWindow::with_kept(late_days, lab.store().kept_windows(d, d)?.get(&d).copied()).late_days)
}

/// The same on a model lab, whose reopenings are kept in its own table.
pub fn model_listing_window(lab: &Lab, d: NaiveDate, late_days: u32) -> Result<u32> {
    Ok(LatenessWindow::with_kept(late_days, lab.store().model_kept_windows(None)?.get(&d).copied()).late_days)
}

/// What reopening `d` would take in; an error when nothing of it arrived past its window.
pub fn plan(lab: &Lab, d: NaiveDate) -> Result<ReopenPlan> {
    let window = window_now(lab, d)?;
    // Rows past the window's far end (future-dated rows, before its near end, are a till clock's
    // and no reopening's).
    let late: Vec<_> = lab.store().late_rows(window.late_days, d)?.into_iter().filter(|r| r.upload_date > d).collect();
    let Some(newest) = late.iter().map(|r| r.upload_date).max() else {
        bail!("{d} has no rows past its {}-day window: there is nothing to reopen (`recount late {d}` lists them)", window.late_days);
    };
    let wider = u32::try_from((newest - d).num_days()).map_err(|_| eyre!("{d}: the newest late upload {newest} is before the date"))?;
    if wider > crate::rules::MAX_LATE_DAYS {
        bail!(
            "{d}: upload {newest} is {wider} days after the date, past the longest window recount keeps ({} days)",
            crate::rules::MAX_LATE_DAYS
        );
    }
    let (baskets, revenue) = baskets_counted(d, late.iter().filter(|r| r.missing_from_v2 && r.recompute_copy))?;
    let mut uploads: Vec<NaiveDate> = late.iter().map(|r| r.upload_date).collect();
    uploads.dedup();
    Ok(ReopenPlan {
        business_date: d,
        late_days: window.late_days,
        wider_late_days: wider,
        rows: late.len() as i64,
        baskets,
        revenue,
        uploads,
    })
}

/// What one upload brought of date `d` past its window, counted as a reopening counts it: its
/// copies (rows), and among them the baskets v2 has no copy of, with their revenue per currency
/// (each basket's the copy the recompute counts). The `--alert-on beyond-window` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Brought {
    pub copies: i64,
    pub baskets: i64,
    pub revenue: BTreeMap<String, i64>,
}

impl Brought {
    /// The baskets' revenue, currency by currency, as a reopening's plan says it.
    pub fn amounts(&self) -> String {
        amounts(&self.revenue)
    }
}

/// Revenue per currency in words: "£12.50, ₹1,000.00".
fn amounts(revenue: &BTreeMap<String, i64>) -> String {
    revenue.iter().map(|(c, v)| crate::money::format_major(*v, c)).collect::<Vec<_>>().join(", ")
}

pub fn brought(lab: &Lab, d: NaiveDate, upload: NaiveDate) -> Result<Brought> {
    let window = window_now(lab, d)?;
    let late = lab.store().late_rows(window.late_days, d)?;
    let mine: std::collections::BTreeSet<&str> =
        late.iter().filter(|r| r.upload_date == upload && r.missing_from_v2).map(|r| r.basket_id.as_str()).collect();
    let (baskets, revenue) = baskets_counted(d, late.iter().filter(|r| r.recompute_copy && mine.contains(r.basket_id.as_str())))?;
    Ok(Brought { copies: late.iter().filter(|r| r.upload_date == upload).count() as i64, baskets, revenue })
}

/// The baskets of date `d` whose counted copies are `rows` (one each), and their revenue per
/// currency: what a reopening takes in, and the alert names. A sum past 64 bits is an error.
fn baskets_counted<'a>(d: NaiveDate, rows: impl Iterator<Item = &'a crate::store::LateRow>) -> Result<(i64, BTreeMap<String, i64>)> {
    let mut revenue: BTreeMap<String, i64> = BTreeMap::new();
    let mut baskets = 0;
    for r in rows {
        baskets += 1;
        let sum = revenue.entry(r.currency.clone()).or_insert(0);
        *sum = sum.checked_add(r.revenue_minor).ok_or_else(|| eyre!("{d}: the late revenue in {} overflows 64 bits", r.currency))?;
    }
    Ok((baskets, revenue))
}

/// Who decided, and why: the words a snapshot keeps, with no control characters.
pub struct Decision<'a> {
    pub reason: &'a str,
    pub by: &'a str,
}

impl Decision<'_> {
    /// The reason and the person as a snapshot keeps them: trimmed, control characters replaced;
    /// an error when no reason is given.
    pub fn cleaned(&self) -> Result<(String, String)> {
        if self.reason.chars().all(|c| c.is_whitespace() || c.is_control()) {
            bail!("a reopening needs a reason (--reason TEXT): it is what history shows of the decision");
        }
        let clean = |s: &str| crate::sanitize::for_terminal(s.trim()).into_owned();
        Ok((clean(self.reason), clean(self.by)))
    }

    /// The person when none is named: `$USER`, when it is set. With none, the command line and
    /// the explorer ask for a name: history never records a decision by "unknown".
    pub fn known_by() -> Option<String> {
        std::env::var("USER").ok().filter(|u| !u.trim().is_empty())
    }

    /// The person a command line names with `--by`, else `$USER`; with neither, an error that
    /// says how to name one.
    pub fn by_or_user(by: Option<String>) -> Result<String> {
        by.or_else(Decision::known_by)
            .ok_or_else(|| eyre!("who decides this reopening? $USER is not set: name the person with --by NAME (history keeps it)"))
    }
}

/// Reopens `d`: one v2 write of the date under its wider window, recorded with the decision.
pub fn reopen(lab: &Lab, d: NaiveDate, decision: Decision, opts: V2Options) -> Result<RunReport> {
    let (reason, by) = decision.cleaned()?;
    let p = plan(lab, d)?;
    let detail = format!(
        "reopened by {by}: {reason} ({} basket(s), {} from upload(s) {}; window {} -> {} days)",
        p.baskets,
        p.amounts(),
        p.upload_list(),
        p.late_days,
        p.wider_late_days
    );
    let trigger = Trigger { kind: TriggerKind::Reopen, upload: None, detail };
    v2::reopen_date(lab, d, p.wider_late_days, trigger, opts)
}
