//! Overview: the selected date's check (v1, v2 gold and the recount) for every lab, drawn from the
//! check alone (a jump sends it ahead of the rest of the view), under the date's finality and
//! over the lateness histogram. Retail's rows are per country (c splits them further); a
//! model's are per grain, and c sums them by the grain's first field.

use crate::reports::Report;
use crate::tui::app::{App, ScreenBehaviour};
use crate::tui::draw::{self, FrameMeasures};
use crate::tui::widgets;
use crate::tui::worker::DateCheck;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Paragraph, Wrap};

pub(super) struct Overview;

/// The check's table and its title.
fn shown(app: &App) -> Option<(crate::reports::Table, String)> {
    let d = app.selected_date()?;
    Some(match app.date_check()? {
        DateCheck::Retail(check) => (check.table(), format!("{d} per country: v1, v2 gold, recompute")),
        DateCheck::Model(check) => {
            let gold = &check.model.gold;
            let by_grain = || (check.tables().remove(0), format!("{d}: gold.{gold}, v1 and v2 beside the recount, by grain"));
            match (app.by_country, check.grouped(), check.model.grain.first()) {
                (true, Ok(g), Some(by)) => (g.tables().remove(0), format!("{d}: gold.{gold}, v1 and v2 beside the recount, by {by}")),
                (true, Err(e), _) => (check.tables().remove(0), format!("{d}: {e:#}")),
                _ => by_grain(),
            }
        }
    })
}

impl ScreenBehaviour for Overview {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        shown(app).map(|(t, _)| t)
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let t = &app.theme;
        let check = app.date_check()?;
        let (table, title) = shown(app)?;
        let lateness = app.snapshot.as_ref().map(|s| if app.by_country { &s.lateness_by_country } else { &s.lateness });
        let lateness = lateness.filter(|l| !l.buckets.is_empty());
        let hist_height = match lateness {
            None => 0,
            Some(_) if app.by_country => 12,
            Some(_) => 9,
        };
        let [head, hist, rows] = Layout::vertical([Constraint::Length(2), Constraint::Length(hist_height), Constraint::Min(4)]).areas(area);
        f.render_widget(
            Paragraph::new(crate::sanitize::for_terminal(&check.headline_short()).into_owned()).style(t.text()).wrap(Wrap { trim: true }),
            head,
        );
        if let Some(report) = lateness {
            widgets::draw_lateness(f, t, report, hist);
        }
        draw::draw_main_table(f, app, &table, rows, title, out);
        Some(())
    }
}
