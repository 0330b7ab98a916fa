//! The copies a recount counts, for every model (retail's included): one set of columns, one
//! encoding of a copy spilled to a bucket, one choice of each key's winner (the contract's copy
//! order, in polars) and one checked sum of the winners' measures per business date and group.
//! The recounts differ only in how they read a line (retail's contract reader, or a model's) and
//! what a group is (a store's row, or a model's grain and attributes).

use crate::store::buckets;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, eyre};
use polars::prelude::*;
use std::time::Duration;

/// One copy as a reader gives it, before it joins the columns or a spilled bucket.
pub struct ReadCopy<'a> {
    pub key: &'a str,
    pub event_id: &'a str,
    /// The arrival time, in nanoseconds since 1970.
    pub arrival: i64,
    /// Its file's place in raw-zone order (upload date, then name in byte order), and its line:
    /// the contract's order for exact ties.
    pub file_rank: u32,
    pub line: u32,
    /// The business date, in days since 1970.
    pub day: i32,
    /// Its group of gold: the row of the grain (and attributes) it is summed into, numbered by
    /// the recount.
    pub group: u32,
    /// One value per measure; a count's is 1.
    pub measures: &'a [i64],
}

/// The copies of one recount, or of one of its buckets, as columns.
#[derive(Default)]
pub struct Copies {
    /// Every copy's key, then its event id, one after another: one allocation for all the
    /// copies' text, not two per copy (a String's header and heap block cost more than most ids).
    ids: Vec<u8>,
    /// Where each copy's key ends in `ids`, and where its event id ends (the next key's start).
    key_end: Vec<usize>,
    event_end: Vec<usize>,
    arrival: Vec<i64>,
    file_rank: Vec<u32>,
    line: Vec<u32>,
    day: Vec<i32>,
    group: Vec<u32>,
    /// Every copy's measures, one after another, `width` each.
    measures: Vec<i64>,
    width: usize,
}

impl Copies {
    /// Columns for copies of `width` measures each.
    pub fn new(width: usize) -> Copies {
        Copies { width, ..Copies::default() }
    }

    pub fn len(&self) -> usize {
        self.key_end.len()
    }

    pub fn is_empty(&self) -> bool {
        self.key_end.is_empty()
    }

    pub fn push(&mut self, c: &ReadCopy<'_>) {
        self.ids.extend_from_slice(c.key.as_bytes());
        self.key_end.push(self.ids.len());
        self.ids.extend_from_slice(c.event_id.as_bytes());
        self.event_end.push(self.ids.len());
        self.arrival.push(c.arrival);
        self.file_rank.push(c.file_rank);
        self.line.push(c.line);
        self.day.push(c.day);
        self.group.push(c.group);
        self.measures.extend_from_slice(c.measures);
    }

    pub fn append(&mut self, other: Copies) {
        let shift = self.ids.len();
        self.ids.extend_from_slice(&other.ids);
        self.key_end.extend(other.key_end.iter().map(|e| e + shift));
        self.event_end.extend(other.event_end.iter().map(|e| e + shift));
        self.arrival.extend(other.arrival);
        self.file_rank.extend(other.file_rank);
        self.line.extend(other.line);
        self.day.extend(other.day);
        self.group.extend(other.group);
        self.measures.extend(other.measures);
    }

    /// Renumbers the copies' files: `rank` gives a file's place in raw-zone order from the
    /// number it was pushed with (a reader that meets files out of order ranks them after).
    pub fn rank_files(&mut self, rank: impl Fn(u32) -> u32) {
        self.file_rank.iter_mut().for_each(|f| *f = rank(*f));
    }

    /// A copy's payload in a spilled bucket; its key is the record's own (`Buckets::push`).
    /// `of_bucket` reads it back, in this order.
    pub fn encode(c: &ReadCopy<'_>, buf: &mut Vec<u8>) {
        buf.clear();
        buckets::put_str(buf, c.event_id);
        buckets::put_i64(buf, c.arrival);
        buckets::put_u32(buf, c.file_rank);
        buckets::put_u32(buf, c.line);
        buckets::put_u32(buf, c.day as u32);
        buckets::put_u32(buf, c.group);
        c.measures.iter().for_each(|&m| buckets::put_i64(buf, m));
    }

