//! Overview: the selected date per country (v1, v2 gold, recompute), drawn from the date's check
//! alone (a jump sends it ahead of the rest of the view), over the lateness histogram.

use crate::tui::app::{App, ScreenBehaviour};
use crate::tui::draw::{self, FrameMeasures};
use crate::tui::widgets;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Paragraph, Wrap};

pub(super) struct Overview;

impl ScreenBehaviour for Overview {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        app.check_shown().map(|c| c.table())
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let t = &app.theme;
        let check = app.check_shown()?;
        let d = check.business_date;
        let hist_height = if app.by_country { 12 } else { 9 };
        let [head, hist, table] =
            Layout::vertical([Constraint::Length(2), Constraint::Length(hist_height), Constraint::Min(4)]).areas(area);
        f.render_widget(
            Paragraph::new(crate::sanitize::for_terminal(&check.headline_short()).into_owned()).style(t.text()).wrap(Wrap { trim: true }),
            head,
        );
        if let Some(snap) = &app.snapshot {
            let report = if app.by_country { &snap.lateness_by_country } else { &snap.lateness };
            widgets::draw_lateness(f, t, report, hist);
        }
        draw::draw_main_table(f, app, &check.table(), table, format!("{d} per country: v1, v2 gold, recompute"), out);
        Some(())
    }
}
