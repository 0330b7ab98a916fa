//! A home per screen: what each of the explorer's screens shows and does, one module each,
//! behind one trait. The app asks the selected screen's home for its table, what Enter opens,
//! the basket or snapshot on a row, and how it draws; nothing else matches on the screen.

mod audit;
mod baskets;
mod explain;
mod history;
mod late;
mod overview;
mod promises;
mod trend;

use super::app::{App, ScreenBehaviour};
use super::screen::Screen;

/// Each screen's home, one for every lab: the app is given it here, so that it never names a
/// screen's module.
fn home(s: Screen) -> &'static dyn ScreenBehaviour {
    match s {
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

impl App {
    /// The app, its screens given their homes.
    pub fn new(theme: crate::tui::theme::Theme, mouse: bool) -> App {
        App::with_homes(theme, mouse, home)
    }
}
