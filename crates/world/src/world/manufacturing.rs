//! A deterministic manufacturing world (docs/data-contract.md, "Models"): three plants, one
//! behind UTC (Chicago), one at a half hour (Kolkata), one nightly batch (Berlin); hourly counts
//! per line, night shifts that cross local midnight, re-sent records, a line offline for days
//! whose records arrive late in one batch, a few lines that break the model's rules, and the
//! correction scenario: 2026-06-29, plant-a / line-1 / gearbox-a, 120 units and 3 defects,
//! corrected to 135 and 2 by a second version of the same file, then re-delivered unchanged.

use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use color_eyre::eyre::{Result, eyre};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// How a plant's records arrive.
#[derive(Clone, Copy)]
enum Arrival {
    /// Each record minutes after it is counted.
    Stream { min_minutes: i64, max_minutes: i64 },
    /// The whole local day at this UTC hour of the next day.
    NightlyBatch { utc_hour: u32 },
}

struct Plant {
    id: &'static str,
    code: &'static str,
    country: &'static str,
    zone: Tz,
    arrival: Arrival,
}

const PLANTS: [Plant; 3] = [
    Plant { id: "plant-a", code: "PA", country: "DE", zone: chrono_tz::Europe::Berlin, arrival: Arrival::NightlyBatch { utc_hour: 1 } },
    Plant {
        id: "plant-b",
        code: "PB",
        country: "US",
        zone: chrono_tz::America::Chicago,
        arrival: Arrival::Stream { min_minutes: 5, max_minutes: 150 },
    },
    Plant {
        id: "plant-c",
        code: "PC",
        country: "IN",
        zone: chrono_tz::Asia::Kolkata,
        arrival: Arrival::Stream { min_minutes: 2, max_minutes: 45 },
    },
];

/// The first and last local production days.
fn days() -> (NaiveDate, NaiveDate) {
    (NaiveDate::from_ymd_opt(2026, 6, 19).unwrap_or_default(), NaiveDate::from_ymd_opt(2026, 7, 14).unwrap_or_default())
}

/// The scenario's group: its date, plant, line and product.
pub const SCENARIO: (&str, &str, &str, &str) = ("2026-06-29", "plant-a", "line-1", "gearbox-a");

/// plant-c's line-2 is offline from this local day for four days; its records come in one batch.
fn offline() -> (NaiveDate, NaiveDate, DateTime<Utc>) {
    let from = NaiveDate::from_ymd_opt(2026, 7, 1).unwrap_or_default();
    (from, from + Duration::days(3), Utc.with_ymd_and_hms(2026, 7, 6, 8, 0, 0).single().unwrap_or_default())
}

#[derive(Clone)]
struct RecordLine {
    uploaded_at: DateTime<Utc>,
    event_id: String,
    file: String,
    text: String,
}

/// What `generate --model manufacturing` wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ManufacturingSummary {
    pub plants: usize,
    pub partitions: usize,
    pub files: usize,
    pub lines: usize,
    pub records: usize,
    pub resent: usize,
    pub refused_on_purpose: usize,
}

impl ManufacturingSummary {
    pub fn render(&self) -> String {
        format!(
            "manufacturing world: {} plants, {} upload partitions, {} files\n  {} lines: {} records, {} re-sent copies, {} lines that break a rule\n  corrections/: the 2026-06-29 counts corrected (120 → 135 units, 3 → 2 defects), then re-delivered unchanged",
            self.plants, self.partitions, self.files, self.lines, self.records, self.resent, self.refused_on_purpose
        )
    }
}

fn product(line: &str, local_hour: u32) -> &'static str {
    match (line, local_hour) {
        ("line-1", 6..=21) => "gearbox-a",
        ("line-1", _) => "gearbox-b",
        _ => "axle-c",
    }
}

/// One hourly count, as a JSON line, and when it arrives.
fn record(
    rng: &mut ChaCha8Rng,
    plant: &Plant,
    line: &str,
    local: chrono::NaiveDateTime,
    seq: &mut u64,
) -> Result<(DateTime<Utc>, String, i64, i64)> {
    let at = plant.zone.from_local_datetime(&local).earliest().ok_or_else(|| eyre!("{local} does not exist in {}", plant.zone))?;
    let utc = at.with_timezone(&Utc);
    let hour = chrono::Timelike::hour(&local);
    let units: i64 = rng.random_range(6..=18);
    let defects: i64 = if rng.random_range(0..4) == 0 { rng.random_range(1..=2) } else { 0 };
    let record_id = format!("{}-{}-{}", plant.code, line.replace("line-", "L"), local.format("%Y%m%d%H"));
    // plant-a writes its local offset; the others UTC with a fraction.
    let produced = if plant.id == "plant-a" { at.to_rfc3339() } else { utc.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string() };
    *seq += 1;
    let text = format!(
        r#"{{"event_id":"ev-{seq:07}","record_id":"{record_id}","plant_id":"{}","line_id":"{line}","product_id":"{}","produced_at":"{produced}","uploaded_at":"{{UPLOADED}}","units":{units},"defects":{defects}}}"#,
        plant.id,
        product(line, hour),
    );
    Ok((utc, text, units, defects))
}

