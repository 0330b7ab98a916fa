//! One rendering model for every report: the CLI prints it as a table, JSON or CSV, and the
//! explorer draws the same `Table`s.

use crate::money;
use chrono::{Datelike, NaiveDate};
use serde::Serialize;

mod machine;
mod text;
pub use machine::{csv_of, write_csv};
use text::*;
pub use text::{clip, render_gist, render_table_fitted, wrap_lines, wrap_words};

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
    /// An identifier that is a number (a snapshot id, an Iceberg snapshot's): not a quantity, so
    /// never grouped by thousands; an integer for machines.
    Id(i64),
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
            Cell::Id(n) => n.to_string(),
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
            Cell::Int(n) | Cell::IntDelta(n) | Cell::Id(n) => n.to_string(),
            Cell::Money { minor, .. } | Cell::Delta { minor, .. } => minor.to_string(),
            Cell::Date(d) => d.to_string(),
            Cell::Status(s) => s.word().to_lowercase(),
            Cell::Empty | Cell::Absent(_) => String::new(),
        }
    }

    /// The order a sort by this column puts cells in: numbers by value (money by minor units),
    /// text without regard to case, dates in time, statuses by severity; empty cells last.
    pub fn sort_cmp(&self, other: &Cell) -> std::cmp::Ordering {
        fn key(c: &Cell) -> (u8, i64, String) {
            match c {
                Cell::Int(n) | Cell::IntDelta(n) | Cell::Id(n) | Cell::Money { minor: n, .. } | Cell::Delta { minor: n, .. } => {
                    (0, *n, String::new())
                }
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

    pub fn is_numeric(&self) -> bool {
        matches!(self, Cell::Int(_) | Cell::IntDelta(_) | Cell::Id(_) | Cell::Money { .. } | Cell::Delta { .. })
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
    pub fn push_flagged(&mut self, cells: Vec<Cell>, flag: Option<Status>) {
        self.rows.push(Row { cells, flag, drill: None, summary: false });
    }
    /// The table with the business date `d` as its first column, unless it has one: an export
    /// of a date's screen says its date in every row, not only in the file's name.
    pub fn dated(mut self, d: NaiveDate) -> Table {
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
    pub fn spare(mut self, keys: &[&str]) -> Table {
        for c in self.columns.iter_mut().filter(|c| keys.contains(&c.key.as_str())) {
            c.spare = true;
        }
        self
    }

    /// Marks the columns (by key) that repeat another's answer: left out first when space is short.
    pub fn repeating(mut self, keys: &[&str]) -> Table {
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
    pub fn push_summary(&mut self, cells: Vec<Cell>, flag: Option<Status>) {
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
    /// The rows of `tables()`'s table `table` that the report streams rather than holds, handed
    /// to `each` in order after the table's own rows: JSON and CSV write them all, and people's
    /// text shows the table's own (an audit of a million rows lists its first ones, and says so).
    /// A report that holds its rows has none.
    fn more_rows(&self, table: usize, each: &mut dyn FnMut(Row) -> std::io::Result<()>) -> std::io::Result<()> {
        let _ = (table, each);
        Ok(())
    }
    /// Tables for a person reading the report, after `tables` in the text format: a summary
    /// of its rows (where an audit's wrong rows fall). CSV and JSON hold `tables`' rows alone.
    fn summary_tables(&self) -> Vec<Table> {
        Vec::new()
    }
    fn notes(&self) -> Vec<Note> {
        Vec::new()
    }
    /// The tables' point in sentences, for a screen too short for the tables themselves (the
    /// demo's gist, with the headline and notes): none where the notes already say it.
    fn gist(&self) -> Vec<String> {
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
/// widest text columns wrap onto more lines, and a number is never narrowed.
pub fn render_fitted<R: Report>(report: &R, format: Format, color: bool, width: Option<usize>) -> String {
    let mut out = Vec::new();
    // Writing into memory fails only where the report cannot be serialised, which the JSON says.
    let _ = write_fitted(report, format, color, width, &mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// As `render_fitted`, written to `out`: JSON and CSV a row at a time, so a large report (an
/// audit of a million rows) is never held a second time as text.
pub fn write_fitted<R: Report>(
    report: &R,
    format: Format,
    color: bool,
    width: Option<usize>,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Format::Json => machine::write_json(report, out),
        Format::Csv => machine::write_report_csv(report, out),
        Format::Table => out.write_all(render_text(report, color, width).as_bytes()),
    }
}

/// The currencies of a report's money, each with its ISO-4217 minor digits: in its tables' rows
/// and the rows it streams.
fn currency_digits<R: Report>(report: &R, tables: &[Table]) -> std::io::Result<std::collections::BTreeMap<String, Option<u32>>> {
    let mut out = std::collections::BTreeMap::new();
    let mut add = |r: &Row| {
        for cell in &r.cells {
            if let Cell::Money { currency, .. } | Cell::Delta { currency, .. } = cell
                && !out.contains_key(currency)
            {
                out.insert(currency.clone(), money::digits(currency));
            }
        }
    };
    for (i, t) in tables.iter().enumerate() {
        t.rows.iter().for_each(&mut add);
        report.more_rows(i, &mut |r| {
            add(&r);
            Ok(())
        })?;
    }
    Ok(out)
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

    /// An id is not a quantity: an Iceberg snapshot's is shown whole, never grouped by thousands,
    /// where a count is; machines get both as integers.
    #[test]
    fn an_id_is_never_grouped_by_thousands() {
        let id = 6_674_879_460_880_860_209;
        assert_eq!(Cell::Id(id).display(), "6674879460880860209");
        assert_eq!(Cell::Int(id).display(), "6,674,879,460,880,860,209");
        assert_eq!(Cell::Id(id).raw(), Cell::Int(id).raw());
        assert!(Cell::Id(id).is_numeric(), "right-aligned as a number");
    }

    #[test]
    fn a_table_narrowed_to_a_terminal_wraps_text_and_never_cuts_a_number() {
        let mut t = Table::new("", &[("note", "note"), ("revenue_minor", "revenue")]);
        t.push(vec![Cell::text("a long attribution that will not fit in a narrow terminal"), Cell::money(123_456_789, "GBP")]);
        let wide = render_table_fitted(&t, false, None);
        assert!(wide.contains("narrow terminal"), "{wide}");
        let narrow = render_table_fitted(&t, false, Some(40));
        use unicode_width::UnicodeWidthStr;
        assert!(narrow.lines().all(|l| l.width() <= 40), "every line fits:\n{narrow}");
        assert!(!narrow.contains('…') && narrow.contains("£1,234,567.89"), "text wraps, the number whole:\n{narrow}");
        let words: String = narrow.lines().skip(2).map(|l| l.split("  ").next().unwrap_or("").trim()).collect::<Vec<_>>().join(" ");
        assert_eq!(words, "a long attribution that will not fit in a narrow terminal", "every word, in order:\n{narrow}");
        // A figure inside a sentence is never broken, and a date column never cut.
        let mut h = Table::new("", &[("day", "day"), ("why", "why"), ("revenue_minor", "revenue")]);
        let d = NaiveDate::from_ymd_opt(2026, 10, 13).unwrap();
        h.push(vec![
            Cell::Date(d),
            Cell::text("+465 baskets, +₹3,57,97,313.76 added from upload 2026-10-13"),
            Cell::money(3_579_731_376, "INR"),
        ]);
        let fitted = render_table_fitted(&h, false, Some(50));
        assert!(fitted.lines().all(|l| l.width() <= 50), "{fitted}");
        assert!(fitted.contains("2026-10-13  ") && fitted.matches("+₹3,57,97,313.76").count() == 1 && !fitted.contains('…'), "{fitted}");
        let tiny = render_table_fitted(&t, false, Some(10));
        assert!(!tiny.contains("£1,234") && tiny.contains("revenue"), "a number that cannot fit is left out whole, and named:\n{tiny}");
    }

    /// A note and a gist line on a narrow screen break between words, their figures whole; the
    /// gist is the headline and notes without the tables.
    #[test]
    fn notes_and_the_gist_wrap_between_words_at_the_screen_s_width() {
        #[derive(Serialize)]
        struct Noted;
        impl Report for Noted {
            fn kind(&self) -> &'static str {
                "noted"
            }
            fn headline(&self) -> String {
                "noted".into()
            }
            fn tables(&self) -> Vec<Table> {
                tiny().tables()
            }
            fn notes(&self) -> Vec<Note> {
                vec![Note {
                    status: Status::Pass,
                    text: "GB: 562 baskets £103,478.90 → 562 baskets £103,508.90 (+0, +£30.00); the parts sum exactly".into(),
                }]
            }
            fn gist(&self) -> Vec<String> {
                vec!["snapshot 8, GB: +24 baskets, +£3,150.82 added from upload 2026-10-16".into()]
            }
        }
        use unicode_width::UnicodeWidthStr;
        let full = render_fitted(&Noted, Format::Table, false, Some(50));
        assert!(full.lines().all(|l| l.width() <= 50) && full.contains("£347,565.80"), "{full}");
        assert!(full.contains("+£30.00);") && full.contains("£103,508.90") && !full.contains('…'), "{full}");
        let gist = render_gist(&Noted, false, Some(50));
        assert!(gist.lines().all(|l| l.width() <= 50) && !gist.contains("£347,565.80"), "no table in the gist:\n{gist}");
        assert!(gist.contains("+£3,150.82") && gist.contains("2026-10-16") && gist.contains("+£30.00);"), "{gist}");
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
        assert!(json.contains("\"minor\":34756580"), "{json}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["currency_digits"]["GBP"], 2, "{json}");
    }
}