    /// A spilled bucket's copies (`encode`'s), `width` measures each. `group` turns a spilled
    /// copy's (file rank, group) into the recount's group: a file read on its own thread may
    /// number its groups by itself.
    pub fn of_bucket(records: buckets::Records<'_>, width: usize, group: impl Fn(u32, u32) -> Result<u32>) -> Result<Copies> {
        let mut c = Copies::new(width);
        let mut measures = vec![0i64; width];
        for r in records {
            let (key, payload) = r?;
            let mut f = buckets::Payload::new(payload);
            let (event_id, arrival, file_rank, line, day) = (f.str()?, f.i64()?, f.u32()?, f.u32()?, f.u32()? as i32);
            let local = f.u32()?;
            for m in measures.iter_mut() {
                *m = f.i64()?;
            }
            c.push(&ReadCopy {
                key: std::str::from_utf8(key).map_err(|_| eyre!("a spilled key is not UTF-8"))?,
                event_id,
                arrival,
                file_rank,
                line,
                day,
                group: group(file_rank, local)?,
                measures: &measures,
            });
        }
        Ok(c)
    }

    /// The index of each key's winning copy: the first in the contract's order. The ids' text is
    /// copied into polars' columns once, and the other order columns move there.
    fn winners(&mut self) -> Result<Vec<usize>> {
        let n = self.len();
        let idx: Vec<u32> = (0..n).map(|i| u32::try_from(i).unwrap_or(u32::MAX)).collect();
        // Pushed from text, so each id starts and ends on a character boundary of the whole.
        let all = std::str::from_utf8(&self.ids).map_err(|_| eyre!("a copy's id is not UTF-8"))?;
        let text = |name: &str, second: bool| {
            let values = (0..n).map(|i| {
                let start = if i == 0 { 0 } else { self.event_end[i - 1] };
                let range = if second { self.key_end[i]..self.event_end[i] } else { start..self.key_end[i] };
                all.get(range).unwrap_or_default()
            });
            StringChunked::from_iter_values(name.into(), values).into_column()
        };
        let (key, event_id) = (text("key", false), text("event_id", true));
        self.ids = Vec::new();
        let df = DataFrame::new(
            idx.len(),
            vec![
                key,
                Column::new("arrival".into(), std::mem::take(&mut self.arrival)),
                event_id,
                Column::new("file_rank".into(), std::mem::take(&mut self.file_rank)),
                Column::new("line".into(), std::mem::take(&mut self.line)),
                Column::new("idx".into(), idx),
            ],
        )
        .map_err(|e| eyre!("polars recount: {e}"))?;
        let first = first_copies(df, "key").map_err(|e| eyre!("polars recount: {e}"))?;
        let col = first.column("idx").and_then(|c| c.u32().cloned()).map_err(|e| eyre!("polars recount: {e}"))?;
        (0..col.len()).map(|i| col.get(i).map(|v| v as usize).ok_or_else(|| eyre!("a copy without its index"))).collect()
    }
}

/// The first copy of each `key` in the contract's order (`rules::copy_sort`). Only the keys sent
/// more than once are sorted: a key's only copy wins as it is, and most keys have one.
#[allow(deprecated)] // the eager frame: polars' lazy engine would add half an hour of build
pub fn first_copies(df: DataFrame, key: &str) -> PolarsResult<DataFrame> {
    let many = df.select([key])?.is_duplicated()?;
    let once = df.filter(&!&many)?;
    let sorted = df.filter(&many)?.sort(crate::rules::copy_sort(key), SortMultipleOptions::default().with_maintain_order(true))?;
    once.vstack(&sorted.unique_stable(Some(&[key.to_string()]), UniqueKeepStrategy::First, None)?)
}

/// The recount's sums so far, over every pass or bucket counted: each measure's sum of the
/// winners per (business date, group), every addition checked. The sums lie in one flat vector,
/// a group's measures side by side, found by FxHash of the pair: every winner is looked up once,
/// in a table that grows with the world's groups, so a lookup must be cheap and allocate nothing.
#[derive(Default)]
pub struct Sums {
    at: rustc_hash::FxHashMap<u64, usize>,
    /// (day, group) of each slot, in the order first met.
    keys: Vec<(i32, u32)>,
    sums: Vec<i64>,
    width: usize,
    /// Copies read, and keys counted (winners).
    pub copies: u64,
    pub entities: u64,
}

