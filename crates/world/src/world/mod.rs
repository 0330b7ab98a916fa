//! A deterministic world of till uploads: stores, baskets, re-sends, offline tills and early
//! Singapore mornings. The same preset and seed give byte-identical files on any machine.

pub mod corrections;
pub mod manufacturing;
pub mod shape;
mod spec;

use crate::raw::{self, StoreTable};
use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use color_eyre::eyre::{Result, WrapErr};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

pub use spec::{Preset, WorldSpec};

/// The seed of the bundled sample world and the default for `recount generate`.
pub const DEFAULT_SEED: u64 = 20_261_025;

/// One event as the till sends it.
#[derive(Debug, Clone)]
struct TillEvent {
    event_id: u64,
    basket_id: String,
    store: u32,
    till: u8,
    event_ts: DateTime<Utc>,
    uploaded_at: DateTime<Utc>,
    tenders: Vec<(&'static str, i64)>,
    items: Vec<(u16, u8, i64)>,
    business_date: NaiveDate,
}

/// What the generator produced, printed after a run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct GenerateSummary {
    pub preset: String,
    pub seed: u64,
    pub stores: usize,
    pub partitions: usize,
    pub files: usize,
    pub events: u64,
    pub baskets: u64,
    pub resent_baskets: u64,
    pub sent_three_times: u64,
    pub compressed_bytes: u64,
    /// upload date minus business date, in days -> events
    pub lateness_mix: BTreeMap<i64, u64>,
}

impl GenerateSummary {
    pub fn render(&self) -> String {
        use crate::money::format_count as n;
        let mut s = format!(
            "world: preset {} seed {}\n  {} stores, {} upload partitions, {} files, {} bytes gzipped\n  {} events, {} baskets, {} re-sent ({} sent three times)\n  lateness mix (upload date - business date):\n",
            self.preset,
            self.seed,
            n(self.stores as i64),
            self.partitions,
            self.files,
            n(self.compressed_bytes as i64),
            n(self.events as i64),
            n(self.baskets as i64),
            n(self.resent_baskets as i64),
            n(self.sent_three_times as i64),
        );
        for (offset, events) in &self.lateness_mix {
            let share = *events as f64 * 100.0 / self.events.max(1) as f64; // display only
            let what = match offset {
                -1 => "early: the store's morning is the previous UTC day",
                0 => "same day",
                1 | 2 => "late, inside the default window",
                _ => "beyond the default 2-day window",
            };
            s.push_str(&format!("    {offset:+} day(s): {:>10} events {share:6.2}%  {what}\n", n(*events as i64)));
        }
        s
    }
}

/// Bijective 64-bit mix (splitmix64's finaliser): distinct inputs give distinct event ids.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
    z ^ (z >> 31)
}

/// Unique by construction: `mix` is a bijection and (stream, basket, copy) never repeat.
fn event_id(seed: u64, stream: u64, basket: u32, copy: u32) -> u64 {
    mix(((((stream << 16) | basket as u64) << 2) | copy as u64) ^ mix(seed))
}

pub fn generate(out: &Path, preset: Preset, seed: u64) -> Result<GenerateSummary> {
    generate_scaled(out, preset, seed, 1.0)
}

/// The preset with `store_factor` times its stores in each country (for scaling measurements).
pub fn generate_scaled(out: &Path, preset: Preset, seed: u64, store_factor: f64) -> Result<GenerateSummary> {
    generate_with(out, preset, seed, store_factor, None)
}

