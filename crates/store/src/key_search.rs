//! The landing's search for basket keys with several copies (land.sql's key statements): the
//! split baskets, the colliding keys and the keys v2 ranks, grouped within the memory budget.

use super::{Exec, Query, Store, Tx, row, statements};
use color_eyre::eyre::Result;
use duckdb::named_params;

row! {
    pub struct KeyRows { pub rows: i64, pub bronze: i64 }
}

/// DuckDB memory a landed row's basket key is given while the landing groups the keys it
/// landed (`find_split_baskets_and_collisions`). The statement gets that much for its rows,
/// within DuckDB's share of the budget, and spills past it; keys are cut into slices only when
/// their rows would need more than the share. On two threads, much less spilled or ran out of
/// the limit (and a landing that runs out runs again whole), and more bought no time.
pub const KEY_BYTES: u64 = 24;

/// A landing whose rows are at least this fraction of bronze's (1/4) groups every key of bronze
/// to find the keys with several copies, rather than probe all of bronze with its own keys: the
/// probe is a join of bronze against a hash table of the new keys, which costs several times a
/// grouping of bronze's keys once the new keys are many (a store correction re-derives whole
/// files). A day's landing on a long history probes, and grows with its day.
const GROUP_ALL_PAST: i64 = 4;

/// How many slices `rows` rows' keys are grouped in, about `per_slice` rows each: a power of two,
/// since a slice is the keys whose low bits are its number.
pub fn key_slices(rows: i64, per_slice: i64) -> i64 {
    let n = (rows.max(0) as u64).div_ceil(per_slice.max(1) as u64).max(1);
    n.next_power_of_two().min(1 << 20) as i64
}

/// How a landing groups the keys of its `rows` rows within `cap` bytes of DuckDB's memory:
/// (slices, the memory a slice's statement is given). One slice while the rows' `KEY_BYTES`
/// fit the cap, else as few as fit (`rows_per_slice` overrides the count, for tests).
pub fn key_search_plan(rows: i64, cap: u64, rows_per_slice: Option<i64>) -> (i64, u64) {
    let per_slice = rows_per_slice.unwrap_or(i64::try_from(cap / KEY_BYTES).unwrap_or(i64::MAX).max(1));
    let slices = key_slices(rows, per_slice);
    let rows_each = u64::try_from(rows.max(0)).unwrap_or(0).div_ceil(slices as u64);
    (slices, rows_each.saturating_mul(KEY_BYTES).min(cap))
}

statements! {
    KEY_ROWS_CREATE: Exec = land::KEY_ROWS_CREATE;
    KEY_ROWS_COUNT: Query<KeyRows> = land::KEY_ROWS_COUNT;
    KEY_ROWS_GROUPED: Exec = land::KEY_ROWS_GROUPED;
    KEY_ROWS_SINCE: Exec = land::KEY_ROWS_SINCE;
    KEY_CANDIDATES: Exec = land::KEY_CANDIDATES;
    SPLIT_BASKETS_INSERT: Exec = land::SPLIT_BASKETS_INSERT;
    KEY_COLLISIONS_INSERT: Exec = land::KEY_COLLISIONS_INSERT;
    MULTI_COPIES_INSERT: Exec = land::MULTI_COPIES_INSERT;
}

impl Store {
    /// What the landing's search for keys with several copies may hold: DuckDB's share of the
    /// budget, or with `RECOUNT_MEMORY_LIMIT` its one limit.
    fn key_search_cap(&self) -> u64 {
        match self.limits {
            Some(_) => super::duckdb_share(super::memory_budget()),
            None => crate::parse_size(&std::env::var("RECOUNT_MEMORY_LIMIT").unwrap_or_default()).unwrap_or(u64::MAX),
        }
    }
}

/// The rows a landing added to bronze, whose keys the search looks up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LandedRows {
    /// The landing's first file id: 1 when every file in bronze is new (a first landing, a
    /// mirror and the layout 7 migration).
    pub first_file_id: i32,
    /// The first of the files re-derived for a store correction, which come last (`i32::MAX`:
    /// none). Of these, only the rows of `corrected_stores` are looked up: the others are their
    /// previous version's rows, whose keys were looked up when it landed.
    pub first_rederived_id: i32,
    pub corrected_stores: Vec<String>,
}

impl LandedRows {
    /// Every file from `first_file_id` on is looked up whole.
    pub fn all_from(first_file_id: i32) -> LandedRows {
        LandedRows { first_file_id, first_rederived_id: i32::MAX, corrected_stores: Vec::new() }
    }
}

