//! The entities of a business date sent more than once (retail's re-sent baskets): every copy,
//! which one won and why, on any lab.

use super::{Cell, Report, Table};
use crate::lake::Lab;
use crate::model::Model;
use chrono::NaiveDate;
use color_eyre::eyre::Result;

/// One copy of a re-sent entity, in its model's words (retail's: a basket's event).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Copy {
    pub event_id: String,
    pub business_date: NaiveDate,
    pub upload_date: NaiveDate,
    pub uploaded_at: String,
    pub measures: Vec<i64>,
    pub in_window: bool,
    pub won: bool,
    pub why: String,
    pub file: String,
    pub line: i64,
}

/// An entity sent more than once: its key, its grain and attributes (retail's store; country and
/// currency), and every copy in the contract's order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ResentBasket {
    pub key: String,
    pub grain: Vec<String>,
    pub attributes: Vec<String>,
    pub copies: Vec<Copy>,
}

/// `baskets DATE` on any lab: the date's entities sent more than once, copy by copy.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BasketsReport {
    #[serde(skip)]
    pub model: Model,
    pub business_date: NaiveDate,
    pub late_days: u32,
    pub baskets: Vec<ResentBasket>,
}

/// How a copy ties with another copy of its entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tie {
    None,
    /// The same arrival: event_id decides.
    SameInstant,
    /// The same arrival and event_id (the same message twice): the raw zone's order decides.
    SameMessage,
}

impl Copy {
    /// A copy as its lab's rows give it: which copy wins, and why, is `grouped`'s to say.
    fn new(
        event_id: String,
        (business_date, upload_date): (NaiveDate, NaiveDate),
        uploaded_at: String,
        measures: Vec<i64>,
        in_window: bool,
        (file, line): (String, i64),
    ) -> Copy {
        Copy { event_id, business_date, upload_date, uploaded_at, measures, in_window, won: false, why: String::new(), file, line }
    }
}

impl Tie {
    fn of(same_instant: i64, same_message: i64) -> Tie {
        if same_message > 1 {
            Tie::SameMessage
        } else if same_instant > 1 {
            Tie::SameInstant
        } else {
            Tie::None
        }
    }
}

/// Copies in the contract's order, each with its entity's key, grain, attributes and tie, grouped
/// by entity; the first copy inside the window wins, and each says why it counts or not.
fn grouped(copies: impl Iterator<Item = ((String, Vec<String>, Vec<String>), Copy, Tie)>, arrival: &str) -> Vec<ResentBasket> {
    let mut baskets: Vec<ResentBasket> = Vec::new();
    let mut ties: Vec<Vec<Tie>> = Vec::new();
    for ((key, grain, attributes), copy, tie) in copies {
        match baskets.last_mut() {
            Some(b) if b.key == key => {
                b.copies.push(copy);
                ties.last_mut().into_iter().for_each(|t| t.push(tie));
            }
            _ => {
                ties.push(vec![tie]);
                baskets.push(ResentBasket { key, grain, attributes, copies: vec![copy] })
            }
        }
    }
    for (b, ties) in baskets.iter_mut().zip(ties) {
        let winner = b.copies.iter().position(|c| c.in_window);
        for ((i, c), tie) in b.copies.iter_mut().enumerate().zip(ties) {
            c.won = Some(i) == winner;
            c.why = match (c.won, c.in_window, tie) {
                (true, _, Tie::SameMessage) => "won: the same message twice, first in the raw zone (upload, file, line)".into(),
                (true, _, Tie::SameInstant) => format!("won: tie on {arrival}, smallest event_id"),
                (true, _, Tie::None) => format!("won: earliest {arrival}"),
                (false, false, _) => "discarded: outside the lateness window".into(),
                (false, true, Tie::SameMessage) => "discarded: the same message twice, later in the raw zone".into(),
                (false, true, Tie::SameInstant) => format!("discarded: tie on {arrival}, larger event_id"),
                (false, true, Tie::None) => "discarded: an earlier copy won".into(),
            };
        }
    }
    baskets
}

