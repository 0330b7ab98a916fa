//! Explain: why v1 differs from the recompute, per part of the date (retail: per country) on any
//! lab: what it missed and the copies it counted twice; Enter lists the entities behind a part's
//! numbers.

use crate::tui::app::{App, Popup, ScreenBehaviour};
use crate::tui::charts;
use crate::tui::draw::{self, FrameMeasures};
use crate::tui::widgets;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

pub(super) struct Explain;

impl ScreenBehaviour for Explain {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        app.explain().map(crate::reports::explain::ExplainReport::table)
    }

    fn drill(&self, app: &App, row: usize) -> Option<Popup> {
        let e = app.explain()?;
        let c = e.parts.get(row)?;
        let entity = &e.model.entity;
        let i = crate::reports::model::shown_measures(&e.model).first().copied().unwrap_or(0);
        let amount = |v: &[i64]| e.amount(c, i, v.get(i).copied().unwrap_or(0));
        let part = if c.part.is_empty() { e.business_date.to_string() } else { format!("{} {}", e.business_date, c.part) };
        let mut body = format!("{part}: {} missed {entity}(s), {} extra copies\n\n", c.missed_entities, c.double_counted_copies);
        for b in c.missed_lines.iter().take(200) {
            let grain = b.grain.join(" ");
            body.push_str(&format!("missed  {}  {grain}  landed in upload {}  {}\n", b.key, b.upload_date, amount(&b.measures)));
        }
        for b in c.double_counted_lines.iter().take(200) {
            let grain = b.grain.join(" ");
            body.push_str(&format!("twice   {}  {grain}  {} copies in the run  +{}\n", b.key, b.copies_in_run, amount(&b.measures)));
        }
        Some(Popup::Detail { title: format!("{entity}s behind {part}"), body })
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let e = app.explain()?;
        let d = e.business_date;
        // The bridge of the cursor row's part, to scale, when there is room: the table is its text.
        let bridge = if area.height >= 17 { 6 } else { 0 };
        // The table holds one row per part: it takes what they need, the bridge sits under it.
        let rows = u16::try_from(e.parts.len()).unwrap_or(u16::MAX).saturating_add(4).max(5);
        let [table, chart, notes] =
            Layout::vertical([Constraint::Length(rows), Constraint::Length(bridge), Constraint::Min(5)]).areas(area);
        draw::draw_main_table(f, app, &e.table(), table, format!("{d}: recompute - missed + double counted = v1"), out);
        if let Some(c) = e.parts.get(app.source_row()).filter(|_| bridge > 0) {
            charts::draw_bridge(f, &app.theme, e, c, chart);
        }
        widgets::draw_notes(f, &app.theme, &crate::reports::Report::notes(e), notes);
        Some(())
    }
}
