//! The explorer's background worker: it owns the lab (and its DuckDB connection), so the UI
//! thread never blocks on a query. Esc interrupts the running statement through DuckDB.

use crate::lake::Cached;
use crate::lake::{Lab, bootstrap, land, snapshot, v1, v2};
use crate::reports::{self, baskets::BasketsReport, check::CheckReport, explain::ExplainReport, history::HistoryReport};
use crate::reports::{lateness::LatenessReport, listings::LateReport, listings::QuarantineReport, promises::PromisesReport};
use crate::queries::sql;
use chrono::NaiveDate;
use color_eyre::eyre::Result;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};

/// One line of the date navigator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DateSummary {
    pub business_date: NaiveDate,
    pub provisional: bool,
    /// v1 (all its appends) differs from the recompute in some currency: the bug on show.
    pub v1_off: bool,
    /// v2 gold differs from the recompute in some currency.
    pub v2_off: bool,
    pub v1_ran: bool,
}

/// Everything the screens show for one business date.
#[derive(Debug, Clone)]
pub struct DateView {
    pub check: CheckReport,
    pub explain: ExplainReport,
    pub baskets: BasketsReport,
    pub late: LateReport,
    pub history: HistoryReport,
    pub promises: PromisesReport,
}

#[derive(Debug, Clone)]
pub struct Snapshot {
    pub dates: Vec<DateSummary>,
    pub lateness: LatenessReport,
    pub lateness_by_country: LatenessReport,
    pub quarantine: QuarantineReport,
    pub newest_upload: Option<NaiveDate>,
    pub next_upload: Option<NaiveDate>,
    pub head_snapshot: Option<i64>,
}

#[derive(Debug)]
pub enum Job {
    /// Refresh the navigator and the view of a date (or of the date the lab suggests).
    Load(Option<NaiveDate>),
    /// The view of another date only: the navigator has not changed.
    LoadDate(NaiveDate),
    RetryV1(NaiveDate),
    PreviewRebuild(NaiveDate),
    Rebuild { date: NaiveDate, fail_after: Option<usize> },
    LandNext,
    Rollback(i64),
    Reset,
}

#[derive(Debug)]
pub enum Reply {
    Loaded(Box<Snapshot>, Option<Box<DateView>>),
    DateLoaded(Box<DateView>),
    Preview { date: NaiveDate, text: String },
    Done(String),
    Failed(String),
}

pub struct Worker {
    pub jobs: Sender<Job>,
    pub replies: Receiver<Reply>,
    pub interrupt: Arc<duckdb::InterruptHandle>,
    /// DuckDB's estimate of how far the running statement is, for the progress gauge.
    pub progress: duckdb::progress::ProgressHandle,
    thread: std::thread::JoinHandle<()>,
}

impl Worker {
    /// Hangs up, stops the statement running (a prefetch, say) and waits for the worker to close
    /// the lab. Returning from main with the worker still inside DuckDB tore DuckDB down under
    /// it: a segmentation fault now and then when the explorer quit.
    pub fn stop(self) {
        let Worker { jobs, interrupt, thread, .. } = self;
        drop(jobs);
        interrupt.interrupt();
        let _ = thread.join();
    }
}

pub struct Setup {
    pub lab_dir: PathBuf,
    pub world: PathBuf,
    /// Fill an empty lab from the world first (the default lab does; a named one does not).
    pub bootstrap: bool,
}

