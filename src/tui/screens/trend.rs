//! Trend: a country's revenue per business date, v1, v2 gold and the recompute, as a chart over
//! its table (the chart's text, and all there is when the terminal is too small). `f` picks the
//! country; the navigator's date is the chart's rule.

use crate::reports::trend::TrendSeries;
use crate::tui::app::{App, ScreenBehaviour};
use crate::tui::charts;
use crate::tui::draw::{self, FrameMeasures};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

pub(super) struct Trend;

impl ScreenBehaviour for Trend {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        app.trend_series().map(TrendSeries::table)
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let s = app.trend_series()?;
        let title = format!("{} ({}) per date: v1, v2 gold, recompute; f country", s.country, s.currency);
        // The chart needs room for its axes and a readable height; below that the table is it.
        if !charts::fits(area, 60, 22) {
            draw::draw_main_table(f, app, &s.table(), area, format!("{title} (chart: 60x22)"), out);
            return Some(());
        }
        let [chart, table] = Layout::vertical([Constraint::Percentage(55), Constraint::Min(6)]).areas(area);
        charts::draw_trend(f, &app.theme, s, app.selected_date(), chart);
        draw::draw_main_table(f, app, &s.table(), table, title, out);
        Some(())
    }
}
