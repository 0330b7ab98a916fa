//! The five promises for a business date, each pass, warn or fail with the figure behind it.

use super::check::CheckReport;
use super::status::Finality;
use super::{Cell, Report, Status, Table};
use crate::lake::{Lab, snapshot};
use crate::money::format_count as n;
use chrono::NaiveDate;
use color_eyre::eyre::Result;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Promise {
    pub name: &'static str,
    pub status: Status,
    pub figure: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct PromisesReport {
    pub business_date: NaiveDate,
    pub promises: Vec<Promise>,
}

pub fn promises(lab: &Lab, check: &CheckReport) -> Result<PromisesReport> {
    let d = check.business_date;
    let late = check.status.late_days;
    let crate::store::Completeness { landed, silver_rows, silver_baskets: silver_distinct, silver_landed, silver_not_landed, beyond } =
        lab.store().completeness(d, late)?;
    let mut out = Vec::new();
    let accounted = silver_landed + beyond;
    let stale =
        if silver_not_landed > 0 { format!("; {} silver basket(s) no current file holds", n(silver_not_landed)) } else { String::new() };
    out.push(Promise {
        name: "completeness",
        status: if landed == accounted && silver_not_landed == 0 {
            Status::Pass
        } else if silver_rows == 0 {
            Status::Warn
        } else {
            Status::Fail
        },
        figure: format!(
            "{} of {} landed baskets accounted for: {} in silver, {} beyond the window{stale}",
            n(accounted),
            n(landed),
            n(silver_landed),
            n(beyond)
        ),
    });
    out.push(Promise {
        name: "uniqueness",
        status: if silver_rows == silver_distinct { Status::Pass } else { Status::Fail },
        figure: format!("{} silver rows, {} distinct basket_ids", n(silver_rows), n(silver_distinct)),
    });
    out.push(correctness(check));
    out.push(Promise {
        name: "timeliness",
        status: match check.status.finality {
            Finality::Closed => Status::Pass,
            Finality::Provisional { .. } => Status::Warn,
            Finality::Stale | Finality::Unbuilt => Status::Fail,
        },
        figure: check.status.describe(),
    });
    let sums = lab.store().store_sums_vs_silver(d)?;
    let sums_ok = sums.iter().all(|s| s.gold_baskets == s.silver_baskets && s.gold_revenue_minor == s.silver_revenue_minor);
    let (fp_now, recorded) = snapshot::gold_and_recorded(lab)?;
    let fp_ok = recorded.as_ref().is_none_or(|r| *r == fp_now);
    out.push(Promise {
        name: "consistency",
        status: if sums_ok && fp_ok { Status::Pass } else { Status::Fail },
        figure: format!(
            "store rows {} the country totals of silver; gold {} its snapshot history ({} rows, md5 {}…)",
            if sums_ok { "sum to" } else { "DO NOT sum to" },
            if fp_ok { "agrees with" } else { "DIFFERS from" },
            n(fp_now.rows),
            &fp_now.md5[..8.min(fp_now.md5.len())]
        ),
    });
    Ok(PromisesReport { business_date: d, promises: out })
}

/// Correctness: gold equals the independent recompute (both engines agreeing), exactly or but
/// for the baskets beyond the window.
fn correctness(check: &CheckReport) -> Promise {
    let exact = check.countries.iter().all(|c| c.v2_exact());
    let explained = check.countries.iter().all(|c| c.v2_explained());
    let beyond_rev: Vec<String> = check
        .countries
        .iter()
        .filter(|c| c.beyond_window_revenue_minor != 0)
        .map(|c| format!("{} {}", c.country, crate::money::format_major(c.beyond_window_revenue_minor, &c.currency)))
        .collect();
    Promise {
        name: "correctness",
        status: if !check.engines_agree || !explained {
            Status::Fail
        } else if exact {
            Status::Pass
        } else {
            Status::Warn
        },
        figure: if !check.engines_agree {
            format!("the polars and DuckDB recounts disagree at {} store(s)", check.engine_disagreements.len())
        } else if exact {
            "gold equals the independent recompute in every country".into()
        } else if explained {
            format!("gold equals the recompute but for beyond-window baskets ({})", beyond_rev.join(", "))
        } else {
            "gold differs from the recompute beyond what the window explains".into()
        },
    }
}

impl PromisesReport {
    pub fn table(&self) -> Table {
        let mut t = Table::new("", &[("promise", "promise"), ("status", "status"), ("figure", "figure")]);
        for p in &self.promises {
            t.push_flagged(vec![Cell::text(p.name), Cell::Status(p.status), Cell::text(&p.figure)], Some(p.status));
        }
        t
    }
}

impl Report for PromisesReport {
    fn kind(&self) -> &'static str {
        "promises"
    }
    fn business_date(&self) -> Option<chrono::NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        format!("promises for {}", self.business_date)
    }
    fn tables(&self) -> Vec<Table> {
        vec![self.table()]
    }
}
