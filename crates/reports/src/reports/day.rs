//! A date as a person types it, read strictly: `YYYY-MM-DD`, or for a business date `MM-DD`
//! within the lab's years. The command line and the explorer's `:` read dates through here, so
//! both take the same forms and say the same things about the rest.

use chrono::{Datelike, NaiveDate};

/// The forms, for every message that refuses a date.
pub const FORMS: &str = "YYYY-MM-DD (2026-10-28), MM-DD (10-28) for a business date of the lab, or yesterday";

/// A business date as typed: whole, or a month and day whose year the lab's dates decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Day {
    Date(NaiveDate),
    MonthDay {
        month: u32,
        day: u32,
    },
    /// `yesterday`, as the explorer opens on it: the business date of the newest landed upload
    /// (the day its sales are of), else the lab's newest date.
    Yesterday,
}

/// Exactly `YYYY-MM-DD`: four-digit year, two-digit month and day, a real date.
pub fn parse_date(s: &str) -> Result<NaiveDate, String> {
    let t = s.trim();
    let b = t.as_bytes();
    let shaped = b.len() == 10 && b[4] == b'-' && b[7] == b'-' && b.iter().enumerate().all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shaped {
        return Err(format!("'{}' is not a date: expected YYYY-MM-DD (2026-10-28)", crate::sanitize::for_terminal(s)));
    }
    t.parse::<NaiveDate>().map_err(|_| format!("'{t}' is not a date of the calendar: expected YYYY-MM-DD (2026-10-28)"))
}

impl Day {
    /// `YYYY-MM-DD` or `MM-DD`; anything else is refused, naming both forms.
    pub fn parse(s: &str) -> Result<Day, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("yesterday") {
            return Ok(Day::Yesterday);
        }
        let b = t.as_bytes();
        if b.len() == 5 && b[2] == b'-' && b.iter().enumerate().all(|(i, c)| i == 2 || c.is_ascii_digit()) {
            let (month, day) = (u32::from(b[0] - b'0') * 10 + u32::from(b[1] - b'0'), u32::from(b[3] - b'0') * 10 + u32::from(b[4] - b'0'));
            // Some year holds it (February 29 included).
            if NaiveDate::from_ymd_opt(2028, month, day).is_none() {
                return Err(format!("'{t}' is not a day of the calendar: expected {FORMS}"));
            }
            return Ok(Day::MonthDay { month, day });
        }
        parse_date(t).map(Day::Date).map_err(|_| format!("'{}' is not a date: expected {FORMS}", crate::sanitize::for_terminal(s)))
    }

    /// The business date among the lab's `dates` (sorted): a whole date inside their range, or
    /// the one date of that month and day. A date outside the lab says so, with the lab's range.
    pub fn resolve_in(self, dates: &[NaiveDate], newest_upload: Option<NaiveDate>) -> Result<NaiveDate, String> {
        let (Some(first), Some(last)) = (dates.first(), dates.last()) else {
            return Err("the lab holds no business dates yet: land an upload first (`recount land`)".into());
        };
        match self {
            Day::Yesterday => Ok(newest_upload.filter(|u| dates.binary_search(u).is_ok()).unwrap_or(*last)),
            Day::Date(d) if d < *first || d > *last => {
                Err(format!("{d} is outside the lab: its business dates run from {first} to {last}"))
            }
            Day::Date(d) => Ok(d),
            Day::MonthDay { month, day } => {
                let found: Vec<NaiveDate> = dates.iter().copied().filter(|d| d.month() == month && d.day() == day).collect();
                match found.as_slice() {
                    [one] => Ok(*one),
                    [] => Err(format!("no business date {month:02}-{day:02} in the lab: its dates run from {first} to {last}")),
                    many => Err(format!(
                        "{month:02}-{day:02} is in more than one year of the lab ({}): give the year, YYYY-MM-DD",
                        many.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")
                    )),
                }
            }
        }
    }
}

impl std::str::FromStr for Day {
    type Err = String;
    fn from_str(s: &str) -> Result<Day, String> {
        Day::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn only_the_two_forms_are_taken_and_a_refusal_names_both() {
        assert_eq!(Day::parse("2026-10-28"), Ok(Day::Date(d("2026-10-28"))));
        assert_eq!(Day::parse("10-28"), Ok(Day::MonthDay { month: 10, day: 28 }));
        for bad in ["26-10-28", "2026-10-8", "yester", "2026/10/28", "+2026-10-28", "20261028", "1-28", ""] {
            let e = Day::parse(bad).unwrap_err();
            assert!(e.contains("YYYY-MM-DD") && e.contains("MM-DD"), "{bad}: {e}");
        }
        assert!(Day::parse("2026-02-30").unwrap_err().contains("YYYY-MM-DD"));
        assert!(Day::parse("02-30").unwrap_err().contains("not a day of the calendar"));
        assert!(parse_date("10-28").unwrap_err().contains("YYYY-MM-DD"), "an upload date is whole");
        assert!(parse_date("2026-02-30").unwrap_err().contains("not a date of the calendar"));
    }

    #[test]
    fn a_date_resolves_inside_the_lab_and_says_so_outside() {
        let dates = [d("2026-10-11"), d("2026-10-28"), d("2026-10-31")];
        assert_eq!(Day::parse("10-28").unwrap().resolve_in(&dates, None), Ok(d("2026-10-28")));
        assert_eq!(Day::parse("2026-10-20").unwrap().resolve_in(&dates, None), Ok(d("2026-10-20")), "a gap inside the range is a date");
        let out = Day::parse("2027-01-01").unwrap().resolve_in(&dates, None).unwrap_err();
        assert!(out.contains("outside the lab") && out.contains("2026-10-11 to 2026-10-31"), "{out}");
        assert!(Day::parse("12-25").unwrap().resolve_in(&dates, None).unwrap_err().contains("no business date 12-25"));
        let two = [d("2025-10-28"), d("2026-10-28")];
        assert!(Day::parse("10-28").unwrap().resolve_in(&two, None).unwrap_err().contains("more than one year"));
        assert!(Day::parse("10-28").unwrap().resolve_in(&[], None).unwrap_err().contains("no business dates"));
        // yesterday: the newest upload's own date when the lab has it, else the newest date.
        assert_eq!(Day::parse("Yesterday").unwrap().resolve_in(&dates, Some(d("2026-10-28"))), Ok(d("2026-10-28")));
        assert_eq!(Day::parse("yesterday").unwrap().resolve_in(&dates, Some(d("2026-11-02"))), Ok(d("2026-10-31")));
    }
}
