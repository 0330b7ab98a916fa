//! Where an audit's wrong rows fall, the first question after "how many": by each field of the
//! grain and each dimension attribute (a store, its country; a plant, its line), and by week.
//! Each value with a wrong row is listed with its share of the wrong rows against its share of
//! all rows ("41 of 53 wrong rows are in AU, 3.1x its share"), the most wrong rows first. The
//! retail audit and a model's give their rows to the same function.

use super::audit_spill::{KeyTotals, Sorter, SpillWriter, SpilledRows};
use super::{Cell, Note, Status, Table};
use chrono::{Datelike, NaiveDate};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// An attribute's value for a grain the lab does not have, in where the wrong rows fall.
pub const NOT_IN_LAB: &str = "(not in the lab)";

/// A row's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Matches,
    DuplicatesCounted,
    UtcBusinessDate,
    BeyondWindowIncluded,
    LateArrivalsMissed,
    CorrectionNotApplied,
    AppendedTwice,
    MissingRow,
    ExtraRow,
    /// A row whose figures cannot be read exactly (a float with a fraction): wrong on its own.
    UnreadableValue,
    Unexplained,
}

impl Cause {
    pub fn word(self) -> &'static str {
        match self {
            Cause::Matches => "matches",
            Cause::DuplicatesCounted => "duplicates_counted",
            Cause::UtcBusinessDate => "utc_business_date",
            Cause::BeyondWindowIncluded => "beyond_window_included",
            Cause::LateArrivalsMissed => "late_arrivals_missed",
            Cause::CorrectionNotApplied => "correction_not_applied",
            Cause::AppendedTwice => "appended_twice",
            Cause::MissingRow => "missing_row",
            Cause::ExtraRow => "extra_row",
            Cause::UnreadableValue => "unreadable_value",
            Cause::Unexplained => "unexplained",
        }
    }
}

/// Whether a row with these causes is wrong: any cause but a match.
pub fn is_wrong(causes: &[Cause]) -> bool {
    causes != [Cause::Matches]
}

/// An audit's verdicts as they are made, the retail audit's and a model's: each counted
/// (`Counts`), and held within a share of the budget, spilled past it.
pub struct Verdicts<T> {
    rows: SpillWriter<T>,
    counts: Counts,
}

impl<T: serde::Serialize> Verdicts<T> {
    /// Verdicts that spill to `dir`.
    pub fn new(dir: &Path) -> Verdicts<T> {
        Verdicts { rows: SpillWriter::new(dir, super::audit_spill::share()), counts: Counts::spilling(dir) }
    }

    /// Adds `row`, which takes about `bytes` in memory, after `count` has counted it.
    pub fn push(
        &mut self,
        row: T,
        bytes: usize,
        count: impl FnOnce(&T, &mut Counts) -> std::io::Result<()>,
    ) -> color_eyre::eyre::Result<()> {
        use color_eyre::eyre::WrapErr;
        count(&row, &mut self.counts).wrap_err("spilling the audit's tallies")?;
        self.rows.push(row, bytes).wrap_err("spilling the audit's rows")
    }

    /// Every verdict, and their counts.
    pub fn finish(mut self) -> color_eyre::eyre::Result<(SpilledRows<T>, Counts)> {
        use color_eyre::eyre::WrapErr;
        self.counts.finish().wrap_err("reading the audit's tallies")?;
        Ok((self.rows.finish().wrap_err("spilling the audit's rows")?, self.counts))
    }
}

/// What an audit's headline and notes say, counted as its rows are made, so that its rows need
/// not be read again (a million of them may be on disk): the rows the foreign gold has, those
/// that match and those of the lab's gold it lacks, each cause's rows, the dates with a wrong
/// row, and where the wrong rows fall. The retail audit's and a model's.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    read: usize,
    matched: usize,
    lacked: usize,
    wrong: usize,
    causes: BTreeMap<Cause, usize>,
    /// The dates with a wrong row.
    pub dates: BTreeSet<NaiveDate>,
    pub places: WhereWrong,
}

impl Counts {
    /// Counts whose tallies of where the wrong rows fall spill to `dir` past their share.
    pub fn spilling(dir: &Path) -> Counts {
        Counts { places: WhereWrong::spilling(dir, super::audit_spill::share() / 4), ..Counts::default() }
    }

