//! The landing's parse job: DuckDB's threads take the files lane by lane through the store's
//! scan, each parsing a file into bronze's columns as it copies it into the raw zone.

use super::*;

/// Parses one raw file: its bronze rows, cells and quarantine, and the bytes as they arrived.
pub(super) fn parse_file(job: &ParseJob, path: &Path, rel: &str, upload_date: NaiveDate, file_id: i32) -> Result<(ParsedFile, Vec<u8>)> {
    let (reader, stores) = (&job.reader, &job.stores);
    let bytes = std::fs::read(path).wrap_err_with(|| format!("reading {}", path.display()))?;
    // About 300 bytes a line, or 40 compressed: enough room for most files without a regrow.
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let per_line = if reader.format == raw::source::FileFormat::Parquet || reader.compression_of(&name) != raw::source::Compression::None {
        40
    } else {
        300
    };
    let mut columns = EventColumns::with_capacity(bytes.len() / per_line + 16, job.key_mask, &job.store_rows);
    let mut cells = CellSums::default();
    let mut quarantine = Quarantine::default();
    let mut abs_revenue = 0u128;
    let lines = raw::mapped::read_events(path, &bytes, reader, stores, upload_date, |line, verdict, text| {
        match verdict {
            Ok(e) => {
                columns.push(&e, file_id, line)?;
                abs_revenue += u128::from(e.revenue_minor.unsigned_abs());
                cells.add(&e, path)?;
            }
            Err(reason) => quarantine.push(line, &reason, text),
        }
        Ok(())
    })
    .map_err(|e| eyre!("{}: {e:#}", path.display()))?;
    let events = columns.rows;
    let (quarantine, quarantined_lines) = quarantine.finish();
    let parsed = ParsedFile {
        file_id,
        rel: rel.to_string(),
        upload_date,
        md5: raw::md5_hex(&bytes),
        bytes: bytes.len(),
        lines,
        batch: columns.finish()?,
        events,
        quarantine,
        quarantined_lines,
        cells: cells.finish(),
        abs_revenue,
    };
    Ok((parsed, bytes))
}

/// DuckDB's own threads parse the files (`recount_parse`, below) and insert what they parse, each
/// into its own row groups: parsing, copying and compressing share the cores. Returns the parsed
/// files without their rows, in file id order.
pub(super) fn parse_and_insert(lab: &Lab, tx: &mut Tx, plan: &Plan, staged: &Staged, first_file_id: i32) -> Result<Vec<ParsedFile>> {
    let threads = tx.store().threads()?;
    let files =
        plan.todo.iter().enumerate().map(|(i, f)| (f.upload_date, f.path.clone(), f.rel.clone(), first_file_id + i as i32)).collect();
    let key_mask = u64::MAX.checked_shr(64 - lab.basket_key_bits.clamp(1, 64)).unwrap_or(u64::MAX);
    let lanes = (threads.max(1) as usize).div_ceil(2);
    let store_rows =
        tx.number_store_rows(plan.stores.stores.iter().map(|s| (s.store_id.as_str(), s.country.as_str(), s.currency.as_str())))?;
    let job = Arc::new(ParseJob::new(
        files,
        plan.stores.clone(),
        store_rows,
        plan.reader.clone(),
        lab.raw_root(),
        key_mask,
        lanes,
        staged.clone(),
    ));
    let inserted = if plan.todo.is_empty() { Ok(0) } else { tx.insert_events(job.clone()) };
    let mut done = std::mem::take(&mut *job.done.lock().map_err(poisoned)?);
    if let Some(e) = job.error.lock().map_err(poisoned)?.take() {
        return Err(e);
    }
    let inserted = inserted.wrap_err("appending bronze events")?;
    done.sort_by_key(|f| f.file_id);
    let parsed_events: usize = done.iter().map(|f| f.events).sum();
    if inserted != parsed_events || done.len() != plan.todo.len() {
        bail!("landing inserted {inserted} events from {} files, but {parsed_events} were parsed from {}", done.len(), plan.todo.len());
    }
    tx.step("appending bronze events")?;
    Ok(done)
}

/// Where a file is staged beside its place in the raw zone until the landing commits: its name
/// and `.landing` (recovery finishes or removes what a kill left).
pub(super) fn staged_path(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(".landing");
    dest.with_file_name(name)
}

