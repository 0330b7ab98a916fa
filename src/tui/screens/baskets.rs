//! Baskets: the date's re-sent baskets, copy by copy, filtered by country (`f`) and search (`/`).

use crate::tui::app::{App, ScreenBehaviour};
use crate::tui::draw::{self, FrameMeasures};
use ratatui::Frame;
use ratatui::layout::Rect;

pub(super) struct Baskets;

impl ScreenBehaviour for Baskets {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        app.view.as_ref().map(|v| v.baskets.table(|b| app.basket_visible(b)))
    }

    /// Each basket has a row per copy: the row's basket is the one whose copies span it.
    fn basket_at(&self, app: &App, row: usize) -> Option<String> {
        let mut first = 0;
        for b in app.view.as_ref()?.baskets.baskets.iter().filter(|b| app.basket_visible(b)) {
            if row < first + b.copies.len() {
                return Some(b.basket_id.clone());
            }
            first += b.copies.len();
        }
        None
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let v = app.view.as_ref()?;
        let filter = app.country_filter.clone().unwrap_or_else(|| "all".into());
        let search =
            if app.search.is_empty() { String::new() } else { format!(", search '{}'", crate::sanitize::for_terminal(&app.search)) };
        let shown = v.baskets.baskets.iter().filter(|b| app.basket_visible(b)).count();
        let title = format!("{}: {shown} re-sent basket(s), country {filter}{search}", v.check.business_date);
        draw::draw_main_table(f, app, &v.baskets.table(|b| app.basket_visible(b)), area, title, out);
        Some(())
    }
}
