//! A report as people read it: tables fitted to the terminal's width, wrapped text, colour.

use super::*;

pub(super) fn paint(text: &str, status: Option<Status>, color: bool) -> String {
    match (color, status) {
        (true, Some(Status::Fail)) => format!("\x1b[1;31m{text}\x1b[0m"),
        (true, Some(Status::Warn)) => format!("\x1b[33m{text}\x1b[0m"),
        (true, Some(Status::Pass)) => format!("\x1b[32m{text}\x1b[0m"),
        _ => text.to_string(),
    }
}

#[cfg(test)]
pub(super) fn render_table_text(t: &Table, color: bool) -> String {
    render_table_fitted(t, color, None)
}

/// Narrows text columns, widest first and never below their floors, until the row fits in
/// `width`: first the columns of sentences (`wraps`), which wrap onto more lines and lose
/// nothing, then the others, whose single words are cut. Fixed columns (numbers, dates) keep
/// their width: a number is never cut.
pub(super) fn fit(widths: &mut [usize], floors: &[usize], fixed: &[bool], wraps: &[bool], width: usize) {
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1);
    for sentences_only in [true, false] {
        while total(widths) > width {
            let widest = (0..widths.len())
                .filter(|&i| !fixed[i] && (wraps[i] || !sentences_only) && widths[i] > floors[i])
                .max_by_key(|&i| widths[i]);
            match widest {
                Some(i) => widths[i] -= 1,
                None => break,
            }
        }
    }
}

