//! One rendering model for every report: the CLI prints it as a table, JSON or CSV, and the
//! explorer draws the same `Table`s.

use crate::money;
use chrono::{Datelike, NaiveDate};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pass,
    Warn,
    Fail,
    Info,
}

impl Status {
    /// The mark that says the status without colour: ✓ pass, ! warn, ✗ fail (info: none).
    pub fn mark(self) -> &'static str {
        match self {
            Status::Pass => "✓",
            Status::Warn => "!",
            Status::Fail => "✗",
            Status::Info => " ",
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
            Status::Info => "info",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    Text(String),
    /// A value that groups rows (a basket's id over its copies): shown blank under a row that
    /// shows the same value, written in full on every row for machines.
    Repeat(String),
    Int(i64),
    /// A signed count: `+3`, `-13`, `+0` for people, a plain integer for machines.
    IntDelta(i64),
    /// A word of the audit trail's vocabulary: `text` for people, `key` (the JSON's word) for
    /// machines, so CSV and JSON say the same.
    Term {
        text: String,
        key: String,
    },
    Money {
        minor: i64,
        currency: String,
    },
    Delta {
        minor: i64,
        currency: String,
    },
    Date(NaiveDate),
    Status(Status),
    Empty,
    /// No value, for a reason people are told (`not run`): machines get an empty field.
    Absent(String),
}

impl Cell {
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }
    pub fn money(minor: i64, currency: &str) -> Cell {
        Cell::Money { minor, currency: currency.to_string() }
    }
    pub fn delta(minor: i64, currency: &str) -> Cell {
        Cell::Delta { minor, currency: currency.to_string() }
    }

    /// For people: money in major units with its symbol, counts with separators. Data text is
    /// stripped of control characters here, the one door to the terminal.
    pub fn display(&self) -> String {
        match self {
            Cell::Text(s) | Cell::Repeat(s) | Cell::Term { text: s, .. } => crate::sanitize::for_terminal(s).into_owned(),
            Cell::Int(n) => money::format_count(*n),
            Cell::IntDelta(n) => money::format_count_delta(*n),
            Cell::Money { minor, currency } => money::format_major(*minor, currency),
            Cell::Delta { minor, currency } => money::format_delta(*minor, currency),
            Cell::Date(d) => d.to_string(),
            Cell::Status(s) => s.word().to_string(),
            Cell::Empty => String::new(),
            Cell::Absent(why) => crate::sanitize::for_terminal(why).into_owned(),
        }
    }

    /// For machines: integer minor units, ISO dates.
    pub fn raw(&self) -> String {
        match self {
            Cell::Text(s) | Cell::Repeat(s) | Cell::Term { key: s, .. } => s.clone(),
            Cell::Int(n) | Cell::IntDelta(n) => n.to_string(),
            Cell::Money { minor, .. } | Cell::Delta { minor, .. } => minor.to_string(),
            Cell::Date(d) => d.to_string(),
            Cell::Status(s) => s.word().to_lowercase(),
            Cell::Empty | Cell::Absent(_) => String::new(),
        }
    }

    /// The order a sort by this column puts cells in: numbers by value (money by minor units),
    /// text without regard to case, dates in time, statuses by severity; empty cells last.
    pub(crate) fn sort_cmp(&self, other: &Cell) -> std::cmp::Ordering {
        fn key(c: &Cell) -> (u8, i64, String) {
            match c {
                Cell::Int(n) | Cell::IntDelta(n) | Cell::Money { minor: n, .. } | Cell::Delta { minor: n, .. } => (0, *n, String::new()),
                Cell::Date(d) => (1, i64::from(d.num_days_from_ce()), String::new()),
                Cell::Status(s) => (
                    2,
                    [Status::Info, Status::Pass, Status::Warn, Status::Fail].iter().position(|x| x == s).unwrap_or(0) as i64,
                    String::new(),
                ),
                Cell::Text(t) | Cell::Repeat(t) | Cell::Term { text: t, .. } => (3, 0, t.to_lowercase()),
                Cell::Empty | Cell::Absent(_) => (4, 0, String::new()),
            }
        }
        key(self).cmp(&key(other))
    }

