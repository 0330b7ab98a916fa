//! What lets an audit read a foreign gold of any size within the memory budget: its rows sorted
//! by (date, grain) in runs that spill past a share of the budget and are merged as they are
//! read (`Sorter`), its verdicts kept in memory up to a share and written past it
//! (`SpilledRows`), totals by key that spill the same way (`KeyTotals`), and the one walk over
//! dates and keys that the retail audit and a model's take (`walk`). Every file is unnamed, in
//! the lab's spill folder: the system removes it when it is closed, or when the process dies, so
//! a killed audit leaves nothing behind.
//!
//! A record is written as a line of JSON (serde): the audit's rows are few fields of text and
//! integers, and JSON keeps an integer exact.

use super::{Cell, Note, Table};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where an audit of `lab` spills: the lab's spill folder, which a writer's open empties.
pub fn spill_of(lab: &crate::lake::Lab) -> PathBuf {
    lab.root.join(crate::store::SPILL_DIR)
}

/// The share of the memory budget each of an audit's two spilling stores holds in memory: the
/// rest of the budget is DuckDB's and the tallies' (`audit_where`).
pub fn share() -> u64 {
    (crate::store::memory_budget() / 16).max(1 << 20)
}

/// The runs a sorter or totals keep open at most: past it they are merged into one, so that a
/// gold of any size under a small budget opens a bounded number of files and merge buffers.
const MAX_RUNS: usize = 64;

/// `runs`, each sorted, merged into one sorted run in `dir`.
fn merged<T: Ord + Serialize + DeserializeOwned + 'static>(runs: Vec<Arc<File>>, dir: &Path) -> io::Result<Arc<File>> {
    let sources: Vec<RunSource<T>> = runs.into_iter().map(|f| Box::new(records::<T>(f)) as RunSource<T>).collect();
    let mut out = BufWriter::with_capacity(1 << 16, unnamed(dir)?);
    for row in Sorted::new(sources) {
        write_line(&mut out, &row?)?;
    }
    Ok(Arc::new(out.into_inner().map_err(io::IntoInnerError::into_error)?))
}

/// An unnamed file in `dir` (made if missing), removed by the system when its last handle closes.
fn unnamed(dir: &Path) -> io::Result<File> {
    std::fs::create_dir_all(dir)?;
    tempfile::tempfile_in(dir)
}

fn write_line<T: Serialize>(out: &mut BufWriter<File>, row: &T) -> io::Result<()> {
    serde_json::to_writer(&mut *out, row)?;
    out.write_all(b"\n")
}

/// A file read from its start by position, so that many readers share one handle.
struct At {
    file: Arc<File>,
    pos: u64,
}

impl Read for At {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// The records of a file `write_line` wrote, in order: a line at a time, each parsed from a
/// slice, which serde reads several times faster than a stream.
fn records<T: DeserializeOwned>(file: Arc<File>) -> impl Iterator<Item = io::Result<T>> {
    use std::io::BufRead;
    let mut reader = BufReader::with_capacity(1 << 16, At { file, pos: 0 });
    let mut line = Vec::new();
    std::iter::from_fn(move || {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => None,
            Ok(_) => Some(serde_json::from_slice(&line).map_err(io::Error::from)),
            Err(e) => Some(Err(e)),
        }
    })
}

/// Records in the order they were pushed: the first ones in memory, up to a byte limit, the rest
/// in an unnamed file. Read back as often as asked.
#[derive(Debug, Clone)]
pub struct SpilledRows<T> {
    held: Vec<T>,
    file: Option<Arc<File>>,
    spilled: usize,
}

impl<T> Default for SpilledRows<T> {
    fn default() -> Self {
        SpilledRows { held: Vec::new(), file: None, spilled: 0 }
    }
}

impl<T: Clone + DeserializeOwned> SpilledRows<T> {
    /// Records that are all held in memory.
    pub fn held(rows: Vec<T>) -> SpilledRows<T> {
        SpilledRows { held: rows, file: None, spilled: 0 }
    }