/// `s` in at most `w` terminal columns: cut with `…` when longer.
pub fn clip(s: &str, w: usize) -> std::borrow::Cow<'_, str> {
    use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};
    if s.width() <= w {
        return s.into();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if used + cw + 1 > w {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push('…');
    out.into()
}

/// The table without the columns that repeat another's answer, and a note naming them, when the
/// whole table is wider than `width`: they go before any text column is cut.
pub(super) fn without_repeats(t: &Table, width: Option<usize>) -> Option<(Table, String)> {
    use unicode_width::UnicodeWidthStr;
    let repeated: Vec<usize> = t.columns.iter().enumerate().filter(|(_, c)| c.repeats).map(|(i, _)| i).collect();
    if repeated.is_empty() {
        return None;
    }
    let shown = t.shown(&(0..t.rows.len()).collect::<Vec<_>>());
    let col =
        |i: usize, label: &str| shown.iter().map(|r| r.get(i).map(|c| c.width()).unwrap_or(0)).chain([label.width()]).max().unwrap_or(0);
    let natural = t.columns.iter().enumerate().map(|(i, c)| col(i, &c.label) + 2).sum::<usize>() + 2;
    if width.is_none_or(|w| natural <= w) {
        return None;
    }
    let labels: Vec<String> = repeated.iter().map(|&i| t.columns[i].label.clone()).collect();
    let note = format!("({} left out to fit the terminal, said in the other columns: {})", labels.len(), labels.join(", "));
    Some((t.without(&repeated), wrap_words(&note, width.unwrap_or(usize::MAX))))
}

/// The table without its spare columns, from the right, until it fits `width` (None: it fits, or
/// has none), and the line that names them.
pub(super) fn without_spares(t: &Table, width: Option<usize>) -> Option<(Table, String)> {
    use unicode_width::UnicodeWidthStr;
    let width = width?;
    let shown = t.shown(&(0..t.rows.len()).collect::<Vec<_>>());
    let col = |i: usize| {
        shown.iter().map(|r| r.get(i).map(|c| c.width()).unwrap_or(0)).chain([t.columns[i].label.width()]).max().unwrap_or(0) + 2
    };
    let mut natural = (0..t.columns.len()).map(col).sum::<usize>() + 2;
    let mut dropped = Vec::new();
    for i in (0..t.columns.len()).rev().filter(|&i| t.columns[i].spare) {
        if natural <= width {
            break;
        }
        natural -= col(i);
        dropped.push(i);
    }
    if dropped.is_empty() {
        return None;
    }
    dropped.reverse();
    let labels: Vec<&str> = dropped.iter().map(|&i| t.columns[i].label.as_str()).collect();
    let note =
        format!("(+{} column(s) left out to fit the terminal: {}; --format csv or json has them all)", labels.len(), labels.join(", "));
    Some((t.without(&dropped), wrap_words(&note, width)))
}

pub fn render_table_fitted(t: &Table, color: bool, width: Option<usize>) -> String {
    use unicode_width::UnicodeWidthStr;
    if let Some((narrower, note)) = without_repeats(t, width) {
        return render_table_fitted(&narrower, color, width) + &note;
    }
    if let Some((narrower, note)) = without_spares(t, width) {
        return render_table_fitted(&narrower, color, width) + &note;
    }
    let mut out = String::new();
    if !t.title.is_empty() {
        out.push_str(&format!("{}\n", t.title));
    }
    let shown = t.shown(&(0..t.rows.len()).collect::<Vec<_>>());
    let numeric: Vec<bool> = (0..t.columns.len()).map(|i| t.rows.iter().any(|r| r.cells.get(i).is_some_and(Cell::is_numeric))).collect();
    // A table with flagged rows gives each row a mark column first (two columns wide).
    let marks = t.rows.iter().any(|r| matches!(r.flag, Some(f) if f != Status::Info));
    let lead = if marks { "  " } else { "" };
    let width = width.map(|w| w.saturating_sub(lead.len()));
    let widths = fitted_widths(t, &shown, &numeric, width);
    let cols = widths.len();
    let left_out: Vec<&str> = t.columns[cols..].iter().map(|c| c.label.as_str()).collect();
    // Text wider than its column wraps onto more lines, never cut: a sentence that carries a
    // figure keeps its end. A single word (an id) is cut with `…`; a number is never narrowed.
    let parts = |cells: &[String]| -> Vec<Vec<String>> {
        cells
            .iter()
            .take(cols)
            .enumerate()
            .map(|(i, c)| if !numeric[i] && c.width() > widths[i] && c.contains(' ') { wrap_cell(c, widths[i]) } else { vec![c.clone()] })
            .collect()
    };
    let labels: Vec<String> = t.columns.iter().map(|c| c.label.clone()).collect();
    for line in lines_of(&parts(&labels), &widths, &numeric) {
        out.push_str(&format!("{lead}{}\n", line.trim_end()));
    }
    out.push_str(lead);
    out.push_str(&widths.iter().map(|w| "─".repeat(*w)).collect::<Vec<_>>().join("  "));
    out.push('\n');
    for (r, row) in t.rows.iter().zip(&shown) {
        for (k, line) in lines_of(&parts(row), &widths, &numeric).into_iter().enumerate() {
            // A flagged row carries its mark as well as its colour, so it reads without colour too.
            let line = match (marks, r.flag) {
                (false, _) => line,
                (true, Some(f)) if k == 0 => format!("{} {line}", f.mark()),
                (true, _) => format!("  {line}"),
            };
            out.push_str(&paint(line.trim_end(), r.flag, color));
            out.push('\n');
        }
    }
    if t.rows.is_empty() {
        out.push_str("(no rows)\n");
    }
    if !left_out.is_empty() {
        let note = format!(
            "(+{} column(s) left out to fit the terminal: {}; --format csv or json has them all)",
            left_out.len(),
            left_out.join(", ")
        );
        out.push_str(&wrap_words(&note, width.unwrap_or(usize::MAX).saturating_add(lead.len())));
    }
    out
}

/// Each shown column's width within `width`: every column, unless the numbers alone are wider
/// than the terminal; then the columns from the right that do not fit are left out (the caller
/// names them). A text column narrows no further than 8, its label's longest word or the
/// longest word of its sentences, so a sentence wraps between words and a figure inside it is
/// never broken; a date is never narrowed either ("2026-10…" names no day).
fn fitted_widths(t: &Table, shown: &[Vec<String>], numeric: &[bool], width: Option<usize>) -> Vec<usize> {
    use unicode_width::UnicodeWidthStr;
    let mut widths = column_widths(t, shown);
    let Some(width) = width else { return widths };
    let longest_word = |words: &mut dyn Iterator<Item = &str>| words.flat_map(|c| c.split(' ')).map(|w| w.width()).max().unwrap_or(0);
    let n = t.columns.len();
    let wraps: Vec<bool> = (0..n).map(|i| shown.iter().any(|r| r.get(i).is_some_and(|c| c.contains(' ')))).collect();
    let floors: Vec<usize> = (0..n)
        .map(|i| {
            let sentences = longest_word(&mut shown.iter().filter_map(|r| r.get(i)).filter(|c| c.contains(' ')).map(String::as_str));
            widths[i].min(longest_word(&mut std::iter::once(t.columns[i].label.as_str())).max(8).max(sentences))
        })
        .collect();
    let fixed: Vec<bool> = (0..n)
        .map(|i| {
            let mut filled = t.rows.iter().filter_map(|r| r.cells.get(i)).filter(|c| !matches!(c, Cell::Empty)).peekable();
            numeric[i] || (filled.peek().is_some() && filled.all(|c| matches!(c, Cell::Date(_))))
        })
        .collect();
    fit(&mut widths, &floors, &fixed, &wraps, width);
    let mut used = 0;
    for (i, w) in widths.iter().enumerate() {
        used += w + if i > 0 { 2 } else { 0 };
        if used > width && i > 0 {
            widths.truncate(i);
            break;
        }
    }
    widths
}

/// The lines of one row whose cells are each given as their lines: padded to `widths` (numbers
/// to the right), a cell with fewer lines blank below.
fn lines_of(parts: &[Vec<String>], widths: &[usize], numeric: &[bool]) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let pad = |s: &str, w: usize, right: bool| {
        let s = &*clip(s, w);
        let fill = " ".repeat(w.saturating_sub(s.width()));
        if right { format!("{fill}{s}") } else { format!("{s}{fill}") }
    };
    (0..parts.iter().map(Vec::len).max().unwrap_or(1).max(1))
        .map(|k| {
            let cells: Vec<String> =
                parts.iter().enumerate().map(|(i, p)| pad(p.get(k).map_or("", String::as_str), widths[i], numeric[i])).collect();
            cells.join("  ")
        })
        .collect()
}

