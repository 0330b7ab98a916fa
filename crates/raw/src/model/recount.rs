//! The independent recount of any model, from a world's raw files: every current line read with
//! the model, the copies of each business key ordered by the contract's rule (arrival, event id,
//! then raw-zone order: upload date, file name, line) and the first kept, in polars; then grouped
//! by business date and grain, every sum checked for overflow. It runs in passes by a hash of the
//! key when the world outgrows its share of the memory budget. No lateness window: it is the
//! truth v1 and v2 are checked against. Its fingerprint is the contract's, in the model's columns.

use super::Model;
use super::copies::{self, Copies, ReadCopy, Sums};
use super::read::{DimensionTable, LineReader, RecordView};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use std::path::Path;

/// One gold row of a model: the date, the grain's and attributes' values, each measure.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ModelRow {
    pub business_date: NaiveDate,
    pub grain: Vec<String>,
    pub attributes: Vec<String>,
    pub measures: Vec<i64>,
}

/// A line the model refused: where, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Refused {
    pub file: String,
    pub line: usize,
    pub reason: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelRecount {
    pub rows: Vec<ModelRow>,
    /// Lines read as records (every copy).
    pub copies: u64,
    /// Distinct business keys: the entities counted.
    pub entities: u64,
    pub refused: Vec<Refused>,
    pub files: usize,
}

/// The dimension table of a world, read inside the world.
pub fn dimension_of(world: &Path, model: &Model) -> Result<DimensionTable> {
    match &model.dimension {
        None => Ok(DimensionTable::default()),
        Some(d) => {
            let path = crate::raw::world_file(world, &d.file, "model.dimension.file")?;
            crate::raw::inside_world(world, &path)?;
            DimensionTable::parse(model, &crate::raw::read_small_file(&path)?)
        }
    }
}

/// The files of every upload partition under the model's events root, in raw-zone order, each
/// with its upload date and its name in the upload.
pub fn files_of(world: &Path, model: &Model) -> Result<Vec<(NaiveDate, String, std::path::PathBuf)>> {
    let root = crate::raw::world_file(world, &model.events_root, "model.events_root")?;
    if !root.is_dir() {
        bail!("{}: no folder {} holds this model's uploads", world.display(), model.events_root);
    }
    crate::raw::inside_world(world, &root)?;
    let mut files = Vec::new();
    for d in partitions(&root)? {
        let dir = partition(&root, d);
        crate::raw::inside_world(world, &dir)?;
        for path in crate::raw::files_below(&dir)? {
            let name = path.strip_prefix(&dir).unwrap_or(&path).to_string_lossy().into_owned();
            if name.ends_with(".jsonl.gz") {
                crate::raw::inside_world(world, &path)?;
                files.push((d, name, path));
            }
        }
    }
    if files.is_empty() {
        bail!("{}: no upload partition holds a .jsonl.gz file", root.display());
    }
    files.sort_by(|a, b| (a.0, a.1.as_bytes()).cmp(&(b.0, b.1.as_bytes())));
    Ok(files)
}

/// A model's partition folder: `ROOT/upload_date=YYYY-MM-DD`.
pub fn partition(root: &Path, d: NaiveDate) -> std::path::PathBuf {
    root.join(format!("upload_date={d}"))
}

