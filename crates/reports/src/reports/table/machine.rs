//! A report as machines read it: JSON's one envelope and CSV, money in integer minor units.

use super::*;
use std::io::Write;

/// JSON: one envelope for every report. `kind` names the report, `business_date` the date it is
/// about (null when it is about none), `rows` holds its tables' rows as machines read them (the
/// CSV's columns, typed: money in integer minor units beside its currency, digits and a major-unit
/// decimal; a row of a report with several tables names its `table`), one row to a line,
/// `currency_digits` each currency's ISO-4217 minor digits, and `detail` the report's own fields.
/// Written a row at a time, and `detail` straight from the report, so a large report is never
/// held again as JSON text or as a tree of values; every character a terminal could act on is
/// escaped on the way (`sanitize::json`).
pub(super) fn write_json<R: Report>(report: &R, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    // serde writes in fragments of a few bytes: escaped a buffer at a time, not a fragment.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, Escaping { out, pending: Vec::new() });
    let tables = report.tables();
    let several = tables.len() > 1;
    write!(out, "{{\n  \"kind\": ")?;
    serde_json::to_writer(&mut out, report.kind())?;
    write!(out, ",\n  \"business_date\": ")?;
    serde_json::to_writer(&mut out, &report.business_date())?;
    write!(out, ",\n  \"currency_digits\": ")?;
    serde_json::to_writer(&mut out, &currency_digits(report, &tables)?)?;
    write!(out, ",\n  \"rows\": [")?;
    let mut first = true;
    for (i, t) in tables.iter().enumerate() {
        let keys = machine_columns(t);
        let mut row_out = |r: &Row| -> std::io::Result<()> {
            let mut row = serde_json::Map::new();
            if several {
                row.insert("table".into(), serde_json::json!(t.title));
            }
            for (k, v) in keys.iter().zip(machine_values(t, r)) {
                row.insert(k.clone(), v.json());
            }
            write!(out, "{}\n    ", if first { "" } else { "," })?;
            first = false;
            serde_json::to_writer(&mut out, &row)?;
            Ok(())
        };
        for r in t.rows.iter().filter(|r| !r.summary) {
            row_out(r)?;
        }
        report.more_rows(i, &mut |r| row_out(&r))?;
    }
    write!(out, "{}],\n  \"detail\": ", if first { "" } else { "\n  " })?;
    if let Err(e) = serde_json::to_writer(&mut out, report) {
        serde_json::to_writer(&mut out, &serde_json::json!({ "error": format!("the report could not be serialised: {e}") }))?;
    }
    writeln!(out, "\n}}")?;
    out.into_inner().map_err(std::io::IntoInnerError::into_error)?.finish()
}

/// A writer that passes JSON text on with every character a terminal could act on escaped
/// (`sanitize::json`), whole characters at a time however the text is cut into writes.
struct Escaping<'a> {
    out: &'a mut dyn std::io::Write,
    /// The start of a character cut by the last write.
    pending: Vec<u8>,
}

impl Escaping<'_> {
    fn finish(mut self) -> std::io::Result<()> {
        let rest = std::mem::take(&mut self.pending);
        self.out.write_all(&rest)
    }
}

impl std::io::Write for Escaping<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let whole = match std::str::from_utf8(&self.pending) {
            Ok(s) => s.len(),
            Err(e) => e.valid_up_to(),
        };
        let text = String::from_utf8_lossy(&self.pending[..whole]).into_owned();
        self.out.write_all(crate::sanitize::json(text).as_bytes())?;
        self.pending.drain(..whole);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// A table's columns as machines read them: each column's key, and beside every money column
/// (named `…_minor`) its currency, that currency's ISO-4217 minor digits and the amount in major
/// units as a plain decimal (`v2_revenue_minor` is followed by `v2_revenue_currency`,
/// `v2_revenue_digits` and `v2_revenue_major`). The same whatever the rows, an empty table's
/// included, so appended files line up.
pub(super) fn machine_columns(t: &Table) -> Vec<String> {
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
pub(super) enum Machine {
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
pub(super) fn machine_values(t: &Table, r: &Row) -> Vec<Machine> {
    let mut out = Vec::new();
    for (col, cell) in t.columns.iter().zip(&r.cells) {
        out.push(match cell {
            Cell::Int(n) | Cell::IntDelta(n) | Cell::Id(n) | Cell::Money { minor: n, .. } | Cell::Delta { minor: n, .. } => {
                Machine::Int(*n)
            }
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
pub fn csv_of(tables: &[Table]) -> String {
    let mut out = Vec::new();
    let _ = write_csv(tables, &mut out);
    // CSV of UTF-8 text is UTF-8; were it not, the bytes are kept, not lost.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `csv_of`, written a row at a time to `out`.
pub fn write_csv(tables: &[Table], out: &mut dyn std::io::Write) -> std::io::Result<()> {
    for (i, t) in tables.iter().enumerate() {
        write_table_csv(i, t, &mut |_, _| Ok(()), out)?;
    }
    Ok(())
}

/// A report's tables as CSV, each with the rows the report streams (`Report::more_rows`).
pub(super) fn write_report_csv<R: Report>(report: &R, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    for (i, t) in report.tables().iter().enumerate() {
        write_table_csv(i, t, &mut |i, each| report.more_rows(i, each), out)?;
    }
    Ok(())
}

/// Rows a table streams: its index, and what to hand each row to.
type More<'a> = dyn FnMut(usize, &mut dyn FnMut(Row) -> std::io::Result<()>) -> std::io::Result<()> + 'a;

/// Table `i` as CSV under its header, after a blank line when it is not the first.
fn write_table_csv(i: usize, t: &Table, more: &mut More<'_>, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    if i > 0 {
        out.write_all(b"\n")?;
    }
    let mut w = csv::Writer::from_writer(&mut *out);
    w.write_record(machine_columns(t))?;
    for r in t.rows.iter().filter(|r| !r.summary) {
        w.write_record(machine_values(t, r).into_iter().map(Machine::csv))?;
    }
    more(i, &mut |r| Ok(w.write_record(machine_values(t, &r).into_iter().map(Machine::csv))?))?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::Escaping;
    use std::io::Write;

    /// A bidi control cut between two writes is still escaped whole, and every other character
    /// passes as it came.
    #[test]
    fn a_character_cut_between_writes_is_escaped_whole() {
        let mut out = Vec::new();
        let mut w = Escaping { out: &mut out, pending: Vec::new() };
        for b in "\"£\u{202e}x\"".as_bytes() {
            w.write_all(std::slice::from_ref(b)).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "\"£\\u202ex\"");
    }
}
