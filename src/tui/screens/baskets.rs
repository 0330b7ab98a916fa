//! Baskets: the date's entities sent more than once (retail's re-sent baskets), copy by copy, on
//! any lab, filtered by country (`f`) and search (`/`).

use crate::tui::app::{App, ScreenBehaviour};
use crate::tui::draw::{self, FrameMeasures};
use ratatui::Frame;
use ratatui::layout::Rect;

pub(super) struct Baskets;

impl ScreenBehaviour for Baskets {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        app.baskets().map(|b| b.table(|b| app.basket_visible(b)))
    }

    /// Each entity has a row per copy: the row's entity is the one whose copies span it.
    fn basket_at(&self, app: &App, row: usize) -> Option<String> {
        let mut first = 0;
        for b in app.baskets()?.baskets.iter().filter(|b| app.basket_visible(b)) {
            if row < first + b.copies.len() {
                return Some(b.key.clone());
            }
            first += b.copies.len();
        }
        None
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let report = app.baskets()?;
        let filter = app.country_filter.as_ref().map(|c| format!(", country {}", crate::sanitize::for_terminal(c))).unwrap_or_default();
        let search =
            if app.search.is_empty() { String::new() } else { format!(", search '{}'", crate::sanitize::for_terminal(&app.search)) };
        let shown = report.baskets.iter().filter(|b| app.basket_visible(b)).count();
        let title = format!("{}: {shown} re-sent {}(s){filter}{search}", report.business_date, report.model.entity);
        draw::draw_main_table(f, app, &report.table(|b| app.basket_visible(b)), area, title, out);
        Some(())
    }
}
