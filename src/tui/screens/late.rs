//! Late & quarantine: the date's rows beyond its window, over every line rejected at landing.

use crate::tui::app::{App, ScreenBehaviour};
use crate::tui::draw::{self, FrameMeasures};
use crate::tui::widgets;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

pub(super) struct Late;

impl ScreenBehaviour for Late {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        app.view.as_ref().map(|v| crate::reports::Report::tables(&v.late).remove(0))
    }

    fn basket_at(&self, app: &App, row: usize) -> Option<String> {
        app.view.as_ref()?.late.rows.get(row).map(|r| r.basket_id.clone())
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let v = app.view.as_ref()?;
        let [late, quarantine] = Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(area);
        let title = format!("{}: {} row(s) beyond the {}-day window", v.check.business_date, v.late.rows.len(), v.late.late_days);
        draw::draw_main_table(f, app, &crate::reports::Report::tables(&v.late).remove(0), late, title, out);
        if let Some(snap) = &app.snapshot {
            let qt = crate::reports::Report::tables(&snap.quarantine).remove(0);
            let title = format!("quarantine: {} line(s) rejected at landing", snap.quarantine.rows.len());
            widgets::draw_table(f, &app.theme, &qt, &widgets::TableView::plain(&qt), usize::MAX, quarantine, title);
        }
        Some(())
    }
}