fn stamp(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Writes the world to `out`.
pub fn generate(out: &Path, seed: u64) -> Result<ManufacturingSummary> {
    generate_scaled(out, seed, 1)
}

/// The production lines of each plant at `factor`: line-1 and line-2, then line-3 up to
/// line-(2 × factor). A factor of 1 is the bundled world to the byte.
fn line_names(factor: usize) -> Vec<String> {
    (1..=2 * factor.max(1)).map(|k| format!("line-{k}")).collect()
}

/// The world with `factor` times the production lines (a bench's larger plant feed).
pub fn generate_scaled(out: &Path, seed: u64, factor: usize) -> Result<ManufacturingSummary> {
    let names = line_names(factor);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6d61_6e75);
    let mut lines: Vec<RecordLine> = Vec::new();
    let (mut seq, mut records, mut resent) = (0u64, 0usize, 0usize);
    let (first, last) = days();
    let (off_from, off_to, off_batch) = offline();
    let mut day = first;
    while day <= last {
        for plant in &PLANTS {
            for line in names.iter().map(String::as_str) {
                for hour in 0..24 {
                    let local = day.and_hms_opt(hour, 50, 0).ok_or_else(|| eyre!("no hour {hour}"))?;
                    let (utc, text, _, _) = record(&mut rng, plant, line, local, &mut seq)?;
                    records += 1;
                    let is_offline = plant.id == "plant-c" && line == "line-2" && day >= off_from && day <= off_to;
                    let (uploaded_at, file) = match plant.arrival {
                        _ if is_offline => (off_batch, "plant-c-backfill.jsonl.gz".to_string()),
                        Arrival::Stream { min_minutes, max_minutes } => {
                            (utc + Duration::minutes(rng.random_range(min_minutes..=max_minutes)), format!("{}.jsonl.gz", plant.id))
                        }
                        Arrival::NightlyBatch { utc_hour } => {
                            let at =
                                (day + Duration::days(1)).and_hms_opt(utc_hour, 30, 0).ok_or_else(|| eyre!("no batch hour"))?.and_utc();
                            (at, format!("{}.jsonl.gz", plant.id))
                        }
                    };
                    let text = text.replace("{UPLOADED}", &stamp(uploaded_at));
                    let event_id = format!("ev-{seq:07}");
                    // A stream re-sends about one record in thirty, hours later, with a new event id.
                    if matches!(plant.arrival, Arrival::Stream { .. }) && !is_offline && rng.random_range(0..30) == 0 {
                        seq += 1;
                        let again = uploaded_at + Duration::minutes(rng.random_range(60..=1800));
                        let copy = text
                            .replace(&format!("\"event_id\":\"{event_id}\""), &format!("\"event_id\":\"ev-{seq:07}\""))
                            .replace(&stamp(uploaded_at), &stamp(again));
                        lines.push(RecordLine { uploaded_at: again, event_id: format!("ev-{seq:07}"), file: file.clone(), text: copy });
                        resent += 1;
                    }
                    lines.push(RecordLine { uploaded_at, event_id, file, text });
                }
            }
        }
        day += Duration::days(1);
    }
    scenario(&mut lines)?;
    let refused = refused_lines(&mut lines, &mut seq);
    write(out, &lines, records, resent, refused)
}

/// Sets the scenario's group to 120 units and 3 defects: sixteen counts of 7 or 8, three with
/// one defect.
fn scenario(lines: &mut [RecordLine]) -> Result<()> {
    let (date, plant, line, prod) = SCENARIO;
    let day = date.replace('-', "");
    let code = format!("\"record_id\":\"PA-L1-{day}");
    let mut n = 0;
    for l in lines.iter_mut().filter(|l| l.text.contains(&code) && l.text.contains(&format!("\"product_id\":\"{prod}\""))) {
        debug_assert!(l.text.contains(plant) && l.text.contains(line));
        let units = if n % 2 == 0 { 8 } else { 7 };
        let defects = if n % 5 == 0 && n < 15 { 1 } else { 0 };
        l.text = set_int(&set_int(&l.text, "units", units), "defects", defects);
        n += 1;
    }
    if n != 16 {
        return Err(eyre!("the scenario's group has {n} counts, not 16"));
    }
    Ok(())
}

fn set_int(text: &str, field: &str, v: i64) -> String {
    let key = format!("\"{field}\":");
    match text.find(&key) {
        Some(at) => {
            let start = at + key.len();
            let end = text[start..].find([',', '}']).map(|e| start + e).unwrap_or(text.len());
            format!("{}{v}{}", &text[..start], &text[end..])
        }
        None => text.to_string(),
    }
}

