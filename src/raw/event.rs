//! One POS event line, validated against the contract. The same rules serve the landing into
//! DuckDB and the polars recompute, so both engines agree on what an event is.

use super::StoreTable;
use chrono::{DateTime, NaiveDate, Utc};
use serde::Deserialize;
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

#[derive(Deserialize, Default, Debug, PartialEq)]
pub(super) struct Line<'a> {
    #[serde(borrow, default)]
    pub(super) event_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) basket_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) store_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) till_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) event_ts: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) uploaded_at: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) currency: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub(super) tenders: Option<Vec<Tender<'a>>>,
}

#[derive(Deserialize, Default, Debug, PartialEq)]
pub(super) struct Tender<'a> {
    #[serde(borrow, default)]
    #[allow(dead_code)] // informational: checked for presence only
    pub(super) method: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(super) amount_minor: Option<serde_json::Number>,
}

fn required<'a>(v: Option<Cow<'a, str>>, name: &str) -> Result<Cow<'a, str>, String> {
    match v {
        None => Err(format!("missing required field {name}")),
        Some(s) if s.is_empty() => Err(format!("empty required field {name}")),
        Some(s) => Ok(s),
    }
}

fn instant(v: &str, name: &str) -> Result<DateTime<Utc>, String> {
    let t = DateTime::parse_from_rfc3339(v)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("{name} '{}' is not an ISO-8601 instant", crate::sanitize::for_terminal(v)))?;
    // Stored as nanoseconds since 1970: years outside 1678..2262 cannot be kept exactly.
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
        None => serde_json::from_str(line).map_err(|e| format!("malformed JSON: {e}"))?,
    };
    let event_id = required(raw.event_id, "event_id")?;
    let basket_id = required(raw.basket_id, "basket_id")?;
    let store_id = required(raw.store_id, "store_id")?;
    let till_id = required(raw.till_id, "till_id")?;
    let event_ts = instant(&required(raw.event_ts, "event_ts")?, "event_ts")?;
    let uploaded_at = instant(&required(raw.uploaded_at, "uploaded_at")?, "uploaded_at")?;
    let currency = required(raw.currency, "currency")?;
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
        let amount = amount.as_i64().ok_or_else(|| format!("tender {n}: amount_minor {amount} is not a 64-bit integer"))?;
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
        assert!(reason(&GOOD.replace("3000000000", "12.5")).contains("tender 1: amount_minor 12.5 is not a 64-bit integer"));
        assert!(reason(&GOOD.replace(r#","amount_minor":5"#, "")).contains("tender 2: missing amount_minor"));
        assert!(reason(&GOOD.replace("3000000000", "\"30\"")).starts_with("malformed JSON"));
        assert!(reason(&GOOD.replace("2026-10-24T23:31", "2026-10-25T00:01")).contains("not in partition upload_date=2026-10-24"));
        assert!(reason(&GOOD.replace("\"GBP\"", "\"INR\"")).contains("differs from store LON1's GBP"));
        assert!(reason(&GOOD.replace("2026-10-24T23:30:00.000Z", "yesterday")).contains("event_ts 'yesterday'"));
        assert!(reason(&GOOD.replace("3000000000", "9223372036854775807")).contains("overflows"));
    }
}
