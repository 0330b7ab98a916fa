//! The screens a lab of a model other than retail still shows in reports of its own
//! (`reports::model_lab`, `reports::check`), with the same tabs and keys: Overview is the date's
//! check (v1, v2 and the recount by grain, or with c by the grain's first field), History its
//! versions, gold before and after, and the entities a change touched. Explain, Baskets, Late,
//! Promises and Trend are every lab's screens (`screens::home`).

use crate::reports::Report;
use crate::tui::app::{App, ScreenBehaviour};
use crate::tui::draw::{self, FrameMeasures};
use crate::tui::screen::Screen;
use crate::tui::widgets;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Paragraph, Wrap};

pub(super) struct ModelScreenBehaviour(pub Screen);

/// One per screen, in tab order (`Screen::index`).
pub(super) static MODEL_SCREENS: [ModelScreenBehaviour; Screen::ALL.len()] = [
    ModelScreenBehaviour(Screen::Overview),
    ModelScreenBehaviour(Screen::Explain),
    ModelScreenBehaviour(Screen::Baskets),
    ModelScreenBehaviour(Screen::Late),
    ModelScreenBehaviour(Screen::History),
    ModelScreenBehaviour(Screen::Promises),
    ModelScreenBehaviour(Screen::Trend),
    ModelScreenBehaviour(Screen::Audit),
];

impl ModelScreenBehaviour {
    /// The screen's table and its title.
    fn shown(&self, app: &App) -> Option<(crate::reports::Table, String)> {
        let d = app.selected_date()?;
        let check = app.date_check()?.model()?;
        let gold = &check.model.gold;
        Some(match self.0 {
            // c groups the rows by the grain's first field, where retail's splits by country.
            Screen::Overview if app.by_country => match (check.grouped(), check.model.grain.first()) {
                (Ok(g), Some(by)) => (g.tables().remove(0), format!("{d}: gold.{gold}, v1 and v2 beside the recount, by {by}")),
                (Err(e), _) => (check.tables().remove(0), format!("{d}: {e:#}")),
                (Ok(_), None) => (check.tables().remove(0), format!("{d}: gold.{gold}, v1 and v2 beside the recount, by grain")),
            },
            Screen::Overview => (check.tables().remove(0), format!("{d}: gold.{gold}, v1 and v2 beside the recount, by grain")),
            Screen::History => (app.history()?.model()?.tables().remove(0), format!("history of {d}: every version of gold.{gold}")),
            // Every lab's screens (`screens::home`).
            Screen::Explain | Screen::Baskets | Screen::Late | Screen::Promises | Screen::Trend | Screen::Audit => return None,
        })
    }
}

impl ScreenBehaviour for ModelScreenBehaviour {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        self.shown(app).map(|(t, _)| t)
    }

    /// History's rows are the date's versions, oldest first: `b` rolls back to the row's.
    fn snapshot_at(&self, app: &App, row: usize) -> Option<i64> {
        (self.0 == Screen::History).then(|| app.history()?.model()?.versions.get(row).map(|v| v.snapshot_id)).flatten()
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let t = &app.theme;
        if self.0 == Screen::Audit {
            let text = "On a model lab, `recount audit --gold SOURCE` audits a foreign gold in the model's columns; the Audit screen reads retail's.";
            f.render_widget(Paragraph::new(text).style(t.muted()).wrap(Wrap { trim: true }), area);
            return Some(());
        }
        if self.0 != Screen::History {
            let (table, title) = self.shown(app)?;
            draw::draw_main_table(f, app, &table, area, title, out);
            return Some(());
        }
        // History: the versions, gold before and after the change shown (as `history` prints it),
        // then the entities that change touched; the tables made once a frame.
        let d = app.selected_date()?;
        let history = app.history()?.model()?;
        let [versions, gold, changes] =
            Layout::vertical([Constraint::Percentage(30), Constraint::Percentage(35), Constraint::Percentage(35)]).areas(area);
        let mut tables = history.tables().into_iter();
        let title = format!("history of {d}: every version of gold.{}", history.model.gold);
        draw::draw_main_table(f, app, &tables.next()?, versions, title, out);
        if let Some(g) = tables.next() {
            let shown = g.title.clone();
            widgets::draw_table(f, t, &g, &widgets::TableView::plain(&g), usize::MAX, gold, shown);
        }
        if let Some(c) = tables.next() {
            // A listing cut short says so in its own title.
            let whole = history.changes.len() as i64 == history.changes_total;
            let shown = if whole { format!("{} ({})", c.title, c.rows.len()) } else { c.title.clone() };
            widgets::draw_table(f, t, &c, &widgets::TableView::plain(&c), usize::MAX, changes, shown);
        }
        Some(())
    }
}