    pub fn len(&self) -> usize {
        self.held.len() + self.spilled
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether some of the records are on disk.
    pub fn spills(&self) -> bool {
        self.spilled > 0
    }

    /// Every record, in order; a spilled one read back from its file.
    pub fn iter(&self) -> impl Iterator<Item = io::Result<T>> + '_ {
        let spilled = self.file.iter().flat_map(|f| records::<T>(Arc::clone(f)));
        self.held.iter().cloned().map(Ok).chain(spilled)
    }

    /// The records of business date `d`, of records in date order (`date` reads a record's):
    /// an audit's date, as the explorer's Audit screen shows it, for retail's rows and a model's.
    pub fn of_date(&self, d: chrono::NaiveDate, date: impl Fn(&T) -> chrono::NaiveDate) -> io::Result<Vec<T>> {
        let mut rows = Vec::new();
        for r in self.iter() {
            let r = r?;
            match date(&r).cmp(&d) {
                std::cmp::Ordering::Greater => break,
                std::cmp::Ordering::Equal => rows.push(r),
                std::cmp::Ordering::Less => {}
            }
        }
        Ok(rows)
    }
}

impl<T: Serialize + Clone + DeserializeOwned> Serialize for SpilledRows<T> {
    /// As a sequence, read back a record at a time: a spilled audit is never held again whole.
    fn serialize<S: serde::Serializer>(&self, to: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let mut seq = to.serialize_seq(Some(self.len()))?;
        for row in self.iter() {
            seq.serialize_element(&row.map_err(S::Error::custom)?)?;
        }
        seq.end()
    }
}

/// Builds a `SpilledRows`: records held while their bytes stay within `limit`, then written.
pub struct SpillWriter<T> {
    held: Vec<T>,
    bytes: u64,
    limit: u64,
    dir: PathBuf,
    file: Option<BufWriter<File>>,
    spilled: usize,
}

impl<T: Serialize> SpillWriter<T> {
    pub fn new(dir: &Path, limit: u64) -> SpillWriter<T> {
        SpillWriter { held: Vec::new(), bytes: 0, limit, dir: dir.to_path_buf(), file: None, spilled: 0 }
    }

    /// Adds `row`, which takes about `bytes` in memory.
    pub fn push(&mut self, row: T, bytes: usize) -> io::Result<()> {
        if self.file.is_none() && self.bytes + bytes as u64 <= self.limit {
            self.bytes += bytes as u64;
            self.held.push(row);
            return Ok(());
        }
        let out = match &mut self.file {
            Some(out) => out,
            None => self.file.insert(BufWriter::with_capacity(1 << 16, unnamed(&self.dir)?)),
        };
        write_line(out, &row)?;
        self.spilled += 1;
        Ok(())
    }

    pub fn finish(self) -> io::Result<SpilledRows<T>> {
        let file = match self.file {
            Some(out) => Some(Arc::new(out.into_inner().map_err(io::IntoInnerError::into_error)?)),
            None => None,
        };
        Ok(SpilledRows { held: self.held, file, spilled: self.spilled })
    }
}

/// Sorts records of any number: sorted in memory while their bytes stay within `limit`, each
/// such run then written to a file of its own, the runs merged as they are read.
pub struct Sorter<T> {
    held: Vec<T>,
    bytes: u64,
    limit: u64,
    dir: PathBuf,
    runs: Vec<Arc<File>>,
}

impl<T: Ord + Serialize + DeserializeOwned + 'static> Sorter<T> {
    pub fn new(dir: &Path, limit: u64) -> Sorter<T> {
        Sorter { held: Vec::new(), bytes: 0, limit, dir: dir.to_path_buf(), runs: Vec::new() }
    }

    /// Adds `row`, which takes about `bytes` in memory.
    pub fn push(&mut self, row: T, bytes: usize) -> io::Result<()> {
        self.held.push(row);
        self.bytes += bytes as u64;
        if self.bytes > self.limit {
            self.held.sort();
            let mut out = BufWriter::with_capacity(1 << 16, unnamed(&self.dir)?);
            for row in self.held.drain(..) {
                write_line(&mut out, &row)?;
            }
            self.runs.push(Arc::new(out.into_inner().map_err(io::IntoInnerError::into_error)?));
            self.bytes = 0;
            if self.runs.len() >= MAX_RUNS {
                let run = merged::<T>(std::mem::take(&mut self.runs), &self.dir)?;
                self.runs.push(run);
            }
        }
        Ok(())
    }

    /// Every record, in order.
    pub fn finish(mut self) -> Sorted<'static, T> {
        self.held.sort();
        let mut sources: Vec<RunSource<T>> = vec![Box::new(self.held.into_iter().map(Ok))];
        sources.extend(self.runs.into_iter().map(|f| Box::new(records::<T>(f)) as RunSource<T>));
        Sorted::new(sources)
    }
}

