//! Explain: why v1 differs from the recompute, per country (missed baskets, double-counted
//! copies); Enter lists the baskets behind a country's numbers.

use crate::tui::app::{App, Popup, ScreenBehaviour};
use crate::tui::charts;
use crate::tui::draw::{self, FrameMeasures};
use crate::tui::widgets;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

pub(super) struct Explain;

impl ScreenBehaviour for Explain {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        app.view.as_ref().map(|v| v.explain.table())
    }

    fn drill(&self, app: &App, row: usize) -> Option<Popup> {
        let e = &app.view.as_ref()?.explain;
        let c = e.countries.get(row)?;
        let money = |v| crate::money::format_major(v, &c.currency);
        let mut body = format!(
            "{} {}: {} missed basket(s), {} extra copies\n\n",
            e.business_date, c.country, c.missed_baskets, c.double_counted_copies
        );
        for b in c.missed.iter().take(200) {
            body.push_str(&format!(
                "missed  {}  {}  landed in upload {}  {}\n",
                b.basket_id,
                b.store_id,
                b.upload_date,
                money(b.revenue_minor)
            ));
        }
        for b in c.double_counted.iter().take(200) {
            body.push_str(&format!(
                "twice   {}  {}  {} copies in the run  +{}\n",
                b.basket_id,
                b.store_id,
                b.copies_in_run,
                money(b.revenue_minor)
            ));
        }
        Some(Popup::Detail { title: format!("baskets behind {} {}", c.country, e.business_date), body })
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let v = app.view.as_ref()?;
        let d = v.check.business_date;
        // The bridge of the cursor row's country, to scale, when there is room: the table is its text.
        let bridge = if area.height >= 17 { 6 } else { 0 };
        // The table holds one row per country: it takes what they need, the bridge sits under it.
        let rows = u16::try_from(v.explain.countries.len()).unwrap_or(u16::MAX).saturating_add(4).max(5);
        let [table, chart, notes] =
            Layout::vertical([Constraint::Length(rows), Constraint::Length(bridge), Constraint::Min(5)]).areas(area);
        draw::draw_main_table(f, app, &v.explain.table(), table, format!("{d}: recompute - missed + double counted = v1"), out);
        if let Some(c) = v.explain.countries.get(app.source_row()).filter(|_| bridge > 0) {
            charts::draw_bridge(f, &app.theme, c, chart);
        }
        widgets::draw_notes(f, &app.theme, &crate::reports::Report::notes(&v.explain), notes);
        Some(())
    }
}