/// Opens the lab on a new thread and serves jobs until the UI hangs up.
pub fn spawn(setup: Setup) -> Result<Worker> {
    let (job_tx, job_rx) = std::sync::mpsc::channel::<Job>();
    let (reply_tx, reply_rx) = std::sync::mpsc::channel::<Reply>();
    type Handles = (Arc<duckdb::InterruptHandle>, duckdb::progress::ProgressHandle);
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<Handles>>();
    let thread = std::thread::Builder::new().name("recount-worker".into()).spawn(move || {
        let mut lab = match Lab::open(&setup.lab_dir) {
            Ok(lab) => lab,
            Err(e) => {
                let _ = ready_tx.send(Err(e));
                return;
            }
        };
        let _ = lab.conn.set_query_progress_tracking(true);
        let _ = ready_tx.send(Ok((lab.conn.interrupt_handle(), lab.conn.progress_handle())));
        if setup.bootstrap {
            if let Err(e) = bootstrap::fill_if_empty(&mut lab, &setup.world) {
                let _ = reply_tx.send(Reply::Failed(format!("building the sample lab: {e:#}")));
            }
        }
        let mut server = Server::new(lab, setup);
        let mut pending: std::collections::VecDeque<Job> = Default::default();
        loop {
            let Some(mut job) = pending.pop_front().or_else(|| job_rx.recv().ok()) else { break };
            // Moving through dates queues a view per key press; only the newest is worth loading.
            if matches!(job, Job::LoadDate(_)) {
                while let Ok(next) = job_rx.try_recv() {
                    if matches!(next, Job::LoadDate(_)) && pending.is_empty() {
                        job = next;
                    } else {
                        pending.push_back(next);
                    }
                }
            }
            let reply = match server.serve(job) {
                Ok(r) => r,
                Err(e) => {
                    let text = format!("{e:#}");
                    Reply::Failed(if text.contains("INTERRUPT") || text.contains("nterrupt") { "cancelled: the query was interrupted; nothing changed".into() } else { text })
                }
            };
            if reply_tx.send(reply).is_err() {
                break;
            }
            // While the user reads, load the neighbouring dates so the next move draws at once.
            // A key press stops it: the job waits at most for the one date being loaded.
            while pending.is_empty() {
                match job_rx.try_recv() {
                    Ok(job) => pending.push_back(job),
                    Err(std::sync::mpsc::TryRecvError::Empty) => {
                        if !matches!(server.prefetch(), Ok(true)) {
                            break;
                        }
                    }
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => return,
                }
            }
        }
    })?;
    let (interrupt, progress) = ready_rx.recv().map_err(|_| color_eyre::eyre::eyre!("the worker thread died while opening the lab"))??;
    Ok(Worker { jobs: job_tx, replies: reply_rx, interrupt, progress, thread })
}

/// The worker's state: the lab, and the views of the dates loaded so far. Every job that writes
/// empties the views; reading jobs fill them, and so does `prefetch` while the user reads.
pub struct Server {
    pub lab: Lab,
    setup: Setup,
    views: std::collections::HashMap<NaiveDate, DateView>,
    /// The navigator's dates, as of the last full load.
    dates: Vec<NaiveDate>,
    /// The date on screen: prefetching works outwards from it.
    focus: Option<NaiveDate>,
}

/// How far either side of the date on screen the worker loads ahead.
const PREFETCH_RADIUS: usize = 2;
/// Views kept at most (a view of the full world is a few hundred KiB).
const MAX_VIEWS: usize = 32;

impl Server {
    pub fn new(lab: Lab, setup: Setup) -> Server {
        Server { lab, setup, views: Default::default(), dates: Vec::new(), focus: None }
    }

    fn view(&mut self, d: NaiveDate) -> Result<DateView> {
        if let Some(v) = self.views.get(&d) {
            return Ok(v.clone());
        }
        let v = load_view(&self.lab, d)?;
        if self.views.len() >= MAX_VIEWS {
            // Forget the date farthest from the one on screen.
            let focus = self.focus.unwrap_or(d);
            if let Some(&far) = self.views.keys().max_by_key(|k| (**k - focus).num_days().abs()) {
                self.views.remove(&far);
            }
        }
        self.views.insert(d, v.clone());
        Ok(v)
    }

    /// The dates whose views are loaded, oldest first.
    pub fn loaded_dates(&self) -> Vec<NaiveDate> {
        let mut v: Vec<NaiveDate> = self.views.keys().copied().collect();
        v.sort();
        v
    }

