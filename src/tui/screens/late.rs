//! Late & quarantine: the date's rows beyond its window on any lab, over every line rejected at
//! landing.

use crate::tui::app::{App, ScreenBehaviour};
use crate::tui::draw::{self, FrameMeasures};
use crate::tui::widgets;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

pub(super) struct Late;

impl ScreenBehaviour for Late {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        app.late().map(|l| crate::reports::Report::tables(l).remove(0))
    }

    fn basket_at(&self, app: &App, row: usize) -> Option<String> {
        app.late()?.rows.get(row).map(|r| r.entity_key.clone())
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let report = app.late()?;
        let [late, quarantine] = Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(area);
        draw::draw_main_table(f, app, &crate::reports::Report::tables(report).remove(0), late, report.title(), out);
        if let Some(snap) = &app.snapshot {
            let qt = crate::reports::Report::tables(&snap.quarantine).remove(0);
            // Every refused line counted, though a file lists only its first thousand.
            let title = crate::reports::Report::headline(&snap.quarantine);
            widgets::draw_table(f, &app.theme, &qt, &widgets::TableView::plain(&qt), usize::MAX, quarantine, title);
        }
        Some(())
    }
}