/// A retail lab's re-sent baskets of `d`, by country.
pub fn resent(lab: &Lab, d: NaiveDate, late_days: u32) -> Result<BasketsReport> {
    let model = crate::model::retail();
    // A reopened date's copies are judged by its wider window, as v2 and `late` judge them.
    let late_days = crate::lake::reopen::listing_window(lab, d, late_days)?;
    let copies = lab.store().basket_copies(d, late_days)?.into_iter().map(|r| {
        let tie = Tie::of(r.same_instant, r.same_message);
        let copy =
            Copy::new(r.event_id, (r.business_date, r.upload_date), r.uploaded_at, vec![1, r.revenue_minor], r.in_window, (r.file, r.line));
        ((r.basket_id, vec![r.store_id], vec![r.country, r.currency]), copy, tie)
    });
    let baskets = grouped(copies, &model.arrival_time);
    Ok(BasketsReport { model, business_date: d, late_days, baskets })
}

/// The same on a model lab: its keys sent more than once.
pub fn model_resent(lab: &Lab, model: &Model, d: NaiveDate, late_days: u32) -> Result<BasketsReport> {
    use crate::lake::model::named;
    let copies = lab.store().model_resent(d, late_days)?.into_iter().map(|r| {
        let tie = Tie::of(r.same_instant, r.same_message);
        let measures = named(&model.measures, [r.m1, r.m2, r.m3, r.m4, r.m5, r.m6]);
        let file = (super::model::raw_path(model, r.upload_date, &r.file), r.line.into());
        let copy = Copy::new(r.event_id, (r.business_date, r.upload_date), r.arrived, measures, r.in_window, file);
        let grain = named(&model.grain, [r.g1, r.g2, r.g3, r.g4]);
        ((r.entity_key, grain, named(&model.attributes, [r.a1, r.a2, r.a3, r.a4])), copy, tie)
    });
    let baskets = grouped(copies, &model.arrival_time);
    let late_days = crate::lake::reopen::model_listing_window(lab, d, late_days)?;
    Ok(BasketsReport { model: model.clone(), business_date: d, late_days, baskets })
}

impl BasketsReport {
    pub fn table(&self, keep: impl Fn(&ResentBasket) -> bool) -> Table {
        let m = &self.model;
        let shown = super::model::record_measures(m);
        let mut cols: Vec<(String, String)> = [(m.key.as_str(), m.key.as_str()), ("why", "which copy counts")]
            .into_iter()
            .chain([("business_date", "business date"), ("upload_date", "upload")])
            .map(|(k, l)| (k.to_string(), l.to_string()))
            .collect();
        cols.extend(
            shown
                .iter()
                .map(|&i| (super::model::measure_key(&m.measures[i], None), super::model::measure_label(&m.measures[i]).to_string())),
        );
        cols.extend(
            [("event_id", "event_id"), (m.arrival_time.as_str(), m.arrival_time.as_str())].map(|(k, l)| (k.to_string(), l.to_string())),
        );
        cols.extend(m.grain.iter().map(|g| (g.clone(), g.clone())));
        let refs: Vec<(&str, &str)> = cols.iter().map(|(k, l)| (k.as_str(), l.as_str())).collect();
        let mut t = Table::new("", &refs);
        for b in self.baskets.iter().filter(|b| keep(b)) {
            for c in &b.copies {
                let mut row = vec![Cell::Repeat(b.key.clone()), Cell::text(&c.why), Cell::Date(c.business_date), Cell::Date(c.upload_date)];
                let cells = super::model::measure_cells(m, &b.attributes, &c.measures);
                row.extend(shown.iter().map(|&i| cells[i].clone()));
                row.extend([Cell::text(&c.event_id), Cell::text(&c.uploaded_at)]);
                row.extend(b.grain.iter().map(Cell::text));
                t.push_flagged(row, c.won.then_some(super::Status::Pass));
            }
        }
        t
    }
}

impl Report for BasketsReport {
    fn kind(&self) -> &'static str {
        "baskets"
    }
    fn business_date(&self) -> Option<chrono::NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        format!("{}: {} {}(s) sent more than once", self.business_date, self.baskets.len(), self.model.entity)
    }
    fn tables(&self) -> Vec<Table> {
        vec![self.table(|_| true)]
    }
}
