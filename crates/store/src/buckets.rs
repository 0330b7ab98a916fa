//! Records spilled to disk in buckets by a hash of their key, then read back one bucket at a
//! time: how a recount larger than its share of the memory budget reads its raw files once
//! instead of once per pass. Every copy of a key lands in the same bucket, so each bucket is
//! deduplicated on its own and the buckets' sums add up. A bucket that outgrows the share is
//! split again from its own file, never by reading the raw zone again.
//!
//! A record is its key and a payload the caller encodes (`put_*`, read back with `Payload`).
//! The folder is `buckets-PID-N` in the spill folder the caller names, removed when the buckets
//! are dropped; a killed process's folder goes with the lab's spill folder at the next writer's
//! open (`lake::Lab::open`).

use color_eyre::eyre::{Result, WrapErr, eyre};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many bytes of a recount's working set one byte of a spilled copy becomes once its bucket
/// is read back: its columns' strings and headers, and polars' copy of them while it picks the
/// winners. A recount's bucket limit is its share of the budget over this.
pub const EXPANSION: u64 = 4;

/// What a writer holds for one bucket before it appends to the bucket's file.
const FLUSH_BYTES: usize = 64 << 10;

/// How many times a bucket is split again before it is taken whole: a bucket that does not
/// shrink is one key's copies, which no split can part.
const MAX_DEPTH: u64 = 3;

/// The most buckets open at once, one file each, well inside a process's usual limit of open
/// files: more are made by splitting a bucket again when it is read back (up to `MAX_DEPTH`).
const MAX_BUCKETS: u64 = 256;

/// Buckets being written: one file each, appended to by any number of `Sink`s.
pub struct Buckets {
    dir: Folder,
    files: Vec<Mutex<BufWriter<File>>>,
    seed: u64,
}

/// A folder of ours, removed with everything in it when dropped.
struct Folder(PathBuf);

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Buckets {
    /// `n` empty buckets (at most `MAX_BUCKETS`) in a new folder under `spill` (created if
    /// missing).
    pub fn create(spill: &Path, n: u64) -> Result<Buckets> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("buckets-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        std::fs::create_dir_all(spill).wrap_err_with(|| format!("creating {}", spill.display()))?;
        let dir = Folder(spill.join(name));
        std::fs::create_dir(&dir.0).wrap_err_with(|| format!("creating {}", dir.0.display()))?;
        Buckets::in_folder(dir, n, 0)
    }

    fn in_folder(dir: Folder, n: u64, seed: u64) -> Result<Buckets> {
        let mut files = Vec::new();
        for i in 0..n.clamp(1, MAX_BUCKETS) {
            let path = dir.0.join(format!("{seed}-{i}"));
            let f = File::create(&path).wrap_err_with(|| format!("creating {}", path.display()))?;
            files.push(Mutex::new(BufWriter::new(f)));
        }
        Ok(Buckets { dir, files, seed })
    }

    /// The bucket of `key`.
    fn of(&self, key: &[u8]) -> usize {
        let n = self.files.len() as u64;
        if n == 1 { 0 } else { (xxhash_rust::xxh3::xxh3_64_with_seed(key, self.seed) % n) as usize }
    }

    /// A writer of records, buffering each bucket's share before it appends: one per thread.
    pub fn sink(&self) -> Sink<'_> {
        Sink { buckets: self, buffers: vec![Vec::new(); self.files.len()] }
    }

    /// Every bucket written: flushed and ready to be read back.
    pub fn finish(self) -> Result<Spilled> {
        let mut paths = Vec::new();
        for (i, f) in self.files.into_iter().enumerate() {
            let f = f.into_inner().map_err(|_| eyre!("a bucket's writer panicked"))?;
            // Flushed, not synced: the buckets live for this process only.
            f.into_inner().map_err(|e| eyre!("writing a spilled bucket: {}", e.error()))?;
            paths.push(self.dir.0.join(format!("{}-{i}", self.seed)));
        }
        Ok(Spilled { dir: self.dir, paths, seed: self.seed })
    }
}

/// One thread's writer into `Buckets`. `flush` before dropping it: what it still holds is lost.
pub struct Sink<'a> {
    buckets: &'a Buckets,
    buffers: Vec<Vec<u8>>,
}