/// Three lines that break a rule, in plant-b's stream of 2026-07-02: defects over units, a
/// negative count, an unknown plant.
fn refused_lines(lines: &mut Vec<RecordLine>, seq: &mut u64) -> usize {
    let at = Utc.with_ymd_and_hms(2026, 7, 2, 15, 0, 0).single().unwrap_or_default();
    let bad = [("PB-L1-BAD1", "plant-b", 5, 9), ("PB-L1-BAD2", "plant-b", -4, 0), ("PZ-L1-BAD3", "plant-z", 10, 1)];
    for (record_id, plant, units, defects) in bad {
        *seq += 1;
        let text = format!(
            r#"{{"event_id":"ev-{seq:07}","record_id":"{record_id}","plant_id":"{plant}","line_id":"line-1","product_id":"gearbox-a","produced_at":"2026-07-02T14:50:00.000Z","uploaded_at":"{}","units":{units},"defects":{defects}}}"#,
            stamp(at)
        );
        lines.push(RecordLine { uploaded_at: at, event_id: format!("ev-{seq:07}"), file: "plant-b.jsonl.gz".into(), text });
    }
    bad.len()
}

fn gzip(text: &str, level: u32) -> Result<Vec<u8>> {
    let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::new(level));
    gz.write_all(text.as_bytes())?;
    Ok(gz.finish()?)
}

fn write(out: &Path, lines: &[RecordLine], records: usize, resent: usize, refused: usize) -> Result<ManufacturingSummary> {
    let mut files: BTreeMap<(NaiveDate, String), Vec<&RecordLine>> = BTreeMap::new();
    for l in lines {
        files.entry((l.uploaded_at.date_naive(), l.file.clone())).or_default().push(l);
    }
    let root = out.join("mes/records");
    std::fs::create_dir_all(&root)?;
    std::fs::write(
        out.join("recount.toml"),
        "# A plant's daily production: docs/data-contract.md, \"Models\".\nmodel = \"manufacturing\"\n",
    )?;
    let mut plants = String::from("plant_id,country,timezone\n");
    for p in &PLANTS {
        plants.push_str(&format!("{},{},{}\n", p.id, p.country, p.zone.name()));
    }
    std::fs::write(out.join("plants.csv"), plants)?;
    let mut partitions = std::collections::BTreeSet::new();
    let scenario_file = (NaiveDate::from_ymd_opt(2026, 6, 30).unwrap_or_default(), "plant-a.jsonl.gz".to_string());
    let mut scenario_text = None;
    for ((d, name), mut ls) in files.clone() {
        ls.sort_by(|a, b| (a.uploaded_at, &a.event_id).cmp(&(b.uploaded_at, &b.event_id)));
        let text: String = ls.iter().map(|l| format!("{}\n", l.text)).collect();
        let dir = crate::model::recount::partition(&root, d);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(&name), gzip(&text, 6)?)?;
        partitions.insert(d);
        if (d, name) == scenario_file {
            scenario_text = Some(text);
        }
    }
    let text = scenario_text.ok_or_else(|| eyre!("no file holds the scenario's records"))?;
    corrections(out, scenario_file.0, &scenario_file.1, &text)?;
    Ok(ManufacturingSummary {
        plants: PLANTS.len(),
        partitions: partitions.len(),
        files: files.len(),
        lines: lines.len(),
        records,
        resent,
        refused_on_purpose: refused,
    })
}

/// `corrections/01-corrected-counts`: the scenario's file with one count 15 higher and one defect
/// fewer; `corrections/02-recompressed`: the same lines again, other bytes.
fn corrections(out: &Path, d: NaiveDate, name: &str, text: &str) -> Result<()> {
    let (date, ..) = SCENARIO;
    let day = date.replace('-', "");
    let (mut raised, mut cleared) = (false, false);
    let mut changed = Vec::new();
    let corrected: String = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mine = l.contains(&format!("\"record_id\":\"PA-L1-{day}")) && l.contains("gearbox-a");
            let mut l = l.to_string();
            if mine && !raised && l.contains("\"units\":8,") {
                l = set_int(&l, "units", 23);
                raised = true;
                changed.push(i + 1);
            } else if mine && !cleared && l.contains("\"defects\":1}") {
                l = set_int(&l, "defects", 0);
                cleared = true;
                changed.push(i + 1);
            }
            l + "\n"
        })
        .collect();
    for (slug, body, level, what) in [
        ("01-corrected-counts", &corrected, 6, "units 120 → 135 and defects 3 → 2 for 2026-06-29 plant-a/line-1/gearbox-a"),
        ("02-recompressed", &corrected, 9, "the same rows as 01, compressed again: other bytes, no change"),
    ] {
        let dir = crate::model::recount::partition(&out.join("corrections").join(slug).join("mes/records"), d);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join(name), gzip(body, level)?)?;
        let note = serde_json::json!({"upload_date": d.to_string(), "file": name, "lines": changed, "what": what});
        std::fs::write(out.join("corrections").join(slug).join("correction.json"), serde_json::to_string_pretty(&note)? + "\n")?;
    }
    Ok(())
}
