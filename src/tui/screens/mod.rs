//! A home per screen: what each of the explorer's screens shows and does, one module each,
//! behind one trait. The app asks the selected screen's home for its table, what Enter opens,
//! the basket or snapshot on a row, and how it draws; nothing else matches on the screen.

mod audit;
mod baskets;
mod explain;
mod history;
mod late;
mod model;
mod overview;
mod promises;
pub(crate) mod trend;

use super::app::{App, Popup};
use super::draw::FrameMeasures;
use super::screen::Screen;
use crate::reports::Table;
use ratatui::Frame;
use ratatui::layout::Rect;

/// One screen's behaviour. `row` is always an index into the screen's table as the report
/// gives it (the app maps the cursor through the sort first).
pub(crate) trait ScreenBehaviour {
    /// The table the screen's rows move through; None until what it shows has loaded.
    fn table(&self, app: &App) -> Option<Table>;

    /// What Enter opens on a row: by default every cell of it, labelled.
    fn drill(&self, app: &App, row: usize) -> Option<Popup> {
        let t = self.table(app)?;
        let r = t.rows.get(row)?;
        let body = t.columns.iter().zip(&r.cells).map(|(c, x)| format!("{}: {}", c.label, x.display())).collect::<Vec<_>>().join("\n");
        Some(Popup::Detail { title: "row".into(), body })
    }

    /// The basket_id a row shows, for `y` (copy): None where rows are not baskets.
    fn basket_at(&self, _app: &App, _row: usize) -> Option<String> {
        None
    }

    /// The snapshot a row stands for, for `b` (roll back): None where rows are not snapshots.
    fn snapshot_at(&self, _app: &App, _row: usize) -> Option<i64> {
        None
    }

    /// Draws the screen into `area`, and says what its main table measured into `out`. None:
    /// nothing of it has loaded yet (the caller says so).
    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()>;
}

/// The screen's home on a lab of a model other than retail.
pub(crate) fn model_home(s: Screen) -> &'static dyn ScreenBehaviour {
    &model::MODEL_SCREENS[s.index()]
}

impl Screen {
    /// The screen's home.
    pub(crate) fn behaviour(self) -> &'static dyn ScreenBehaviour {
        match self {
            Screen::Overview => &overview::Overview,
            Screen::Explain => &explain::Explain,
            Screen::Baskets => &baskets::Baskets,
            Screen::Late => &late::Late,
            Screen::History => &history::History,
            Screen::Promises => &promises::Promises,
            Screen::Trend => &trend::Trend,
            Screen::Audit => &audit::Audit,
        }
    }
}