/// A cell's text in lines of at most `w` columns: broken between words, and a word wider than
/// the column broken within it.
fn wrap_cell(s: &str, w: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthChar;
    let w = w.max(1);
    let mut lines = Vec::new();
    for line in wrap_words(s, w).lines() {
        let (mut part, mut used) = (String::new(), 0);
        for c in line.chars() {
            let cw = c.width().unwrap_or(0);
            if used + cw > w && !part.is_empty() {
                lines.push(std::mem::take(&mut part));
                used = 0;
            }
            part.push(c);
            used += cw;
        }
        lines.push(part);
    }
    lines
}

/// `text` wrapped at spaces into lines of at most `width` columns (a word longer than that has a
/// line of its own), each ending in a newline: a note under a table that the terminal need not wrap.
pub fn wrap_words(text: &str, width: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    let (mut out, mut line) = (String::new(), String::new());
    for word in text.split(' ') {
        if !line.is_empty() && line.width() + 1 + word.width() > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// Every line of `text` within `width` columns, broken between words: a line's continuation is
/// indented two more than the line, so a block of lines keeps its shape on a narrow screen.
pub fn wrap_lines(text: &str, width: usize) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let body = line.trim_start_matches(' ');
        let indent = line.len() - body.len();
        let wrapped = wrap_words(body, width.saturating_sub(indent + 2).max(20));
        for (i, part) in wrapped.lines().enumerate() {
            let pad = if i == 0 { indent } else { indent + 2 };
            out.push_str(&" ".repeat(pad));
            out.push_str(part);
            out.push('\n');
        }
    }
    out
}

/// Each column's width in terminal cells: its label's, or its widest shown cell's.
pub(super) fn column_widths(t: &Table, shown: &[Vec<String>]) -> Vec<usize> {
    use unicode_width::UnicodeWidthStr;
    let mut widths: Vec<usize> = t.columns.iter().map(|c| c.label.width()).collect();
    for row in shown {
        for (i, c) in row.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(c.width());
            }
        }
    }
    widths
}

pub(super) fn render_text<R: Report>(report: &R, color: bool, width: Option<usize>) -> String {
    let mut out = headline_text(report, width);
    for t in report.tables().into_iter().chain(report.summary_tables()) {
        out.push_str(&render_table_fitted(&t, color, width));
        out.push('\n');
    }
    out.push_str(&notes_text(report, color, width));
    out
}

/// A report's gist, as a presenter shows it when the whole does not fit the screen: its headline
/// and its notes, without the tables between them.
pub fn render_gist<R: Report>(report: &R, color: bool, width: Option<usize>) -> String {
    let mut out = headline_text(report, width);
    for line in report.gist() {
        let line = crate::sanitize::for_terminal(&line).into_owned();
        out.push_str(&width.map_or_else(|| line.clone() + "\n", |w| wrap_lines(&line, w)));
    }
    out + &notes_text(report, color, width)
}

fn headline_text<R: Report>(report: &R, width: Option<usize>) -> String {
    let headline = report.headline();
    if headline.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = headline.lines().map(|l| crate::sanitize::for_terminal(l).into_owned()).collect();
    // On a screen of known width the headline breaks between words, never inside one.
    let mut out = match width {
        Some(w) => wrap_lines(&lines.join("\n"), w),
        None => lines.join("\n") + "\n",
    };
    out.push('\n');
    out
}

/// The notes, a line each with its mark; on a screen of known width a note breaks between words.
fn notes_text<R: Report>(report: &R, color: bool, width: Option<usize>) -> String {
    let mut out = String::new();
    for n in report.notes() {
        let mark = match n.status {
            Status::Pass => "✓",
            Status::Warn => "!",
            Status::Fail => "✗",
            Status::Info => "·",
        };
        let line = format!("{mark} {}", crate::sanitize::for_terminal(&n.text));
        let lines = match width {
            Some(w) => wrap_lines(&line, w),
            None => line + "\n",
        };
        for l in lines.lines() {
            out.push_str(&paint(l, Some(n.status), color));
            out.push('\n');
        }
    }
    out
}