    /// Loads one not-yet-loaded date near the one on screen. False when there is nothing left
    /// to load.
    pub fn prefetch(&mut self) -> Result<bool> {
        let Some(focus) = self.focus else { return Ok(false) };
        let Some(i) = self.dates.iter().position(|&d| d == focus) else { return Ok(false) };
        for step in 1..=PREFETCH_RADIUS {
            for j in [i.checked_add(step), i.checked_sub(step)].into_iter().flatten() {
                if let Some(&d) = self.dates.get(j) {
                    if !self.views.contains_key(&d) {
                        self.view(d)?;
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }

    pub fn serve(&mut self, job: Job) -> Result<Reply> {
        match job {
            Job::Load(d) => {
                self.views.clear();
                let snap = load_snapshot(&self.lab, &self.setup.world)?;
                self.dates = snap.dates.iter().map(|x| x.business_date).collect();
                let date = d.or_else(|| default_date(&snap));
                let view = match date {
                    Some(d) if self.dates.contains(&d) => {
                        self.focus = Some(d);
                        Some(Box::new(self.view(d)?))
                    }
                    _ => None,
                };
                Ok(Reply::Loaded(Box::new(snap), view))
            }
            Job::LoadDate(d) => {
                self.focus = Some(d);
                Ok(Reply::DateLoaded(Box::new(self.view(d)?)))
            }
            Job::PreviewRebuild(d) => Ok(Reply::Preview { date: d, text: preview(&self.lab, d)? }),
            job => {
                // Everything else writes (or may have written, if it failed halfway).
                self.views.clear();
                write(&mut self.lab, &self.setup, job)
            }
        }
    }
}

fn write(lab: &mut Lab, setup: &Setup, job: Job) -> Result<Reply> {
    let opts = v2::V2Options { fail_after: None, ..Default::default() };
    Ok(match job {
        Job::Load(_) | Job::LoadDate(_) | Job::PreviewRebuild(_) => color_eyre::eyre::bail!("a reading job reached the writer"),
        Job::RetryV1(d) => {
            let r = v1::run(lab, d, None)?;
            Reply::Done(format!("v1 for {d} appended {} row(s) as snapshot {}: the v1 column now counts every run", r.rows_added, r.snapshot_id))
        }
        Job::Rebuild { date, fail_after } => {
            let force = fail_after.is_some();
            let before = reports::fingerprint(lab, None)?;
            match v2::rebuild_dates(lab, &[date], v2::V2Options { force, fail_after, ..opts }) {
                Ok(r) => Reply::Done(format!("v2 rebuilt {date}: snapshot {} ({}), {}", r.snapshot.snapshot_id, r.snapshot.operation.as_str(), r.snapshot.fingerprint)),
                Err(e) if fail_after.is_some() => {
                    let after = reports::fingerprint(lab, None)?;
                    let same = if before.line == after.line { "unchanged" } else { "CHANGED" };
                    Reply::Done(format!("the rebuild crashed ({e}); rolled back, gold {same}: {}", after.line))
                }
                Err(e) => return Err(e),
            }
        }
        Job::LandNext => {
            let snap = load_snapshot(lab, &setup.world)?;
            let Some(u) = snap.next_upload else {
                return Ok(Reply::Done(format!("every upload of {} has landed", setup.world.display())));
            };
            let landed = land::land(lab, &setup.world, &[u])?;
            let r = v2::run_upload(lab, u, "daily", opts)?;
            let dates: Vec<String> = r.dates.iter().map(|d| format!("{} {}", d.business_date, d.action)).collect();
            Reply::Done(format!("landed upload {u} ({} events); v2 snapshot {}: {}", landed.events, r.snapshot.snapshot_id, dates.join(", ")))
        }
        Job::Rollback(s) => {
            let r = snapshot::rollback(lab, s, None)?;
            Reply::Done(format!("rolled back to snapshot {s} as snapshot {}: {} date(s) restored", r.snapshot_id, r.dates_rewritten))
        }
        Job::Reset => {
            lab.reset()?;
            Reply::Done(format!("lab {} is empty; press n to land the first upload", lab.root.display()))
        }
    })
}

fn default_date(snap: &Snapshot) -> Option<NaiveDate> {
    // The newest date that is closed, else the newest.
    snap.dates.iter().rev().find(|d| !d.provisional).or(snap.dates.last()).map(|d| d.business_date)
}

pub fn load_snapshot(lab: &Lab, world: &std::path::Path) -> Result<Snapshot> {
    crate::recompute::ensure_cached(lab)?;
    let mut stmt = lab.conn.prepare_cached(sql("land", "landed_uploads"))?;
    let landed: Vec<NaiveDate> = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    let mut stmt = lab.conn.prepare_cached(sql("reports", "date_summaries"))?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, NaiveDate>(0)?, r.get::<_, bool>(2)?, r.get::<_, i64>(3)?, r.get::<_, i64>(4)?, r.get::<_, i64>(5)?, r.get::<_, i64>(6)?, r.get::<_, i64>(7)?))
    })?;
    let mut dates: BTreeMap<NaiveDate, DateSummary> = BTreeMap::new();
    for row in rows {
        let (d, v1_ran, v1, v2b, v2, rcb, rc) = row?;
        let provisional = !reports::status::missing_uploads(&landed, d, v2::DEFAULT_LATE_DAYS).is_empty();
        let e = dates.entry(d).or_insert(DateSummary { business_date: d, provisional, v1_off: false, v2_off: false, v1_ran });
        e.v2_off |= v2 != rc || v2b != rcb;
        e.v1_off |= v1_ran && v1 != rc;
        e.v1_ran |= v1_ran;
    }
    let world_uploads = crate::raw::list_partitions(world).unwrap_or_default();
    Ok(Snapshot {
        dates: dates.into_values().collect(),
        lateness: reports::lateness::lateness(lab, false)?,
        lateness_by_country: reports::lateness::lateness(lab, true)?,
        quarantine: reports::listings::quarantine(lab, None)?,
        newest_upload: landed.last().copied(),
        next_upload: world_uploads.into_iter().find(|u| !landed.contains(u)),
        head_snapshot: snapshot::head(&lab.conn)?,
    })
}

