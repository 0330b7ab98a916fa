//! Drawing: a pure function of the app's state. Every table on screen is a report `Table`, the
//! same struct the CLI prints.

use super::app::{App, Popup};
use super::keys;
use super::screen::Screen;
use super::theme::Theme;
use crate::reports::lateness::LatenessReport;
use crate::reports::{Cell, Status, Table};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Row, Sparkline, Table as TableWidget, TableState, Tabs, Wrap};

pub fn draw(f: &mut Frame, app: &App) {
    let t = &app.theme;
    let [top, body, status, hints] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(5), Constraint::Length(1), Constraint::Length(1)]).areas(f.area());
    draw_tabs(f, app, top);
    let nav_width = if body.width >= 110 { 16 } else { 11 };
    let [nav, main] = Layout::horizontal([Constraint::Length(nav_width), Constraint::Min(20)]).areas(body);
    draw_navigator(f, app, nav);
    draw_screen(f, app, main);
    draw_status(f, app, status);
    draw_hints(f, t, app.screen, hints);
    if let Some(p) = &app.popup {
        draw_popup(f, t, p, app);
    }
}

fn draw_tabs(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let wide = area.width >= 100;
    let titles: Vec<Line> =
        Screen::ALL.iter().enumerate().map(|(i, s)| Line::from(format!("{} {}", i + 1, if wide { s.name() } else { s.short() }))).collect();
    let tabs = Tabs::new(titles)
        .select(app.screen.index())
        .style(t.muted())
        .highlight_style(t.title().add_modifier(Modifier::REVERSED))
        .divider("│");
    f.render_widget(tabs, area);
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
        f.render_widget(Paragraph::new("no data:\npress U").style(t.muted()), inner);
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
            let badge = if d.provisional { Span::styled("p", t.status(Status::Warn)) } else { Span::styled("c", t.status(Status::Pass)) };
            let v1 = if !d.v1_ran {
                Span::styled("·", t.muted())
            } else if d.v1_off {
                Span::styled("≠", t.status(Status::Warn))
            } else {
                Span::raw("=")
            };
            let v2 = if d.v2_off { Span::styled("≠", t.status(Status::Fail)) } else { Span::raw(" ") };
            let fmt = if wide { "%m-%d %a" } else { "%m-%d" };
            let date = Span::styled(format!("{} ", d.business_date.format(fmt)), if i == app.selected { t.selected() } else { t.text() });
            Line::from(vec![date, badge, v1, v2])
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
        None => Line::from(Span::styled(crate::sanitize::for_terminal(&app.message).into_owned(), t.text())),
    };
    f.render_widget(Paragraph::new(line), area);
}

