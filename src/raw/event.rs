//! One POS event line, validated against the contract. The same rules serve the landing into
//! DuckDB and the polars recompute, so both engines agree on what an event is.

use super::StoreTable;
use chrono::{DateTime, NaiveDate, Utc};
use std::borrow::Cow;

/// A valid event, with its business date resolved from the store's zone. Its text borrows from
/// the line (and, for the store's fields, from the store table): parsing allocates nothing for
/// an ordinary line, and each caller copies what it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PosEvent<'a> {
    pub event_id: Cow<'a, str>,
    pub basket_id: Cow<'a, str>,
    pub store_id: &'a str,
    pub till_id: Cow<'a, str>,
    pub country: &'a str,
    pub currency: &'a str,
    pub event_ts: DateTime<Utc>,
    pub uploaded_at: DateTime<Utc>,
    pub upload_date: NaiveDate,
    pub business_date: NaiveDate,
    pub revenue_minor: i64,
    pub tenders: u32,
}

/// A line's fields as read, before the contract's checks: by the fast reader (`fast_line`) or the
/// careful one (`slow_line`), which must read the same line alike.
#[derive(Default, Debug, PartialEq)]
pub(super) struct Line<'a> {
    pub(super) event_id: Option<Cow<'a, str>>,
    pub(super) basket_id: Option<Cow<'a, str>>,
    pub(super) store_id: Option<Cow<'a, str>>,
    pub(super) till_id: Option<Cow<'a, str>>,
    pub(super) event_ts: Option<Cow<'a, str>>,
    pub(super) uploaded_at: Option<Cow<'a, str>>,
    pub(super) currency: Option<Cow<'a, str>>,
    pub(super) tenders: Option<Vec<Tender<'a>>>,
}

#[derive(Default, Debug, PartialEq)]
pub(super) struct Tender<'a> {
    #[allow(dead_code)] // informational: checked to be a string when given
    pub(super) method: Option<Cow<'a, str>>,
    pub(super) amount_minor: Option<serde_json::Number>,
}

fn required<'a>(v: Option<Cow<'a, str>>, name: &str) -> Result<Cow<'a, str>, String> {
    match v {
        None => Err(format!("missing required field {name}")),
        Some(s) if s.is_empty() => Err(format!("empty required field {name}")),
        Some(s) => Ok(s),
    }
}

/// An instant as the contract writes it: `YYYY-MM-DD`, `T` (or `t` or a space), `HH:MM:SS`, an
/// optional fraction of any length (kept to the nanosecond), then `Z` (or `z`) or an offset
/// `+HH:MM`/`-HH:MM`; ASCII digits only, nothing after it. Second 60 (a leap second) is refused
/// with its own reason; a year before 1 is not an instant, and one that nanoseconds since 1970
/// cannot hold (outside 1677..2262) is out of range.
pub(super) fn instant(v: &str, name: &str) -> Result<DateTime<Utc>, String> {
    let bad = || format!("{name} '{}' is not an ISO-8601 instant", crate::sanitize::for_terminal(v));
    let b = v.as_bytes();
    let num = |from: usize, to: usize| -> Option<u32> {
        b.get(from..to)?.iter().try_fold(0u32, |n, &c| c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0')))
    };
    let at = |i: usize, ok: &[u8]| b.get(i).is_some_and(|c| ok.contains(c));
    if !(at(4, b"-") && at(7, b"-") && at(10, b"Tt ") && at(13, b":") && at(16, b":")) {
        return Err(bad());
    }
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(s)) =
        (num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19))
    else {
        return Err(bad());
    };
    // The fraction, then the zone, and nothing after.
    let mut i = 19;
    let mut nanos = 0u32;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return Err(bad());
        }
        let kept = &v[start..i.min(start + 9)];
        nanos = kept.parse::<u32>().map_err(|_| bad())? * 10u32.pow(9 - kept.len() as u32);
    }
    let offset_secs: i64 = match &b[i.min(b.len())..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (Some(zh), Some(zm)) = (num(i + 1, i + 3), num(i + 4, i + 6)) else { return Err(bad()) };
            if zh > 23 || zm > 59 {
                return Err(bad());
            }
            let secs = i64::from(zh * 3600 + zm * 60);
            if *sign == b'+' { secs } else { -secs }
        }
        _ => return Err(bad()),
    };
    if s == 60 {
        return Err(format!("{name} '{}' is a leap second (second 60), which recount refuses", crate::sanitize::for_terminal(v)));
    }
    let local = NaiveDate::from_ymd_opt(i32::try_from(y).map_err(|_| bad())?, mo, d)
        .filter(|_| y >= 1)
        .and_then(|date| date.and_hms_nano_opt(h, mi, s, nanos))
        .filter(|_| s < 60)
        .ok_or_else(bad)?;
    let t = local.checked_sub_signed(chrono::Duration::seconds(offset_secs)).ok_or_else(bad)?.and_utc();
    // Stored as nanoseconds since 1970: years outside 1677..2262 cannot be kept exactly.
    if t.timestamp_nanos_opt().is_none() {
        return Err(format!("{name} '{}' is out of range", crate::sanitize::for_terminal(v)));
    }
    Ok(t)
}

