//! History: every version of the date, snapshot by snapshot, with why it changed, under the
//! date's finality; `b` rolls every date back to the row's snapshot. On a retail lab Enter
//! explains a change and the cursor's country is stepped in a chart; on a model's, gold before
//! and after the change and the entities it touched are drawn under the versions, as `history`
//! prints them.

use crate::reports::Report;
use crate::reports::model_lab::ModelHistoryReport;
use crate::tui::app::{App, Popup, ScreenBehaviour};
use crate::tui::charts;
use crate::tui::draw::{self, FrameMeasures};
use crate::tui::widgets;
use crate::tui::worker::DateHistory;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Paragraph, Wrap};

pub(super) struct History;

impl ScreenBehaviour for History {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        match app.history()? {
            DateHistory::Retail(h) => Some(h.table()),
            DateHistory::Model(h) => h.tables().into_iter().next(),
        }
    }

    fn snapshot_at(&self, app: &App, row: usize) -> Option<i64> {
        match app.history()? {
            DateHistory::Retail(h) => h.snapshot_at_row(row),
            DateHistory::Model(h) => h.versions.get(row).map(|v| v.snapshot_id),
        }
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
        let said = match app.history()? {
            DateHistory::Retail(h) => h.status.describe(),
            DateHistory::Model(h) => h.status.as_ref().map_or_else(|| "as of an older snapshot".to_string(), |(_, s)| s.describe()),
        };
        let [head, below] = Layout::vertical([Constraint::Length(2), Constraint::Min(4)]).areas(area);
        f.render_widget(Paragraph::new(crate::sanitize::for_terminal(&said).into_owned()).style(t.text()).wrap(Wrap { trim: true }), head);
        let h = match app.history()? {
            DateHistory::Model(h) => return draw_model(f, app, h, below, out),
            DateHistory::Retail(h) => h,
        };
        // The steps of the cursor row's country, when there is room; the table is their text.
        let steps = if below.height >= 16 { 9 } else { 0 };
        let [chart, table] = Layout::vertical([Constraint::Length(steps), Constraint::Min(4)]).areas(below);
        if let Some(country) = h.country_at_row(app.source_row()).filter(|_| steps > 0) {
            charts::draw_steps(f, t, &h.entries, country, chart);
        }
        let title = format!("history of {}: Enter explains a change, b rolls back", h.business_date);
        draw::draw_main_table(f, app, &h.table(), table, title, out);
        Some(())
    }
}

/// A model's history: the versions, gold before and after the change shown (as `history` prints
/// it), then the entities that change touched; the tables made once a frame.
fn draw_model(f: &mut Frame, app: &App, history: &ModelHistoryReport, area: Rect, out: &mut FrameMeasures) -> Option<()> {
    let t = &app.theme;
    let [versions, gold, changes] =
        Layout::vertical([Constraint::Percentage(30), Constraint::Percentage(35), Constraint::Percentage(35)]).areas(area);
    let mut tables = history.tables().into_iter();
    let title = format!("history of {}: every version of gold.{}, b rolls back", history.business_date, history.model.gold);
    draw::draw_main_table(f, app, &tables.next()?, versions, title, out);
    if let Some(g) = tables.next() {
        let shown = g.title.clone();
        widgets::draw_table(f, t, &g, &widgets::TableView::plain(&g), usize::MAX, gold, shown);
    }
    if let Some(c) = tables.next() {
        // A listing cut short says so in its own title.
        let whole = history.changes.len() as i64 == history.changes_total;
        let shown = if whole { format!("{} ({})", c.title, c.rows.len()) } else { c.title.clone() };
        widgets::draw_table(f, t, &c, &widgets::TableView::plain(&c), usize::MAX, changes, shown);
    }
    Some(())
}
