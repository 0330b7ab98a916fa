//! Where an audit's wrong rows fall, the first question after "how many": by each field of the
//! grain and each dimension attribute (a store, its country; a plant, its line), and by week.
//! Each value with a wrong row is listed with its share of the wrong rows against its share of
//! all rows ("41 of 53 wrong rows are in AU, 3.1x its share"), the most wrong rows first. The
//! retail audit and a model's give their rows to the same function.

use super::{Cell, Note, Status, Table};
use chrono::{Datelike, NaiveDate};
use std::collections::{BTreeMap, BTreeSet};

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
    /// One row of the audit: its date, its causes, whether the foreign gold has it, and its
    /// fields by name (the grain's and the dimension's).
    pub fn add(&mut self, d: NaiveDate, causes: &[Cause], in_foreign: bool, fields: &[(&str, &str)]) {
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
        self.places.add(d, fields, wrong);
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
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    wrong: usize,
    rows: usize,
}

/// What the wrong rows of an audit concentrate on. `rows` gives each row's date, its fields by
/// name (the grain's and the dimension's) and its causes.
#[derive(Debug, Clone, Default)]
pub struct WhereWrong {
    /// (field, value) → tally; fields in the order they were first given, then `week`.
    tallies: Vec<(String, BTreeMap<String, Tally>)>,
    wrong: usize,
    rows: usize,
}

impl WhereWrong {
    pub fn of<'a>(rows: impl Iterator<Item = (NaiveDate, Vec<(&'a str, &'a str)>, bool)>) -> WhereWrong {
        let mut out = WhereWrong::default();
        for (d, fields, wrong) in rows {
            out.add(d, &fields, wrong);
        }
        out
    }

    /// One more row: its date, its fields by name, and whether it is wrong.
    pub fn add(&mut self, d: NaiveDate, fields: &[(&str, &str)], wrong: bool) {
        self.rows += 1;
        self.wrong += usize::from(wrong);
        let monday = d - chrono::Duration::days(i64::from(d.weekday().num_days_from_monday()));
        let week = format!("week of {monday}");
        for &(field, value) in fields.iter().chain([&("week", week.as_str())]) {
            let i = match self.tallies.iter().position(|(f, _)| f == field) {
                Some(i) => i,
                None => {
                    self.tallies.push((field.to_string(), BTreeMap::new()));
                    self.tallies.len() - 1
                }
            };
            let values = &mut self.tallies[i].1;
            let t = match values.get_mut(value) {
                Some(t) => t,
                None => values.entry(value.to_string()).or_default(),
            };
            t.rows += 1;
            t.wrong += usize::from(wrong);
        }
    }

    /// Each field's values with a wrong row, the most first: (field, value, tally), ties by value.
    fn listed(&self) -> Vec<(&str, &str, Tally)> {
        let mut out = Vec::new();
        for (field, values) in &self.tallies {
            // The first PER_FIELD in the order, kept as the values pass: a million values are
            // never sorted, nor listed.
            let mut top: Vec<(&str, Tally)> = Vec::with_capacity(PER_FIELD + 1);
            for (k, t) in values.iter().filter(|(_, t)| t.wrong > 0) {
                let at = top.partition_point(|(tk, tt)| (std::cmp::Reverse(tt.wrong), *tk) < (std::cmp::Reverse(t.wrong), k.as_str()));
                if at < PER_FIELD {
                    top.insert(at, (k.as_str(), *t));
                    top.truncate(PER_FIELD);
                }
            }
            out.extend(top.into_iter().map(|(k, t)| (field.as_str(), k, t)));
        }
        out
    }

    /// How many times its share of all rows a value's share of the wrong rows is, in tenths,
    /// by integer arithmetic.
    fn times_share(&self, t: Tally) -> u128 {
        let (w, r) = (self.wrong as u128, t.rows as u128);
        if w == 0 || r == 0 { 0 } else { (t.wrong as u128 * self.rows as u128 * 10 + w * r / 2) / (w * r) }
    }

    fn share_text(&self, t: Tally) -> String {
        let x = self.times_share(t);
        format!("{}.{}x its share", x / 10, x % 10)
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
    /// and how concentrated they are. An error names the fields there are.
    pub fn by(&self, headline: &str, field: &str) -> color_eyre::eyre::Result<ByField> {
        let Some((_, values)) = self.tallies.iter().find(|(f, _)| f == field) else {
            let fields: Vec<&str> = self.tallies.iter().map(|(f, _)| f.as_str()).collect();
            color_eyre::eyre::bail!(
                "--by {}: the audit's rows have no such field; they are by {}",
                crate::sanitize::for_terminal(field),
                if fields.is_empty() { "nothing (the audit has no row)".to_string() } else { fields.join(", ") }
            );
        };
        let mut v: Vec<(&String, &Tally)> = values.iter().collect();
        v.sort_by(|a, b| b.1.wrong.cmp(&a.1.wrong).then(a.0.cmp(b.0)));
        let mut t = Table::new(
            format!("the audit's rows by {field}"),
            &[("value", field), ("wrong_rows", "wrong rows"), ("rows", "rows"), ("concentration", "against its share")],
        );
        for (value, tally) in v {
            let count = |n: usize| Cell::Int(i64::try_from(n).unwrap_or(i64::MAX));
            let share = if tally.wrong == 0 { Cell::Empty } else { Cell::text(self.share_text(*tally)) };
            t.push(vec![Cell::text(value), count(tally.wrong), count(tally.rows), share]);
        }
        Ok(ByField { source: headline.to_string(), field: field.to_string(), wrong: self.wrong, rows: self.rows, table: t })
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
    #[serde(skip)]
    pub table: Table,
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
        let w = WhereWrong::of(rows.iter().map(|(d, s, c, wrong)| (*d, vec![("store_id", *s), ("country", *c)], *wrong)));
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
        let right = WhereWrong::of(rows.iter().map(|(d, s, _, _)| (*d, vec![("store_id", *s)], ok)));
        assert!(right.table().is_none() && right.note().is_none());
    }
}
