//! A deliberately plain reference of the contract's v2 end state, written from the contract text
//! alone (serde_json values, no DuckDB, no polars, none of recount's parsing), to check that
//! recount's fingerprint is the contract's.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;

struct Row {
    business_date: NaiveDate,
    upload: NaiveDate,
    basket: String,
    uploaded_at: DateTime<Utc>,
    event_id: String,
    store: String,
    revenue: i64,
    /// The file's name and the line: with the upload date, the raw zone's order for exact ties.
    file: String,
    line: usize,
}

pub fn v2_fingerprint(world: &Path, late: i64) -> String {
    use md5::Digest;
    let stores_text = std::fs::read_to_string(world.join("stores.csv")).unwrap();
    let mut stores: HashMap<String, (String, chrono_tz::Tz, String)> = HashMap::new();
    for line in stores_text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        stores.insert(f[0].to_string(), (f[1].to_string(), f[2].parse().unwrap(), f[3].to_string()));
    }
    let mut rows = Vec::new();
    let events = world.join("pos/events");
    for part in std::fs::read_dir(&events).unwrap() {
        let part = part.unwrap().path();
        let upload: NaiveDate = part.file_name().unwrap().to_str().unwrap()["upload_date=".len()..].parse().unwrap();
        for f in std::fs::read_dir(&part).unwrap() {
            let path = f.unwrap().path();
            let file = path.file_name().unwrap().to_str().unwrap().to_string();
            let mut text = String::new();
            flate2::read::MultiGzDecoder::new(std::fs::File::open(&path).unwrap()).read_to_string(&mut text).unwrap();
            for (i, line) in text.lines().enumerate() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let store = v["store_id"].as_str().unwrap().to_string();
                let ts: DateTime<Utc> = v["event_ts"].as_str().unwrap().parse().unwrap();
                let business_date = ts.with_timezone(&stores[&store].1).date_naive();
                let revenue = v["tenders"].as_array().unwrap().iter().map(|t| t["amount_minor"].as_i64().unwrap()).sum();
                rows.push(Row {
                    business_date,
                    upload,
                    basket: v["basket_id"].as_str().unwrap().to_string(),
                    uploaded_at: v["uploaded_at"].as_str().unwrap().parse().unwrap(),
                    event_id: v["event_id"].as_str().unwrap().to_string(),
                    store,
                    revenue,
                    file: file.clone(),
                    line: i + 1,
                });
            }
        }
    }
    let affected: BTreeSet<NaiveDate> =
        rows.iter().filter(|r| r.business_date >= r.upload - Duration::days(late)).map(|r| r.business_date).collect();
    let mut winners: HashMap<&str, &Row> = HashMap::new();
    for r in &rows {
        let d = r.business_date;
        if !affected.contains(&d) || r.upload < d - Duration::days(1) || r.upload > d + Duration::days(late) {
            continue;
        }
        let w = winners.entry(&r.basket).or_insert(r);
        if (r.uploaded_at, &r.event_id, r.upload, r.file.as_bytes(), r.line)
            < (w.uploaded_at, &w.event_id, w.upload, w.file.as_bytes(), w.line)
        {
            *w = r;
        }
    }
    let mut gold: BTreeMap<(NaiveDate, String), (i64, i64)> = BTreeMap::new();
    for r in winners.values() {
        let g = gold.entry((r.business_date, r.store.clone())).or_default();
        g.0 += 1;
        g.1 += r.revenue;
    }
    let text: Vec<String> =
        gold.iter().map(|((d, s), (b, rev))| format!("{}|{s}|{}|{}|{b}|{rev}", d.format("%Y-%m-%d"), stores[s].0, stores[s].2)).collect();
    let md5 = recount::store::hex(&md5::Md5::digest(text.join("\n").as_bytes()));
    format!("gold.daily_store_sales: {} rows, md5 {md5}", recount::money::format_count(gold.len() as i64))
}