/// The upload dates under `root`, oldest first; a folder with another name is an error, as in the
/// contract's layout (a typo would hide a day).
fn partitions(root: &Path) -> Result<Vec<NaiveDate>> {
    let mut dates = Vec::new();
    for entry in std::fs::read_dir(root).wrap_err_with(|| format!("reading {}", root.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_dir() && !name.starts_with('.') && !name.starts_with('_') {
            dates.push(crate::raw::parse_partition_name(&name).map_err(|e| eyre!("{e} (in {})", root.display()))?);
        }
    }
    dates.sort();
    Ok(dates)
}

/// What one copy holds in the recount's working set beside its ids' text: its columns, the
/// strings' headers and allocations, and the sort's copy of them.
const COPY_BYTES: u64 = 256;

/// Each distinct (grain, attributes) a recount has met, numbered: a copy keeps its number.
#[derive(Default)]
struct Groups {
    index: std::collections::HashMap<String, u32>,
    values: Vec<(Vec<String>, Vec<String>)>,
}

impl Groups {
    /// The number of the view's group (one text key, reused, so that a known group allocates
    /// nothing).
    fn number(&mut self, buf: &mut String, grain: &[&str], attributes: &[String]) -> Result<u32> {
        buf.clear();
        for g in grain {
            buf.push_str(g);
            buf.push('\u{1f}');
        }
        buf.push('\u{1e}');
        for a in attributes {
            buf.push_str(a);
            buf.push('\u{1f}');
        }
        if let Some(&n) = self.index.get(buf.as_str()) {
            return Ok(n);
        }
        let n = u32::try_from(self.values.len()).map_err(|_| eyre!("more than 2^32 groups of gold"))?;
        self.values.push((grain.iter().map(|g| g.to_string()).collect(), attributes.to_vec()));
        self.index.insert(buf.clone(), n);
        Ok(n)
    }
}

/// Recounts `world` with `model`, in as many passes as the recount's share of the memory budget
/// needs.
pub fn recount(world: &Path, model: &Model) -> Result<ModelRecount> {
    recount_in_passes(world, model, None)
}

/// The recount's share of the memory budget.
fn share() -> u64 {
    (crate::store::memory_budget() / 4).max(1)
}

/// `recount` in `passes` buckets (None: as the budget needs), spilling to the system's
/// temporary folder when it needs more than one: a world is not the recount's to write in.
pub fn recount_in_passes(world: &Path, model: &Model, passes: Option<u64>) -> Result<ModelRecount> {
    model.validate()?;
    if *model == super::retail() {
        // Retail's lines have rules of their own (a till, the currency against the store's, the
        // contract's shapes): its recount is the lab's (`recompute`), never this reader's.
        bail!("the retail model is recounted in the lab (`recount check`), through the contract's own reader");
    }
    let dims = dimension_of(world, model)?;
    let files = files_of(world, model)?;
    recount_files(model, &dims, &files, passes, &std::env::temp_dir())
}

/// The recount of `files` (upload date, name in the upload, where its bytes are; in raw-zone
/// order) with `dims`: a lab recounts its current file versions this way. With `passes` None it
/// starts in memory; when the copies outgrow the recount's share of the budget, it starts again
/// and reads the files once into as many buckets, spilled under `spill`, as the bytes read so far
/// say they need, then counts bucket by bucket (`spilled`). `Some(n)` asks for n buckets.
pub fn recount_files(
    model: &Model,
    dims: &DimensionTable,
    files: &[(NaiveDate, String, std::path::PathBuf)],
    passes: Option<u64>,
    spill: &Path,
) -> Result<ModelRecount> {
    let need = match passes {
        Some(n) if n > 1 => n,
        _ => {
            let sizes: Vec<u64> = files.iter().map(|f| std::fs::metadata(&f.2).map(|m| m.len()).unwrap_or(0)).collect();
            match in_memory(model, dims, files, passes.is_none().then(|| (share(), sizes.as_slice())))? {
                Ok(done) => return Ok(done),
                // Twice the buckets the copies' estimate asks: a bucket's spilled bytes and its
                // columns are in memory together while it is read back.
                Err(need) => need.saturating_mul(2),
            }
        }
    };
    spilled(model, dims, files, need, spill)
}

/// Gives `each` every record of `files` with its file's place in raw-zone order and its line,
/// and lists the refused lines; `each` answers whether to go on. False when it stopped.
fn read_files(
    model: &Model,
    dims: &DimensionTable,
    files: &[(NaiveDate, String, std::path::PathBuf)],
    refused: &mut Vec<Refused>,
    mut each: impl FnMut(RecordView<'_>, u32, u32) -> Result<bool>,
) -> Result<bool> {
    let reader = LineReader::new(model, dims)?;
    for (rank, file) in files.iter().enumerate() {
        if !read_file(&reader, rank, file, refused, &mut each)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `read_files` for the file of place `rank`.
fn read_file(
    reader: &LineReader<'_>,
    rank: usize,
    (upload, name, path): &(NaiveDate, String, std::path::PathBuf),
    refused: &mut Vec<Refused>,
    each: &mut impl FnMut(RecordView<'_>, u32, u32) -> Result<bool>,
) -> Result<bool> {
    let bytes = crate::raw::read_gz_bytes(path)?;
    let rank = u32::try_from(rank).unwrap_or(u32::MAX);
    for (i, raw) in crate::raw::split_lines(&bytes).enumerate() {
        let refuse = |reason| Refused { file: format!("upload_date={upload}/{name}"), line: i + 1, reason };
        let line = match crate::raw::line_text(raw) {
            Ok(line) if !line.trim().is_empty() => line,
            Ok(_) => continue,
            Err(reason) => {
                refused.push(refuse(reason));
                continue;
            }
        };
        match reader.read_with(line, *upload, |r| each(r, rank, u32::try_from(i + 1).unwrap_or(u32::MAX))) {
            Ok(go_on) => {
                if !go_on? {
                    return Ok(false);
                }
            }
            Err(reason) => refused.push(refuse(reason)),
        }
    }
    Ok(true)
}

/// The recount in memory; with `limit` (the share, each file's size), Err(buckets) when the
/// copies outgrew the share: the buckets the whole would need.
fn in_memory(
    model: &Model,
    dims: &DimensionTable,
    files: &[(NaiveDate, String, std::path::PathBuf)],
    limit: Option<(u64, &[u64])>,
) -> Result<Result<ModelRecount, u64>> {
    let (mut refused, mut groups, mut buf) = (Vec::new(), Groups::default(), String::new());
    let (mut copies, mut bytes) = (Copies::new(model.measures.len()), 0u64);
    let width = model.measures.len() as u64;
    let (mut need, mut file) = (None, 0);
    let done = read_files(model, dims, files, &mut refused, |r, rank, line| {
        if let Some((share, sizes)) = limit {
            // The copies so far, over the part of the files read (every file before this one,
            // or with this one once they pass the share): the whole's. Known after the first
            // file, so a world that cannot fit wastes that file's read, not the share's.
            let upto = if bytes > share { rank as usize + 1 } else { rank as usize };
            if upto > file || bytes > share {
                file = upto;
                let (total, read): (u64, u64) = (sizes.iter().sum(), sizes[..upto].iter().sum());
                let whole = u128::from(bytes) * u128::from(total.max(1)) / u128::from(read.max(1));
                if whole > u128::from(share) {
                    need = Some(u64::try_from(whole.div_ceil(u128::from(share))).unwrap_or(u64::MAX).max(2));
                    return Ok(false);
                }
            }
        }
        bytes += COPY_BYTES + 2 * (r.key.len() + r.event_id.len()) as u64 + 16 * width;
        let group = groups.number(&mut buf, &r.grain, r.attributes)?;
        copies.push(&read_copy(&r, rank, line, group));
        Ok(true)
    })?;
    if let (false, Some(need)) = (done, need) {
        return Ok(Err(need));
    }
    let mut sums = Sums::default();
    add(model, &mut sums, &groups, copies)?;
    Ok(Ok(counted(sums, &groups, refused, files.len())))
}

/// A record as the recount's copy of it, in group `group`.
fn read_copy<'r>(r: &'r RecordView<'_>, file_rank: u32, line: u32, group: u32) -> ReadCopy<'r> {
    ReadCopy {
        key: r.key,
        event_id: r.event_id,
        arrival: r.arrival.timestamp_nanos_opt().unwrap_or(i64::MAX),
        file_rank,
        line,
        day: copies::day_of(r.business_date),
        group,
        measures: &r.measures,
    }
}

/// The recount's answer from its sums.
fn counted(sums: Sums, groups: &Groups, refused: Vec<Refused>, files: usize) -> ModelRecount {
    let (copies, entities) = (sums.copies, sums.entities);
    ModelRecount { rows: gold_rows(sums, groups), copies, entities, refused, files }
}

/// The recount in one read of the files into `n` buckets by key, spilled under `spill`, then
/// bucket by bucket: every copy of a key is in one bucket, so the buckets' sums add up. A bucket
/// past the share is split again from its own file.
fn spilled(
    model: &Model,
    dims: &DimensionTable,
    files: &[(NaiveDate, String, std::path::PathBuf)],
    n: u64,
    spill: &Path,
) -> Result<ModelRecount> {
    use crate::store::buckets;
    use rayon::prelude::*;
    let (spilling, started) = (buckets::Buckets::create(spill, n)?, std::time::Instant::now());
    let reader = LineReader::new(model, dims)?;
    // Files are read in parallel, each numbering its own groups; the numbers are made the
    // recount's in raw-zone order after, and a spilled copy's (file, its group) finds its own.
    let parts: Vec<Result<(Vec<Refused>, Groups)>> = files
        .par_iter()
        .enumerate()
        .map(|(rank, file)| {
            let (mut sink, mut groups, mut buf, mut payload, mut refused) =
                (spilling.sink(), Groups::default(), String::new(), Vec::new(), Vec::new());
            read_file(&reader, rank, file, &mut refused, &mut |r, rank, line| {
                let group = groups.number(&mut buf, &r.grain, r.attributes)?;
                Copies::encode(&read_copy(&r, rank, line, group), &mut payload);
                sink.push(r.key.as_bytes(), &payload).map(|()| true)
            })?;
            sink.flush()?;
            Ok((refused, groups))
        })
        .collect();
    let (mut refused, mut groups, mut buf, mut of_file) = (Vec::new(), Groups::default(), String::new(), Vec::new());
    for part in parts {
        let (r, local) = part?;
        refused.extend(r);
        let mut numbers = Vec::with_capacity(local.values.len());
        for (grain, attributes) in &local.values {
            let grain: Vec<&str> = grain.iter().map(String::as_str).collect();
            numbers.push(groups.number(&mut buf, &grain, attributes)?);
        }
        of_file.push(numbers);
    }
    let (mut sums, read, mut decoding) = (Sums::default(), started.elapsed(), std::time::Duration::ZERO);
    spilling.finish()?.each(share() / buckets::EXPANSION, &mut |records| {
        let t = std::time::Instant::now();
        let copies = Copies::of_bucket(records, model.measures.len(), |rank, local| {
            of_file
                .get(rank as usize)
                .and_then(|g| g.get(local as usize))
                .copied()
                .ok_or_else(|| eyre!("a spilled copy's group is unknown"))
        })?;
        decoding += t.elapsed();
        add(model, &mut sums, &groups, copies)
    })?;
    crate::progress::profile(&copies::phases(files.len(), n, read, decoding, started.elapsed()));
    Ok(counted(sums, &groups, refused, files.len()))
}

/// The sums as gold's rows, in (date, grain) order.
fn gold_rows(sums: Sums, groups: &Groups) -> Vec<ModelRow> {
    let mut rows: Vec<ModelRow> = sums
        .rows()
        .into_iter()
        .map(|(business_date, group, measures)| {
            let (grain, attributes) = groups.values[group as usize].clone();
            ModelRow { business_date, grain, attributes, measures }
        })
        .collect();
    rows.sort_by(|a, b| (a.business_date, &a.grain, &a.attributes).cmp(&(b.business_date, &b.grain, &b.attributes)));
    rows
}

/// One copy of an entity as bronze keeps it: a warehouse's mirror keeps no raw bytes, so its
/// recount reads the records its landing read, under the same dedup and sums.
pub struct BronzeCopy {
    pub key: String,
    pub event_id: String,
    pub arrival_ns: i64,
    /// Its file's place in raw-zone order (upload date, then name), and its line there.
    pub file_rank: u32,
    pub line: u32,
    pub business_date: NaiveDate,
    pub grain: Vec<String>,
    pub attributes: Vec<String>,
    pub measures: Vec<i64>,
}

/// A reader of bronze's copies for one pass: `(passes, pass, push)` gives `push` every copy
/// whose key falls in pass `pass` of `passes`.
pub type BronzeReader<'a> = dyn FnMut(u64, u64, &mut dyn FnMut(BronzeCopy) -> Result<()>) -> Result<()> + 'a;

/// The most passes a mirror's recount of bronze reads before it says the budget is too small.
const MAX_PASSES: u64 = 1024;

/// The recount of bronze's current copies (`files` file versions, about `bytes` of ids), in as
/// many passes by key as the recount's share of the memory budget needs.
pub fn recount_bronze(model: &Model, bytes: u64, files: usize, read: &mut BronzeReader<'_>) -> Result<ModelRecount> {
    let passes = bytes.div_ceil(share()).max(1);
    if passes > MAX_PASSES {
        bail!(
            "the recount of {} needs more than {MAX_PASSES} passes in its share of the memory budget ({} MiB): raise --memory",
            model.gold,
            share() >> 20
        );
    }
    let (mut sums, mut groups, mut buf) = (Sums::default(), Groups::default(), String::new());
    for pass in 0..passes {
        let mut copies = Copies::new(model.measures.len());
        read(passes, pass, &mut |c: BronzeCopy| {
            let grain: Vec<&str> = c.grain.iter().map(String::as_str).collect();
            let group = groups.number(&mut buf, &grain, &c.attributes)?;
            copies.push(&ReadCopy {
                key: &c.key,
                event_id: &c.event_id,
                arrival: c.arrival_ns,
                file_rank: c.file_rank,
                line: c.line,
                day: copies::day_of(c.business_date),
                group,
                measures: &c.measures,
            });
            Ok(())
        })?;
        add(model, &mut sums, &groups, copies)?;
    }
    Ok(counted(sums, &groups, Vec::new(), files))
}

/// Adds a pass's or bucket's copies into `sums`, naming the date, grain and measure of a sum
/// past 64 bits.
fn add(model: &Model, sums: &mut Sums, groups: &Groups, copies: Copies) -> Result<()> {
    sums.add(copies, |date, group, m| {
        format!("{} on {date} for {}: {}", model.gold, groups.values[group as usize].0.join("/"), model.measures[m].name)
    })
}

/// The contract's fingerprint of a model's gold: rows in (date, grain) order, each written as its
/// columns joined by `|`, joined by `\n`.
pub fn fingerprint(model: &Model, rows: &[ModelRow]) -> String {
    let (n, md5) = digest(rows);
    fingerprint_line(model, n, &md5)
}

/// The fingerprint's two parts: gold's row count and the MD5 of its text.
pub fn digest(rows: &[ModelRow]) -> (i64, String) {
    use md5::Digest;
    let mut h = md5::Md5::new();
    for (i, r) in in_fingerprint_order(rows).into_iter().enumerate() {
        if i > 0 {
            h.update(b"\n");
        }
        h.update(fingerprint_text(r).as_bytes());
    }
    (rows.len() as i64, h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// Gold's rows in the fingerprint's order: by date, then grain.
pub fn in_fingerprint_order(rows: &[ModelRow]) -> Vec<&ModelRow> {
    let mut sorted: Vec<&ModelRow> = rows.iter().collect();
    sorted.sort_by(|a, b| (a.business_date, &a.grain).cmp(&(b.business_date, &b.grain)));
    sorted
}

/// One gold row as the fingerprint's text: the date as YYYY-MM-DD, the grain, the attributes and
/// the measures in plain decimal, joined by `|`.
pub fn fingerprint_text(r: &ModelRow) -> String {
    let mut parts = vec![r.business_date.format("%Y-%m-%d").to_string()];
    parts.extend(r.grain.iter().cloned());
    parts.extend(r.attributes.iter().cloned());
    parts.extend(r.measures.iter().map(i64::to_string));
    parts.join("|")
}

/// The fingerprint as the contract prints it: `gold.T: N rows, md5 X`.
pub fn fingerprint_line(model: &Model, rows: i64, md5: &str) -> String {
    format!("gold.{}: {} rows, md5 {md5}", model.gold, crate::money::format_count(rows))
}

/// The model a world declares (`model` in its `recount.toml`), or retail without one.
pub fn model_of(world: &Path) -> Result<Model> {
    let path = world.join(crate::raw::source::SOURCE_FILE);
    if !path.exists() {
        return Ok(super::retail());
    }
    crate::raw::inside_world(world, &path)?;
    let text = crate::raw::read_small_file(&path)?;
    let desc: crate::raw::source::Description = toml::from_str(&text).wrap_err_with(|| format!("{}", path.display()))?;
    match desc.model {
        None => Ok(super::retail()),
        Some(choice) => choice.model().wrap_err_with(|| format!("{}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_that_outgrow_the_share_ask_for_the_buckets_the_files_need_and_they_give_the_same_gold() {
        let world = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../../sample-data-manufacturing");
        let model = super::super::manufacturing();
        let dims = dimension_of(&world, &model).unwrap();
        let files = files_of(&world, &model).unwrap();
        let sizes: Vec<u64> = files.iter().map(|f| std::fs::metadata(&f.2).unwrap().len()).collect();
        let whole = in_memory(&model, &dims, &files, None).unwrap().unwrap();
        // A share of a tenth of what memory held: the recount stops and asks for about ten.
        let held = whole.copies * COPY_BYTES;
        let Err(need) = in_memory(&model, &dims, &files, Some((held / 10, &sizes))).unwrap() else {
            panic!("memory fits a tenth of its own size")
        };
        assert!((8..=40).contains(&need), "{need} buckets");
        // In that many buckets, the gold is memory's, and the spill is gone.
        let spill = tempfile::tempdir().unwrap();
        let split = spilled(&model, &dims, &files, need, spill.path()).unwrap();
        assert_eq!((split.rows, split.copies, split.entities, split.refused), (whole.rows, whole.copies, whole.entities, whole.refused));
        assert_eq!(std::fs::read_dir(spill.path()).unwrap().count(), 0);
    }
}
