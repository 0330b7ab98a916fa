//! Promises: the five promises about the date (completeness, uniqueness, correctness, timeliness,
//! consistency), each kept or not, on a lab of any model.

use crate::tui::app::{App, ScreenBehaviour};
use crate::tui::draw::{self, FrameMeasures};
use ratatui::Frame;
use ratatui::layout::Rect;

pub(super) struct Promises;

impl ScreenBehaviour for Promises {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        app.promises().map(|p| p.table())
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let p = app.promises()?;
        draw::draw_main_table(f, app, &p.table(), area, format!("promises for {}", p.business_date), out);
        Some(())
    }
}
