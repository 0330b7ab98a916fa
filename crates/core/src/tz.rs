//! Business dates come from chrono-tz: the bundled DuckDB has no ICU, so it knows no named zones.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;

/// The calendar date of `instant` in the store's zone, daylight-saving aware.
#[inline]
pub fn business_date(instant: DateTime<Utc>, zone: Tz) -> NaiveDate {
    instant.with_timezone(&zone).date_naive()
}

pub fn parse_zone(name: &str) -> Result<Tz, String> {
    name.parse::<Tz>().map_err(|_| format!("unknown time zone '{name}' (expected an IANA name such as Europe/London)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }
    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn london_leaves_summer_time_on_2026_10_25() {
        let london = parse_zone("Europe/London").unwrap();
        // 23:30 UTC on the 24th is 00:30 BST on the 25th.
        assert_eq!(business_date(utc("2026-10-24T23:30:00Z"), london), d("2026-10-25"));
        // A week later London is on GMT: 23:30 UTC stays on the same date.
        assert_eq!(business_date(utc("2026-10-31T23:30:00Z"), london), d("2026-10-31"));
        // On the 25th itself, 01:30 local happens twice; both are the 25th.
        assert_eq!(business_date(utc("2026-10-25T00:30:00Z"), london), d("2026-10-25"));
        assert_eq!(business_date(utc("2026-10-25T01:30:00Z"), london), d("2026-10-25"));
        // 23:59:59 UTC on the 25th is 23:59:59 GMT: still the 25th.
        assert_eq!(business_date(utc("2026-10-25T23:59:59Z"), london), d("2026-10-25"));
    }

    #[test]
    fn kolkata_half_hour_offset() {
        let kolkata = parse_zone("Asia/Kolkata").unwrap();
        assert_eq!(business_date(utc("2026-08-15T18:29:59Z"), kolkata), d("2026-08-15"));
        assert_eq!(business_date(utc("2026-08-15T18:30:00Z"), kolkata), d("2026-08-16"));
    }

    #[test]
    fn singapore_morning_is_the_previous_utc_day() {
        let sg = parse_zone("Asia/Singapore").unwrap();
        let t = Utc.with_ymd_and_hms(2026, 8, 14, 23, 15, 0).unwrap();
        assert_eq!(business_date(t, sg), d("2026-08-15"));
    }

    #[test]
    fn unknown_zone_is_a_clear_error() {
        let e = parse_zone("Mars/Olympus").unwrap_err();
        assert!(e.contains("Mars/Olympus"), "{e}");
    }
}
