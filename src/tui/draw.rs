//! Drawing: a function of the app's state, which it reads and never writes (what a frame
//! measures comes back as `FrameMeasures`). Every table on screen is a report `Table`, the
//! same struct the CLI prints.

use super::app::{App, Popup};
use super::keys;
use super::screen::Screen;
use super::theme::Theme;
pub use super::widgets::FrameMeasures;
use super::widgets::{TableView, draw_table, title_block};
use crate::reports::{Status, Table};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Tabs, Wrap};

/// Draws the whole explorer from the app's state, which it only reads.
pub fn draw(f: &mut Frame, app: &App) -> FrameMeasures {
    let t = &app.theme;
    let mut out = app.last_drawn();
    let [top, body, status, hints] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(5), Constraint::Length(1), Constraint::Length(1)]).areas(f.area());
    draw_tabs(f, app, top);
    let nav_width = if body.width >= 110 { 16 } else { 11 };
    let [nav, main] = Layout::horizontal([Constraint::Length(nav_width), Constraint::Min(20)]).areas(body);
    draw_navigator(f, app, nav);
    draw_screen(f, app, main, &mut out);
    draw_status(f, app, status);
    draw_hints(f, app, hints);
    if let Some(p) = &app.popup {
        out.popup_view = draw_popup(f, t, p, app);
    }
    out
}

fn draw_tabs(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let wide = area.width >= 100;
    let entity = app.model.as_ref().map(|m| m.entity.as_str());
    let titles: Vec<Line> =
        Screen::ALL.iter().enumerate().map(|(i, s)| Line::from(format!("{} {}", i + 1, s.label(entity, wide)))).collect();
    let tabs = Tabs::new(titles)
        .select(app.screen.index())
        .style(t.muted())
        .highlight_style(t.title().add_modifier(Modifier::REVERSED))
        .divider("│");
    // On a warehouse, which one, at the right of the tabs when there is room.
    let label = crate::sanitize::for_terminal(&app.store);
    let width = unicode_width::UnicodeWidthStr::width(label.as_ref()) as u16;
    if label.is_empty() || area.width < width + 90 {
        f.render_widget(tabs, area);
        return;
    }
    let [left, right] = Layout::horizontal([Constraint::Min(10), Constraint::Length(width + 1)]).areas(area);
    f.render_widget(tabs, left);
    f.render_widget(Paragraph::new(Line::from(label.into_owned())).style(t.title()), right);
}

fn draw_navigator(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let block = Block::default().borders(Borders::ALL).title(Span::styled("dates", t.title())).border_style(t.border(false));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(snap) = &app.snapshot else {
        f.render_widget(Paragraph::new("loading…").style(t.muted()), inner);
        return;
    };
    if snap.dates.is_empty() {
        f.render_widget(
            Paragraph::new(format!("no data:\npress {}", keys::active().label_of(keys::Action::LandNext))).style(t.muted()),
            inner,
        );
        return;
    }
    let height = inner.height as usize;
    let wide = inner.width >= 14;
    let first = app.selected.saturating_sub(height / 2).min(snap.dates.len().saturating_sub(height));
    let lines: Vec<Line> = snap
        .dates
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, d)| {
            // Marks as well as colours (the help's legend): ✓ closed or p provisional; v1 = agrees,
            // ! differs, · never ran; ✗ v2 disagrees with the recompute.
            let badge = if d.provisional {
                Span::styled("p", t.status(Status::Warn))
            } else if d.stale {
                Span::styled("s", t.status(Status::Warn))
            } else {
                Span::styled("✓", t.status(Status::Pass))
            };
            let v1 = if !d.v1_ran {
                Span::styled("·", t.muted())
            } else if d.v1_off {
                Span::styled("!", t.status(Status::Warn))
            } else {
                Span::raw("=")
            };
            let v2 = if d.v2_off { Span::styled("✗", t.status(Status::Fail)) } else { Span::raw(" ") };
            let fmt = if wide { "%m-%d %a" } else { "%m-%d" };
            // On the Audit screen the dates take the audit's verdict: the colour, and ≠ when wrong.
            let audited = app.audit_verdict(d.business_date);
            let style = match audited {
                _ if i == app.selected => t.selected(),
                Some(true) => t.status(Status::Pass),
                Some(false) => t.status(Status::Fail),
                None => t.text(),
            };
            let date = Span::styled(format!("{} ", d.business_date.format(fmt)), style);
            let mut line = vec![date, badge, v1, v2];
            if audited == Some(false) {
                line.push(Span::styled("≠", t.status(Status::Fail)));
            }
            Line::from(line)
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}