    /// One row of the audit: its date, its causes, whether the foreign gold has it, and its
    /// fields by name (the grain's and the dimension's).
    pub fn add(&mut self, d: NaiveDate, causes: &[Cause], in_foreign: bool, fields: &[(&str, &str)]) -> std::io::Result<()> {
        let wrong = is_wrong(causes);
        self.read += usize::from(in_foreign);
        self.lacked += usize::from(!in_foreign);
        self.matched += usize::from(!wrong);
        self.wrong += usize::from(wrong);
        for c in causes {
            *self.causes.entry(*c).or_default() += 1;
        }
        if wrong {
            self.dates.insert(d);
        }
        self.places.add(d, fields, wrong)
    }

    /// Every row counted: where the wrong rows fall is found.
    pub fn finish(&mut self) -> std::io::Result<()> {
        self.places.finish()
    }

    /// How many rows are wrong: any cause but a match.
    pub fn wrong(&self) -> usize {
        self.wrong
    }

    /// The headline: how many rows the foreign gold has, how many of them match and how many are
    /// wrong, then the lab's rows it lacks.
    pub fn line(&self, source: &str) -> String {
        let n = |k: usize| crate::money::format_count(i64::try_from(k).unwrap_or(i64::MAX));
        let (read, matched) = (self.read, self.matched.min(self.read));
        let mut line = format!("audit of {source}: {} of its {} rows match, {} wrong", n(matched), n(read), n(read - matched));
        if self.lacked > 0 {
            line.push_str(&format!("; it lacks {} row(s) of the lab's gold", n(self.lacked)));
        }
        line
    }

    /// How many rows each cause names, failing when any row is wrong; then where most wrong rows
    /// are, when one place holds more than its share.
    pub fn notes(&self) -> Vec<Note> {
        let list: Vec<String> = self.causes.iter().map(|(c, n)| format!("{} {n}", c.word())).collect();
        let status = if self.wrong == 0 { Status::Pass } else { Status::Fail };
        let mut notes = vec![Note { status, text: list.join(", ") }];
        notes.extend(self.places.note());
        notes
    }
}

/// The values listed per field, the most wrong rows first.
const PER_FIELD: usize = 5;

/// Counts of one value of one field: wrong rows, and rows.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
struct Tally {
    wrong: usize,
    rows: usize,
}

impl std::ops::AddAssign for Tally {
    fn add_assign(&mut self, other: Tally) {
        self.wrong += other.wrong;
        self.rows += other.rows;
    }
}

/// How many times its share of all rows (`rows`) a value's share of the wrong rows (`wrong`) is,
/// in tenths, by integer arithmetic.
fn times_share(wrong: usize, rows: usize, t: Tally) -> u128 {
    let (w, r) = (wrong as u128, t.rows as u128);
    if w == 0 || r == 0 { 0 } else { (t.wrong as u128 * rows as u128 * 10 + w * r / 2) / (w * r) }
}

fn share_text(wrong: usize, rows: usize, t: Tally) -> String {
    let x = times_share(wrong, rows, t);
    format!("{}.{}x its share", x / 10, x % 10)
}

/// A value's line of `--by`: its wrong rows, its rows, and its concentration when it has one.
fn value_cells(wrong: usize, rows: usize, value: &str, t: Tally) -> Vec<Cell> {
    let count = |n: usize| Cell::Int(i64::try_from(n).unwrap_or(i64::MAX));
    let share = if t.wrong == 0 { Cell::Empty } else { Cell::text(share_text(wrong, rows, t)) };
    vec![Cell::text(value), count(t.wrong), count(t.rows), share]
}

/// What the wrong rows of an audit concentrate on. `rows` gives each row's date, its fields by
/// name (the grain's and the dimension's) and its causes. A field of many values (a million
/// stores) keeps its tallies within a share of the budget, in sorted runs past it.
#[derive(Debug, Clone, Default)]
pub struct WhereWrong {
    /// (field, value) → tally; fields in the order they were first given, then `week`.
    tallies: Vec<(String, KeyTotals<Tally>)>,
    wrong: usize,
    rows: usize,
    /// Where a field's tallies spill (none: they are held), past how many bytes.
    spill: Option<std::path::PathBuf>,
    limit: u64,
    /// Each field's values with a wrong row, the most first, ties by value: found by `finish`.
    top: Vec<(String, String, Tally)>,
}

