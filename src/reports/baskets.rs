//! Re-sent baskets of a business date: every copy, which one won and why.

use super::{Cell, Report, Table};
use crate::lake::Lab;
use chrono::NaiveDate;
use color_eyre::eyre::Result;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Copy {
    pub event_id: String,
    pub upload_date: NaiveDate,
    pub uploaded_at: String,
    pub revenue_minor: i64,
    pub in_window: bool,
    pub won: bool,
    pub why: String,
    pub file: String,
    pub line: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ResentBasket {
    pub basket_id: String,
    pub store_id: String,
    pub country: String,
    pub currency: String,
    pub copies: Vec<Copy>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct BasketsReport {
    pub business_date: NaiveDate,
    pub late_days: u32,
    pub baskets: Vec<ResentBasket>,
}

pub fn resent(lab: &Lab, d: NaiveDate, late_days: u32) -> Result<BasketsReport> {
    let mut baskets: Vec<ResentBasket> = Vec::new();
    for r in lab.store().basket_copies(d, late_days)? {
        let copy = Copy {
            event_id: r.event_id,
            upload_date: r.upload_date,
            uploaded_at: r.uploaded_at,
            revenue_minor: r.revenue_minor,
            in_window: r.in_window,
            won: false,
            why: if r.same_instant > 1 { "tie".into() } else { String::new() },
            file: r.file,
            line: r.line,
        };
        match baskets.last_mut() {
            Some(b) if b.basket_id == r.basket_id => b.copies.push(copy),
            _ => baskets.push(ResentBasket {
                basket_id: r.basket_id,
                store_id: r.store_id,
                country: r.country,
                currency: r.currency,
                copies: vec![copy],
            }),
        }
    }
    // Copies come ordered by (uploaded_at, event_id): the first inside the window wins.
    for b in &mut baskets {
        let winner = b.copies.iter().position(|c| c.in_window);
        for (i, c) in b.copies.iter_mut().enumerate() {
            let tie = c.why == "tie";
            c.won = Some(i) == winner;
            c.why = match (c.won, c.in_window) {
                (true, _) if tie => "won: tie on uploaded_at, smallest event_id".into(),
                (true, _) => "won: earliest uploaded_at".into(),
                (false, false) => "discarded: outside the lateness window".into(),
                (false, true) if tie => "discarded: tie on uploaded_at, larger event_id".into(),
                (false, true) => "discarded: an earlier copy won".into(),
            };
        }
    }
    Ok(BasketsReport { business_date: d, late_days, baskets })
}

impl BasketsReport {
    pub fn table(&self, keep: impl Fn(&ResentBasket) -> bool) -> Table {
        let mut t = Table::new(
            "",
            &[
                ("basket_id", "basket_id"),
                ("why", "which copy counts"),
                ("upload_date", "upload"),
                ("revenue_minor", "revenue"),
                ("event_id", "event_id"),
                ("uploaded_at", "uploaded_at"),
                ("store_id", "store"),
            ],
        );
        for b in self.baskets.iter().filter(|b| keep(b)) {
            for (i, c) in b.copies.iter().enumerate() {
                t.push_flagged(
                    vec![
                        Cell::text(if i == 0 { b.basket_id.as_str() } else { "" }),
                        Cell::text(&c.why),
                        Cell::Date(c.upload_date),
                        Cell::money(c.revenue_minor, &b.currency),
                        Cell::text(&c.event_id),
                        Cell::text(&c.uploaded_at),
                        Cell::text(&b.store_id),
                    ],
                    c.won.then_some(super::Status::Pass),
                );
            }
        }
        t
    }
}

impl Report for BasketsReport {
    fn headline(&self) -> String {
        format!("{}: {} basket(s) sent more than once", self.business_date, self.baskets.len())
    }
    fn tables(&self) -> Vec<Table> {
        vec![self.table(|_| true)]
    }
}