type RunSource<'a, T> = Box<dyn Iterator<Item = io::Result<T>> + 'a>;

/// Sorted sources merged into one order: the least head first, ties by source.
pub struct Sorted<'a, T> {
    sources: Vec<RunSource<'a, T>>,
    heads: std::collections::BinaryHeap<std::cmp::Reverse<(T, usize)>>,
    failed: Option<io::Error>,
}

impl<'a, T: Ord> Sorted<'a, T> {
    fn new(mut sources: Vec<RunSource<'a, T>>) -> Sorted<'a, T> {
        let mut heads = std::collections::BinaryHeap::new();
        let mut failed = None;
        for (i, s) in sources.iter_mut().enumerate() {
            match s.next() {
                Some(Ok(row)) => heads.push(std::cmp::Reverse((row, i))),
                Some(Err(e)) => failed = Some(e),
                None => {}
            }
        }
        Sorted { sources, heads, failed }
    }
}

impl<T: Ord> Iterator for Sorted<'_, T> {
    type Item = io::Result<T>;

    fn next(&mut self) -> Option<io::Result<T>> {
        if let Some(e) = self.failed.take() {
            self.heads.clear();
            return Some(Err(e));
        }
        let std::cmp::Reverse((row, i)) = self.heads.pop()?;
        match self.sources[i].next() {
            Some(Ok(next)) => self.heads.push(std::cmp::Reverse((next, i))),
            Some(Err(e)) => self.failed = Some(e),
            None => {}
        }
        Some(Ok(row))
    }
}

/// Totals by text key, of any number of keys: a map while its keys fit `limit` bytes, then
/// written as a sorted run to `dir` (none: never) and begun again; the runs and the map are
/// added up again as they are merged (`each`).
#[derive(Debug, Clone)]
pub struct KeyTotals<V> {
    map: std::collections::BTreeMap<String, V>,
    bytes: u64,
    limit: u64,
    dir: Option<PathBuf>,
    runs: Vec<Arc<File>>,
}

impl<V> KeyTotals<V> {
    pub fn new(dir: Option<&Path>, limit: u64) -> KeyTotals<V> {
        KeyTotals { map: Default::default(), bytes: 0, limit, dir: dir.map(Path::to_path_buf), runs: Vec::new() }
    }
}