fn draw_status(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let line = match &app.running {
        Some(r) => {
            let secs = r.started.elapsed().as_secs_f64();
            let spin = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"][(secs * 10.0) as usize % 10];
            let text = format!("{spin} {} {secs:.1}s  Esc cancels", r.label);
            if let Some(p) = r.percent.filter(|p| *p > 0.0) {
                // A gauge when DuckDB can estimate the running statement's progress.
                let gauge = ratatui::widgets::Gauge::default()
                    .gauge_style(t.bar(false))
                    .ratio((p / 100.0).clamp(0.0, 1.0))
                    .label(format!("{text}  {p:.0}%"));
                f.render_widget(gauge, area);
                return;
            }
            Line::from(Span::styled(text, t.accent()))
        }
        None => Line::from(Span::styled(fit_at_words(&crate::sanitize::for_terminal(&app.message), usize::from(area.width)), t.text())),
    };
    f.render_widget(Paragraph::new(line), area);
}

/// `text` within `width` columns: whole when it fits, else cut after its last whole clause (at
/// `; ` or `, `), or else its last whole word, that fits with ` …` after it. A status line never
/// ends inside an amount ("SG +S$"); the rest of the message is in the popup or the report.
pub(crate) fn fit_at_words(text: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    if text.width() <= width {
        return text.to_string();
    }
    let room = width.saturating_sub(2);
    let fits = |end: usize| text[..end].width() <= room;
    let cut = |sep: &str| text.match_indices(sep).map(|(i, _)| i).filter(|&i| fits(i)).last();
    let end = cut("; ").or_else(|| cut(", ")).filter(|&i| i > room / 3).or_else(|| cut(" ")).unwrap_or(0);
    if end == 0 {
        return "…".to_string();
    }
    format!("{} …", text[..end].trim_end_matches([',', ';']))
}

/// A model lab's words for the key table's retail ones (None: retail's own).
fn lab_words(app: &App) -> Option<keys::Words<'_>> {
    let m = app.model.as_ref()?;
    Some(keys::Words { entity: &m.entity, key: &m.key, part: app.trend_part_name() })
}

fn draw_hints(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let (shown, more) = keys::fit_hints(app.screen, usize::from(area.width));
    let words = lab_words(app);
    let mut spans = Vec::new();
    for (label, hint) in shown {
        let hint = words.as_ref().map_or_else(|| hint.to_string(), |w| w.say(hint));
        spans.push(Span::styled(format!(" {label}"), t.accent()));
        spans.push(Span::styled(format!(" {hint}"), t.muted()));
    }
    if more {
        spans.push(Span::styled(format!(" {}", keys::active().label_of(keys::Action::Help)), t.accent()));
        spans.push(Span::styled(" more", t.muted()));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_screen(f: &mut Frame, app: &App, area: Rect, out: &mut FrameMeasures) {
    if app.behaviour().draw(f, app, area, out).is_some() {
        return;
    }
    let t = &app.theme;
    let msg = if app.snapshot.as_ref().is_some_and(|s| s.dates.is_empty()) {
        format!("The lab is empty. Press {} to land the first upload and run v2.", keys::active().label_of(keys::Action::LandNext))
    } else {
        "loading…".to_string()
    };
    f.render_widget(Paragraph::new(msg).style(t.muted()).block(title_block(t, app.screen.name().into())), area);
}

/// The selectable table of the screen, as the app sorts and scrolls it; what it measured goes
/// into `out`.
pub(crate) fn draw_main_table(f: &mut Frame, app: &App, table: &Table, area: Rect, title: String, out: &mut FrameMeasures) {
    let view = TableView { order: super::widgets::row_order(table, app.sort()), sort: app.sort(), first_col: app.first_col() };
    let fit = draw_table(f, &app.theme, table, &view, app.row(), area, title);
    (out.page_rows, out.col_room) = (fit.page_rows, fit.col_room);
}

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    // A popup that would leave a margin of a cell or two takes the whole width (or height): a
    // sliver of the screen behind it shows only pieces of borders and words.
    let w = if w + 4 >= area.width { area.width } else { w };
    let h = if h + 4 >= area.height { area.height } else { h };
    Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h }
}

/// Multi-line text for the terminal: each line stripped of control characters on its own, so the
/// line breaks stay line breaks (a newline is a control character too).
fn terminal_text(s: &str) -> Text<'static> {
    Text::from(s.lines().map(|l| Line::from(crate::sanitize::for_terminal(l).into_owned())).collect::<Vec<_>>())
}

/// The marks the explorer draws beside its colours, for the help's legend.
pub(crate) const MARKS: &[(&str, Status, &str)] = &[
    ("✓", Status::Pass, "a closed date; a row that passes"),
    ("p", Status::Warn, "a provisional date: its window is still open"),
    ("s", Status::Warn, "a stale date: its inputs changed since v2 built it (run v2)"),
    ("!", Status::Warn, "v1 differs from the recompute (dates); a warning (rows)"),
    ("·", Status::Info, "v1 never ran for the date"),
    ("✗", Status::Fail, "v2 gold differs from the recompute (dates); a failure (rows)"),
    ("≠", Status::Fail, "on the Audit screen: the foreign gold has a wrong row on the date"),
    ("▲ ▼", Status::Info, "the column the table is sorted by, up or down"),
    ("‹ ›", Status::Info, "more columns to the left or right (< and > scroll)"),
];

