//! What the worker sends the screens: a date's view, and the reports a retail lab and a model
//! lab each give for the same question (a date's check and history, a foreign gold's audit),
//! until those reports are one.

use crate::reports::{baskets::BasketsReport, check::CheckReport, explain::ExplainReport, history::HistoryReport};
use crate::reports::{listings::LateReport, promises::PromisesReport};
use chrono::NaiveDate;
use color_eyre::eyre::Result;

/// Everything the screens show for one business date, on any lab.
#[derive(Debug, Clone)]
pub struct DateView {
    pub check: DateCheck,
    pub explain: ExplainReport,
    pub baskets: BasketsReport,
    pub late: LateReport,
    pub history: DateHistory,
    pub promises: PromisesReport,
}

/// A date's check: retail's by country, or a model lab's by grain, under one header and one set
/// of verdicts (`reports::check`).
#[derive(Debug, Clone)]
pub enum DateCheck {
    Retail(CheckReport),
    Model(Box<crate::reports::check::ModelCheckReport>),
}

impl DateCheck {
    pub fn business_date(&self) -> NaiveDate {
        match self {
            DateCheck::Retail(c) => c.business_date,
            DateCheck::Model(c) => c.business_date,
        }
    }
    /// One line for the Overview's header: the date's finality and the verdict.
    pub fn headline_short(&self) -> String {
        match self {
            DateCheck::Retail(c) => c.headline_short(),
            DateCheck::Model(c) => c.headline_short(),
        }
    }
    pub fn retail(&self) -> Option<&CheckReport> {
        match self {
            DateCheck::Retail(c) => Some(c),
            DateCheck::Model(_) => None,
        }
    }
    pub fn model(&self) -> Option<&crate::reports::check::ModelCheckReport> {
        match self {
            DateCheck::Retail(_) => None,
            DateCheck::Model(c) => Some(c),
        }
    }
    /// The window the date is judged by (the one it was built with, or kept when reopened).
    pub fn late_days(&self) -> u32 {
        match self {
            DateCheck::Retail(c) => c.status.late_days,
            DateCheck::Model(c) => c.status.late_days,
        }
    }
}

/// A date's versions and the changes between them: retail's history, or a model lab's.
#[derive(Debug, Clone)]
pub enum DateHistory {
    Retail(HistoryReport),
    Model(Box<crate::reports::model_lab::ModelHistoryReport>),
}

impl DateHistory {
    pub fn retail(&self) -> Option<&HistoryReport> {
        match self {
            DateHistory::Retail(h) => Some(h),
            DateHistory::Model(_) => None,
        }
    }
    pub fn model(&self) -> Option<&crate::reports::model_lab::ModelHistoryReport> {
        match self {
            DateHistory::Retail(_) => None,
            DateHistory::Model(h) => Some(h),
        }
    }
}

/// A foreign gold audited against the lab: retail's report or a model's (by grain), until the
/// two are one report.
#[derive(Debug, Clone)]
pub enum Audited {
    Retail(Box<crate::reports::audit::AuditReport>),
    Model(Box<crate::reports::model_audit::ModelAuditReport>),
}

impl Audited {
    /// What the audit found: its wrong rows, by date and by cause.
    pub fn counts(&self) -> &crate::reports::audit_where::Counts {
        match self {
            Audited::Retail(a) => &a.counts,
            Audited::Model(a) => &a.counts,
        }
    }
    pub fn source(&self) -> &str {
        match self {
            Audited::Retail(a) => &a.source,
            Audited::Model(a) => &a.source,
        }
    }
    pub fn wrong(&self) -> usize {
        self.counts().wrong()
    }
    /// Where the wrong rows fall.
    pub fn where_wrong(&self) -> &crate::reports::audit_where::WhereWrong {
        &self.counts().places
    }
    /// The audit of one date: every row, the wrong ones first.
    pub fn of_date(&self, d: NaiveDate) -> Result<Audited> {
        Ok(match self {
            Audited::Retail(a) => Audited::Retail(Box::new(a.of_date(d)?)),
            Audited::Model(a) => Audited::Model(Box::new(a.of_date(d)?)),
        })
    }
    /// Its rows' table.
    pub fn table(&self) -> crate::reports::Table {
        let tables = match self {
            Audited::Retail(a) => crate::reports::Report::tables(&**a),
            Audited::Model(a) => crate::reports::Report::tables(&**a),
        };
        tables.into_iter().next().unwrap_or_else(|| crate::reports::Table::new("", &[]))
    }
}
