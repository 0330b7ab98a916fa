//! `stores.csv`: store_id,country,timezone,currency.

use chrono_tz::Tz;
use color_eyre::eyre::{Result, WrapErr, bail};
use std::collections::HashMap;
use std::path::Path;

/// One row of `stores.csv`: a shop, its country, time zone and currency (`Store` is the lab's
/// connection to DuckDB).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Shop {
    pub store_id: String,
    pub country: String,
    #[serde(serialize_with = "zone_name")]
    pub timezone: Tz,
    pub currency: String,
}

fn zone_name<S: serde::Serializer>(tz: &Tz, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(tz.name())
}

/// A landed store whose row stores.csv now gives otherwise: a store correction. Every business
/// date holding the store's events under either row is rebuilt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StoreChange {
    pub old: Shop,
    pub new: Shop,
}

impl StoreChange {
    /// What changed, as history names it: "store GB001: time zone Europe/London → America/New_York".
    pub fn describe(&self) -> String {
        describe_change(
            &self.new.store_id,
            [&self.old.country, self.old.timezone.name(), &self.old.currency],
            [&self.new.country, self.new.timezone.name(), &self.new.currency],
        )
    }
}

/// A store's change from one (country, time zone, currency) to another, in words: each field
/// that changed, as "name old → new"; from an empty row, a store added.
pub fn describe_change(store_id: &str, old: [&str; 3], new: [&str; 3]) -> String {
    if old.iter().all(|f| f.is_empty()) {
        return format!("store {}: added ({}, {}, {})", crate::sanitize::for_terminal(store_id), new[0], new[1], new[2]);
    }
    let parts: Vec<String> = ["country", "time zone", "currency"]
        .iter()
        .zip(old.iter().zip(new.iter()))
        .filter(|(_, (o, n))| o != n)
        .map(|(name, (o, n))| format!("{name} {o} → {n}"))
        .collect();
    format!("store {}: {}", crate::sanitize::for_terminal(store_id), parts.join(", "))
}

#[derive(Debug, Clone, Default)]
pub struct StoreTable {
    pub stores: Vec<Shop>,
    by_id: HashMap<String, usize>,
}

impl StoreTable {
    pub fn new(stores: Vec<Shop>) -> Self {
        let by_id = stores.iter().enumerate().map(|(i, s)| (s.store_id.clone(), i)).collect();
        Self { stores, by_id }
    }

    pub fn get(&self, store_id: &str) -> Option<&Shop> {
        self.by_id.get(store_id).map(|&i| &self.stores[i])
    }

    pub fn read(path: &Path) -> Result<Self> {
        let text = super::read_small_file(path)?;
        Self::parse(&text).wrap_err_with(|| format!("{}", path.display()))
    }

    /// Whether a store_id survives the trip through stores.csv and every report exactly: no
    /// control or bidi characters, no spaces at either end, at most 64 bytes.
    fn representable(id: &str) -> bool {
        !id.is_empty() && id.len() <= 64 && id.trim() == id && !id.chars().any(|c| c.is_control() || crate::sanitize::is_bidi(c))
    }

    /// Every row is checked: a bad zone, country or currency is an error naming the line.
    pub fn parse(text: &str) -> Result<Self> {
        // A byte-order mark (spreadsheets write one) is not part of the first column's name.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut rdr = csv::ReaderBuilder::new().has_headers(true).from_reader(text.as_bytes());
        let headers = rdr.headers()?.clone();
        let want = ["store_id", "country", "timezone", "currency"];
        if headers.iter().collect::<Vec<_>>() != want {
            // The header is named by what it lacks, never echoed: the first line of a file that
            // is not a store list at all may be anything.
            let missing: Vec<&str> = want.iter().copied().filter(|w| !headers.iter().any(|h| h == *w)).collect();
            let lacks = if missing.is_empty() { "its columns in another order".to_string() } else { format!("no {}", missing.join(", ")) };
            bail!("the header has {} column(s) and {lacks}; a store list's header is '{}'", headers.len(), want.join(","));
        }
        let mut stores = Vec::new();
        let mut seen = HashMap::new();
        for (i, rec) in rdr.records().enumerate() {
            let line = i + 2;
            let rec = rec.wrap_err_with(|| format!("line {line}"))?;
            if rec.len() != 4 {
                bail!("line {line}: expected 4 fields, found {}", rec.len());
            }
            let store_id = rec[0].to_string();
            let country = rec[1].trim().to_string();
            let currency = rec[3].trim().to_string();
            if store_id.is_empty() {
                bail!("line {line}: empty store_id");
            }
            if !Self::representable(&store_id) {
                bail!(
                    "line {line}: store_id {:?} has control or bidi characters, spaces at an end, or more than 64 bytes",
                    crate::sanitize::for_terminal(&store_id)
                );
            }
            let timezone = crate::tz::parse_zone(rec[2].trim()).map_err(|e| color_eyre::eyre::eyre!("line {line}: {e}"))?;
            if country.len() != 2 || !country.chars().all(|c| c.is_ascii_uppercase()) {
                bail!("line {line}: country '{country}' is not an ISO-3166 alpha-2 code");
            }
            if let Some(why) = crate::money::refuse(&currency) {
                bail!("line {line}: store {}: {}", crate::sanitize::for_terminal(&store_id), crate::sanitize::for_terminal(&why));
            }
            if let Some(first) = seen.insert(store_id.clone(), line) {
                bail!("line {line}: store_id '{store_id}' already defined on line {first}");
            }
            stores.push(Shop { store_id, country, timezone, currency });
        }
        Ok(Self::new(stores))
    }

