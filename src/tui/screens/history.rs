//! History: every version of the date, snapshot by snapshot, with why it changed; Enter explains
//! a change, `b` rolls every date back to the row's snapshot.

use crate::tui::app::{App, Popup, ScreenBehaviour};
use crate::tui::charts;
use crate::tui::draw::{self, FrameMeasures};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Paragraph, Wrap};

pub(super) struct History;

impl ScreenBehaviour for History {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        app.history()?.retail().map(|h| h.table())
    }

    fn snapshot_at(&self, app: &App, row: usize) -> Option<i64> {
        app.history()?.retail()?.snapshot_at_row(row)
    }

    fn drill(&self, app: &App, row: usize) -> Option<Popup> {
        let h = app.history()?.retail()?;
        let s = self.snapshot_at(app, row)?;
        let e = h.entries.iter().find(|e| e.snapshot_id == s)?;
        let mut body = format!("snapshot {} ({}) — {}\n\n", e.snapshot_id, e.operation.as_str(), e.trigger.detail);
        for c in &e.countries {
            body.push_str(&format!(
                "{}: {} baskets, {} ({}, {})\n  {}\n",
                c.country,
                crate::money::format_count(c.baskets),
                crate::money::format_major(c.revenue_minor, &c.currency),
                crate::money::format_count_delta(c.baskets_delta),
                crate::money::format_delta(c.revenue_delta_minor, &c.currency),
                c.attribution
            ));
        }
        Some(Popup::Detail { title: format!("why {} changed", h.business_date), body })
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let t = &app.theme;
        let h = app.history()?.retail()?;
        // The steps of the cursor row's country, when there is room; the table is their text.
        let steps = if area.height >= 18 { 9 } else { 0 };
        let [head, chart, table] = Layout::vertical([Constraint::Length(2), Constraint::Length(steps), Constraint::Min(4)]).areas(area);
        f.render_widget(Paragraph::new(h.status.describe()).style(t.text()).wrap(Wrap { trim: true }), head);
        if let Some(country) = h.country_at_row(app.source_row()).filter(|_| steps > 0) {
            charts::draw_steps(f, t, &h.entries, country, chart);
        }
        let title = format!("history of {}: Enter explains a change, b rolls back", h.business_date);
        draw::draw_main_table(f, app, &h.table(), table, title, out);
        Some(())
    }
}