/// As `generate_scaled`, over `days` upload days ending at the preset's last upload when given
/// (for measuring how a day's run grows with the lab's history).
pub fn generate_with(out: &Path, preset: Preset, seed: u64, store_factor: f64, days: Option<u32>) -> Result<GenerateSummary> {
    let mut spec = preset.spec();
    if let Some(n) = days {
        if n == 0 {
            color_eyre::eyre::bail!("--days must be at least 1");
        }
        spec.first_upload = spec.last_upload - chrono::Duration::days(i64::from(n) - 1);
    }
    for n in spec.stores_per_country.iter_mut() {
        *n = ((*n as f64 * store_factor).round() as usize).max(1);
    }
    let stores = spec.stores();
    let days: Vec<NaiveDate> = spec.first_upload.iter_days().take_while(|d| *d <= spec.last_upload).collect();

    // Each store-day has its own RNG stream, so the output does not depend on thread scheduling.
    let store_days: Vec<(usize, usize)> = (0..stores.stores.len()).flat_map(|s| (0..days.len()).map(move |d| (s, d))).collect();
    let per_store_day: Vec<Vec<TillEvent>> =
        store_days.par_iter().map(|&(s, d)| store_day(&spec, &stores, s, days[d], seed, (s * days.len() + d) as u64)).collect();

    let mut summary = GenerateSummary {
        preset: preset.name().to_string(),
        seed,
        stores: stores.stores.len(),
        partitions: days.len(),
        files: 0,
        events: 0,
        baskets: 0,
        resent_baskets: 0,
        sent_three_times: 0,
        compressed_bytes: 0,
        lateness_mix: BTreeMap::new(),
    };

    // Bucket by (upload date, country); the world ends at the last partition, so anything that
    // would arrive later has not arrived yet.
    let mut buckets: BTreeMap<(NaiveDate, String), Vec<TillEvent>> = BTreeMap::new();
    for day in &days {
        for s in &stores.stores {
            buckets.entry((*day, s.country.clone())).or_default();
        }
    }
    for events in per_store_day {
        let mut copies: BTreeMap<&str, u32> = BTreeMap::new();
        for e in &events {
            *copies.entry(e.basket_id.as_str()).or_default() += 1;
        }
        summary.baskets += copies.len() as u64;
        summary.resent_baskets += copies.values().filter(|&&c| c > 1).count() as u64;
        summary.sent_three_times += copies.values().filter(|&&c| c > 2).count() as u64;
        for e in events {
            let upload = e.uploaded_at.date_naive();
            if upload < spec.first_upload || upload > spec.last_upload {
                continue;
            }
            summary.events += 1;
            *summary.lateness_mix.entry((upload - e.business_date).num_days()).or_default() += 1;
            let country = stores.stores[e.store as usize].country.clone();
            buckets.entry((upload, country)).or_default().push(e);
        }
    }

    std::fs::create_dir_all(out).wrap_err_with(|| format!("creating {}", out.display()))?;
    std::fs::write(out.join(raw::STORES_FILE), stores.to_csv()?)?;
    let written: Vec<Result<u64>> = buckets
        .into_par_iter()
        .map(|((upload, country), events)| write_till_file(out, upload, &country, events, &stores, spec.gzip_level))
        .collect();
    for w in written {
        summary.compressed_bytes += w?;
        summary.files += 1;
    }
    Ok(summary)
}

/// One upload's file of one country's tills, in upload order: returns its compressed size.
fn write_till_file(
    out: &Path,
    upload: NaiveDate,
    country: &str,
    mut events: Vec<TillEvent>,
    stores: &StoreTable,
    level: u32,
) -> Result<u64> {
    events.sort_by_key(|e| (e.uploaded_at, e.event_id));
    let dir = raw::partition_dir(out, upload);
    std::fs::create_dir_all(&dir)?;
    let mut text = Vec::with_capacity(events.len() * 300);
    for e in &events {
        write_event(&mut text, e, stores);
    }
    let mut gz = flate2::GzBuilder::new().write(Vec::new(), flate2::Compression::new(level));
    gz.write_all(&text)?;
    let bytes = gz.finish()?;
    let path = dir.join(format!("tills-{}.jsonl.gz", country.to_lowercase()));
    std::fs::write(&path, &bytes).wrap_err_with(|| format!("writing {}", path.display()))?;
    Ok(bytes.len() as u64)
}

fn ts(t: &DateTime<Utc>) -> impl std::fmt::Display + '_ {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ")
}