/// One landing's files, handed to DuckDB's `recount_parse(job)` scan. DuckDB calls the scan from
/// each of its threads; a thread takes a file, parses it, copies it into the raw zone (staged,
/// renamed after COMMIT) and returns its rows a vector at a time.
///
/// Each thread inserts into row groups of its own, so each thread works through a contiguous run
/// of files: a row group then holds neighbouring uploads, and its zone maps keep a per-date scan
/// to a few row groups (files dealt out in turn spread a date over many row groups, and every
/// per-date statement of the backfill read more). The files are cut into one lane per two threads; the first thread of a lane takes files from its front, the
/// second from its back, and they meet wherever their speeds take them. A thread whose lane is
/// empty (more threads than two per lane) takes from the back of the fullest lane.
pub(super) struct ParseJob {
    /// (upload date, source path, path in the raw zone, file id), in file id order.
    pub(super) files: Vec<(NaiveDate, PathBuf, String, i32)>,
    pub(super) stores: StoreTable,
    /// Each store's row number (`Tx::number_store_rows`).
    pub(super) store_rows: HashMap<String, i32>,
    pub(super) reader: Reader,
    pub(super) raw_root: PathBuf,
    pub(super) key_mask: u64,
    /// Each lane's files not yet taken: [front, back) indices into `files`.
    pub(super) lanes: Vec<Mutex<(usize, usize)>>,
    /// The lane of each thread that has called the scan, and whether it works from the back.
    pub(super) lane_of: Mutex<HashMap<std::thread::ThreadId, (usize, bool)>>,
    /// Each thread's file whose rows are not all returned yet: (rows, first row not returned).
    pub(super) current: Mutex<HashMap<std::thread::ThreadId, (RecordBatch, usize)>>,
    /// Every parsed file, without its rows.
    pub(super) done: Mutex<Vec<ParsedFile>>,
    /// Copies written next to their final place, shared with the landing that undoes or moves them.
    pub(super) staged: Staged,
    /// The first error, with its context (DuckDB's error would carry only its text).
    pub(super) error: Mutex<Option<color_eyre::Report>>,
}

pub(super) fn poisoned<T>(_: T) -> color_eyre::Report {
    eyre!("a landing thread panicked")
}

impl ParseJob {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        files: Vec<(NaiveDate, PathBuf, String, i32)>,
        stores: StoreTable,
        store_rows: HashMap<String, i32>,
        reader: Reader,
        raw_root: PathBuf,
        key_mask: u64,
        lanes: usize,
        staged: Staged,
    ) -> ParseJob {
        let n = files.len();
        let lanes = lanes.clamp(1, n.max(1));
        ParseJob {
            lanes: (0..lanes).map(|k| Mutex::new((k * n / lanes, (k + 1) * n / lanes))).collect(),
            files,
            stores,
            store_rows,
            reader,
            raw_root,
            key_mask,
            lane_of: Mutex::default(),
            current: Mutex::default(),
            done: Mutex::default(),
            staged,
            error: Mutex::default(),
        }
    }

    /// The next file for this thread: the next of its lane from its end of it, else the back of
    /// the fullest lane.
    pub(super) fn take_file(&self) -> Result<Option<usize>> {
        let me = std::thread::current().id();
        let (lane, from_back) = {
            let mut lane_of = self.lane_of.lock().map_err(poisoned)?;
            let arrived = lane_of.len();
            *lane_of.entry(me).or_insert(((arrived / 2) % self.lanes.len(), arrived % 2 == 1))
        };
        {
            let mut own = self.lanes[lane].lock().map_err(poisoned)?;
            if own.0 < own.1 {
                return Ok(Some(if from_back {
                    own.1 -= 1;
                    own.1
                } else {
                    own.0 += 1;
                    own.0 - 1
                }));
            }
        }
        let mut fullest: Option<(usize, std::sync::MutexGuard<'_, (usize, usize)>)> = None;
        for l in &self.lanes {
            let g = l.lock().map_err(poisoned)?;
            let left = g.1 - g.0;
            if left > 0 && fullest.as_ref().is_none_or(|(n, _)| left > *n) {
                fullest = Some((left, g));
            }
        }
        Ok(fullest.map(|(_, mut g)| {
            g.1 -= 1;
            g.1
        }))
    }

    /// Parses a file and stages its copy; None when no file is left.
    pub(super) fn parse_next(&self) -> Result<Option<RecordBatch>> {
        while let Some(i) = self.take_file()? {
            let (d, path, rel, file_id) = &self.files[i];
            let (mut pf, bytes) = parse_file(self, path, rel, *d, *file_id).map_err(|e| {
                let file = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
                eyre!(BadFile { upload_date: *d, file, reason: format!("{e:#}") })
            })?;
            let dest = self.raw_root.join(rel);
            let tmp = staged_path(&dest);
            let in_place = *path == dest;
            self.staged.lock().map_err(poisoned)?.push((tmp.clone(), dest));
            if in_place { stage_in_place(path, &tmp, &bytes) } else { write_durably(&tmp, &bytes) }
                .wrap_err_with(|| format!("copying {}", path.display()))?;
            let batch = pf.batch.take();
            self.done.lock().map_err(poisoned)?.push(pf);
            if batch.is_some() {
                return Ok(batch);
            }
        }
        Ok(None)
    }

    /// Up to one vector of rows for the calling thread: the rest of its file, else a new file,
    /// else (when no file is left) the rest of a file another thread started. None: all returned.
    pub(super) fn next_rows(&self) -> Result<Option<(RecordBatch, usize)>> {
        let me = std::thread::current().id();
        if let Some(rows) = self.current.lock().map_err(poisoned)?.remove(&me) {
            return Ok(Some(rows));
        }
        if let Some(batch) = self.parse_next()? {
            return Ok(Some((batch, 0)));
        }
        let mut current = self.current.lock().map_err(poisoned)?;
        let other = current.keys().next().copied();
        Ok(other.and_then(|t| current.remove(&t)))
    }
}