/// Validates one line of partition `upload_date`. The error is the quarantine reason.
pub fn parse_line<'a>(line: &'a str, stores: &'a StoreTable, upload_date: NaiveDate) -> Result<PosEvent<'a>, String> {
    if line.len() > super::MAX_LINE_BYTES {
        return Err(format!("line of {} bytes, longer than the {} recount parses", line.len(), super::MAX_LINE_BYTES));
    }
    let raw: Line<'a> = match super::fast_line::parse(line) {
        Some(raw) => raw,
        None => super::slow_line::read(line)?,
    };
    let event_id = required(raw.event_id, "event_id")?;
    let basket_id = required(raw.basket_id, "basket_id")?;
    let store_id = required(raw.store_id, "store_id")?;
    let till_id = required(raw.till_id, "till_id")?;
    let event_ts = required(raw.event_ts, "event_ts")?;
    let uploaded_at = required(raw.uploaded_at, "uploaded_at")?;
    let currency = required(raw.currency, "currency")?;
    let event_ts = instant(&event_ts, "event_ts")?;
    let uploaded_at = instant(&uploaded_at, "uploaded_at")?;
    for (name, value) in
        [("event_id", &event_id), ("basket_id", &basket_id), ("store_id", &store_id), ("till_id", &till_id), ("currency", &currency)]
    {
        if value.len() > super::MAX_ID_BYTES {
            return Err(format!("{name} of {} bytes, longer than the {} recount keeps", value.len(), super::MAX_ID_BYTES));
        }
    }
    let tenders = raw.tenders.as_ref().ok_or("missing required field tenders")?;
    if tenders.is_empty() {
        return Err("tenders is empty: a basket needs at least one payment".into());
    }
    let mut revenue: i64 = 0;
    for (i, t) in tenders.iter().enumerate() {
        let n = i + 1;
        let amount = t.amount_minor.as_ref().ok_or_else(|| format!("tender {n}: missing amount_minor"))?;
        let amount = amount.as_i64().ok_or_else(|| format!("tender {n}: amount_minor is not a 64-bit integer"))?;
        revenue = revenue.checked_add(amount).ok_or_else(|| format!("tender {n}: revenue overflows 64 bits"))?;
    }
    let store = stores.get(&store_id).ok_or_else(|| format!("unknown store_id '{}'", crate::sanitize::for_terminal(&store_id)))?;
    if *currency != store.currency {
        return Err(format!(
            "currency '{}' differs from store {}'s {}",
            crate::sanitize::for_terminal(&currency),
            store.store_id,
            store.currency
        ));
    }
    if uploaded_at.date_naive() != upload_date {
        return Err(format!("uploaded_at {} is not in partition upload_date={upload_date}", uploaded_at.format("%Y-%m-%dT%H:%M:%S%.3fZ")));
    }
    Ok(PosEvent {
        event_id,
        basket_id,
        store_id: &store.store_id,
        till_id,
        country: &store.country,
        currency: &store.currency,
        business_date: crate::tz::business_date(event_ts, store.timezone),
        event_ts,
        uploaded_at,
        upload_date,
        revenue_minor: revenue,
        tenders: tenders.len() as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stores() -> StoreTable {
        StoreTable::parse("store_id,country,timezone,currency\nLON1,GB,Europe/London,GBP\nBLR1,IN,Asia/Kolkata,INR\n").unwrap()
    }
    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }
    const GOOD: &str = r#"{"event_id":"e1","basket_id":"b1","store_id":"LON1","till_id":"t1","event_ts":"2026-10-24T23:30:00.000Z","uploaded_at":"2026-10-24T23:31:00.000Z","currency":"GBP","tenders":[{"method":"card","amount_minor":3000000000},{"method":"cash","amount_minor":5}],"items":[{"sku":"x","qty":1,"unit_price_minor":3000000005}],"extra":true}"#;

    #[test]
    fn a_good_line_sums_split_tenders_past_2_pow_31() {
        let stores = stores();
        let e = parse_line(GOOD, &stores, day("2026-10-24")).unwrap();
        assert_eq!(e.revenue_minor, 3_000_000_005);
        assert_eq!(e.tenders, 2);
        assert_eq!(e.business_date, day("2026-10-25"), "00:30 BST is the 25th");
        assert_eq!(e.country, "GB");
    }

    fn reason(line: &str) -> String {
        parse_line(line, &stores(), day("2026-10-24")).unwrap_err()
    }

    #[test]
    fn each_bad_line_gets_its_reason() {
        assert!(reason("{not json").starts_with("malformed JSON"));
        assert_eq!(reason(&GOOD.replace(r#""basket_id":"b1","#, "")), "missing required field basket_id");
        assert_eq!(reason(&GOOD.replace("LON1", "ZZZ9")), "unknown store_id 'ZZZ9'");
        assert!(reason(&GOOD.replace("3000000000", "12.5")).contains("tender 1: amount_minor is not a 64-bit integer"));
        assert!(reason(&GOOD.replace(r#","amount_minor":5"#, "")).contains("tender 2: missing amount_minor"));
        assert_eq!(reason(&GOOD.replace("3000000000", "\"30\"")), "malformed JSON: tender 1: amount_minor is not a number");
        assert!(reason(&GOOD.replace("2026-10-24T23:31", "2026-10-25T00:01")).contains("not in partition upload_date=2026-10-24"));
        assert!(reason(&GOOD.replace("\"GBP\"", "\"INR\"")).contains("differs from store LON1's GBP"));
        assert!(reason(&GOOD.replace("2026-10-24T23:30:00.000Z", "yesterday")).contains("event_ts 'yesterday'"));
        assert!(reason(&GOOD.replace("3000000000", "9223372036854775807")).contains("overflows"));
    }

    /// The lab's parser gives the contract's verdict on every line of the shared corpus
    /// (`tests/corpus/lines.jsonl`, written by `tests/corpus/cases.py` from the contract), as the
    /// Spark driver's does in `spark/tests/test_corpus.py`.
    #[test]
    fn every_line_of_the_shared_corpus_gets_the_contracts_verdict() {
        let stores = StoreTable::parse(
            "store_id,country,timezone,currency\nLON1,GB,Europe/London,GBP\nBLR1,IN,Asia/Kolkata,INR\nTYO1,JP,Asia/Tokyo,JPY\n",
        )
        .unwrap();
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/lines.jsonl")).unwrap();
        let mut wrong = Vec::new();
        let mut n = 0;
        for case in text.lines() {
            let c: serde_json::Value = serde_json::from_str(case).unwrap();
            let line = c["line"].as_str().unwrap();
            let got = match parse_line(line, &stores, c["upload_date"].as_str().unwrap().parse().unwrap()) {
                Err(reason) => serde_json::json!({ "reason": reason }),
                Ok(e) => serde_json::json!({ "fields": {
                    "event_id": e.event_id, "basket_id": e.basket_id, "store_id": e.store_id, "till_id": e.till_id,
                    "currency": e.currency, "event_ts": e.event_ts.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
                    "uploaded_at_ns": e.uploaded_at.timestamp_nanos_opt(), "revenue_minor": e.revenue_minor, "tenders": e.tenders,
                }}),
            };
            if got != c["expect"] {
                wrong.push(format!("{}: expected {}, got {got}", c["case"], c["expect"]));
            }
            n += 1;
        }
        assert!(n >= 150, "the corpus has {n} cases");
        assert!(wrong.is_empty(), "{} of {n} cases differ:\n{}", wrong.len(), wrong.join("\n"));
    }
}
