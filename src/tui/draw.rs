//! Drawing: a function of the app's state, which it reads and never writes (what a frame
//! measures comes back as `FrameMeasures`). Every table on screen is a report `Table`, the
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
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Row, Table as TableWidget, TableState, Tabs, Wrap};

/// What a frame measured as it was drawn: the rows one page of the screen's table shows (PgDn's
/// step), how far its columns may scroll right (`>`), and the popup's shown lines and largest
/// first line. Drawing changes nothing: the loop gives this back to the app (`App::measured`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameMeasures {
    pub page_rows: usize,
    pub col_room: usize,
    pub popup_view: (u16, u16),
}

impl Default for FrameMeasures {
    fn default() -> Self {
        FrameMeasures { page_rows: 10, col_room: 0, popup_view: (10, 0) }
    }
}

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
    draw_hints(f, t, app.screen, hints);
    if let Some(p) = &app.popup {
        out.popup_view = draw_popup(f, t, p, app);
    }
    out
}

fn draw_tabs(f: &mut Frame, app: &App, area: Rect) {
    let t = &app.theme;
    let wide = area.width >= 100;
    let entity = app.model.as_ref().map(|m| m.dates.model.entity.as_str());
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

fn draw_hints(f: &mut Frame, t: &Theme, screen: Screen, area: Rect) {
    let (shown, more) = keys::fit_hints(screen, usize::from(area.width));
    let mut spans = Vec::new();
    for (label, hint) in shown {
        spans.push(Span::styled(format!(" {label}"), t.accent()));
        spans.push(Span::styled(format!(" {hint}"), t.muted()));
    }
    if more {
        spans.push(Span::styled(format!(" {}", keys::active().label_of(keys::Action::Help)), t.accent()));
        spans.push(Span::styled(" more", t.muted()));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn title_block<'a>(t: &Theme, title: String) -> Block<'a> {
    Block::default().borders(Borders::ALL).title(Span::styled(title, t.title())).border_style(t.border(true))
}

/// The selected screen, drawn by its home (`screens`); until it has loaded, a line saying so.
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

pub(crate) fn draw_notes(f: &mut Frame, t: &Theme, notes: &[crate::reports::Note], area: Rect) {
    let lines: Vec<Line> =
        notes.iter().map(|n| Line::from(Span::styled(crate::sanitize::for_terminal(&n.text).into_owned(), t.status(n.status)))).collect();
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
}

/// Horizontal bars: one per day of lateness (and per country when split).
pub(crate) fn draw_lateness(f: &mut Frame, t: &Theme, report: &LatenessReport, area: Rect) {
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

/// How a table is shown: its rows' order (a sort), the sort, and the first scrolled column.
pub(crate) struct TableView {
    pub order: Vec<usize>,
    pub sort: Option<super::app::Sort>,
    pub first_col: usize,
}

impl TableView {
    /// The report's own order, unscrolled.
    pub fn plain(table: &Table) -> TableView {
        TableView { order: (0..table.rows.len()).collect(), sort: None, first_col: 0 }
    }
}

/// What drawing a table measured: the rows one screen of it shows, and how far its columns may
/// scroll right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TableFit {
    pub page_rows: usize,
    pub col_room: usize,
}

/// The selectable table of the screen, as the app sorts and scrolls it; what it measured goes
/// into `out`.
pub(crate) fn draw_main_table(f: &mut Frame, app: &App, table: &Table, area: Rect, title: String, out: &mut FrameMeasures) {
    let view = TableView { order: super::app::row_order(table, app.sort()), sort: app.sort(), first_col: app.first_col() };
    let fit = draw_table(f, &app.theme, table, &view, app.row(), area, title);
    (out.page_rows, out.col_room) = (fit.page_rows, fit.col_room);
}

/// The columns a table shows in `room` cells, with their widths: the pinned first one, then from
/// `1 + first` on. When not every column fits, those that repeat another's answer (a Δ beside its
/// "why") give way first: they come after the rest, if room is left. A wide text column may take
/// what is left, clipped, when that is still readable; a number is never cut.
fn visible_columns(table: &Table, widths: &[u16], first: usize, room: u16) -> Vec<(usize, u16)> {
    let ncols = widths.len();
    let mut candidates: Vec<usize> = (0..ncols.min(1)).chain((1 + first)..ncols).collect();
    let all_fit = candidates.iter().map(|&i| widths[i] + 2).sum::<u16>() <= room + 2;
    if !all_fit {
        let repeats = |i: &usize| table.columns.get(*i).is_some_and(|c| c.repeats);
        let (again, answer): (Vec<usize>, Vec<usize>) = candidates.iter().partition(|i| repeats(i));
        candidates = answer.into_iter().chain(again).collect();
    }
    let mut used = 0u16;
    let mut visible: Vec<(usize, u16)> = Vec::new();
    for &i in &candidates {
        let w = widths[i];
        let need = if visible.is_empty() { w } else { w + 2 };
        if used + need > room && !visible.is_empty() {
            let left = room.saturating_sub(used + 2);
            let numeric = table.rows.iter().any(|r| r.cells.get(i).is_some_and(Cell::is_numeric));
            if left >= 16 && !numeric {
                visible.push((i, left));
            }
            break;
        }
        used += need;
        visible.push((i, w));
    }
    visible
}

/// A report table, scrolled to keep the selected row visible; flagged rows in their status style
/// and with their mark (✓ ! ✗) in a first column of their own. The first column stays; the others
/// scroll with `<` and `>`, and the title says how many are out of view on either side (‹ ›).
/// Columns keep their natural width; the last text column that fits only in part is narrowed,
/// its sentences wrapped onto taller rows.
pub(crate) fn draw_table(
    f: &mut Frame,
    t: &Theme,
    table: &Table,
    view: &TableView,
    selected: usize,
    area: Rect,
    title: String,
) -> TableFit {
    // The rows one screen of this table shows (inside the borders, under the header): PgDn's step.
    let page_rows = usize::from(area.height.saturating_sub(3)).max(1);
    // As shown, in the order shown (a repeated group value is blank only under its own group).
    let shown = table.shown(&view.order);
    let labels = sorted_labels(table, view.sort);
    let widths = natural_widths(&labels, &shown);
    let marks = table.rows.iter().any(|r| matches!(r.flag, Some(s) if s != Status::Info));
    let ncols = widths.len();
    // Column 0 stays; the rest start at 1 + first.
    let first = view.first_col.min(ncols.saturating_sub(2));
    let room = area.width.saturating_sub(2).saturating_sub(if marks { 3 } else { 0 });
    let hidden_right_at = |first: usize| {
        let visible = visible_columns(table, &widths, first, room);
        ncols.saturating_sub(1 + first + visible.len().saturating_sub(1)).min(ncols.saturating_sub(visible.len()))
    };
    let visible = visible_columns(table, &widths, first, room);
    let hidden_right = hidden_right_at(first);
    // How far `>` may scroll: to the first position that shows the last column, whatever the
    // widths of the columns passed on the way (not this position's count of hidden ones).
    let col_room = (first..ncols.saturating_sub(1)).find(|&f| hidden_right_at(f) == 0).unwrap_or(first);
    let title = table_title(table, view.sort, title, first, hidden_right);
    let lead = |cell: ratatui::widgets::Cell<'static>, mark: Option<Status>| -> Vec<ratatui::widgets::Cell<'static>> {
        match (marks, mark) {
            (false, _) => vec![cell],
            (true, Some(s)) if s != Status::Info => vec![ratatui::widgets::Cell::from(s.mark()), cell],
            (true, _) => vec![ratatui::widgets::Cell::from(" "), cell],
        }
    };
    let mut header: Vec<ratatui::widgets::Cell> = Vec::new();
    for (n, (i, _)) in visible.iter().enumerate() {
        let cell = ratatui::widgets::Cell::from(labels[*i].clone());
        if n == 0 { header.extend(lead(cell, None)) } else { header.push(cell) }
    }
    let rows: Vec<Row> = view
        .order
        .iter()
        .filter_map(|&k| table.rows.get(k))
        .zip(&shown)
        .map(|(r, cells)| {
            let mut out: Vec<ratatui::widgets::Cell> = Vec::new();
            let mut height = 1;
            for (n, (j, w)) in visible.iter().enumerate() {
                let lines = fit_cell(r.cells.get(*j), cells.get(*j).cloned().unwrap_or_default(), *w);
                height = height.max(lines.len());
                let cell = ratatui::widgets::Cell::from(Text::from(lines.into_iter().map(Line::from).collect::<Vec<_>>()));
                if n == 0 { out.extend(lead(cell, r.flag)) } else { out.push(cell) }
            }
            // A sentence wrapped onto more lines makes its row as tall, up to one screen of the table.
            Row::new(out).style(t.row(r.flag, false)).height(height.min(page_rows) as u16)
        })
        .collect();
    let constraints: Vec<Constraint> =
        marks.then_some(Constraint::Length(1)).into_iter().chain(visible.iter().map(|(_, w)| Constraint::Length(*w))).collect();
    let widget = TableWidget::new(rows, constraints)
        .header(Row::new(header).style(t.title()))
        .column_spacing(2)
        .row_highlight_style(t.selected())
        .block(title_block(t, title));
    let mut state = TableState::default();
    if selected < table.rows.len() {
        state.select(Some(selected));
    }
    f.render_stateful_widget(widget, area, &mut state);
    if table.rows.is_empty() && area.height > 3 {
        let inner = Rect { x: area.x + 2, y: area.y + 2, width: area.width.saturating_sub(4), height: 1 };
        f.render_widget(Paragraph::new("(no rows)").style(t.muted()), inner);
    }
    TableFit { page_rows, col_room }
}

/// The columns' labels, the sorted one marked ▲ or ▼.
fn sorted_labels(table: &Table, sort: Option<super::app::Sort>) -> Vec<String> {
    table
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| match sort {
            Some(s) if s.column == i => format!("{} {}", c.label, if s.descending { "▼" } else { "▲" }),
            _ => c.label.clone(),
        })
        .collect()
}

/// Each column's natural width: its label's or its widest cell's, at most 160.
fn natural_widths(labels: &[String], shown: &[Vec<String>]) -> Vec<u16> {
    let mut widths: Vec<u16> = labels.iter().map(|l| l.chars().count() as u16).collect();
    for row in shown {
        for (i, c) in row.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(c.chars().count().min(160) as u16);
            }
        }
    }
    widths
}