    /// The table as CSV (quoted where a field needs it), readable by `parse` as it was.
    pub fn to_csv(&self) -> Result<String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(["store_id", "country", "timezone", "currency"])?;
        for s in &self.stores {
            w.write_record([s.store_id.as_str(), &s.country, s.timezone.name(), &s.currency])?;
        }
        Ok(String::from_utf8(w.into_inner().map_err(|e| color_eyre::eyre::eyre!("{e}"))?)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_time_zone_names_the_line() {
        let err = StoreTable::parse("store_id,country,timezone,currency\nS1,GB,Europe/London,GBP\nS2,GB,Europe/Londres,GBP\n").unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("line 3") && msg.contains("Europe/Londres"), "{msg}");
    }

    #[test]
    fn ids_with_commas_and_quotes_survive_a_round_trip_and_a_bom_is_ignored() {
        let text = "\u{feff}store_id,country,timezone,currency\n\"LON,1\",GB,Europe/London,GBP\n\"SIN \"\"A\"\"\",SG,Asia/Singapore,SGD\n";
        let t = StoreTable::parse(text).unwrap();
        assert_eq!(t.stores.iter().map(|s| s.store_id.as_str()).collect::<Vec<_>>(), ["LON,1", "SIN \"A\""]);
        let again = StoreTable::parse(&t.to_csv().unwrap()).unwrap();
        assert_eq!(again.stores, t.stores);
    }

    #[test]
    fn ids_that_cannot_be_kept_exactly_are_refused() {
        for bad in ["\" S1\"", "\"S1 \"", "\"S\u{1b}[2J\"", "\"S\u{202e}1\""] {
            let text = format!("store_id,country,timezone,currency\n{bad},GB,Europe/London,GBP\n");
            let err = format!("{:#}", StoreTable::parse(&text).unwrap_err());
            assert!(err.contains("line 2") && err.contains("store_id"), "{bad}: {err}");
            assert!(!err.chars().any(|c| c == '\u{1b}' || c == '\u{202e}'), "the error carries no raw control or bidi character");
        }
    }

    #[test]
    fn a_currency_iso_4217_does_not_list_is_refused_naming_the_store() {
        for (code, why) in [("XYZ", "not an ISO-4217 code"), ("XAU", "no minor unit"), ("gbp", "not an ISO-4217 code")] {
            let text = format!("store_id,country,timezone,currency\nS1,GB,Europe/London,GBP\nTOKYO9,JP,Asia/Tokyo,{code}\n");
            let err = format!("{:#}", StoreTable::parse(&text).unwrap_err());
            assert!(err.contains("line 3") && err.contains("store TOKYO9") && err.contains(why), "{code}: {err}");
        }
        let ok = "store_id,country,timezone,currency\nT1,JP,Asia/Tokyo,JPY\nK1,KW,Asia/Kuwait,KWD\nC1,CL,America/Santiago,CLF\n";
        assert_eq!(StoreTable::parse(ok).unwrap().stores.len(), 3);
    }

    #[test]
    fn a_change_names_each_field_that_moved() {
        let t = StoreTable::parse("store_id,country,timezone,currency\nS1,GB,Europe/London,GBP\nS2,US,America/New_York,USD\n").unwrap();
        let (a, b) = (t.get("S1").unwrap().clone(), t.get("S2").unwrap().clone());
        let tz = StoreChange { old: a.clone(), new: Shop { timezone: b.timezone, ..a.clone() } };
        assert_eq!(tz.describe(), "store S1: time zone Europe/London → America/New_York");
        let all = StoreChange { old: a.clone(), new: Shop { store_id: a.store_id.clone(), ..b } };
        assert_eq!(all.describe(), "store S1: country GB → US, time zone Europe/London → America/New_York, currency GBP → USD");
    }

    #[test]
    fn good_file_parses() {
        let t = StoreTable::parse("store_id,country,timezone,currency\nS1,IN,Asia/Kolkata,INR\n").unwrap();
        assert_eq!(t.get("S1").unwrap().timezone, chrono_tz::Asia::Kolkata);
        assert!(t.get("S2").is_none());
    }
}
