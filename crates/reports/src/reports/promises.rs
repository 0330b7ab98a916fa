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
    let c = lab.store().completeness(d, check.status.late_days)?;
    let sums = lab.store().store_sums_vs_silver(d)?;
    let sums_ok = sums.iter().all(|s| s.gold_baskets == s.silver_baskets && s.gold_revenue_minor == s.silver_revenue_minor);
    let (fp_now, recorded) = snapshot::gold_and_recorded(lab)?;
    let fp_ok = recorded.as_ref().is_none_or(|r| *r == fp_now);
    let sums = format!("store rows {} the country totals of silver", if sums_ok { "sum to" } else { "DO NOT sum to" });
    let promises = vec![
        completeness(&c, "basket"),
        uniqueness(&c, "basket_id"),
        correctness(check),
        timeliness(&check.status),
        consistency(sums_ok && fp_ok, &sums, fp_ok, (fp_now.rows, &fp_now.md5)),
    ];
    Ok(PromisesReport { business_date: d, promises })
}

/// The five promises of a model lab's date, from its check: retail's promises by the same rules,
/// in the model's words (its entity, its key, its grain).
pub fn model_promises(lab: &Lab, check: &super::check::ModelCheckReport) -> Result<PromisesReport> {
    let (d, model) = (check.business_date, &check.model);
    let c = lab.store().model_completeness(d, check.status.late_days)?;
    let sums_ok = lab.store().model_gold_against_silver(d)? == 0;
    let (rows, md5) = crate::lake::model::digest(lab, model)?;
    let recorded = lab.store().model_snapshots()?.pop();
    let fp_ok = recorded.as_ref().is_none_or(|r| (r.gold_rows, r.gold_md5.as_str()) == (rows, md5.as_str()));
    let sums = format!(
        "gold's rows {} its silver {}s summed by {}",
        if sums_ok { "are" } else { "ARE NOT" },
        model.entity,
        model.grain.join(", ")
    );
    let promises = vec![
        completeness(&c, &model.entity),
        uniqueness(&c, &model.key),
        model_correctness(check)?,
        timeliness(&check.status),
        consistency(sums_ok && fp_ok, &sums, fp_ok, (rows, &md5)),
    ];
    Ok(PromisesReport { business_date: d, promises })
}

/// Completeness: every landed entity of the date is in silver or past the window, and silver
/// holds none that no current file has.
fn completeness(c: &crate::store::Completeness, entity: &str) -> Promise {
    let crate::store::Completeness { landed, silver_rows, silver_landed, silver_not_landed, beyond, .. } = *c;
    let accounted = silver_landed + beyond;
    let stale =
        if silver_not_landed > 0 { format!("; {} silver {entity}(s) no current file holds", n(silver_not_landed)) } else { String::new() };
    Promise {
        name: "completeness",
        status: if landed == accounted && silver_not_landed == 0 {
            Status::Pass
        } else if silver_rows == 0 {
            Status::Warn
        } else {
            Status::Fail
        },
        figure: format!(
            "{} of {} landed {entity}s accounted for: {} in silver, {} beyond the window{stale}",
            n(accounted),
            n(landed),
            n(silver_landed),
            n(beyond)
        ),
    }
}

/// Uniqueness: one silver row per key.
fn uniqueness(c: &crate::store::Completeness, key: &str) -> Promise {
    Promise {
        name: "uniqueness",
        status: if c.silver_rows == c.silver_baskets { Status::Pass } else { Status::Fail },
        figure: format!("{} silver rows, {} distinct {key}s", n(c.silver_rows), n(c.silver_baskets)),
    }
}

/// Timeliness: the date's finality.
fn timeliness(status: &super::status::DateStatus) -> Promise {
    Promise {
        name: "timeliness",
        status: match status.finality {
            Finality::Closed => Status::Pass,
            Finality::Provisional { .. } => Status::Warn,
            Finality::Stale | Finality::Unbuilt => Status::Fail,
        },
        figure: status.describe(),
    }
}

/// Consistency: gold is its silver summed (`sums`, in the model's words), and gold's
/// fingerprint is the one its newest snapshot recorded.
fn consistency(ok: bool, sums: &str, fp_ok: bool, (rows, md5): (i64, &str)) -> Promise {
    Promise {
        name: "consistency",
        status: if ok { Status::Pass } else { Status::Fail },
        figure: format!(
            "{sums}; gold {} its snapshot history ({} rows, md5 {}…)",
            if fp_ok { "agrees with" } else { "DIFFERS from" },
            n(rows),
            &md5[..8.min(md5.len())]
        ),
    }
}

/// A model's correctness, as retail's: gold equals the recount exactly, or but for the entities
/// past the window (their money per part, else every measure), or it fails.
fn model_correctness(check: &super::check::ModelCheckReport) -> Result<Promise> {
    let model = &check.model;
    let (exact, explained) = (check.agrees(), check.agrees() || check.explained());
    let shown = super::model::shown_measures(model);
    let parts = super::model::part_positions(model, &shown);
    let attribute = |r: &crate::model::recount::ModelRow, i: usize| r.attributes.get(i).cloned().unwrap_or_default();
    // Keyed by the part and each shown measure's currency, so that two currencies never add up.
    let mut beyond: std::collections::BTreeMap<Vec<String>, Vec<i64>> = Default::default();
    for r in &check.beyond_window {
        let currencies = shown.iter().map(|&i| model.currency_at(&model.measures[i]).map(|c| attribute(r, c)).unwrap_or_default());
        let key = parts.iter().map(|&i| attribute(r, i)).chain(currencies).collect();
        let acc = beyond.entry(key).or_insert_with(|| vec![0; shown.len()]);
        for (a, &i) in acc.iter_mut().zip(&shown) {
            let v = r.measures.get(i).copied().unwrap_or(0);
            *a = a
                .checked_add(v)
                .ok_or_else(|| color_eyre::eyre::eyre!("{}: a sum past the window overflows 64 bits", check.business_date))?;
        }
    }
    let amounts: Vec<String> = beyond
        .iter()
        .filter(|(_, v)| v.iter().any(|x| *x != 0))
        .map(|(key, v)| {
            let (part, currencies) = key.split_at(parts.len());
            let values = shown.iter().zip(v).zip(currencies).map(|((&i, &x), currency)| match currency.as_str() {
                "" => format!("{} {}", model.measures[i].name, n(x)),
                c => crate::money::format_major(x, c),
            });
            part.iter().cloned().chain([values.collect::<Vec<_>>().join(", ")]).collect::<Vec<_>>().join(" ")
        })
        .collect();
    let every = match parts.iter().map(|&i| model.attributes[i].as_str()).collect::<Vec<_>>().join(" ") {
        p if p.is_empty() => "on every grain".to_string(),
        p => format!("in every {p}"),
    };
    Ok(Promise {
        name: "correctness",
        status: if !explained {
            Status::Fail
        } else if exact {
            Status::Pass
        } else {
            Status::Warn
        },
        figure: if exact {
            format!("gold equals the independent recompute {every}")
        } else if explained {
            format!("gold equals the recompute but for beyond-window {}s ({})", model.entity, amounts.join(", "))
        } else {
            "gold differs from the recompute beyond what the window explains".into()
        },
    })
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
    /// A promise failed: `promises` exits 4.
    pub fn failed(&self) -> bool {
        self.promises.iter().any(|p| p.status == Status::Fail)
    }

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
