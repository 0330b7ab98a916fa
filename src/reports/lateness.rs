//! `recount lateness`: upload date minus business date, in events and baskets.

use super::{Cell, Report, Table};
use crate::lake::{Cached, Lab};
use crate::queries::sql;
use color_eyre::eyre::Result;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LatenessBucket {
    /// None when not split by country.
    pub country: Option<String>,
    pub days: i64,
    pub events: i64,
    pub baskets: i64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct LatenessReport {
    pub by_country: bool,
    pub buckets: Vec<LatenessBucket>,
}

/// The histogram needs every bronze row's basket, counted distinct: a full scan (about half a
/// second on the full world). It is kept in the lab and recounted only after a file lands.
fn ensure_cached(lab: &Lab) -> Result<()> {
    let (newest, counted): (i32, i32) = lab.conn.row_cached(sql("reports", "lateness_state"), [], |r| Ok((r.get(0)?, r.get(1)?)))?;
    if newest == counted {
        return Ok(());
    }
    let tx = crate::lake::Tx::begin(&lab.conn, None)?;
    tx.conn().exec_cached(sql("reports", "lateness_clear"), [])?;
    tx.conn().exec_cached(sql("reports", "lateness_fill"), [newest])?;
    tx.commit()?;
    Ok(())
}

pub fn lateness(lab: &Lab, by_country: bool) -> Result<LatenessReport> {
    ensure_cached(lab)?;
    let buckets = if by_country {
        let mut stmt = lab.conn.prepare_cached(sql("reports", "lateness_by_country"))?;
        let rows = stmt.query_map([], |r| Ok(LatenessBucket { country: Some(r.get(0)?), days: r.get(1)?, events: r.get(2)?, baskets: r.get(3)? }))?;
        rows.collect::<Result<_, _>>()?
    } else {
        let mut stmt = lab.conn.prepare_cached(sql("reports", "lateness"))?;
        let rows = stmt.query_map([], |r| Ok(LatenessBucket { country: None, days: r.get(0)?, events: r.get(1)?, baskets: r.get(2)? }))?;
        rows.collect::<Result<_, _>>()?
    };
    Ok(LatenessReport { by_country, buckets })
}

impl Report for LatenessReport {
    fn headline(&self) -> String {
        "lateness: upload date minus business date".into()
    }
    fn tables(&self) -> Vec<Table> {
        let mut cols = vec![];
        if self.by_country {
            cols.push(("country", "country"));
        }
        cols.extend([("days", "days"), ("events", "events"), ("baskets", "baskets")]);
        let mut t = Table::new("", &cols);
        for b in &self.buckets {
            let mut cells = vec![];
            if let Some(c) = &b.country {
                cells.push(Cell::text(c));
            }
            cells.extend([Cell::text(format!("{:+}", b.days)), Cell::Int(b.events), Cell::Int(b.baskets)]);
            t.push(cells);
        }
        vec![t]
    }
}
