//! Audit: a foreign gold's rows of the date against the lab's (`tui --audit SOURCE`), each with
//! the cause that explains it, on a retail lab and in a model's columns on a model lab; Enter
//! opens a row's cause, both sides and the entities behind it.

use crate::reports::audit::{AuditRow, Cause};
use crate::reports::model_audit::ModelAuditRow;
use crate::tui::app::{App, AuditState as Audited, Popup, ScreenBehaviour};
use crate::tui::draw::{self, FrameMeasures};
use crate::tui::widgets;
use crate::tui::worker::Audited as Report;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::{Paragraph, Wrap};

pub(super) struct Audit;

/// Entities listed per kind in a row's drill-down, at most.
const MAX_ENTITIES: usize = 12;

impl ScreenBehaviour for Audit {
    fn table(&self, app: &App) -> Option<crate::reports::Table> {
        let d = app.selected_date()?;
        Some(app.audit_report()?.of_date(d).ok()?.table())
    }

    fn drill(&self, app: &App, row: usize) -> Option<Popup> {
        let d = app.selected_date()?;
        Some(match app.audit_report()?.of_date(d).ok()? {
            Report::Retail(day) => {
                let r = day.rows.iter().nth(row)?.ok()?;
                Popup::Detail { title: format!("{} {}: {}", r.business_date, r.store_id, causes(&r.causes)), body: body(app, &r) }
            }
            Report::Model(day) => {
                let r = day.rows.iter().nth(row)?.ok()?;
                let title = format!("{} {}: {}", r.business_date, r.grain.join("/"), causes(&r.causes));
                Popup::Detail { title, body: model_body(&day.model, &r) }
            }
        })
    }

    fn draw(&self, f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) -> Option<()> {
        let t = &app.theme;
        let hint = |text: String| Paragraph::new(text).style(t.muted()).wrap(Wrap { trim: true });
        match &app.audit {
            None => f.render_widget(hint("No foreign gold to audit: `recount tui --audit SOURCE` opens one here (a CSV or Parquet file, duckdb:FILE#schema.table or iceberg:WAREHOUSE#namespace.table), as `recount audit --gold` reads it.".into()), area),
            Some(Audited::Pending(source)) => f.render_widget(hint(format!("auditing {source}…")), area),
            Some(Audited::Failed(why)) => f.render_widget(Paragraph::new(format!("the foreign gold could not be audited: {why}")).style(t.status(crate::reports::Status::Fail)).wrap(Wrap { trim: true }), area),
            Some(Audited::Done(report, placed)) => {
                let d = app.selected_date()?;
                let day = report.of_date(d).ok()?;
                let counts = day.counts().line(&format!("{} for {d}", report.source()));
                let title = format!("{counts} ({})", placed.dates);
                // Where the wrong rows of every date fall, under the date's rows.
                let Some(places) = &placed.table else {
                    draw::draw_main_table(f, app, &day.table(), area, title, out);
                    return Some(());
                };
                let tall = u16::try_from(places.rows.len() + 3).unwrap_or(u16::MAX).min(area.height / 3);
                let [rows, below] = Layout::vertical([Constraint::Min(6), Constraint::Length(tall)]).areas(area);
                draw::draw_main_table(f, app, &day.table(), rows, title, out);
                let said = placed.note.clone().unwrap_or_else(|| "where the wrong rows fall, on every date".to_string());
                widgets::draw_table(f, t, places, &widgets::TableView::plain(places), usize::MAX, below, said);
            }
        }
        Some(())
    }
}

fn causes(causes: &[Cause]) -> String {
    causes.iter().map(|c| c.word()).collect::<Vec<_>>().join(", ")
}

/// A model row's drill-down: both sides, measure by measure (money by its currency's digits), and
/// the cause's detail.
fn model_body(model: &crate::model::Model, r: &ModelAuditRow) -> String {
    let side = |v: &Option<Vec<i64>>| v.as_ref().map(|v| crate::reports::model::measure_cells(model, &r.attributes, v));
    let (theirs, right) = (side(&r.foreign), side(&r.right));
    let mut out = String::new();
    for (i, m) in model.measures.iter().enumerate() {
        let shown =
            |s: &Option<Vec<crate::reports::Cell>>| s.as_ref().and_then(|c| c.get(i)).map_or_else(|| "no row".to_string(), |c| c.display());
        out.push_str(&format!("{}: theirs {}, right {}\n", m.name, shown(&theirs), shown(&right)));
    }
    if !r.detail.is_empty() {
        out.push_str(&format!("\n{}\n", r.detail));
    }
    out
}

/// A row's drill-down: both sides, the cause's detail, and the entities of the store on the date
/// that the cause is about (its re-sent baskets, its rows past the window, the date's snapshots).
fn body(app: &App, r: &AuditRow) -> String {
    let money = |(b, m): (i64, i64)| format!("{} baskets, {}", crate::money::format_count(b), crate::money::format_major(m, &r.currency));
    let side = |s: Option<(i64, i64)>| s.map(money).unwrap_or_else(|| "no row".into());
    let mut out = format!("theirs: {}\nright:  {}\n", side(r.foreign), side(r.right));
    if !r.detail.is_empty() {
        out.push_str(&format!("\n{}\n", r.detail));
    }
    let Some(v) = app.view.as_ref().filter(|v| v.check.business_date() == r.business_date) else {
        return out + "\n(the date's baskets are still loading)";
    };
    let has = |c: Cause| r.causes.contains(&c);
    if has(Cause::DuplicatesCounted) || has(Cause::AppendedTwice) || has(Cause::Unexplained) {
        let resent: Vec<_> = v.baskets.baskets.iter().filter(|b| b.grain.first() == Some(&r.store_id)).collect();
        out.push_str(&format!("\nre-sent baskets of {} on the date: {}\n", r.store_id, resent.len()));
        for b in resent.iter().take(MAX_ENTITIES) {
            let won = b.copies.iter().find(|c| c.won).map(|c| format!("{} line {}", c.file, c.line)).unwrap_or_default();
            out.push_str(&format!("  {}  {} copies, the winner {won}\n", b.key, b.copies.len()));
        }
    }
    if has(Cause::BeyondWindowIncluded) || has(Cause::Unexplained) {
        let late: Vec<_> = v.late.rows.iter().filter(|l| l.grain.first() == Some(&r.store_id)).collect();
        out.push_str(&format!("\nrows of {} past the {}-day window: {}\n", r.store_id, v.late.late_days, late.len()));
        for l in late.iter().take(MAX_ENTITIES) {
            // Retail's measures: baskets, then revenue in the store's currency.
            let amount = crate::money::format_major(
                l.measures[1],
                crate::reports::model::currency_of(&v.late.model, 1, &l.attributes).unwrap_or(""),
            );
            out.push_str(&format!("  {}  {amount}, {} days late, {} line {}\n", l.entity_key, l.days_late, l.file, l.line));
        }
    }
    if has(Cause::LateArrivalsMissed) || has(Cause::CorrectionNotApplied) {
        out.push_str("\nthe date's snapshots:\n");
        for e in v.history.retail().map(|h| h.entries.as_slice()).unwrap_or_default() {
            out.push_str(&format!("  {} ({}) {}\n", e.snapshot_id, e.operation.as_str(), e.trigger.detail));
        }
    }
    out
}
