//! Trend: a series per business date (a country's revenue; a model's measure per part), v1, v2
//! gold and the recompute, as a chart over
//! its table (the chart's text, and all there is when the terminal is too small). `f` picks the
//! country; the navigator's date is the chart's rule.

use crate::tui::app::{App, ScreenBehaviour};
use crate::tui::charts;
use crate::tui::draw::{self, FrameMeasures};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

pub(super) struct Trend;

impl ScreenBehaviour for Trend {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        app.trend_series().map(|s| s.table(app.trend_part_name()))
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let s = app.trend_series()?;
        let currency = s.currency.as_ref().map(|c| format!(" ({c})")).unwrap_or_default();
        let pick = app.trend_part_name().map(|p| format!("; f {p}")).unwrap_or_default();
        let title = format!("{}{currency} per date: v1, v2 gold, recompute{pick}", s.label);
        // The chart needs room for its axes and a readable height; below that the table is it.
        if !charts::fits(area, 60, 22) {
            draw::draw_main_table(f, app, &s.table(app.trend_part_name()), area, format!("{title} (chart: 60x22)"), out);
            return Some(());
        }
        let [chart, table] = Layout::vertical([Constraint::Percentage(55), Constraint::Min(6)]).areas(area);
        charts::draw_trend(f, &app.theme, s, app.selected_date(), chart);
        draw::draw_main_table(f, app, &s.table(app.trend_part_name()), table, title, out);
        Some(())
    }
}