impl Tx<'_> {
    /// Split baskets, colliding keys and keys with several copies among the rows `landed` names.
    /// Each list keeps a row once, so asking again adds nothing twice. Those rows' keys are
    /// grouped in one statement with `KEY_BYTES` of DuckDB's memory a row, within its share of
    /// the budget; when that is not enough, a slice of keys at a time (`key_slices`), so that the
    /// work grows with the rows landed, not with their square (`rows_per_slice`: the tests' own
    /// cut).
    pub fn find_split_baskets_and_collisions(&mut self, landed: &LandedRows, rows_per_slice: Option<i64>) -> Result<()> {
        let store_ids = serde_json::to_string(&landed.corrected_stores)?;
        let (first_file_id, first_rederived_id) = (landed.first_file_id, landed.first_rederived_id);
        let counted = named_params! { "first_file_id": first_file_id, "first_rederived_id": first_rederived_id, "store_ids": store_ids };
        let KeyRows { rows, bronze } = KEY_ROWS_COUNT.one(self.store, counted)?;
        let (slices, need) = key_search_plan(rows, self.store.key_search_cap(), rows_per_slice);
        let before = self.store.limit_now.get().filter(|_| self.store.limits.is_some());
        let raise = before.filter(|&now| need > now).map(|_| need);
        if let Some(limit) = raise {
            self.store.set_memory_limit(limit)?;
        }
        let found = self.find_in_slices(landed, &store_ids, slices, rows.saturating_mul(GROUP_ALL_PAST) >= bronze);
        match (raise, before) {
            (Some(_), Some(limit)) => found.and(self.store.set_memory_limit(limit)),
            _ => found,
        }
    }

    /// `grouped`: every key of bronze is grouped (`key_rows_grouped`), else bronze is probed
    /// with the new keys (`key_rows_since`).
    fn find_in_slices(&mut self, landed: &LandedRows, store_ids: &str, slices: i64, grouped: bool) -> Result<()> {
        let mask = slices - 1;
        self.exec("listing keys with several copies", &KEY_ROWS_CREATE, &[])?;
        let statement = if grouped { &KEY_ROWS_GROUPED } else { &KEY_ROWS_SINCE };
        for slice in 0..slices {
            let params = named_params! {
                "first_file_id": landed.first_file_id,
                "first_rederived_id": landed.first_rederived_id,
                "store_ids": store_ids,
                "mask": mask,
                "slice": slice,
            };
            self.exec("finding baskets with several copies", statement, params)?;
        }
        self.exec("listing keys with several copies", &MULTI_COPIES_INSERT, &[])?;
        self.exec("finding split or colliding keys", &KEY_CANDIDATES, &[])?;
        self.exec("finding split baskets", &SPLIT_BASKETS_INSERT, &[])?;
        self.exec("finding basket keys that collide", &KEY_COLLISIONS_INSERT, &[])?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_grouped_in_a_power_of_two_of_slices_of_about_so_many_rows() {
        const PER_SLICE: i64 = 2_000_000;
        assert_eq!(key_slices(0, PER_SLICE), 1, "nothing landed is one slice");
        assert_eq!(key_slices(1_999_999, PER_SLICE), 1);
        assert_eq!(key_slices(2_297_357, PER_SLICE), 2, "the full world's rows");
        assert_eq!(key_slices(4_594_714, PER_SLICE), 4, "twice its history: 3 slices' worth, 4 slices");
        assert_eq!(key_slices(9_170_713, PER_SLICE), 8, "four times");
        assert_eq!(key_slices(3_000_001, 1_000_000), 4, "4 slices, not 3: a slice is a key's low bits");
        assert_eq!(key_slices(10, 0), 16, "at least one row a slice");
        assert_eq!(key_slices(i64::MAX, 1), 1 << 20, "at most 2^20 slices");
    }

    #[test]
    fn a_landings_keys_are_grouped_at_once_when_the_budget_holds_them_and_in_slices_within_it_when_not() {
        let share = |budget: u64| crate::duckdb_share(budget);
        let (full, ten) = (2_297_357, 22_973_570);
        assert_eq!(key_search_plan(full, share(6 << 30), None), (1, full as u64 * KEY_BYTES), "the full world at once");
        assert_eq!(key_search_plan(ten, share(6 << 30), None), (1, ten as u64 * KEY_BYTES), "ten times it, at once");
        let (slices, limit) = key_search_plan(ten, share(512 << 20), None);
        assert_eq!(slices, 2, "a 512 MiB budget groups ten times the world in two slices");
        assert!(limit <= share(512 << 20) && limit >= ten as u64 / 2 * KEY_BYTES, "each within the share: {limit}");
        assert_eq!(key_search_plan(ten, u64::MAX, Some(7_000)).0, 4096, "a test's own cut");
        assert_eq!(key_search_plan(0, share(1 << 30), None), (1, 0), "nothing landed");
    }
}