impl WhereWrong {
    #[cfg(test)]
    pub fn of<'a>(rows: impl Iterator<Item = (NaiveDate, Vec<(&'a str, &'a str)>, bool)>) -> std::io::Result<WhereWrong> {
        let mut out = WhereWrong::default();
        for (d, fields, wrong) in rows {
            out.add(d, &fields, wrong)?;
        }
        out.finish()?;
        Ok(out)
    }

    fn spilling(dir: &Path, limit: u64) -> WhereWrong {
        WhereWrong { spill: Some(dir.to_path_buf()), limit, ..WhereWrong::default() }
    }

    /// One more row: its date, its fields by name, and whether it is wrong.
    pub fn add(&mut self, d: NaiveDate, fields: &[(&str, &str)], wrong: bool) -> std::io::Result<()> {
        self.rows += 1;
        self.wrong += usize::from(wrong);
        let monday = d - chrono::Duration::days(i64::from(d.weekday().num_days_from_monday()));
        let week = format!("week of {monday}");
        for &(field, value) in fields.iter().chain([&("week", week.as_str())]) {
            let i = match self.tallies.iter().position(|(f, _)| f == field) {
                Some(i) => i,
                None => {
                    let totals = KeyTotals::new(self.spill.as_deref(), self.limit);
                    self.tallies.push((field.to_string(), totals));
                    self.tallies.len() - 1
                }
            };
            self.tallies[i].1.add(value, Tally { wrong: usize::from(wrong), rows: 1 })?;
        }
        Ok(())
    }

    /// Finds each field's values with the most wrong rows, PER_FIELD of them, as the values pass:
    /// a million values are never sorted, nor held.
    pub fn finish(&mut self) -> std::io::Result<()> {
        let mut out = Vec::new();
        for (field, values) in &self.tallies {
            let mut top: Vec<(String, Tally)> = Vec::with_capacity(PER_FIELD + 1);
            values.each(|k, t| {
                if t.wrong == 0 {
                    return;
                }
                let at = top.partition_point(|(tk, tt)| (std::cmp::Reverse(tt.wrong), tk.as_str()) < (std::cmp::Reverse(t.wrong), k));
                if at < PER_FIELD {
                    top.insert(at, (k.to_string(), t));
                    top.truncate(PER_FIELD);
                }
            })?;
            out.extend(top.into_iter().map(|(k, t)| (field.clone(), k, t)));
        }
        self.top = out;
        Ok(())
    }

    /// Each field's values with a wrong row, the most first: (field, value, tally), ties by value.
    fn listed(&self) -> Vec<(&str, &str, Tally)> {
        self.top.iter().map(|(f, v, t)| (f.as_str(), v.as_str(), *t)).collect()
    }

    fn times_share(&self, t: Tally) -> u128 {
        times_share(self.wrong, self.rows, t)
    }

    fn share_text(&self, t: Tally) -> String {
        share_text(self.wrong, self.rows, t)
    }

    /// The table: a value per line with its wrong rows, its rows and how concentrated it is;
    /// None when no row is wrong.
    pub fn table(&self) -> Option<Table> {
        if self.wrong == 0 {
            return None;
        }
        let mut t = Table::new(
            "where the wrong rows fall",
            &[("field", "by"), ("value", "value"), ("wrong_rows", "wrong rows"), ("rows", "rows"), ("concentration", "against its share")],
        );
        for (field, value, tally) in self.listed() {
            let rows = i64::try_from(tally.rows).unwrap_or(i64::MAX);
            let wrong = i64::try_from(tally.wrong).unwrap_or(i64::MAX);
            t.push(vec![Cell::text(field), Cell::text(value), Cell::Int(wrong), Cell::Int(rows), Cell::text(self.share_text(tally))]);
        }
        Some(t)
    }

    /// Every value of one field (`--by FIELD`), the most wrong rows first: its wrong rows, its rows
    /// and how concentrated they are, sorted within the budget. An error names the fields there are.
    pub fn by(&self, headline: &str, field: &str) -> color_eyre::eyre::Result<ByField> {
        use color_eyre::eyre::WrapErr;
        let Some((_, values)) = self.tallies.iter().find(|(f, _)| f == field) else {
            let fields: Vec<&str> = self.tallies.iter().map(|(f, _)| f.as_str()).collect();
            color_eyre::eyre::bail!(
                "--by {}: the audit's rows have no such field; they are by {}",
                crate::sanitize::for_terminal(field),
                if fields.is_empty() { "nothing (the audit has no row)".to_string() } else { fields.join(", ") }
            );
        };
        let dir = self.spill.clone().unwrap_or_else(std::env::temp_dir);
        let mut sorter = Sorter::new(&dir, super::audit_spill::share());
        let mut pushed = Ok(());
        values.each(|k, t| {
            if pushed.is_ok() {
                pushed = sorter.push((std::cmp::Reverse(t.wrong), k.to_string(), t.rows), k.len() + 64);
            }
        })?;
        pushed.wrap_err("sorting the audit's values")?;
        let mut table = Table::new(
            format!("the audit's rows by {field}"),
            &[("value", field), ("wrong_rows", "wrong rows"), ("rows", "rows"), ("concentration", "against its share")],
        );
        let (mut more, mut values) = (SpillWriter::new(&dir, super::audit_spill::share()), 0);
        for row in sorter.finish() {
            let (std::cmp::Reverse(wrong), value, rows) = row.wrap_err("sorting the audit's values")?;
            values += 1;
            if table.rows.len() < super::audit_spill::HELD_ROWS {
                table.push(value_cells(self.wrong, self.rows, &value, Tally { wrong, rows }));
            } else {
                more.push((value, wrong, rows), 64).wrap_err("sorting the audit's values")?;
            }
        }
        let more = more.finish().wrap_err("sorting the audit's values")?;
        Ok(ByField { source: headline.to_string(), field: field.to_string(), wrong: self.wrong, rows: self.rows, values, table, more })
    }

    /// The sentence that says where most wrong rows are: the value of a field other than the
    /// finest (the first) that holds the most of them, when it holds more than its share.
    pub fn note(&self) -> Option<Note> {
        let finest = self.tallies.first().map(|(f, _)| f.as_str());
        let mut best: Option<(&str, &str, Tally)> = None;
        // The most wrong rows, then the most concentrated; on a tie the field given first (a
        // dimension before the week).
        for (f, v, t) in self.listed().into_iter().filter(|(f, _, t)| Some(*f) != finest && self.times_share(*t) > 10) {
            let key = (t.wrong, self.times_share(t));
            if best.is_none_or(|(_, _, b)| key > (b.wrong, self.times_share(b))) {
                best = Some((f, v, t));
            }
        }
        let (field, value, t) = best?;
        let field = if field == "week" { String::new() } else { format!("{field} ") };
        Some(Note {
            status: Status::Warn,
            text: format!("{} of {} wrong rows are in {field}{value} ({})", t.wrong, self.wrong, self.share_text(t)),
        })
    }
}