/// The table's title with its cues: columns out of view on either side (‹ ›) and the sort.
fn table_title(table: &Table, sort: Option<super::app::Sort>, title: String, hidden_left: usize, hidden_right: usize) -> String {
    let mut cues = Vec::new();
    if hidden_left > 0 {
        cues.push(format!("‹ {hidden_left} col"));
    }
    if hidden_right > 0 {
        cues.push(format!("+{hidden_right} col ›"));
    }
    if let Some(s) = sort {
        cues.push(format!(
            "sorted by {} {}",
            table.columns.get(s.column).map(|c| c.label.as_str()).unwrap_or("?"),
            if s.descending { "▼" } else { "▲" }
        ));
    }
    if cues.is_empty() { title } else { format!("{title} ({})", cues.join(", ")) }
}

/// One cell's lines in a column `width` wide: a number right-aligned and never cut; a sentence
/// (text with spaces, such as history's why) broken between words onto more lines, so that it
/// never loses its end; an id cut to the column with `…`.
fn fit_cell(cell: Option<&Cell>, text: String, width: u16) -> Vec<String> {
    use crate::reports::table::{clip, wrap_words};
    let w = width as usize;
    if cell.is_some_and(Cell::is_numeric) {
        return vec![format!("{text:>w$}")];
    }
    if text.contains(' ') && unicode_width::UnicodeWidthStr::width(text.as_str()) > w {
        return wrap_words(&text, w).lines().map(|l| clip(l, w).into_owned()).collect();
    }
    vec![clip(&text, w).into_owned()]
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
            let mut lines: Vec<Line> = keys::help_lines()
                .into_iter()
                .map(|(k, h)| Line::from(vec![Span::styled(format!("{k:>7}  "), t.accent()), Span::styled(h, t.text())]))
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

    /// A why too long for its column wraps between words onto a taller row: every word is drawn,
    /// in order, the amounts whole and nothing cut to `…`; an id still gives way with `…`.
    #[test]
    fn a_long_sentence_in_a_table_wraps_onto_a_taller_row_and_an_id_is_cut() {
        use crate::reports::{Cell, Table};
        let why = "+1 basket, +£63.80 added from upload 2026-10-14; +525 baskets, +£102,285.35 added from upload 2026-10-15";
        let mut table = Table::new("", &[("snapshot", "snapshot"), ("why", "why"), ("basket_id", "basket")]);
        table.push(vec![Cell::Int(5), Cell::text(why), Cell::text("GB016-20261018-T4-0001")]);
        table.push(vec![Cell::Int(8), Cell::text("+24 baskets"), Cell::text("GB")]);
        let backend = ratatui::backend::TestBackend::new(60, 16);
        let mut terminal = ratatui::Terminal::new(backend).unwrap();
        let theme = super::Theme::load("dark").unwrap();
        terminal
            .draw(|f| {
                let view = super::TableView::plain(&table);
                super::draw_table(f, &theme, &table, &view, 0, f.area(), "history".into());
            })
            .unwrap();
        let buf = terminal.backend().buffer().clone();
        let lines: Vec<String> =
            (0..buf.area.height).map(|y| (0..buf.area.width).map(|x| buf[(x, y)].symbol().to_string()).collect()).collect();
        let screen = lines.join("\n");
        // The why column's text, read down the rows between its borders.
        let header = lines.iter().find(|l| l.contains(" why")).unwrap();
        let at = header.chars().collect::<Vec<_>>().windows(4).position(|w| w.iter().collect::<String>() == " why").unwrap() + 1;
        let cell =
            |l: &String| l.chars().skip(at).collect::<String>().split("  ").next().unwrap_or("").trim_end_matches('│').trim().to_string();
        let column: Vec<String> = lines[2..].iter().map(cell).collect();
        let told = column.iter().take_while(|c| !c.starts_with("+24")).filter(|c| !c.is_empty()).cloned().collect::<Vec<_>>().join(" ");
        assert_eq!(told, why, "every word, in order:\n{screen}");
        assert!(screen.contains("+24 baskets") && !screen.contains('…'), "{screen}");
        let id = "GB016-20261018-T4-0001";
        assert_eq!(super::fit_cell(Some(&Cell::text(id)), id.into(), 10), vec!["GB016-202…".to_string()], "an id is cut, on one line");
    }
}
