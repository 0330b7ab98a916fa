//! The explorer's drawing parts that read no app state: a report table as the screen shows it
//! (sorted, scrolled, its sentences wrapped), the notes under it, the lateness bars, a titled
//! block, and what a frame measured. The app, its draw and every screen use them.

use super::theme::Theme;
use crate::reports::lateness::LatenessReport;
use crate::reports::{Cell, Status, Table};
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Borders, Paragraph, Row, Table as TableWidget, TableState, Wrap};

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

/// A table's sort: by a column, up or down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    pub column: usize,
    pub descending: bool,
}

/// The order the table's rows show in: indices into `table.rows`, sorted stably by `sort`.
pub(crate) fn row_order(table: &Table, sort: Option<Sort>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..table.rows.len()).collect();
    if let Some(s) = sort {
        let empty = crate::reports::Cell::Empty;
        order.sort_by(|&a, &b| {
            let (x, y) = (table.rows[a].cells.get(s.column).unwrap_or(&empty), table.rows[b].cells.get(s.column).unwrap_or(&empty));
            if s.descending { y.sort_cmp(x) } else { x.sort_cmp(y) }
        });
    }
    order
}

pub(crate) fn title_block<'a>(t: &Theme, title: String) -> Block<'a> {
    Block::default().borders(Borders::ALL).title(Span::styled(title, t.title())).border_style(t.border(true))
}

/// The selected screen, drawn by its home (`screens`); until it has loaded, a line saying so.
pub(crate) fn draw_notes(f: &mut Frame, t: &Theme, notes: &[crate::reports::Note], area: Rect) {
    let lines: Vec<Line> =
        notes.iter().map(|n| Line::from(Span::styled(crate::sanitize::for_terminal(&n.text).into_owned(), t.status(n.status)))).collect();
    f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), area);
}

/// Horizontal bars: one per day of lateness (and per country when split).
pub(crate) fn draw_lateness(f: &mut Frame, t: &Theme, report: &LatenessReport, area: Rect) {
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(format!("lateness: upload date - business date (events, {}s)", report.entity), t.muted()))
        .border_style(t.border(false));
    let inner = block.inner(area);
    f.render_widget(block, area);
    let max = report.buckets.iter().map(|b| b.events).max().unwrap_or(1).max(1) as f64;
    let label_w = if report.by.is_some() { 7 } else { 4 };
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
                Span::styled(format!(" {} / {}", crate::money::format_count(b.events), crate::money::format_count(b.keys)), t.muted()),
            ])
        })
        .collect();
    f.render_widget(Paragraph::new(lines), inner);
}

/// How a table is shown: its rows' order (a sort), the sort, and the first scrolled column.
pub(crate) struct TableView {
    pub order: Vec<usize>,
    pub sort: Option<Sort>,
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
fn sorted_labels(table: &Table, sort: Option<Sort>) -> Vec<String> {
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
fn table_title(table: &Table, sort: Option<Sort>, title: String, hidden_left: usize, hidden_right: usize) -> String {
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

#[cfg(test)]
mod tests {
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