impl<V: Copy + Ord + Serialize + DeserializeOwned + std::ops::AddAssign + 'static> KeyTotals<V> {
    pub fn add(&mut self, key: &str, v: V) -> io::Result<()> {
        match self.map.get_mut(key) {
            Some(total) => *total += v,
            None => {
                self.map.insert(key.to_string(), v);
                // The key's bytes, its allocation and its share of the map's nodes.
                self.bytes += key.len() as u64 + 96;
            }
        }
        if let Some(dir) = &self.dir
            && self.bytes > self.limit
        {
            let mut out = BufWriter::with_capacity(1 << 16, unnamed(dir)?);
            for row in std::mem::take(&mut self.map) {
                write_line(&mut out, &row)?;
            }
            self.runs.push(Arc::new(out.into_inner().map_err(io::IntoInnerError::into_error)?));
            self.bytes = 0;
            if self.runs.len() >= MAX_RUNS {
                let run = merged::<(String, V)>(std::mem::take(&mut self.runs), dir)?;
                self.runs.push(run);
            }
        }
        Ok(())
    }

    /// Whether some totals are on disk.
    pub fn spills(&self) -> bool {
        !self.runs.is_empty()
    }

    /// Every key once, in order, with its total.
    pub fn each(&self, mut f: impl FnMut(&str, V)) -> io::Result<()> {
        let mut sources: Vec<RunSource<'_, (String, V)>> = vec![Box::new(self.map.iter().map(|(k, v)| Ok((k.clone(), *v))))];
        sources.extend(self.runs.iter().map(|r| Box::new(records::<(String, V)>(Arc::clone(r))) as RunSource<'_, _>));
        let mut pending: Option<(String, V)> = None;
        for item in Sorted::new(sources) {
            let (k, v) = item?;
            match &mut pending {
                Some((pk, pv)) if *pk == k => *pv += v,
                _ => {
                    if let Some((pk, pv)) = pending.replace((k, v)) {
                        f(&pk, pv);
                    }
                }
            }
        }
        if let Some((pk, pv)) = pending {
            f(&pk, pv);
        }
        Ok(())
    }
}

/// One audit's side of the walk (`walk`): the retail audit's and a model's.
pub trait Walk {
    /// A row's key on its date: a store, a model's grain.
    type Key: Ord + Clone;
    /// A row of the foreign gold.
    type Foreign;
    fn key(row: &Self::Foreign) -> (chrono::NaiveDate, &Self::Key);
    /// Date `d` begins: the keys of the lab's gold on it, in order.
    fn begin(&mut self, d: chrono::NaiveDate) -> color_eyre::Result<Vec<Self::Key>>;
    /// The key's verdict, from its foreign row (none when the foreign gold lacks it).
    fn row(&mut self, d: chrono::NaiveDate, key: &Self::Key, theirs: Option<Self::Foreign>) -> color_eyre::Result<()>;
    /// The error for a key the foreign gold gives twice.
    fn twice(&self, d: chrono::NaiveDate, key: &Self::Key) -> String;
}

/// An audit's walk: every date of the lab's gold (`dates`) and of the foreign gold, in order;
/// on each, the keys of both merged in order, each once, with its foreign row. `foreign` comes in
/// (date, key) order (`Sorter`), so neither side is ever held whole. A key given twice is an
/// error, before any row is printed.
pub fn walk<W: Walk>(
    w: &mut W,
    mut dates: Vec<chrono::NaiveDate>,
    foreign: impl Iterator<Item = io::Result<W::Foreign>>,
) -> color_eyre::Result<()> {
    use color_eyre::eyre::{WrapErr, bail};
    dates.sort();
    dates.dedup();
    let mut dates = dates.into_iter().peekable();
    let mut foreign = foreign.peekable();
    let mut last: Option<(chrono::NaiveDate, W::Key)> = None;
    loop {
        let next = match foreign.peek() {
            Some(Ok(r)) => Some(W::key(r).0),
            Some(Err(_)) => match foreign.next() {
                Some(Err(e)) => return Err(e).wrap_err("reading the foreign gold's sorted rows"),
                _ => None,
            },
            None => None,
        };
        let d = match (dates.peek().copied(), next) {
            (Some(a), Some(b)) => a.min(b),
            (Some(d), None) | (None, Some(d)) => d,
            (None, None) => return Ok(()),
        };
        dates.next_if_eq(&d);
        let mut ours = w.begin(d)?.into_iter().peekable();
        loop {
            let theirs = match foreign.peek() {
                Some(Ok(r)) if W::key(r).0 == d => Some(W::key(r).1),
                _ => None,
            };
            let key = match (ours.peek(), theirs) {
                (Some(a), Some(b)) => a.min(b).clone(),
                (Some(k), None) | (None, Some(k)) => k.clone(),
                (None, None) => break,
            };
            ours.next_if_eq(&key);
            let row = match foreign.next_if(|r| r.as_ref().is_ok_and(|r| W::key(r) == (d, &key))) {
                Some(row) => {
                    let row = row.wrap_err("reading the foreign gold's sorted rows")?;
                    if last.as_ref().is_some_and(|(ld, lk)| *ld == d && *lk == key) {
                        bail!(w.twice(d, &key));
                    }
                    last = Some((d, key.clone()));
                    Some(row)
                }
                None => None,
            };
            w.row(d, &key, row)?;
        }
    }
}

/// The rows an audit's table holds; the rest are streamed to JSON and CSV, and people's text
/// says how many more there are.
pub const HELD_ROWS: usize = 10_000;

/// A table's rows past the first `HELD_ROWS` of `listed`, handed to `each` as cells: the retail
/// audit's and a model's.
pub fn stream_rows<T>(
    listed: impl Iterator<Item = std::io::Result<T>>,
    cells: impl Fn(&T) -> Vec<Cell>,
    each: &mut dyn FnMut(crate::reports::Row) -> std::io::Result<()>,
) -> std::io::Result<()> {
    for r in listed.skip(HELD_ROWS) {
        each(crate::reports::Row { cells: cells(&r?), flag: None, drill: None, summary: false })?;
    }
    Ok(())
}

/// The first `HELD_ROWS` of `listed` pushed onto `t`; a row that cannot be read back ends the
/// table with a row that says so.
pub fn hold_rows<T>(t: &mut Table, listed: impl Iterator<Item = std::io::Result<T>>, cells: impl Fn(&T) -> Vec<Cell>) {
    for r in listed.take(HELD_ROWS) {
        match r {
            Ok(r) => t.push(cells(&r)),
            Err(e) => {
                t.push(vec![Cell::text(format!("(the audit's spilled rows could not be read back: {e})"))]);
                break;
            }
        }
    }
}

/// The note under a table that lists only its first `HELD_ROWS` of `n` rows.
pub fn held_note(n: usize) -> Option<Note> {
    let count = |k: usize| crate::money::format_count(i64::try_from(k).unwrap_or(i64::MAX));
    (n > HELD_ROWS).then(|| Note {
        status: super::Status::Info,
        text: format!("the table lists the first {} of {} rows; --format csv or json lists every one", count(HELD_ROWS), count(n)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past its limit a sorter writes runs and merges them: the order is the one a sort in
    /// memory gives, equal records included; a writer's spilled records come back in order.
    #[test]
    fn spilled_runs_merge_into_one_order() {
        let dir = tempfile::tempdir().unwrap();
        let rows: Vec<(u32, String)> = (0..5_000u32).map(|i| ((i * 7919) % 1_000, format!("k{}", i % 13))).collect();
        let mut sorter = Sorter::new(dir.path(), 100);
        for r in &rows {
            sorter.push(r.clone(), 10).unwrap();
        }
        assert!(!sorter.runs.is_empty() && sorter.runs.len() < MAX_RUNS, "it spilled, and merged its runs");
        let merged: Vec<(u32, String)> = sorter.finish().collect::<io::Result<_>>().unwrap();
        let mut sorted = rows.clone();
        sorted.sort();
        assert_eq!(merged, sorted);
        let mut w = SpillWriter::new(dir.path(), 100);
        for r in &rows {
            w.push(r.clone(), 10).unwrap();
        }
        let spilled = w.finish().unwrap();
        assert!(spilled.spills() && spilled.len() == rows.len());
        for _ in 0..2 {
            assert_eq!(spilled.iter().collect::<io::Result<Vec<_>>>().unwrap(), rows, "read back as often as asked");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the files have no names");
    }

    /// Totals past their limit are written as runs, and each key comes back once with the sum
    /// of its every addition, as a map in memory gives.
    #[test]
    fn spilled_totals_add_up_to_the_map_s() {
        let dir = tempfile::tempdir().unwrap();
        let mut spilled = KeyTotals::new(Some(dir.path()), 2_000);
        let mut held = std::collections::BTreeMap::<String, u64>::new();
        for i in 0..20_000u64 {
            let key = format!("k{}", (i * 7919) % 3_001);
            spilled.add(&key, i).unwrap();
            *held.entry(key).or_default() += i;
        }
        assert!(!spilled.runs.is_empty() && spilled.runs.len() < MAX_RUNS, "it spilled, and merged its runs");
        let mut merged = Vec::new();
        spilled.each(|k, v| merged.push((k.to_string(), v))).unwrap();
        assert_eq!(merged, held.into_iter().collect::<Vec<_>>());
    }
}
