//! Every screen on a lab of a model other than retail: the same tabs and keys, each reading the
//! model's reports (`reports::model_lab`, `reports::model_day`) in the model's words. Overview is
//! the date's check (v1, v2 and the recount by grain, or with c by the grain's first field), Explain its grains where v1 differs from
//! v2, Baskets its re-sent keys, Late its records past the window, History its versions and the
//! entities a change touched. The Promises and Trend screens are every model's
//! (`screens::promises`, `screens::trend`).

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
        let day = app.model_day()?;
        let gold = &day.check.model.gold;
        Some(match self.0 {
            // c groups the rows by the grain's first field, where retail's splits by country.
            Screen::Overview if app.by_country => match (day.check.grouped(), day.check.model.grain.first()) {
                (Ok(g), Some(by)) => (g.tables().remove(0), format!("{d}: gold.{gold}, v1 and v2 beside the recount, by {by}")),
                (Err(e), _) => (day.check.tables().remove(0), format!("{d}: {e:#}")),
                (Ok(_), None) => (day.check.tables().remove(0), format!("{d}: gold.{gold}, v1 and v2 beside the recount, by grain")),
            },
            Screen::Overview => (day.check.tables().remove(0), format!("{d}: gold.{gold}, v1 and v2 beside the recount, by grain")),
            Screen::Explain => {
                (day.check.where_v1_differs().tables().remove(0), format!("{d}: where v1 (the naive append) differs from v2"))
            }
            Screen::Baskets => (day.resent.tables().remove(0), day.resent.headline()),
            Screen::Late => (day.late.tables().remove(0), day.late.headline()),
            Screen::History => (day.history.tables().remove(0), format!("history of {d}: every version of gold.{gold}")),
            Screen::Promises | Screen::Trend | Screen::Audit => return None,
        })
    }
}

impl ScreenBehaviour for ModelScreenBehaviour {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        self.shown(app).map(|(t, _)| t)
    }

    /// History's rows are the date's versions, oldest first: `b` rolls back to the row's.
    fn snapshot_at(&self, app: &App, row: usize) -> Option<i64> {
        (self.0 == Screen::History).then(|| app.model_day()?.history.versions.get(row).map(|v| v.snapshot_id)).flatten()
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let t = &app.theme;
        if self.0 == Screen::Audit {
            let text = "On a model lab, `recount audit --gold SOURCE` audits a foreign gold in the model's columns; the Audit screen reads retail's.";
            f.render_widget(Paragraph::new(text).style(t.muted()).wrap(Wrap { trim: true }), area);
            return Some(());
        }
        let (table, title) = self.shown(app)?;
        if self.0 != Screen::History {
            draw::draw_main_table(f, app, &table, area, title, out);
            return Some(());
        }
        // History: the versions, then the entities the newest change touched.
        let day = app.model_day()?;
        let [versions, changes] = Layout::vertical([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(area);
        draw::draw_main_table(f, app, &table, versions, title, out);
        if let Some(c) = day.history.tables().pop() {
            let shown = format!("{} ({} entities)", c.title, c.rows.len());
            widgets::draw_table(f, t, &c, &widgets::TableView::plain(&c), usize::MAX, changes, shown);
        }
        Some(())
    }
}