pub fn load_view(lab: &Lab, d: NaiveDate) -> Result<DateView> {
    let check = reports::check::check(lab, d, None)?;
    let late_days = check.status.late_days;
    Ok(DateView {
        explain: reports::explain::explain(lab, d)?,
        baskets: reports::baskets::resent(lab, d, late_days)?,
        late: reports::listings::late(lab, Some(d), late_days)?,
        history: reports::history::history(lab, d, None)?,
        promises: reports::promises::promises(lab, &check)?,
        check,
    })
}

/// What a rebuild of `d` would rewrite, without writing.
fn preview(lab: &Lab, d: NaiveDate) -> Result<String> {
    let hashes = v2::input_hashes(&lab.conn, v2::DEFAULT_LATE_DAYS, &[d])?;
    let (silver, gold): (i64, i64) = lab.conn.row_cached(
        sql("reports", "rows_held"),
        [d],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let current = snapshot::current_hash(&lab.conn, d)?;
    let (_, rows, hash) = hashes.first().cloned().unwrap_or((d, 0, String::new()));
    let verdict = if current.as_deref() == Some(hash.as_str()) {
        "its inputs are unchanged, so v2 will record a skipped run and rewrite nothing"
    } else {
        "its inputs changed, so v2 will delete and rewrite it in one transaction"
    };
    Ok(format!(
        "Rebuild {d} with v2 (window {} days)?\n\n{rows} landed rows feed it.\nIt holds {silver} silver rows and {gold} gold rows now.\n{verdict}.\n\ny: rebuild   n/Esc: cancel",
        v2::DEFAULT_LATE_DAYS
    ))
}

