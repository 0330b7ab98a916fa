//! The two presets, as numbers in one place.

use crate::raw::{Shop, StoreTable};
use chrono::NaiveDate;
use rand::Rng;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Preset {
    /// About three weeks and 60 stores; committed under sample-data/. Spans London's
    /// 2026-10-25 change from summer time.
    Small,
    /// The real case: 128 upload partitions (2026-05-31 to 2026-10-05), 600 stores, ~2.3M events.
    Full,
}

impl Preset {
    pub fn name(self) -> &'static str {
        match self {
            Preset::Small => "small",
            Preset::Full => "full",
        }
    }

    // The presets' dates are literals the unit tests parse: an invariant, not input.
    #[allow(clippy::expect_used)]
    pub fn spec(self) -> WorldSpec {
        let d = |s: &str| s.parse::<NaiveDate>().expect("preset dates are valid");
        match self {
            Preset::Small => WorldSpec {
                first_upload: d("2026-10-12"),
                last_upload: d("2026-11-01"),
                stores_per_country: [22, 20, 18],
                baskets_per_store_day: (18, 32),
                // A demo world: more offline tills, so every day has late baskets to explain.
                offline_till_rate: 0.02,
                beyond_window_share: 0.1,
                gzip_level: 9,
                ..WorldSpec::base()
            },
            Preset::Full => WorldSpec {
                first_upload: d("2026-05-31"),
                last_upload: d("2026-10-05"),
                stores_per_country: [250, 200, 150],
                baskets_per_store_day: (20, 38),
                gzip_level: 1,
                ..WorldSpec::base()
            },
        }
    }
}

#[derive(Debug, Clone)]
pub struct WorldSpec {
    pub first_upload: NaiveDate,
    pub last_upload: NaiveDate,
    /// GB, IN, SG
    pub stores_per_country: [usize; 3],
    pub baskets_per_store_day: (u32, u32),
    pub offline_till_rate: f64,
    /// Of offline till-days, the share that arrives 3-4 days late: beyond a 2-day window.
    pub beyond_window_share: f64,
    pub resend_rate: f64,
    pub split_tender_rate: f64,
    pub gzip_level: u32,
}

pub struct CountryProfile {
    /// Minutes after local midnight, with weights, as (start, end, weight) bands.
    bands: &'static [(i64, i64, u32)],
    pub max_tills: u8,
    pub max_items: u32,
    pub unit_price: (i64, i64),
}

impl CountryProfile {
    pub fn sale_minute(&self, rng: &mut impl Rng) -> i64 {
        let total: u32 = self.bands.iter().map(|b| b.2).sum();
        let mut pick = rng.random_range(0..total);
        for &(start, end, w) in self.bands {
            if pick < w {
                return rng.random_range(start..end);
            }
            pick -= w;
        }
        unreachable!("pick is below the total weight")
    }
}

// GB: a few 24-hour stores sell just after midnight, which in summer time is the previous UTC day.
const GB: CountryProfile = CountryProfile {
    bands: &[(0, 60, 2), (7 * 60, 12 * 60, 300), (12 * 60, 18 * 60, 450), (18 * 60, 23 * 60 + 59, 248)],
    max_tills: 6,
    max_items: 3,
    unit_price: (99, 8_999),
};
// IN: electronics and jewellery; a day of one country passes 2^31 paise.
const IN: CountryProfile = CountryProfile {
    bands: &[(10 * 60, 14 * 60, 400), (14 * 60, 22 * 60, 600)],
    max_tills: 4,
    max_items: 2,
    unit_price: (49_900, 4_999_900),
};
// SG: tills open before 08:00 local, which is the previous UTC day.
const SG: CountryProfile = CountryProfile {
    bands: &[(7 * 60, 8 * 60, 15), (8 * 60, 14 * 60, 420), (14 * 60, 22 * 60, 565)],
    max_tills: 5,
    max_items: 3,
    unit_price: (199, 19_999),
};

impl WorldSpec {
    fn base() -> Self {
        WorldSpec {
            first_upload: NaiveDate::MIN,
            last_upload: NaiveDate::MIN,
            stores_per_country: [0, 0, 0],
            baskets_per_store_day: (0, 0),
            offline_till_rate: 0.005,
            beyond_window_share: 0.08,
            resend_rate: 0.025,
            split_tender_rate: 0.15,
            gzip_level: 6,
        }
    }

    pub fn profile(&self, country: &str) -> &'static CountryProfile {
        match country {
            "GB" => &GB,
            "IN" => &IN,
            _ => &SG,
        }
    }

    // The presets' zones are literals (Europe/London, Asia/Kolkata, …): an invariant, not input.
    #[allow(clippy::expect_used)]
    pub fn stores(&self) -> StoreTable {
        let countries = [("GB", "Europe/London", "GBP"), ("IN", "Asia/Kolkata", "INR"), ("SG", "Asia/Singapore", "SGD")];
        let mut stores = Vec::new();
        for ((country, zone, currency), n) in countries.iter().zip(self.stores_per_country) {
            for i in 1..=n {
                stores.push(Shop {
                    store_id: format!("{country}{i:03}"),
                    country: country.to_string(),
                    timezone: zone.parse().expect("preset zones are valid"),
                    currency: currency.to_string(),
                });
            }
        }
        StoreTable::new(stores)
    }
}
