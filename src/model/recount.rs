//! The independent recount of any model, from a world's raw files: every current line read with
//! the model, the copies of each business key ordered by the contract's rule (arrival, event id,
//! then raw-zone order: upload date, file name, line) and the first kept, in polars; then grouped
//! by business date and grain, every sum checked for overflow. It runs in passes by a hash of the
//! key when the world outgrows its share of the memory budget. No lateness window: it is the
//! truth v1 and v2 are checked against. Its fingerprint is the contract's, in the model's columns.

use super::Model;
use super::read::{DimensionTable, LineReader, Record};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};
use polars::prelude::*;
use std::collections::BTreeMap;
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

/// The copies as columns, for polars' sort; the records beside them, by index.
#[derive(Default)]
struct Copies {
    key: Vec<String>,
    arrival: Vec<i64>,
    event_id: Vec<String>,
    file_rank: Vec<u32>,
    line: Vec<u32>,
    records: Vec<Record>,
}

/// Recounts `world` with `model`, in as many passes as the recount's share of the memory budget
/// needs.
pub fn recount(world: &Path, model: &Model) -> Result<ModelRecount> {
    recount_in_passes(world, model, None)
}

/// How many bytes one copy takes in the recount's working set (its record and its sort columns).
const BYTES_PER_COPY: u64 = 400;

/// The number of passes for `files`: each holds the copies whose key hashes to it, so every copy
/// of a key is ranked in the same pass and the passes' sums add up. About 40 gzipped bytes a line.
fn passes_for(files: &[(NaiveDate, String, std::path::PathBuf)]) -> u64 {
    let bytes: u64 = files.iter().map(|f| std::fs::metadata(&f.2).map(|m| m.len()).unwrap_or(0)).sum();
    let share = (crate::store::memory_budget() / 4).max(1);
    (bytes / 40 + 1).saturating_mul(BYTES_PER_COPY).div_ceil(share).max(1)
}

/// `recount` in `passes` passes (None: as the budget needs).
pub fn recount_in_passes(world: &Path, model: &Model, passes: Option<u64>) -> Result<ModelRecount> {
    model.validate()?;
    if *model == super::retail() {
        // Retail's lines have rules of their own (a till, the currency against the store's, the
        // contract's shapes): its recount is the lab's (`recompute`), never this reader's.
        bail!("the retail model is recounted in the lab (`recount check`), through the contract's own reader");
    }
    let dims = dimension_of(world, model)?;
    let files = files_of(world, model)?;
    recount_files(model, &dims, &files, passes)
}

/// The recount of `files` (upload date, name in the upload, where its bytes are; in raw-zone
/// order) with `dims`: a lab recounts its current file versions this way.
pub fn recount_files(
    model: &Model,
    dims: &DimensionTable,
    files: &[(NaiveDate, String, std::path::PathBuf)],
    passes: Option<u64>,
) -> Result<ModelRecount> {
    let passes = passes.unwrap_or_else(|| passes_for(files)).max(1);
    let (mut sums, mut refused, mut n, mut entities) = (Sums::new(), Vec::new(), 0u64, 0u64);
    let reader = LineReader::new(model, dims)?;
    for pass in 0..passes {
        let mut copies = Copies::default();
        for (rank, (upload, name, path)) in files.iter().enumerate() {
            let text = crate::raw::read_gz_text(path)?;
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                match reader.read(line, *upload) {
                    Ok(r) if passes == 1 || xxhash_rust::xxh3::xxh3_64(r.key.as_bytes()) % passes == pass => {
                        copies.key.push(r.key.clone());
                        copies.arrival.push(r.arrival.timestamp_nanos_opt().unwrap_or(i64::MAX));
                        copies.event_id.push(r.event_id.clone());
                        copies.file_rank.push(u32::try_from(rank).unwrap_or(u32::MAX));
                        copies.line.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
                        copies.records.push(r);
                    }
                    Ok(_) => {}
                    // A refused line is listed once, in the first pass.
                    Err(reason) if pass == 0 => refused.push(Refused { file: format!("upload_date={upload}/{name}"), line: i + 1, reason }),
                    Err(_) => {}
                }
            }
        }
        n += copies.records.len() as u64;
        let winners = winners(&copies)?;
        entities += winners.len() as u64;
        add(model, &mut sums, winners.iter().map(|&i| &copies.records[i]))?;
    }
    let rows = sums
        .into_iter()
        .map(|((business_date, grain, attributes), measures)| ModelRow { business_date, grain, attributes, measures })
        .collect();
    Ok(ModelRecount { rows, copies: n, entities, refused, files: files.len() })
}

/// Each measure's sum per (date, grain, attributes).
type Sums = BTreeMap<(NaiveDate, Vec<String>, Vec<String>), Vec<i64>>;

/// The index of each business key's winning copy: the first by (arrival, event id, file, line).
fn winners(c: &Copies) -> Result<Vec<usize>> {
    let idx: Vec<u32> = (0..c.records.len()).map(|i| u32::try_from(i).unwrap_or(u32::MAX)).collect();
    let df = DataFrame::new(
        idx.len(),
        vec![
            Column::new("key".into(), c.key.clone()),
            Column::new("arrival".into(), c.arrival.clone()),
            Column::new("event_id".into(), c.event_id.clone()),
            Column::new("file_rank".into(), c.file_rank.clone()),
            Column::new("line".into(), c.line.clone()),
            Column::new("idx".into(), idx),
        ],
    )?;
    let order = ["key", "arrival", "event_id", "file_rank", "line"];
    let sorted = df.sort(order, SortMultipleOptions::default().with_maintain_order(true))?;
    let first = sorted.unique_stable(Some(&["key".to_string()]), UniqueKeepStrategy::First, None)?;
    let col = first.column("idx")?.u32()?;
    (0..col.len()).map(|i| col.get(i).map(|v| v as usize).ok_or_else(|| eyre!("a copy without its index"))).collect()
}

/// Adds the winners' measures into `sums`, with overflow an error.
fn add<'a>(model: &Model, sums: &mut Sums, winners: impl Iterator<Item = &'a Record>) -> Result<()> {
    for r in winners {
        let acc = sums.entry((r.business_date, r.grain.clone(), r.attributes.clone())).or_insert_with(|| vec![0; r.measures.len()]);
        for (i, (a, v)) in acc.iter_mut().zip(&r.measures).enumerate() {
            *a = a.checked_add(*v).ok_or_else(|| {
                eyre!(
                    "{} on {} for {}: the sum of {} overflows 64 bits",
                    model.gold,
                    r.business_date,
                    r.grain.join("/"),
                    model.measures[i].name
                )
            })?;
        }
    }
    Ok(())
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
    let mut sorted: Vec<&ModelRow> = rows.iter().collect();
    sorted.sort_by(|a, b| (a.business_date, &a.grain).cmp(&(b.business_date, &b.grain)));
    let mut h = md5::Md5::new();
    for (i, r) in sorted.iter().enumerate() {
        if i > 0 {
            h.update(b"\n");
        }
        let mut parts = vec![r.business_date.format("%Y-%m-%d").to_string()];
        parts.extend(r.grain.iter().cloned());
        parts.extend(r.attributes.iter().cloned());
        parts.extend(r.measures.iter().map(i64::to_string));
        h.update(parts.join("|").as_bytes());
    }
    (rows.len() as i64, h.finalize().iter().map(|b| format!("{b:02x}")).collect())
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
