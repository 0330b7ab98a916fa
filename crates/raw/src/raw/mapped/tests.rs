//! The mapped reader's tests: vendor lines, the mapped corpus, and lines that are not UTF-8.

use super::*;
use crate::raw::source::{AmountField, FieldPaths, StampField, StampFormat};

fn stores() -> StoreTable {
    StoreTable::parse("store_id,country,timezone,currency\nLON1,GB,Europe/London,GBP\nTYO1,JP,Asia/Tokyo,JPY\n").unwrap()
}

fn reader(unit: Unit, tenders: Option<&str>) -> Reader {
    Reader {
        glob: "*.json".into(),
        format: FileFormat::Jsonl,
        compression: None,
        fields: Some(FieldPaths {
            event_id: "message_id".into(),
            basket_id: "transaction.id".into(),
            store_id: "store.code".into(),
            till_id: None,
            event_ts: StampField::Iso("transaction.completed_at".into()),
            uploaded_at: StampField::With { path: "received_at".into(), format: StampFormat::EpochMs },
            currency: "transaction.currency".into(),
            amount: AmountField {
                path: if tenders.is_some() { "value".into() } else { "transaction.total".into() },
                tenders: tenders.map(str::to_string),
                unit,
            },
        }),
    }
}

const LINE: &str = r#"{"message_id":"m1","transaction":{"id":"B1","completed_at":"2026-10-24T23:30:00.5+01:00","currency":"GBP","total":"12.50"},"store":{"code":"LON1","n":[1,{"a":"}"}]},"received_at":1792884660000,"payments":[{"value":1200},{"value":50}]}"#;

fn verdict(r: &Reader, line: &str) -> Result<(i64, String, String), String> {
    let stores = stores();
    let m = Map::new(r).unwrap();
    m.json(line, &stores, "2026-10-24".parse().unwrap())
        .map(|e| (e.revenue_minor, e.basket_id.into_owned(), e.event_ts.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()))
}