    pub(crate) fn is_numeric(&self) -> bool {
        matches!(self, Cell::Int(_) | Cell::IntDelta(_) | Cell::Money { .. } | Cell::Delta { .. })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Column {
    /// The CSV header: snake_case, `_minor` for money.
    pub key: String,
    /// The table header.
    pub label: String,
    /// Says again what another column says (a Δ beside the "why" that spells it out): left out
    /// first when the table does not fit, so the column that carries the answer stays whole.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub repeats: bool,
    /// Detail beside the answer (a count of runs, of baskets): when the table does not fit, these
    /// go before any column to their left is cut, so the answer's columns stay on screen.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub spare: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    pub cells: Vec<Cell>,
    /// A row to highlight: a disagreement, a failed promise.
    pub flag: Option<Status>,
    /// What Enter on this row opens in the explorer (a basket list, a snapshot).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drill: Option<String>,
    /// A total for people (`= total change`): shown in tables and the explorer, left out of CSV,
    /// whose rows are data only.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub summary: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    pub status: Status,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct Table {
    pub title: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
}

impl Table {
    pub fn new(title: impl Into<String>, columns: &[(&str, &str)]) -> Table {
        Table {
            title: title.into(),
            columns: columns
                .iter()
                .map(|(k, l)| Column { key: k.to_string(), label: l.to_string(), repeats: false, spare: false })
                .collect(),
            rows: Vec::new(),
        }
    }
    pub fn push(&mut self, cells: Vec<Cell>) {
        self.rows.push(Row { cells, flag: None, drill: None, summary: false });
    }
    pub(crate) fn push_flagged(&mut self, cells: Vec<Cell>, flag: Option<Status>) {
        self.rows.push(Row { cells, flag, drill: None, summary: false });
    }
    /// The table with the business date `d` as its first column, unless it has one: an export
    /// of a date's screen says its date in every row, not only in the file's name.
    pub(crate) fn dated(mut self, d: NaiveDate) -> Table {
        if self.columns.iter().any(|c| c.key == "business_date") {
            return self;
        }
        self.columns.insert(0, Column { key: "business_date".into(), label: "date".into(), repeats: false, spare: false });
        for r in &mut self.rows {
            r.cells.insert(0, Cell::Date(d));
        }
        self
    }

    /// Marks the columns (by key) that are detail beside the answer (`Column::spare`).
    pub(crate) fn spare(mut self, keys: &[&str]) -> Table {
        for c in self.columns.iter_mut().filter(|c| keys.contains(&c.key.as_str())) {
            c.spare = true;
        }
        self
    }

    /// Marks the columns (by key) that repeat another's answer: left out first when space is short.
    pub(crate) fn repeating(mut self, keys: &[&str]) -> Table {
        for c in self.columns.iter_mut().filter(|c| keys.contains(&c.key.as_str())) {
            c.repeats = true;
        }
        self
    }

    /// The same table without the columns at `drop` (indices).
    fn without(&self, drop: &[usize]) -> Table {
        let keep = |i: &usize| !drop.contains(i);
        Table {
            title: self.title.clone(),
            columns: self.columns.iter().enumerate().filter(|(i, _)| keep(i)).map(|(_, c)| c.clone()).collect(),
            rows: self
                .rows
                .iter()
                .map(|r| Row { cells: r.cells.iter().enumerate().filter(|(i, _)| keep(i)).map(|(_, c)| c.clone()).collect(), ..r.clone() })
                .collect(),
        }
    }

    /// A total row for people: CSV leaves it out.
    pub(crate) fn push_summary(&mut self, cells: Vec<Cell>, flag: Option<Status>) {
        self.rows.push(Row { cells, flag, drill: None, summary: true });
    }

    /// Each row's cells as people read them, rows in `order` (indices into `rows`): a
    /// `Cell::Repeat` is blank under a row showing the same value, and written out under any
    /// other, so a sorted table never leaves a row without its group.
    pub fn shown(&self, order: &[usize]) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::with_capacity(order.len());
        let mut above: Option<&Row> = None;
        for &k in order {
            let Some(r) = self.rows.get(k) else { continue };
            let cells = r
                .cells
                .iter()
                .enumerate()
                .map(|(i, c)| match (c, above.and_then(|a| a.cells.get(i))) {
                    (Cell::Repeat(v), Some(Cell::Repeat(prev))) if v == prev => String::new(),
                    _ => c.display(),
                })
                .collect();
            out.push(cells);
            above = Some(r);
        }
        out
    }
}

/// Every report renders as a headline, tables and notes.
pub trait Report: Serialize {
    /// The report's name in the JSON envelope: `check`, `history`, … (the command's own word).
    fn kind(&self) -> &'static str;
    /// The business date the report is about, when it is about one (the JSON envelope's).
    fn business_date(&self) -> Option<NaiveDate> {
        None
    }
    fn headline(&self) -> String;
    fn tables(&self) -> Vec<Table>;
    fn notes(&self) -> Vec<Note> {
        Vec::new()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Table,
    Json,
    Csv,
}

pub fn render<R: Report>(report: &R, format: Format, color: bool) -> String {
    render_fitted(report, format, color, None)
}

/// As `render`, with tables narrowed to `width` columns when given (a terminal's width): the
/// widest text columns are cut with `…`, never a number.
pub(crate) fn render_fitted<R: Report>(report: &R, format: Format, color: bool, width: Option<usize>) -> String {
    match format {
        Format::Json => crate::sanitize::json(json_envelope(report)) + "\n",
        Format::Csv => csv_of(&report.tables()),
        Format::Table => render_text(report, color, width),
    }
}

/// The currencies of a report's money, each with its ISO-4217 minor digits.
fn currency_digits(tables: &[Table]) -> std::collections::BTreeMap<String, Option<u32>> {
    let mut out = std::collections::BTreeMap::new();
    for cell in tables.iter().flat_map(|t| &t.rows).flat_map(|r| &r.cells) {
        if let Cell::Money { currency, .. } | Cell::Delta { currency, .. } = cell {
            out.entry(currency.clone()).or_insert_with(|| money::digits(currency));
        }
    }
    out
}

/// JSON: one envelope for every report. `kind` names the report, `business_date` the date it is
/// about (null when it is about none), `rows` holds its tables' rows as machines read them (the
/// CSV's columns, typed: money in integer minor units beside its currency, digits and a major-unit
/// decimal; a row of a report with several tables names its `table`), `currency_digits` each
/// currency's ISO-4217 minor digits, and `detail` the report's own fields.
fn json_envelope<R: Report>(report: &R) -> String {
    let detail = match serde_json::to_value(report) {
        Ok(v) => v,
        Err(e) => serde_json::json!({ "error": format!("the report could not be serialised: {e}") }),
    };
    let tables = report.tables();
    let several = tables.len() > 1;
    let mut rows = Vec::new();
    for t in &tables {
        let keys = machine_columns(t);
        for r in t.rows.iter().filter(|r| !r.summary) {
            let mut row = serde_json::Map::new();
            if several {
                row.insert("table".into(), serde_json::json!(t.title));
            }
            for (k, v) in keys.iter().zip(machine_values(t, r)) {
                row.insert(k.clone(), v.json());
            }
            rows.push(serde_json::Value::Object(row));
        }
    }
    let envelope = serde_json::json!({
        "kind": report.kind(),
        "business_date": report.business_date(),
        "rows": rows,
        "currency_digits": currency_digits(&tables),
        "detail": detail,
    });
    serde_json::to_string_pretty(&envelope).unwrap_or_default()
}

/// A table's columns as machines read them: each column's key, and beside every money column
/// (named `…_minor`) its currency, that currency's ISO-4217 minor digits and the amount in major
/// units as a plain decimal (`v2_revenue_minor` is followed by `v2_revenue_currency`,
/// `v2_revenue_digits` and `v2_revenue_major`). The same whatever the rows, an empty table's
/// included, so appended files line up.
fn machine_columns(t: &Table) -> Vec<String> {
    let mut header = Vec::new();
    for col in &t.columns {
        header.push(col.key.clone());
        if let Some(base) = col.key.strip_suffix("_minor") {
            header.extend([format!("{base}_currency"), format!("{base}_digits"), format!("{base}_major")]);
        }
    }
    header
}

/// One value of a machine column.
enum Machine {
    Int(i64),
    /// A decimal recount wrote itself (a major-unit amount): exact text, never a formula.
    Decimal(String),
    /// Text from the data or the report's words, a date, a status.
    Text(String),
    None,
}

impl Machine {
    /// JSON: integers as numbers; a decimal as its exact text (a JSON number would pass through
    /// a float in most readers); no value as null.
    fn json(self) -> serde_json::Value {
        match self {
            Machine::Int(n) => n.into(),
            Machine::Decimal(s) | Machine::Text(s) => s.into(),
            Machine::None => serde_json::Value::Null,
        }
    }