fn write_event(out: &mut Vec<u8>, e: &TillEvent, stores: &StoreTable) {
    let store = &stores.stores[e.store as usize];
    let _ = write!(
        out,
        r#"{{"event_id":"ev-{:016x}","basket_id":"{}","store_id":"{}","till_id":"{}-T{}","event_ts":"{}","uploaded_at":"{}","currency":"{}","tenders":["#,
        e.event_id,
        e.basket_id,
        store.store_id,
        store.store_id,
        e.till,
        ts(&e.event_ts),
        ts(&e.uploaded_at),
        store.currency
    );
    for (i, (method, amount)) in e.tenders.iter().enumerate() {
        let sep = if i > 0 { "," } else { "" };
        let _ = write!(out, r#"{sep}{{"method":"{method}","amount_minor":{amount}}}"#);
    }
    out.extend_from_slice(br#"],"items":["#);
    for (i, (sku, qty, price)) in e.items.iter().enumerate() {
        let sep = if i > 0 { "," } else { "" };
        let _ = write!(out, r#"{sep}{{"sku":"SKU{sku:05}","qty":{qty},"unit_price_minor":{price}}}"#);
    }
    out.extend_from_slice(b"]}\n");
}

/// The baskets of one store on one business day, with every copy the tills will send.
// Times built from literals (midnight, 07:00, an hour past a gap) exist in every zone the
// generator uses: invariants, stated at each `expect`.
#[allow(clippy::expect_used)]
fn store_day(spec: &WorldSpec, stores: &StoreTable, s: usize, day: NaiveDate, seed: u64, stream: u64) -> Vec<TillEvent> {
    let store = &stores.stores[s];
    let profile = spec.profile(&store.country);
    let mut rng = ChaCha8Rng::seed_from_u64(mix(seed ^ mix(stream.wrapping_add(1))));
    let tills = rng.random_range(2..=profile.max_tills);
    // An offline till uploads its whole day later: usually the next morning, rarely much later.
    let offline: Vec<Option<i64>> = (0..tills)
        .map(|_| {
            if rng.random_bool(spec.offline_till_rate) {
                let r: f64 = rng.random();
                Some(if r < spec.beyond_window_share {
                    rng.random_range(3..=4)
                } else if r < 0.15 {
                    2
                } else {
                    1
                })
            } else {
                None
            }
        })
        .collect();
    let baskets = rng.random_range(spec.baskets_per_store_day.0..=spec.baskets_per_store_day.1);
    let mut out = Vec::with_capacity(baskets as usize + 4);
    let zone = store.timezone;
    for b in 0..baskets {
        let till = rng.random_range(0..tills);
        let event_ts = sale_instant(&mut rng, profile, day, zone);
        let uploaded_at = match offline[till as usize] {
            None => event_ts + Duration::seconds(rng.random_range(2..240)),
            Some(days_late) => {
                let morning = (day + Duration::days(days_late)).and_hms_opt(7, 0, 0).expect("07:00 is a time")
                    + Duration::minutes(rng.random_range(0..120));
                zone.from_local_datetime(&morning).earliest().expect("no zone skips 07:00 to 09:00").with_timezone(&Utc)
            }
        };
        let items: Vec<(u16, u8, i64)> = (0..rng.random_range(1..=profile.max_items))
            .map(|_| {
                (rng.random_range(0..20_000u16), rng.random_range(1..=3u8), rng.random_range(profile.unit_price.0..=profile.unit_price.1))
            })
            .collect();
        let total: i64 = items.iter().map(|(_, q, p)| *q as i64 * p).sum();
        let tenders = tenders_for(&mut rng, spec, total);
        let basket_id = format!("{}-{}-T{}-{:04}", store.store_id, day.format("%Y%m%d"), till + 1, b + 1);
        let first = TillEvent {
            event_id: event_id(seed, stream, b, 0),
            basket_id,
            store: s as u32,
            till: till + 1,
            event_ts,
            uploaded_at,
            tenders,
            items,
            business_date: day,
        };
        push_resends(&mut rng, spec, &first, (seed, stream, b), &mut out);
        out.push(first);
    }
    out
}

/// When a sale happened: a minute of the store's trading day, to the millisecond, as a UTC
/// instant. On the autumn change a local minute can happen twice; the earlier is taken. In spring
/// a skipped local minute moves an hour on.
// Midnight, and an hour past a skipped minute, exist in every zone: invariants, stated at each `expect`.
#[allow(clippy::expect_used)]
fn sale_instant(rng: &mut ChaCha8Rng, profile: &spec::CountryProfile, day: NaiveDate, zone: chrono_tz::Tz) -> chrono::DateTime<Utc> {
    let minute = profile.sale_minute(rng);
    let second = rng.random_range(0..60);
    let milli = rng.random_range(0..1000);
    let local = day.and_hms_milli_opt(0, 0, 0, 0).expect("midnight is a time")
        + Duration::minutes(minute)
        + Duration::seconds(second)
        + Duration::milliseconds(milli);
    match zone.from_local_datetime(&local) {
        chrono::LocalResult::Single(t) | chrono::LocalResult::Ambiguous(t, _) => t.with_timezone(&Utc),
        chrono::LocalResult::None => zone
            .from_local_datetime(&(local + Duration::hours(1)))
            .earliest()
            .expect("an hour past a skipped minute exists")
            .with_timezone(&Utc),
    }
}

/// How a basket of `total` was paid: split over card and cash now and then, else one tender.
fn tenders_for(rng: &mut ChaCha8Rng, spec: &WorldSpec, total: i64) -> Vec<(&'static str, i64)> {
    if rng.random_bool(spec.split_tender_rate) && total > 1 {
        let cash = rng.random_range(1..total);
        vec![("card", total - cash), ("cash", cash)]
    } else if rng.random_bool(0.3) {
        vec![("cash", total)]
    } else {
        vec![("card", total)]
    }
}

/// Re-sends of `first`: the same basket with a NEW event_id, minutes later or the next day; a
/// few exact ties. `ids` is (seed, stream, basket) for the event ids.
fn push_resends(rng: &mut ChaCha8Rng, spec: &WorldSpec, first: &TillEvent, ids: (u64, u64, u32), out: &mut Vec<TillEvent>) {
    let (seed, stream, b) = ids;
    let copies = if rng.random_bool(spec.resend_rate) { if rng.random_bool(0.25) { 3 } else { 2 } } else { 1 };
    let mut last_upload = first.uploaded_at;
    for c in 1..copies {
        let mut copy = first.clone();
        copy.event_id = event_id(seed, stream, b, c);
        let r: f64 = rng.random();
        copy.uploaded_at = if r < 0.08 {
            last_upload // an exact tie, broken by event_id
        } else if r < 0.23 {
            last_upload + Duration::hours(24) + Duration::seconds(rng.random_range(0..3600))
        } else {
            last_upload + Duration::seconds(rng.random_range(30..1800))
        };
        last_upload = copy.uploaded_at;
        out.push(copy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mix_is_injective_on_a_sample() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..100_000u64 {
            assert!(seen.insert(mix(i)));
        }
    }
}