#[test]
fn a_vendor_line_maps_onto_the_contract() {
    let (rev, basket, ts) = verdict(&reader(Unit::Major, None), LINE).unwrap();
    assert_eq!((rev, basket.as_str(), ts.as_str()), (1250, "B1", "2026-10-24T22:30:00.500Z"));
    let (rev, ..) = verdict(&reader(Unit::Minor, Some("payments")), LINE).unwrap();
    assert_eq!(rev, 1250, "the sum over a list of tenders");
    let numeric = LINE.replace(r#""total":"12.50""#, r#""total":12.50"#);
    assert_eq!(verdict(&reader(Unit::Major, None), &numeric).unwrap().0, 1250, "a JSON number's own text");
}

/// Each line (CSV row) is decoded on its own: one that is not UTF-8 is quarantined alone,
/// naming its first bad byte from the line's (row's) start, and its neighbours are read.
#[test]
fn a_line_or_csv_row_that_is_not_utf8_is_quarantined_alone() {
    let up: NaiveDate = "2026-10-24".parse().unwrap();
    let stores = stores();
    let run = |r: &Reader, name: &str, bytes: &[u8]| {
        let mut got = Vec::new();
        read_events(Path::new(name), bytes, r, &stores, up, |no, v, text| {
            got.push((no, v.map(|e| e.basket_id.into_owned()), text.to_string()));
            Ok(())
        })
        .unwrap();
        got
    };
    let good = r#"{"event_id":"e1","basket_id":"B1","store_id":"LON1","till_id":"t1","event_ts":"2026-10-24T10:00:00Z","uploaded_at":"2026-10-24T10:00:09Z","currency":"GBP","tenders":[{"method":"card","amount_minor":5}]}"#;
    let at = good.find(r#""t1""#).unwrap() + 2;
    let mut bad = good.replace("B1", "B2").into_bytes();
    bad[at] = 0xff;
    let file = [good.as_bytes(), b"\n", &bad, b"\r\n", good.replace("B1", "B3").as_bytes(), b"\n"].concat();
    let got = run(&Reader::default(), "a.jsonl", &file);
    assert_eq!(got.len(), 3);
    assert_eq!((got[0].0, got[0].1.clone()), (1, Ok("B1".to_string())));
    assert_eq!((got[1].0, got[1].1.clone()), (2, Err(format!("not UTF-8 at byte {at}"))));
    assert!(got[1].2.contains("t\u{fffd}"), "the line is shown with its bad byte replaced: {}", got[1].2);
    assert_eq!((got[2].0, got[2].1.clone()), (3, Ok("B3".to_string())));
    // A CSV row: its first bad byte counted from the row's start; the rows around it read.
    let csv_reader = Reader {
        glob: "*.csv".into(),
        format: FileFormat::Csv,
        compression: None,
        fields: Some(FieldPaths {
            event_id: "id".into(),
            basket_id: "basket".into(),
            store_id: "store".into(),
            till_id: Some("till".into()),
            event_ts: StampField::Iso("ts".into()),
            uploaded_at: StampField::Iso("up".into()),
            currency: "cur".into(),
            amount: AmountField { path: "minor".into(), tenders: None, unit: Unit::Minor },
        }),
    };
    let row = |basket: &str, till: &[u8]| {
        [format!("e-{basket},{basket},LON1,").as_bytes(), till, b",2026-10-24T10:00:00Z,2026-10-24T10:00:09Z,GBP,5\n"].concat()
    };
    let csv = [&b"id,basket,store,till,ts,up,cur,minor\n"[..], &row("C1", b"t1"), &row("C2", b"\"t\xe9\""), &row("C3", b"t3")].concat();
    let got = run(&csv_reader, "a.csv", &csv);
    let verdicts: Vec<_> = got.iter().map(|(no, v, _)| (*no, v.clone())).collect();
    assert_eq!(
        verdicts,
        [(2, Ok("C1".to_string())), (3, Err("not UTF-8 at byte 15".to_string())), (4, Ok("C3".to_string()))],
        "e-C2,C2,LON1,\"t is 15 bytes"
    );
}

/// The lab gives every verdict of the mapped corpus (`tests/corpus/mapped.jsonl`, written by
/// `tests/corpus/mapped_cases.py` from the contract), as the Spark driver does in
/// `spark/tests/test_corpus.py`.
#[test]
fn every_mapped_line_of_the_corpus_gets_its_verdict() {
    let root = &std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let d: crate::raw::source::Description =
        toml::from_str(&std::fs::read_to_string(format!("{root}/../world/src/world/shapes/kafka-connect.toml")).unwrap()).unwrap();
    let map = Map::new(&d.files).unwrap();
    let stores = StoreTable::parse(
        "store_id,country,timezone,currency\nLON1,GB,Europe/London,GBP\nTYO1,JP,Asia/Tokyo,JPY\nKWI1,KW,Asia/Kuwait,KWD\n",
    )
    .unwrap();
    let text = std::fs::read_to_string(format!("{root}/../../tests/corpus/mapped.jsonl")).unwrap();
    let (mut n, mut wrong) = (0, Vec::new());
    for case in text.lines() {
        let c: serde_json::Value = serde_json::from_str(case).unwrap();
        let got = match map.json(c["line"].as_str().unwrap(), &stores, c["upload_date"].as_str().unwrap().parse().unwrap()) {
            Err(reason) => serde_json::json!({ "reason": reason }),
            Ok(e) => serde_json::json!({ "fields": {
                "basket_id": e.basket_id, "event_ts": e.event_ts.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
                "uploaded_at_ns": e.uploaded_at.timestamp_nanos_opt(), "revenue_minor": e.revenue_minor, "tenders": e.tenders,
            }}),
        };
        if got != c["expect"] {
            wrong.push(format!("{}: expected {}, got {got}", c["case"], c["expect"]));
        }
        n += 1;
    }
    assert!(n >= 35, "the corpus has {n} cases");
    assert!(wrong.is_empty(), "{} of {n} cases differ:\n{}", wrong.len(), wrong.join("\n"));
}

#[test]
fn a_line_that_does_not_map_names_the_field_and_its_path() {
    let r = reader(Unit::Major, None);
    let reason = |l: String| verdict(&r, &l).unwrap_err();
    assert_eq!(reason(LINE.replace(r#""id":"B1","#, "")), "missing required field basket_id (transaction.id)");
    assert!(reason(LINE.replace("12.50", "12.505")).contains("amount (transaction.total): '12.505' has more decimal places than GBP's 2"));
    assert!(reason(LINE.replace("12.50", "12,50")).contains("amount (transaction.total): '12,50' is not a plain decimal"));
    assert!(reason(LINE.replace("1792884660000", "\"soon\"")).contains("uploaded_at (received_at) 'soon' is not a time since 1970"));
    assert!(reason(LINE.replace("2026-10-24T23:30:00.5+01:00", "24/10/2026")).contains("event_ts (transaction.completed_at) '24/10/2026'"));
    assert_eq!(reason(LINE.replace("LON1", "ZZZ9")), "unknown store_id 'ZZZ9'");
    assert!(reason(LINE.replace(r#""store":{"#, r#""store":7,"x":{"#)).contains("store_id (store.code): store is not an object"));
    assert!(
        reason(LINE.replace(r#""message_id":"m1","#, r#""message_id":"m1","message_id":"m2","#)).contains("duplicate field `message_id`")
    );
    assert_eq!(reason(LINE.replace("}", "")), "malformed JSON: not one valid JSON value");
    assert_eq!(reason("[1]".into()), "malformed JSON: not an object");
    assert!(reason(LINE.replace("1792884660000", "1792971060000")).contains("not in partition upload_date=2026-10-24"));
}