/// An audit's rows by one field: `recount audit --by FIELD`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ByField {
    /// The audit's own headline: what was audited and how many rows are wrong.
    pub source: String,
    pub field: String,
    pub wrong: usize,
    pub rows: usize,
    /// How many values the field has.
    pub values: usize,
    /// The first values; the rest are in `more`.
    #[serde(skip)]
    pub table: Table,
    #[serde(skip)]
    more: SpilledRows<(String, usize, usize)>,
}

impl super::Report for ByField {
    fn kind(&self) -> &'static str {
        "audit-by"
    }
    fn headline(&self) -> String {
        format!("{}; its rows by {}", self.source, self.field)
    }
    fn tables(&self) -> Vec<Table> {
        vec![self.table.clone()]
    }
    fn more_rows(&self, table: usize, each: &mut dyn FnMut(super::Row) -> std::io::Result<()>) -> std::io::Result<()> {
        if table > 0 {
            return Ok(());
        }
        for r in self.more.iter() {
            let (value, wrong, rows) = r?;
            let cells = value_cells(self.wrong, self.rows, &value, Tally { wrong, rows });
            each(super::Row { cells, flag: None, drill: None, summary: false })?;
        }
        Ok(())
    }
    fn notes(&self) -> Vec<Note> {
        super::audit_spill::held_note(self.values).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrong_rows_are_placed_by_field_and_week_with_their_concentration() {
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        let (ok, bad) = (false, true);
        // Ten rows, four in AU, of which three are wrong; one wrong row in GB.
        let rows: Vec<(NaiveDate, &str, &str, bool)> = vec![
            (d("2026-10-05"), "AU1", "AU", bad),
            (d("2026-10-06"), "AU1", "AU", bad),
            (d("2026-10-06"), "AU2", "AU", bad),
            (d("2026-10-07"), "AU2", "AU", ok),
            (d("2026-10-12"), "GB1", "GB", bad),
            (d("2026-10-12"), "GB2", "GB", ok),
            (d("2026-10-13"), "GB3", "GB", ok),
            (d("2026-10-13"), "GB4", "GB", ok),
            (d("2026-10-14"), "GB5", "GB", ok),
            (d("2026-10-14"), "GB6", "GB", ok),
        ];
        let w = WhereWrong::of(rows.iter().map(|(d, s, c, wrong)| (*d, vec![("store_id", *s), ("country", *c)], *wrong))).unwrap();
        let t = w.table().unwrap();
        let lines: Vec<Vec<String>> = t.rows.iter().map(|r| r.cells.iter().map(Cell::raw).collect()).collect();
        // AU: 3 of 4 wrong rows from 4 of 10 rows is (3/4)/(4/10) = 1.875, shown 1.9x.
        assert!(lines.contains(&vec!["country".into(), "AU".into(), "3".into(), "4".into(), "1.9x its share".into()]), "{lines:?}");
        assert!(
            lines.contains(&vec!["week".into(), "week of 2026-10-05".into(), "3".into(), "4".into(), "1.9x its share".into()]),
            "{lines:?}"
        );
        assert_eq!(lines.iter().filter(|l| l[0] == "store_id").count(), 3, "only the stores with a wrong row: {lines:?}");
        let note = w.note().unwrap().text;
        assert_eq!(note, "3 of 4 wrong rows are in country AU (1.9x its share)");
        // --by: every value of the field, the wrong ones first; an unknown field names the fields.
        let by = w.by("theirs.csv", "country").unwrap();
        let values: Vec<Vec<String>> = by.table.rows.iter().map(|r| r.cells.iter().map(Cell::raw).collect()).collect();
        assert_eq!(values[0], ["AU", "3", "4", "1.9x its share"]);
        assert_eq!(values[1][..3], ["GB", "1", "6"]);
        assert_eq!((by.wrong, by.rows, values.len()), (4, 10, 2));
        let err = w.by("theirs.csv", "plant").unwrap_err().to_string();
        assert_eq!(err, "--by plant: the audit's rows have no such field; they are by store_id, country, week");
        // No wrong row: no table, no note.
        let right = WhereWrong::of(rows.iter().map(|(d, s, _, _)| (*d, vec![("store_id", *s)], ok))).unwrap();
        assert!(right.table().is_none() && right.note().is_none());
    }

    /// Tallies of more values than their share holds spill, and place the wrong rows as held
    /// tallies do: the same table, note and `--by` listing.
    #[test]
    fn spilled_tallies_place_the_wrong_rows_as_held_ones_do() {
        let dir = tempfile::tempdir().unwrap();
        let d = NaiveDate::from_ymd_opt(2026, 10, 5).unwrap();
        let (mut held, mut spilled) = (WhereWrong::default(), WhereWrong::spilling(dir.path(), 64 << 10));
        for i in 0..40_000u32 {
            let (store, country) = (format!("S{:05}", (i * 7919) % 20_000), ["AU", "GB", "IN"][(i % 3) as usize]);
            let wrong = i % 7 == 0 || store.ends_with('3');
            for w in [&mut held, &mut spilled] {
                w.add(d + chrono::Duration::days(i64::from(i % 9)), &[("store_id", &store), ("country", country)], wrong).unwrap();
            }
        }
        held.finish().unwrap();
        spilled.finish().unwrap();
        assert!(spilled.tallies[0].1.spills(), "the stores' tallies spilled");
        let cells =
            |t: Option<Table>| t.unwrap().rows.iter().map(|r| r.cells.iter().map(Cell::raw).collect::<Vec<_>>()).collect::<Vec<_>>();
        assert_eq!(cells(spilled.table()), cells(held.table()));
        assert_eq!(spilled.note().map(|n| n.text), held.note().map(|n| n.text));
        let by = |w: &WhereWrong| cells(Some(w.by("x", "store_id").unwrap().table));
        assert_eq!(by(&spilled), by(&held));
        assert_eq!(by(&held).len(), 10_000, "the first values held, the rest streamed");
    }
}