impl Sink<'_> {
    /// Adds a record: `key` decides its bucket; `payload` is the caller's encoding.
    pub fn push(&mut self, key: &[u8], payload: &[u8]) -> Result<()> {
        let b = self.buckets.of(key);
        let buf = &mut self.buffers[b];
        frame(buf, key, payload)?;
        if buf.len() >= FLUSH_BYTES { self.write(b) } else { Ok(()) }
    }

    fn write(&mut self, b: usize) -> Result<()> {
        let mut file = self.buckets.files[b].lock().map_err(|_| eyre!("a bucket's writer panicked"))?;
        file.write_all(&self.buffers[b]).wrap_err("writing a spilled bucket (is the disk full?)")?;
        self.buffers[b].clear();
        Ok(())
    }

    /// Appends everything held to the buckets' files.
    pub fn flush(&mut self) -> Result<()> {
        (0..self.buffers.len()).try_for_each(|b| if self.buffers[b].is_empty() { Ok(()) } else { self.write(b) })
    }
}

fn frame(buf: &mut Vec<u8>, key: &[u8], payload: &[u8]) -> Result<()> {
    let len = |n: usize| u32::try_from(n).map_err(|_| eyre!("a spilled record past 4 GiB"));
    buf.extend_from_slice(&len(key.len())?.to_le_bytes());
    buf.extend_from_slice(&len(payload.len())?.to_le_bytes());
    buf.extend_from_slice(key);
    buf.extend_from_slice(payload);
    Ok(())
}

/// Buckets written, to be read back one at a time.
pub struct Spilled {
    dir: Folder,
    paths: Vec<PathBuf>,
    seed: u64,
}

impl Spilled {
    /// Calls `each` with every bucket's records, one bucket at a time. A bucket of more than
    /// `limit` bytes is first split into as many smaller ones as it needs, by another hash of the
    /// same keys. Each bucket's file is removed once it is read.
    pub fn each(self, limit: u64, each: &mut dyn FnMut(Records<'_>) -> Result<()>) -> Result<()> {
        let limit = limit.max(1);
        for path in &self.paths {
            let size = std::fs::metadata(path).wrap_err_with(|| format!("reading {}", path.display()))?.len();
            if size > limit && self.seed < MAX_DEPTH {
                let parts = size.div_ceil(limit);
                let dir = self.dir.0.join(format!("split-{}", self.seed + 1));
                std::fs::create_dir(&dir).wrap_err_with(|| format!("creating {}", dir.display()))?;
                let sub = split(path, Buckets::in_folder(Folder(dir), parts, self.seed + 1)?)?;
                std::fs::remove_file(path).ok();
                sub.each(limit, each)?;
                continue;
            }
            let bytes = std::fs::read(path).wrap_err_with(|| format!("reading {}", path.display()))?;
            std::fs::remove_file(path).ok();
            each(Records { bytes: &bytes, at: 0 })?;
        }
        Ok(())
    }
}

/// Moves the records of the file at `path` into `into`'s buckets, reading it in a stream.
fn split(path: &Path, into: Buckets) -> Result<Spilled> {
    let mut input = BufReader::new(File::open(path).wrap_err_with(|| format!("reading {}", path.display()))?);
    let mut sink = into.sink();
    let (mut head, mut record) = ([0u8; 8], Vec::new());
    loop {
        match input.read_exact(&mut head) {
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            other => other.wrap_err("reading a spilled bucket")?,
        }
        let (k, p) = (u32::from_le_bytes([head[0], head[1], head[2], head[3]]), u32::from_le_bytes([head[4], head[5], head[6], head[7]]));
        record.resize(k as usize + p as usize, 0);
        input.read_exact(&mut record).wrap_err("reading a spilled bucket")?;
        sink.push(&record[..k as usize], &record[k as usize..])?;
    }
    sink.flush()?;
    drop(sink);
    into.finish()
}

/// One bucket's records, in the order they were written per writer.
pub struct Records<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Records<'a> {
    /// A record's key and payload; an error for a cut record.
    type Item = Result<(&'a [u8], &'a [u8])>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.bytes.len() {
            return None;
        }
        let mut f = Payload { bytes: self.bytes, at: self.at };
        let record = (|| {
            let (k, p) = (f.u32()? as usize, f.u32()? as usize);
            Ok((f.take(k)?, f.take(p)?))
        })();
        self.at = if record.is_ok() { f.at } else { self.bytes.len() };
        Some(record)
    }
}

