//! One POS event line, validated against the contract. The same rules serve the landing into
//! DuckDB and the polars recompute, so both engines agree on what an event is.

use super::StoreTable;
pub(super) use super::line::{Line, Tender};
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
pub fn instant(v: &str, name: &str) -> Result<DateTime<Utc>, String> {
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
    let fields = Fields {
        event_id: raw.event_id,
        basket_id: raw.basket_id,
        store_id: raw.store_id,
        till_id: raw.till_id,
        event_ts: raw.event_ts.map(Stamp::Iso),
        uploaded_at: raw.uploaded_at.map(Stamp::Iso),
        currency: raw.currency,
        amount: raw.tenders.map(Amount::Tenders),
    };
    validate(fields, &Labels::CONTRACT, stores, upload_date)
}

/// A time stamp as a line gives it: ISO-8601 text, or a count since 1970 in a unit a source
/// description names (`source::EpochUnit`).
pub(super) enum Stamp<'a> {
    Iso(Cow<'a, str>),
    Epoch(Cow<'a, str>, super::source::EpochUnit),
}

/// A basket's amount as a line gives it: the contract's tenders, each in minor units, or one
/// total (a source description's), exact decimal text in minor or major units.
pub(super) enum Amount<'a> {
    Tenders(Vec<Tender<'a>>),
    /// Each tender's amount (one for a total), as exact decimal text.
    Totals(Vec<Cow<'a, str>>, super::source::Unit),
}

/// A line's contract fields, from whatever shape it came in, before the contract's checks.
pub(super) struct Fields<'a> {
    pub(super) event_id: Option<Cow<'a, str>>,
    pub(super) basket_id: Option<Cow<'a, str>>,
    pub(super) store_id: Option<Cow<'a, str>>,
    pub(super) till_id: Option<Cow<'a, str>>,
    pub(super) event_ts: Option<Stamp<'a>>,
    pub(super) uploaded_at: Option<Stamp<'a>>,
    pub(super) currency: Option<Cow<'a, str>>,
    pub(super) amount: Option<Amount<'a>>,
}

/// How a reason names each field: the contract's name, and for a mapped source the path it was
/// read from ("basket_id (transaction.id)"). `till_id` None: the source has no till, so none is
/// required (the contract's field is informational).
pub(super) struct Labels {
    pub(super) event_id: Cow<'static, str>,
    pub(super) basket_id: Cow<'static, str>,
    pub(super) store_id: Cow<'static, str>,
    pub(super) till_id: Option<Cow<'static, str>>,
    pub(super) event_ts: Cow<'static, str>,
    pub(super) uploaded_at: Cow<'static, str>,
    pub(super) currency: Cow<'static, str>,
    pub(super) amount: Cow<'static, str>,
}

impl Labels {
    pub(super) const CONTRACT: Labels = Labels {
        event_id: Cow::Borrowed("event_id"),
        basket_id: Cow::Borrowed("basket_id"),
        store_id: Cow::Borrowed("store_id"),
        till_id: Some(Cow::Borrowed("till_id")),
        event_ts: Cow::Borrowed("event_ts"),
        uploaded_at: Cow::Borrowed("uploaded_at"),
        currency: Cow::Borrowed("currency"),
        amount: Cow::Borrowed("tenders"),
    };
}

/// The contract's checks on a line's fields, in the contract's order (docs/data-contract.md):
/// every shape goes through them, so every shape keeps the same rules and the same reasons.
pub(super) fn validate<'a>(f: Fields<'a>, l: &Labels, stores: &'a StoreTable, upload_date: NaiveDate) -> Result<PosEvent<'a>, String> {
    let event_id = required(f.event_id, &l.event_id)?;
    let basket_id = required(f.basket_id, &l.basket_id)?;
    let store_id = required(f.store_id, &l.store_id)?;
    let till_id = match &l.till_id {
        Some(name) => required(f.till_id, name)?,
        None => Cow::Borrowed(""),
    };
    let event_ts = required_stamp(f.event_ts, &l.event_ts)?;
    let uploaded_at = required_stamp(f.uploaded_at, &l.uploaded_at)?;
    let currency = required(f.currency, &l.currency)?;
    let event_ts = stamp(event_ts, &l.event_ts)?;
    let uploaded_at = stamp(uploaded_at, &l.uploaded_at)?;
    let till = l.till_id.as_ref().map(|n| (n, &till_id));
    for (name, value) in [
        Some((&l.event_id, &event_id)),
        Some((&l.basket_id, &basket_id)),
        Some((&l.store_id, &store_id)),
        till,
        Some((&l.currency, &currency)),
    ]
    .into_iter()
    .flatten()
    {
        if value.len() > super::MAX_ID_BYTES {
            return Err(format!("{name} of {} bytes, longer than the {} recount keeps", value.len(), super::MAX_ID_BYTES));
        }
    }
    let amount = f.amount.ok_or_else(|| format!("missing required field {}", l.amount))?;
    let (revenue, tenders, total) = match amount {
        Amount::Tenders(tenders) => (tenders_revenue(&tenders)?, tenders.len() as u32, None),
        Amount::Totals(texts, unit) => (0, texts.len() as u32, Some((texts, unit))),
    };
    let store = stores.get(&store_id).ok_or_else(|| format!("unknown store_id '{}'", crate::sanitize::for_terminal(&store_id)))?;
    if *currency != store.currency {
        return Err(format!(
            "currency '{}' differs from store {}'s {}",
            crate::sanitize::for_terminal(&currency),
            store.store_id,
            store.currency
        ));
    }
    // A total is read once the currency is known: its digits turn major units into minor ones.
    let revenue = match total {
        None => revenue,
        Some((texts, unit)) => totals_revenue(&texts, unit, &store.currency).map_err(|e| format!("{}: {e}", l.amount))?,
    };
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
        tenders,
    })
}

fn required_stamp<'a>(v: Option<Stamp<'a>>, name: &str) -> Result<Stamp<'a>, String> {
    match v {
        None => Err(format!("missing required field {name}")),
        Some(Stamp::Iso(s) | Stamp::Epoch(s, _)) if s.is_empty() => Err(format!("empty required field {name}")),
        Some(s) => Ok(s),
    }
}

fn stamp(v: Stamp<'_>, name: &str) -> Result<DateTime<Utc>, String> {
    match v {
        Stamp::Iso(text) => instant(&text, name),
        Stamp::Epoch(text, unit) => super::source::epoch_instant(&text, unit).map_err(|e| format!("{name} {e}")),
    }
}

/// A mapped amount's revenue: each exact decimal in minor units, summed with overflow checked.
fn totals_revenue(texts: &[Cow<'_, str>], unit: super::source::Unit, currency: &str) -> Result<i64, String> {
    if texts.is_empty() {
        return Err("no tenders: a basket needs at least one payment".into());
    }
    let mut revenue: i64 = 0;
    for (i, t) in texts.iter().enumerate() {
        let amount = super::source::amount_minor(t, unit, currency)
            .map_err(|e| if texts.len() > 1 { format!("tender {}: {e}", i + 1) } else { e })?;
        revenue = revenue.checked_add(amount).ok_or_else(|| format!("tender {}: revenue overflows 64 bits", i + 1))?;
    }
    Ok(revenue)
}

/// The contract's revenue: the sum of every tender's amount_minor, checked for overflow.
fn tenders_revenue(tenders: &[Tender<'_>]) -> Result<i64, String> {
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
    Ok(revenue)
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
        let text = std::fs::read_to_string(
            std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../tests/corpus/lines.jsonl"),
        )
        .unwrap();
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
