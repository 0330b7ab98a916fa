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

/// How a copy ties with another copy of its basket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tie {
    None,
    /// The same uploaded_at: event_id decides.
    SameInstant,
    /// The same uploaded_at and event_id (the same message twice): the raw zone's order decides.
    SameMessage,
}

pub fn resent(lab: &Lab, d: NaiveDate, late_days: u32) -> Result<BasketsReport> {
    let mut baskets: Vec<ResentBasket> = Vec::new();
    let mut ties: Vec<Vec<Tie>> = Vec::new();
    for r in lab.store().basket_copies(d, late_days)? {
        let tie = if r.same_message > 1 {
            Tie::SameMessage
        } else if r.same_instant > 1 {
            Tie::SameInstant
        } else {
            Tie::None
        };
        let copy = Copy {
            event_id: r.event_id,
            upload_date: r.upload_date,
            uploaded_at: r.uploaded_at,
            revenue_minor: r.revenue_minor,
            in_window: r.in_window,
            won: false,
            why: String::new(),
            file: r.file,
            line: r.line,
        };
        match baskets.last_mut() {
            Some(b) if b.basket_id == r.basket_id => {
                b.copies.push(copy);
                ties.last_mut().into_iter().for_each(|t| t.push(tie));
            }
            _ => {
                ties.push(vec![tie]);
                baskets.push(ResentBasket {
                    basket_id: r.basket_id,
                    store_id: r.store_id,
                    country: r.country,
                    currency: r.currency,
                    copies: vec![copy],
                })
            }
        }
    }
    // Copies come in the contract's order (copy_order in schema.sql): the first inside the window wins.
    for (b, ties) in baskets.iter_mut().zip(ties) {
        let winner = b.copies.iter().position(|c| c.in_window);
        for ((i, c), tie) in b.copies.iter_mut().enumerate().zip(ties) {
            c.won = Some(i) == winner;
            c.why = match (c.won, c.in_window, tie) {
                (true, _, Tie::SameMessage) => "won: the same message twice, first in the raw zone (upload, file, line)",
                (true, _, Tie::SameInstant) => "won: tie on uploaded_at, smallest event_id",
                (true, _, Tie::None) => "won: earliest uploaded_at",
                (false, false, _) => "discarded: outside the lateness window",
                (false, true, Tie::SameMessage) => "discarded: the same message twice, later in the raw zone",
                (false, true, Tie::SameInstant) => "discarded: tie on uploaded_at, larger event_id",
                (false, true, Tie::None) => "discarded: an earlier copy won",
            }
            .into();
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
            for c in &b.copies {
                t.push_flagged(
                    vec![
                        Cell::Repeat(b.basket_id.clone()),
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
    fn kind(&self) -> &'static str {
        "baskets"
    }
    fn business_date(&self) -> Option<chrono::NaiveDate> {
        Some(self.business_date)
    }
    fn headline(&self) -> String {
        format!("{}: {} basket(s) sent more than once", self.business_date, self.baskets.len())
    }
    fn tables(&self) -> Vec<Table> {
        vec![self.table(|_| true)]
    }
}