/// bronze.event_rows' columns, in order, as the parser builds them.
pub(super) fn event_fields() -> Vec<Field> {
    let text = |n: &str| Field::new(n, DataType::Utf8, true);
    let ts = |n: &str| Field::new(n, DataType::Timestamp(TimeUnit::Nanosecond, None), true);
    vec![
        text("event_id"),
        text("basket_id"),
        Field::new("store_row", DataType::Int32, true),
        text("till_id"),
        ts("event_ts"),
        ts("uploaded_at"),
        Field::new("upload_date", DataType::Date32, true),
        Field::new("business_date", DataType::Date32, true),
        Field::new("revenue_minor", DataType::Int64, true),
        Field::new("tenders", DataType::Int16, true),
        Field::new("file_id", DataType::Int32, true),
        Field::new("line", DataType::Int32, true),
        Field::new("basket_key", DataType::Int64, true),
    ]
}

/// The landing's files as rows for `recount_parse` (see `ParseJob`).
impl RowSource for ParseJob {
    fn fields(&self) -> Vec<Field> {
        event_fields()
    }

    fn max_threads(&self) -> u64 {
        self.files.len().max(1) as u64
    }

    fn next_rows(&self) -> Result<Option<(RecordBatch, usize)>> {
        ParseJob::next_rows(self)
    }

    fn keep_rest(&self, batch: RecordBatch, offset: usize) -> Result<()> {
        self.current.lock().map_err(poisoned)?.insert(std::thread::current().id(), (batch, offset));
        Ok(())
    }

    fn failed(&self, e: color_eyre::Report) {
        if let Ok(mut first) = self.error.lock() {
            first.get_or_insert(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn job(files: usize, lanes: usize) -> ParseJob {
        let d = NaiveDate::from_ymd_opt(2026, 8, 15).unwrap();
        let files = (0..files).map(|i| (d, PathBuf::new(), format!("f{i}"), i as i32 + 1)).collect();
        ParseJob::new(files, StoreTable::default(), HashMap::new(), Reader::default(), PathBuf::new(), u64::MAX, lanes, Staged::default())
    }

    pub(super) fn take_all(job: &ParseJob) -> Vec<usize> {
        std::iter::from_fn(|| job.take_file().unwrap()).collect()
    }

    #[test]
    pub(super) fn two_threads_work_a_lane_from_both_ends_and_a_third_takes_the_back_of_the_fullest() {
        let one = job(7, 1);
        let (front, back) = std::thread::scope(|s| {
            let a = s.spawn(|| (one.take_file().unwrap(), one.take_file().unwrap())).join().unwrap();
            let b = s.spawn(|| take_all(&one)).join().unwrap();
            (a, b)
        });
        // The first thread takes files from the front, the second from the back: each thread's
        // files (and so its row groups) stay one contiguous run.
        assert_eq!(front, (Some(0), Some(1)));
        assert_eq!(back, vec![6, 5, 4, 3, 2]);
        assert_eq!(one.take_file().unwrap(), None);

        let two = job(8, 2);
        let got = std::thread::scope(|s| {
            let a = s.spawn(|| two.take_file().unwrap()).join().unwrap();
            let b = s.spawn(|| two.take_file().unwrap()).join().unwrap();
            let c = s.spawn(|| take_all(&two)).join().unwrap();
            (a, b, c)
        });
        // Lanes 0..4 and 4..8: threads one and two share lane 0, thread three has lane 1 and,
        // once it is empty, takes from the back of lane 0.
        assert_eq!(got, (Some(0), Some(3), vec![4, 5, 6, 7, 2, 1]));
    }

    #[test]
    pub(super) fn one_thread_alone_takes_every_file_once() {
        let five = job(5, 2);
        let mut got = take_all(&five);
        got.sort();
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
        assert_eq!(job(0, 2).take_file().unwrap(), None, "a landing with no file");
    }
}