/// The popup over the screen; returns the lines it shows and the largest first line.
fn draw_popup(f: &mut Frame, t: &Theme, p: &Popup, app: &App) -> (u16, u16) {
    let area = f.area();
    let (title, body, style): (String, Text, Style) = match p {
        Popup::Help => {
            let words = lab_words(app);
            let mut lines: Vec<Line> = keys::help_lines()
                .into_iter()
                .map(|(k, h)| {
                    let h = words.as_ref().map_or(h.clone(), |w| w.say(&h));
                    Line::from(vec![Span::styled(format!("{k:>7}  "), t.accent()), Span::styled(h, t.text())])
                })
                .collect();
            lines.push(Line::from(""));
            lines.push(Line::from(Span::styled("marks (colour is never the only sign)", t.title())));
            for (mark, status, what) in MARKS {
                lines.push(Line::from(vec![Span::styled(format!("{mark:>7}  "), t.status(*status)), Span::styled(*what, t.text())]));
            }
            ("keys (? or Esc closes)".into(), Text::from(lines), t.text())
        }
        Popup::Error(e) => ("error (Esc closes)".into(), terminal_text(e), t.status(Status::Fail)),
        Popup::Detail { title, body } => (format!("{} (Esc closes)", crate::sanitize::for_terminal(title)), terminal_text(body), t.text()),
        Popup::Confirm { text, .. } => ("confirm".into(), Text::from(text.clone()), t.text()),
        Popup::Input { kind, text } => {
            let what = match kind {
                super::app::InputKind::JumpToDate => "go to date (YYYY-MM-DD or MM-DD), Enter",
                super::app::InputKind::SearchBaskets => "search basket_id or store, Enter",
                super::app::InputKind::ReopenBy(_) => "who decides this reopening (kept in history), Enter",
                super::app::InputKind::ReopenReason(..) => "why reopen this date (kept in history), Enter",
            };
            (what.into(), Text::from(format!("{}▏", crate::sanitize::for_terminal(text))), t.text())
        }
    };
    let w = (body.lines.iter().map(|l| l.width() as u16).max().unwrap_or(20) + 4)
        .max(title.chars().count() as u16 + 4)
        .min(area.width.saturating_sub(2));
    let paragraph = Paragraph::new(body).style(style).wrap(Wrap { trim: false });
    // Tall enough for the wrapped lines (a long attribution wraps), within the screen; taller
    // text scrolls (j/k, PgDn/PgUp, Home/End), and the title says which lines show.
    let total = paragraph.line_count(w.saturating_sub(2)) as u16;
    let h = (total + 2).min(area.height.saturating_sub(2)).max(3);
    let shown = h.saturating_sub(2).max(1);
    let last = total.saturating_sub(shown);
    let scroll = app.popup_scroll().min(last);
    let title = if last > 0 {
        format!("{title} — lines {}-{} of {total}, PgDn/PgUp/Home/End scroll", scroll + 1, (scroll + shown).min(total))
    } else {
        title
    };
    let rect = centered(area, w.max((title.chars().count() as u16 + 4).min(area.width.saturating_sub(2))), h);
    f.render_widget(Clear, rect);
    let block = Block::default().borders(Borders::ALL).title(Span::styled(title, t.title())).border_style(t.border(true));
    f.render_widget(paragraph.scroll((scroll, 0)).block(block), rect);
    (shown, last)
}

#[cfg(test)]
mod tests {
    use super::fit_at_words;

    #[test]
    fn a_status_line_is_cut_after_a_clause_or_a_word_never_inside_an_amount() {
        let text = "upload 2026-10-17 moved 2026-10-16: GB +£1,234.56, IN +₹9,87,654.00, SG +S$1,907.70";
        assert_eq!(fit_at_words(text, 200), text, "whole when it fits");
        assert_eq!(fit_at_words(text, 80), "upload 2026-10-17 moved 2026-10-16: GB +£1,234.56, IN +₹9,87,654.00 …");
        assert_eq!(fit_at_words(text, 60), "upload 2026-10-17 moved 2026-10-16: GB +£1,234.56 …");
        let cut = fit_at_words(text, 30);
        assert!(cut.ends_with(" …") && !cut.contains('£'), "{cut}");
        assert!(unicode_width::UnicodeWidthStr::width(fit_at_words(text, 12).as_str()) <= 12);
    }
}