fn draw_hints(f: &mut Frame, t: &Theme, screen: Screen, area: Rect) {
    let mut spans = Vec::new();
    for (label, hint) in keys::hints(screen) {
        spans.push(Span::styled(format!(" {label}"), t.accent()));
        spans.push(Span::styled(format!(" {hint}"), t.muted()));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn title_block<'a>(t: &Theme, title: String) -> Block<'a> {
    Block::default().borders(Borders::ALL).title(Span::styled(title, t.title())).border_style(t.border(true))
}

fn draw_screen(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let Some(v) = &app.view else {
        let msg = if app.snapshot.as_ref().is_some_and(|s| s.dates.is_empty()) {
            "The lab is empty. Press n to land the first upload and run v2."
        } else {
            "loading…"
        };
        f.render_widget(Paragraph::new(msg).style(t.muted()).block(title_block(t, app.screen.name().into())), area);
        return;
    };
    let d = v.check.business_date;
    match app.screen {
        Screen::Overview => {
            let hist_height = if app.by_country { 12 } else { 9 };
            let [head, hist, table] =
                Layout::vertical([Constraint::Length(2), Constraint::Length(hist_height), Constraint::Min(4)]).areas(area);
            f.render_widget(
                Paragraph::new(crate::sanitize::for_terminal(&v.check.headline_short()).into_owned())
                    .style(t.text())
                    .wrap(Wrap { trim: true }),
                head,
            );
            if let Some(snap) = &app.snapshot {
                let report = if app.by_country { &snap.lateness_by_country } else { &snap.lateness };
                draw_lateness(f, t, report, hist);
            }
            draw_table(f, t, &app.page_rows, &v.check.table(), app.row, table, format!("{d} per country: v1, v2 gold, recompute"));
        }
        Screen::Explain => {
            let [table, notes] = Layout::vertical([Constraint::Min(5), Constraint::Length(5)]).areas(area);
            draw_table(f, t, &app.page_rows, &v.explain.table(), app.row, table, format!("{d}: recompute - missed + double counted = v1"));
            draw_notes(f, t, &crate::reports::Report::notes(&v.explain), notes);
        }
        Screen::Baskets => {
            let filter = app.country_filter.clone().unwrap_or_else(|| "all".into());
            let search =
                if app.search.is_empty() { String::new() } else { format!(", search '{}'", crate::sanitize::for_terminal(&app.search)) };
            let shown = v.baskets.baskets.iter().filter(|b| app.basket_visible(b)).count();
            draw_table(
                f,
                t,
                &app.page_rows,
                &v.baskets.table(|b| app.basket_visible(b)),
                app.row,
                area,
                format!("{d}: {shown} re-sent basket(s), country {filter}{search}"),
            );
        }
        Screen::Late => {
            let [late, quarantine] = Layout::vertical([Constraint::Percentage(60), Constraint::Percentage(40)]).areas(area);
            let lt = crate::reports::Report::tables(&v.late).remove(0);
            draw_table(
                f,
                t,
                &app.page_rows,
                &lt,
                app.row,
                late,
                format!("{d}: {} row(s) beyond the {}-day window", v.late.rows.len(), v.late.late_days),
            );
            if let Some(snap) = &app.snapshot {
                let qt = crate::reports::Report::tables(&snap.quarantine).remove(0);
                draw_table(
                    f,
                    t,
                    &app.page_rows,
                    &qt,
                    usize::MAX,
                    quarantine,
                    format!("quarantine: {} line(s) rejected at landing", snap.quarantine.rows.len()),
                );
            }
        }
        Screen::History => {
            let [head, spark, table] = Layout::vertical([Constraint::Length(2), Constraint::Length(4), Constraint::Min(4)]).areas(area);
            f.render_widget(Paragraph::new(v.history.status.describe()).style(t.text()).wrap(Wrap { trim: true }), head);
            let values: Vec<u64> = v.history.entries.iter().map(|e| e.countries.iter().map(|c| c.baskets.max(0) as u64).sum()).collect();
            let spark_block = Block::default()
                .borders(Borders::ALL)
                .title(Span::styled("baskets at each snapshot", t.muted()))
                .border_style(t.border(false));
            f.render_widget(Sparkline::default().data(&values).style(t.bar(false)).block(spark_block), spark);
            draw_table(
                f,
                t,
                &app.page_rows,
                &v.history.table(),
                app.row,
                table,
                format!("history of {d}: Enter explains a change, b rolls back"),
            );
        }
        Screen::Promises => draw_table(f, t, &app.page_rows, &v.promises.table(), app.row, area, format!("promises for {d}")),
    }
}

fn draw_notes(f: &mut Frame, t: &Theme, notes: &[crate::reports::Note], area: Rect) {
    let lines: Vec<Line> =
        notes.iter().map(|n| Line::from(Span::styled(crate::sanitize::for_terminal(&n.text).into_owned(), t.status(n.status)))).collect();
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
}

/// Horizontal bars: one per day of lateness (and per country when split).
fn draw_lateness(f: &mut Frame, t: &Theme, report: &LatenessReport, area: Rect) {
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled("lateness: upload date - business date (events, baskets)", t.muted()))
        .border_style(t.border(false));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let max = report.buckets.iter().map(|b| b.events).max().unwrap_or(1).max(1) as f64;
    let label_w = if report.by_country { 7 } else { 4 };
    let bar_w = (inner.width as usize).saturating_sub(label_w + 24).max(4);
    let lines: Vec<Line> = report
        .buckets
        .iter()
        .take(inner.height as usize)
        .map(|b| {
            // A log scale: same-day uploads dwarf the late ones a hundredfold.
            let frac = ((b.events as f64).ln_1p() / max.ln_1p()).clamp(0.0, 1.0);
            let n = ((frac * bar_w as f64).round() as usize).max(if b.events > 0 { 1 } else { 0 });
            let label = match &b.country {
                Some(c) => format!("{c} {:+}", b.days),
                None => format!("{:+}", b.days),
            };
            Line::from(vec![
                Span::styled(format!("{label:>label_w$} "), t.text()),
                Span::styled("█".repeat(n), t.bar(b.days != 0)),
                Span::styled(format!(" {} / {}", crate::money::format_count(b.events), crate::money::format_count(b.baskets)), t.muted()),
            ])
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}

/// A report table, scrolled to keep the selected row visible; flagged rows in their status style.
/// Columns keep their natural width; those that do not fit are left out from the right, and the
/// title says so (Enter shows the whole row, `e` exports it).
pub fn draw_table(f: &mut Frame, t: &Theme, page: &std::cell::Cell<usize>, table: &Table, selected: usize, area: Rect, title: String) {
    // The rows one screen of this table shows (inside the borders, under the header): PgDn's step.
    page.set(usize::from(area.height.saturating_sub(3)).max(1));
    let shown: Vec<Vec<String>> = table.rows.iter().map(|r| r.cells.iter().map(Cell::display).collect()).collect();
    let mut widths: Vec<u16> = table.columns.iter().map(|c| c.label.chars().count() as u16).collect();
    for row in &shown {
        for (i, c) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(c.chars().count().min(160) as u16);
            }
        }
    }
    let room = area.width.saturating_sub(2);
    let mut used = 0u16;
    let mut fit = 0;
    for w in widths.iter_mut() {
        let need = if fit == 0 { *w } else { *w + 2 };
        if used + need > room && fit > 0 {
            // A wide text column may take what is left, clipped, when that is still readable.
            let left = room.saturating_sub(used + 2);
            if left >= 16 {
                *w = left;
                fit += 1;
            }
            break;
        }
        used += need;
        fit += 1;
    }
    let hidden = widths.len() - fit;
    let title = if hidden > 0 { format!("{title} (+{hidden} col →)") } else { title };
    let header = Row::new(table.columns.iter().take(fit).map(|c| c.label.clone())).style(t.title());
    let rows: Vec<Row> = table
        .rows
        .iter()
        .zip(shown)
        .map(|(r, cells)| {
            let cells: Vec<ratatui::widgets::Cell> = cells
                .into_iter()
                .take(fit)
                .enumerate()
                .map(|(j, c)| {
                    let w = widths[j] as usize;
                    let numeric = r.cells.get(j).is_some_and(Cell::is_numeric);
                    ratatui::widgets::Cell::from(if numeric { format!("{c:>w$}") } else { c })
                })
                .collect();
            Row::new(cells).style(t.row(r.flag, false))
        })
        .collect();
    let constraints: Vec<Constraint> = widths.iter().take(fit).map(|w| Constraint::Length(*w)).collect();
    let widget =
        TableWidget::new(rows, constraints).header(header).column_spacing(2).row_highlight_style(t.selected()).block(title_block(t, title));
    let mut state = TableState::default();
    if selected < table.rows.len() {
        state.select(Some(selected));
    }
    f.render_stateful_widget(widget, area, &mut state);
    if table.rows.is_empty() && area.height > 3 {
        let inner = Rect { x: area.x + 2, y: area.y + 2, width: area.width.saturating_sub(4), height: 1 };
        f.render_widget(Paragraph::new("(no rows)").style(t.muted()), inner);
    }
}

fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h }
}