/// Appends `v` to a payload.
pub fn put_u32(buf: &mut Vec<u8>, v: u32) {
    buf.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` to a payload.
pub fn put_i64(buf: &mut Vec<u8>, v: i64) {
    buf.extend_from_slice(&v.to_le_bytes());
}

/// Appends `s`, with its length, to a payload.
pub fn put_str(buf: &mut Vec<u8>, s: &str) {
    put_u32(buf, u32::try_from(s.len()).unwrap_or(u32::MAX));
    buf.extend_from_slice(s.as_bytes());
}

/// A payload read back field by field, in the order `put_*` wrote them.
pub struct Payload<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Payload<'a> {
    pub fn new(bytes: &'a [u8]) -> Payload<'a> {
        Payload { bytes, at: 0 }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| eyre!("a spilled record is cut short"))?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    pub fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    pub fn i64(&mut self) -> Result<i64> {
        let b = self.take(8)?;
        Ok(i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }

    pub fn str(&mut self) -> Result<&'a str> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).map_err(|_| eyre!("a spilled record's text is not UTF-8"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(i: u64) -> Vec<u8> {
        let mut p = Vec::new();
        put_i64(&mut p, i as i64);
        put_str(&mut p, &format!("event-{i}"));
        p
    }

    /// Every record comes back once, every copy of a key in the same bucket, however small the
    /// limit makes the buckets split; the folder is gone after.
    #[test]
    fn every_record_comes_back_once_with_its_key_s_copies_in_one_bucket() {
        let spill = tempfile::tempdir().unwrap();
        for (n, limit) in [(1, u64::MAX), (4, u64::MAX), (3, 200), (1, 64)] {
            let buckets = Buckets::create(spill.path(), n).unwrap();
            let mut sink = buckets.sink();
            for i in 0..500u64 {
                sink.push(format!("key-{}", i % 97).as_bytes(), &payload(i)).unwrap();
            }
            sink.flush().unwrap();
            drop(sink);
            let (mut seen, mut home) = (Vec::new(), std::collections::HashMap::new());
            let mut bucket = 0;
            buckets
                .finish()
                .unwrap()
                .each(limit, &mut |records| {
                    bucket += 1;
                    for r in records {
                        let (key, p) = r.unwrap();
                        let mut f = Payload::new(p);
                        let i = f.i64().unwrap();
                        assert_eq!(f.str().unwrap(), format!("event-{i}"));
                        assert_eq!(*home.entry(key.to_vec()).or_insert(bucket), bucket, "a key's copies in two buckets");
                        seen.push(i);
                    }
                    Ok(())
                })
                .unwrap();
            seen.sort();
            assert_eq!(seen, (0..500).map(|i| i as i64).collect::<Vec<_>>(), "{n} buckets, limit {limit}");
            if limit < 1000 {
                assert!(bucket > n, "a small limit splits the buckets: {bucket} read from {n}");
            }
            assert_eq!(std::fs::read_dir(spill.path()).unwrap().count(), 0, "the buckets' folder is removed");
        }
    }

    /// However many buckets are asked for, at most `MAX_BUCKETS` files are open at once; a
    /// bucket past the limit is split again, and every record still comes back.
    #[test]
    fn at_most_256_buckets_are_open_and_smaller_ones_come_from_splitting() {
        let spill = tempfile::tempdir().unwrap();
        let buckets = Buckets::create(spill.path(), 100_000).unwrap();
        assert_eq!(buckets.files.len() as u64, MAX_BUCKETS);
        let mut sink = buckets.sink();
        for i in 0..20_000u64 {
            sink.push(format!("key-{i}").as_bytes(), &payload(i)).unwrap();
        }
        sink.flush().unwrap();
        drop(sink);
        let (mut seen, mut largest) = (0, 0);
        buckets
            .finish()
            .unwrap()
            .each(2_000, &mut |records| {
                let bytes: Vec<_> = records.map(|r| r.unwrap()).collect();
                largest = largest.max(bytes.iter().map(|(k, p)| 8 + k.len() + p.len()).sum::<usize>());
                seen += bytes.len();
                Ok(())
            })
            .unwrap();
        assert_eq!(seen, 20_000);
        assert!(largest <= 2_000, "every bucket read back within the limit: {largest} bytes");
    }

    #[test]
    fn a_cut_record_is_an_error_not_a_panic() {
        let mut buf = Vec::new();
        frame(&mut buf, b"k", &payload(1)).unwrap();
        buf.truncate(buf.len() - 3);
        let got: Vec<_> = Records { bytes: &buf, at: 0 }.collect();
        assert_eq!(got.len(), 1);
        assert!(got[0].is_err());
    }
}
