//! Promises: what recount promises about the date (completeness, timeliness, consistency), each
//! kept or not.

use crate::tui::app::{App, ScreenBehaviour};
use crate::tui::draw::{self, FrameMeasures};
use ratatui::Frame;
use ratatui::layout::Rect;

pub(super) struct Promises;

impl ScreenBehaviour for Promises {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        app.view.as_ref().map(|v| v.promises.table())
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let v = app.view.as_ref()?;
        draw::draw_main_table(f, app, &v.promises.table(), area, format!("promises for {}", v.check.business_date), out);
        Some(())
    }
}