/// Multi-line text for the terminal: each line stripped of control characters on its own, so the
/// line breaks stay line breaks (a newline is a control character too).
fn terminal_text(s: &str) -> Text<'static> {
    Text::from(s.lines().map(|l| Line::from(crate::sanitize::for_terminal(l).into_owned())).collect::<Vec<_>>())
}

fn draw_popup(f: &mut Frame, t: &Theme, p: &Popup, app: &App) {
    let area = f.area();
    let (title, body, style): (String, Text, Style) = match p {
        Popup::Help => {
            let lines: Vec<Line> = keys::help_lines()
                .into_iter()
                .map(|(k, h)| Line::from(vec![Span::styled(format!("{k:>7}  "), t.accent()), Span::styled(h, t.text())]))
                .collect();
            ("keys (? or Esc closes)".into(), Text::from(lines), t.text())
        }
        Popup::Error(e) => ("error (Esc closes)".into(), terminal_text(e), t.status(Status::Fail)),
        Popup::Detail { title, body } => (format!("{} (Esc closes)", crate::sanitize::for_terminal(title)), terminal_text(body), t.text()),
        Popup::Confirm { text, .. } => ("confirm".into(), Text::from(text.clone()), t.text()),
        Popup::Input { kind, text } => {
            let what = match kind {
                super::app::InputKind::JumpToDate => "go to date (YYYY-MM-DD or MM-DD), Enter",
                super::app::InputKind::SearchBaskets => "search basket_id or store, Enter",
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
    app.popup_view.set((shown, last));
    let scroll = app.popup_scroll.min(last);
    let title = if last > 0 {
        format!("{title} — lines {}-{} of {total}, PgDn/PgUp/Home/End scroll", scroll + 1, (scroll + shown).min(total))
    } else {
        title
    };
    let rect = centered(area, w.max((title.chars().count() as u16 + 4).min(area.width.saturating_sub(2))), h);
    f.render_widget(Clear, rect);
    let block = Block::default().borders(Borders::ALL).title(Span::styled(title, t.title())).border_style(t.border(true));
    f.render_widget(paragraph.scroll((scroll, 0)).block(block), rect);
}