impl Sums {
    /// Adds `c` (a whole recount, or a bucket: every copy of its keys). A sum past 64 bits is an
    /// error, worded by `overflow(date, group, measure)`.
    pub fn add(&mut self, mut c: Copies, overflow: impl Fn(NaiveDate, u32, usize) -> String) -> Result<()> {
        self.copies += c.len() as u64;
        let winners = c.winners()?;
        self.entities += winners.len() as u64;
        let width = c.width;
        self.width = width;
        for w in winners {
            let (day, group) = (c.day[w], c.group[w]);
            let slot = *self.at.entry((u64::from(day as u32) << 32) | u64::from(group)).or_insert_with(|| {
                self.keys.push((day, group));
                self.sums.resize(self.sums.len() + width, 0);
                self.keys.len() - 1
            });
            let acc = &mut self.sums[slot * width..(slot + 1) * width];
            for (i, (a, v)) in acc.iter_mut().zip(&c.measures[w * width..(w + 1) * width]).enumerate() {
                *a = a.checked_add(*v).ok_or_else(|| eyre!("{}: the sum overflows 64 bits", overflow(date_of(day), group, i)))?;
            }
        }
        Ok(())
    }

    /// Each (business date, group) with its sums, in that order.
    pub fn rows(self) -> Vec<(NaiveDate, u32, Vec<i64>)> {
        let width = self.width;
        let mut rows: Vec<_> = self
            .keys
            .iter()
            .enumerate()
            .map(|(slot, &(d, g))| (date_of(d), g, self.sums[slot * width..(slot + 1) * width].to_vec()))
            .collect();
        rows.sort_by_key(|r| (r.0, r.1));
        rows
    }
}

/// A spilled recount's phases for `RECOUNT_PROFILE=1`, every model's alike: the files read into
/// the buckets, the buckets read back into columns, and the rest of the `total`, counting them.
pub fn phases(files: usize, buckets: u64, read: Duration, decoding: Duration, total: Duration) -> [(String, f64); 3] {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    [
        (format!("recount: read {files} files into {buckets} buckets"), ms(read)),
        ("recount: buckets read back".to_string(), ms(decoding)),
        ("recount: buckets counted".to_string(), ms(total.saturating_sub(read + decoding))),
    ]
}

/// Days since 1970 of a business date, as a copy keeps it.
pub fn day_of(d: NaiveDate) -> i32 {
    (d - chrono::DateTime::UNIX_EPOCH.date_naive()).num_days() as i32
}

fn date_of(day: i32) -> NaiveDate {
    chrono::DateTime::UNIX_EPOCH.date_naive() + chrono::Duration::days(i64::from(day))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copies(revenue: &[i64]) -> Copies {
        let mut c = Copies::new(2);
        for (i, &r) in revenue.iter().enumerate() {
            let (key, event) = (format!("B{i}"), format!("e{i}"));
            c.push(&ReadCopy {
                key: &key,
                event_id: &event,
                arrival: 0,
                file_rank: 0,
                line: i as u32,
                day: 20_000,
                group: 0,
                measures: &[1, r],
            });
        }
        c
    }

    /// The sums of a date and group are checked in Rust, not summed by polars, which wraps.
    #[test]
    fn a_sum_past_64_bits_is_an_error_naming_its_date() {
        let mut sums = Sums::default();
        let say = |d: NaiveDate, _, _| format!("{d}");
        sums.add(copies(&[7, 8]), say).unwrap();
        let err = format!("{:#}", sums.add(copies(&[i64::MAX - 10, 1]), say).unwrap_err());
        assert!(err.contains("2024-10-04") && err.contains("64 bits"), "{err}");
    }

    /// A key's copies give one winner, the first in the contract's order, whichever was pushed
    /// first: the earlier arrival, then the smaller event id.
    #[test]
    fn the_first_copy_in_the_contract_s_order_wins() {
        let mut c = Copies::new(1);
        let copy = |key, event_id, arrival, m: &'static [i64]| ReadCopy {
            key,
            event_id,
            arrival,
            file_rank: 0,
            line: 1,
            day: 1,
            group: 0,
            measures: m,
        };
        c.push(&copy("k", "e2", 5, &[10]));
        c.push(&copy("k", "e1", 5, &[20]));
        c.push(&copy("k", "e0", 6, &[40]));
        c.push(&copy("j", "e9", 9, &[1]));
        let mut sums = Sums::default();
        sums.add(c, |_, _, _| String::new()).unwrap();
        assert_eq!((sums.copies, sums.entities), (4, 2));
        assert_eq!(sums.rows(), vec![(date_of(1), 0, vec![21])]);
    }
}