    /// CSV: text as a spreadsheet shows it safely (`sanitize::for_csv`), numbers as they are.
    fn csv(self) -> String {
        match self {
            Machine::Int(n) => n.to_string(),
            Machine::Decimal(s) => s,
            Machine::Text(s) => crate::sanitize::for_csv(&s).into_owned(),
            Machine::None => String::new(),
        }
    }
}

/// A row's values under `machine_columns`.
fn machine_values(t: &Table, r: &Row) -> Vec<Machine> {
    let mut out = Vec::new();
    for (col, cell) in t.columns.iter().zip(&r.cells) {
        out.push(match cell {
            Cell::Int(n) | Cell::IntDelta(n) | Cell::Money { minor: n, .. } | Cell::Delta { minor: n, .. } => Machine::Int(*n),
            Cell::Empty | Cell::Absent(_) => Machine::None,
            other => Machine::Text(other.raw()),
        });
        if col.key.ends_with("_minor") {
            match cell {
                Cell::Money { minor, currency } | Cell::Delta { minor, currency } => out.extend([
                    Machine::Text(currency.clone()),
                    money::digits(currency).map_or(Machine::None, |d| Machine::Int(i64::from(d))),
                    money::decimal_major(*minor, currency).map_or(Machine::None, Machine::Decimal),
                ]),
                _ => out.extend([Machine::None, Machine::None, Machine::None]),
            }
        }
    }
    out
}

/// CSV: the machine columns (`machine_columns`) under one header per table, data rows only; text
/// as a spreadsheet shows it safely (`sanitize::for_csv`), so a sum never mixes pence with paise
/// and a spreadsheet user reads pounds without a formula.
pub(crate) fn csv_of(tables: &[Table]) -> String {
    let mut out = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        let mut w = csv::Writer::from_writer(&mut out);
        let _ = w.write_record(machine_columns(t));
        for r in t.rows.iter().filter(|r| !r.summary) {
            let record: Vec<String> = machine_values(t, r).into_iter().map(Machine::csv).collect();
            let _ = w.write_record(&record);
        }
        let _ = w.flush();
    }
    // CSV of UTF-8 text is UTF-8; were it not, the bytes are kept, not lost.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn paint(text: &str, status: Option<Status>, color: bool) -> String {
    match (color, status) {
        (true, Some(Status::Fail)) => format!("\x1b[1;31m{text}\x1b[0m"),
        (true, Some(Status::Warn)) => format!("\x1b[33m{text}\x1b[0m"),
        (true, Some(Status::Pass)) => format!("\x1b[32m{text}\x1b[0m"),
        _ => text.to_string(),
    }
}

#[cfg(test)]
fn render_table_text(t: &Table, color: bool) -> String {
    render_table_fitted(t, color, None)
}

/// Narrows text columns, widest first and never below their label or 8, until the row fits in
/// `width`. Numeric columns keep their width: a number is never cut.
fn fit(widths: &mut [usize], floors: &[usize], numeric: &[bool], width: usize) {
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1);
    while total(widths) > width {
        let widest = (0..widths.len()).filter(|&i| !numeric[i] && widths[i] > floors[i]).max_by_key(|&i| widths[i]);
        match widest {
            Some(i) => widths[i] -= 1,
            None => break,
        }
    }
}

/// `s` in at most `w` terminal columns: cut with `…` when longer.
pub(crate) fn clip(s: &str, w: usize) -> std::borrow::Cow<'_, str> {
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
fn without_repeats(t: &Table, width: Option<usize>) -> Option<(Table, String)> {
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
fn without_spares(t: &Table, width: Option<usize>) -> Option<(Table, String)> {
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

pub(crate) fn render_table_fitted(t: &Table, color: bool, width: Option<usize>) -> String {
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
    let mut widths = column_widths(t, &shown);
    let numeric: Vec<bool> = (0..t.columns.len()).map(|i| t.rows.iter().any(|r| r.cells.get(i).is_some_and(Cell::is_numeric))).collect();
    // A table with flagged rows gives each row a mark column first (two columns wide).
    let marks = t.rows.iter().any(|r| matches!(r.flag, Some(f) if f != Status::Info));
    let lead = if marks { "  " } else { "" };
    let width = width.map(|w| w.saturating_sub(lead.len()));
    // The columns shown: every one, unless the numbers alone are wider than the terminal; then
    // the columns from the right that do not fit are left out, and a line under the table says
    // which (a number is never cut, and a line never wraps).
    let mut cols = t.columns.len();
    if let Some(width) = width {
        let floors: Vec<usize> = t.columns.iter().zip(&widths).map(|(c, w)| (*w).min(c.label.width().max(8))).collect();
        fit(&mut widths, &floors, &numeric, width);
        let mut used = 0;
        for (i, w) in widths.iter().enumerate() {
            used += w + if i > 0 { 2 } else { 0 };
            if used > width && i > 0 {
                cols = i;
                break;
            }
        }
    }
    let left_out: Vec<&str> = t.columns[cols..].iter().map(|c| c.label.as_str()).collect();
    widths.truncate(cols);
    let pad = |s: &str, w: usize, right: bool| {
        let s = &*clip(s, w);
        let fill = " ".repeat(w.saturating_sub(s.width()));
        if right { format!("{fill}{s}") } else { format!("{s}{fill}") }
    };
    let header: Vec<String> = t.columns.iter().take(cols).enumerate().map(|(i, c)| pad(&c.label, widths[i], numeric[i])).collect();
    out.push_str(lead);
    out.push_str(header.join("  ").trim_end());
    out.push('\n');
    out.push_str(lead);
    out.push_str(&widths.iter().map(|w| "─".repeat(*w)).collect::<Vec<_>>().join("  "));
    out.push('\n');
    for (r, row) in t.rows.iter().zip(&shown) {
        let line: Vec<String> = row
            .iter()
            .take(cols)
            .enumerate()
            .map(|(i, c)| pad(c, widths.get(i).copied().unwrap_or(0), numeric.get(i).copied().unwrap_or(false)))
            .collect();
        // A flagged row carries its mark as well as its colour, so it reads without colour too.
        let line = match (marks, r.flag) {
            (false, _) => line.join("  "),
            (true, Some(f)) => format!("{} {}", f.mark(), line.join("  ")),
            (true, None) => format!("  {}", line.join("  ")),
        };
        out.push_str(&paint(line.trim_end(), r.flag, color));
        out.push('\n');
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

/// `text` wrapped at spaces into lines of at most `width` columns (a word longer than that has a
/// line of its own), each ending in a newline: a note under a table that the terminal need not wrap.
pub(crate) fn wrap_words(text: &str, width: usize) -> String {
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
pub(crate) fn wrap_lines(text: &str, width: usize) -> String {
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
fn column_widths(t: &Table, shown: &[Vec<String>]) -> Vec<usize> {
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

fn render_text<R: Report>(report: &R, color: bool, width: Option<usize>) -> String {
    let mut out = String::new();
    let headline = report.headline();
    if !headline.is_empty() {
        let lines: Vec<String> = headline.lines().map(|l| crate::sanitize::for_terminal(l).into_owned()).collect();
        match width {
            // On a screen of known width the headline breaks between words, never inside one.
            Some(w) => out.push_str(&wrap_lines(&lines.join("\n"), w)),
            None => {
                out.push_str(&lines.join("\n"));
                out.push('\n');
            }
        }
        out.push('\n');
    }
    for t in report.tables() {
        out.push_str(&render_table_fitted(&t, color, width));
        out.push('\n');
    }
    for n in report.notes() {
        let mark = match n.status {
            Status::Pass => "✓",
            Status::Warn => "!",
            Status::Fail => "✗",
            Status::Info => "·",
        };
        out.push_str(&paint(&format!("{mark} {}", crate::sanitize::for_terminal(&n.text)), Some(n.status), color));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Tiny {
        t: Table,
    }
    impl Report for Tiny {
        fn kind(&self) -> &'static str {
            "tiny"
        }
        fn headline(&self) -> String {
            "tiny".into()
        }
        fn tables(&self) -> Vec<Table> {
            vec![self.t.clone()]
        }
    }

    fn tiny() -> Tiny {
        let mut t = Table::new("", &[("country", "country"), ("revenue_minor", "revenue")]);
        t.push(vec![Cell::text("GB\u{1b}[31m"), Cell::money(34_756_580, "GBP")]);
        Tiny { t }
    }

    #[test]
    fn a_table_narrowed_to_a_terminal_cuts_text_never_numbers() {
        let mut t = Table::new("", &[("note", "note"), ("revenue_minor", "revenue")]);
        t.push(vec![Cell::text("a long attribution that will not fit in a narrow terminal"), Cell::money(123_456_789, "GBP")]);
        let wide = render_table_fitted(&t, false, None);
        assert!(wide.contains("narrow terminal"), "{wide}");
        let narrow = render_table_fitted(&t, false, Some(40));
        use unicode_width::UnicodeWidthStr;
        assert!(narrow.lines().all(|l| l.width() <= 40), "every line fits:\n{narrow}");
        assert!(narrow.contains('…') && narrow.contains("£1,234,567.89"), "text is cut, the number whole:\n{narrow}");
        let tiny = render_table_fitted(&t, false, Some(10));
        assert!(!tiny.contains("£1,234") && tiny.contains("revenue"), "a number that cannot fit is left out whole, and named:\n{tiny}");
    }

    #[test]
    fn a_table_whose_numbers_alone_are_wider_than_the_terminal_leaves_columns_out_and_says_which() {
        let cols: Vec<(String, String)> = (0..8).map(|i| (format!("c{i}_minor"), format!("column {i}"))).collect();
        let cols: Vec<(&str, &str)> = cols.iter().map(|(k, l)| (k.as_str(), l.as_str())).collect();
        let mut t = Table::new("", &cols);
        t.push_flagged((0..8).map(|i| Cell::money(1_000_000_000 + i, "GBP")).collect(), Some(Status::Fail));
        t.push((0..8).map(Cell::Int).collect());
        let out = render_table_fitted(&t, false, Some(60));
        use unicode_width::UnicodeWidthStr;
        assert!(out.lines().all(|l| l.width() <= 60), "no line is wider than the terminal, so none wraps:\n{out}");
        assert!(out.contains("£10,000,000.00") && out.contains("✗"), "{out}");
        let note = out.lines().skip_while(|l| !l.starts_with("(+")).collect::<Vec<_>>().join(" ");
        assert!(note.contains("column(s) left out") && note.contains("column 7"), "the note names what is left out:\n{out}");
        let shown = out.lines().next().unwrap().matches("column").count();
        assert_eq!(note.matches("column ").count(), 8 - shown, "every column is either shown or named:\n{out}");
        // Piped output keeps every column.
        assert!(render_table_fitted(&t, false, None).contains("column 7"));
    }

    #[test]
    fn yen_dinars_and_unidades_are_shown_by_their_own_digits_in_tables_csv_and_json() {
        let mut t = Table::new("", &[("store", "store"), ("revenue_minor", "revenue")]);
        for (store, minor, code) in
            [("TOKYO1", 1_091_969, "JPY"), ("KUWAIT1", 1_491_936, "KWD"), ("MANAMA1", 7, "BHD"), ("SANTIAGO1", 123_456, "CLF")]
        {
            t.push(vec![Cell::text(store), Cell::money(minor, code)]);
        }
        let r = Tiny { t };
        let text = render(&r, Format::Table, false);
        for shown in ["¥1,091,969", "KWD 1,491.936", "BHD 0.007", "CLF 12.3456"] {
            assert!(text.contains(shown), "{shown} in:\n{text}");
        }
        let csv = render(&r, Format::Csv, false);
        assert!(csv.contains("TOKYO1,1091969,JPY,0,1091969\n") && csv.contains("KUWAIT1,1491936,KWD,3,1491.936\n"), "{csv}");
        assert!(csv.contains("SANTIAGO1,123456,CLF,4,12.3456\n") && csv.contains("MANAMA1,7,BHD,3,0.007\n"), "{csv}");
        let v: serde_json::Value = serde_json::from_str(&render(&r, Format::Json, false)).unwrap();
        assert_eq!((v["currency_digits"]["JPY"].as_i64(), v["currency_digits"]["BHD"].as_i64()), (Some(0), Some(3)));
    }

    #[test]
    fn csv_has_one_header_whatever_the_rows_no_summary_rows_and_every_value_on_every_row() {
        let cols = [("basket_id", "basket_id"), ("baskets_delta", "Δ baskets"), ("revenue_minor", "revenue"), ("change", "change")];
        let empty = Table::new("", &cols);
        let mut full = Table::new("", &cols);
        let term = |k: &str| Cell::Term { text: k.replace('_', " "), key: k.to_string() };
        full.push(vec![Cell::Repeat("B1".into()), Cell::IntDelta(-13), Cell::money(500, "GBP"), term("copies_discarded")]);
        full.push(vec![Cell::Repeat("B1".into()), Cell::IntDelta(3), Cell::money(-5, "GBP"), term("added")]);
        full.push_summary(vec![Cell::text("total"), Cell::IntDelta(-10), Cell::money(495, "GBP"), Cell::text("= total change")], None);
        let (a, b) = (csv_of(std::slice::from_ref(&empty)), csv_of(std::slice::from_ref(&full)));
        assert_eq!(a.lines().next(), b.lines().next(), "the same header, rows or none");
        assert_eq!(
            b,
            "basket_id,baskets_delta,revenue_minor,revenue_currency,revenue_digits,revenue_major,change\n\
                       B1,-13,500,GBP,2,5.00,copies_discarded\nB1,3,-5,GBP,2,-0.05,added\n"
        );
        let text = render_table_text(&full, false);
        assert!(text.contains("-13") && text.contains("+3") && text.contains("= total change"), "{text}");
        assert_eq!(text.matches("B1").count(), 1, "a repeated value is shown once per group:\n{text}");
        // Sorted so that the group is split, each row shows its value again.
        assert_eq!(full.shown(&[1, 2, 0]).iter().filter(|r| r[0] == "B1").count(), 2);
    }

    #[test]
    fn a_column_that_repeats_the_answer_gives_way_before_the_answer_is_cut() {
        let mut t = Table::new(
            "",
            &[("country", "country"), ("attribution", "why"), ("baskets_delta", "Δ baskets"), ("revenue_delta_minor", "Δ revenue")],
        )
        .repeating(&["baskets_delta", "revenue_delta_minor"]);
        t.push(vec![
            Cell::text("GB"),
            Cell::text("+24 baskets, +£3,150.82 added from upload 2026-10-16"),
            Cell::IntDelta(24),
            Cell::delta(315_082, "GBP"),
        ]);
        let wide = render_table_fitted(&t, false, Some(200));
        assert!(wide.contains("Δ revenue") && wide.contains("+£3,150.82"), "{wide}");
        let narrow = render_table_fitted(&t, false, Some(64));
        assert!(narrow.contains("added from upload 2026-10-16") && !narrow.contains('…'), "the why stays whole:\n{narrow}");
        assert!(narrow.replace('\n', " ").contains("said in the other columns: Δ baskets, Δ revenue"), "{narrow}");
        assert!(narrow.lines().all(|l| unicode_width::UnicodeWidthStr::width(l) <= 64), "the note wraps too:\n{narrow}");
        assert!(
            csv_of(std::slice::from_ref(&t)).starts_with("country,attribution,baskets_delta,revenue_delta_minor"),
            "machines keep every column"
        );
    }

    #[test]
    fn table_shows_major_units_and_csv_keeps_minor_units() {
        let text = render(&tiny(), Format::Table, false);
        assert!(text.contains("£347,565.80"), "{text}");
        assert!(!text.contains('\u{1b}'), "control characters must not reach the terminal: {text:?}");
        let csv = render(&tiny(), Format::Csv, false);
        assert!(csv.starts_with("country,revenue_minor,revenue_currency,revenue_digits,revenue_major\n"), "{csv}");
        assert!(csv.contains(",34756580,GBP,2,347565.80\n"), "the currency, its digits and the major units beside the minor units: {csv}");
        let json = render(&tiny(), Format::Json, false);
        assert!(json.contains("\"minor\": 34756580"), "{json}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["currency_digits"]["GBP"], 2, "{json}");
    }
}
