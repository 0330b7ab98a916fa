//! The explorer's background worker: it owns the lab, so the UI thread never blocks on a query.
//! Esc interrupts the running statement through DuckDB. It calls only `lake` and `reports`.

use crate::error::{LabError, lab_error};
use crate::lake::snapshot::TriggerKind;
use crate::lake::{Lab, bootstrap, daily, land, snapshot, v1, v2};
use crate::model::recount::ModelRow;
use crate::reports::overview::LabOverview;
use crate::reports::{self, baskets::BasketsReport, check::CheckReport, explain::ExplainReport, history::HistoryReport};
use crate::reports::{listings::LateReport, promises::PromisesReport};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};

pub use crate::reports::overview::DateSummary;

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

/// A date of a lab of a model other than retail, as its screens show it.
#[derive(Debug, Clone)]
pub struct ModelDay {
    pub check: crate::reports::model_lab::CheckReport,
    pub late: crate::reports::model_day::LateReport,
    pub resent: crate::reports::model_day::ResentReport,
    pub history: crate::reports::model_lab::HistoryReport,
}

/// A full load of a model lab: the navigator, every date, and the date it opens on.
#[derive(Debug)]
pub struct ModelLoad {
    pub overview: LabOverview,
    pub dates: crate::reports::model_day::DatesReport,
    pub day: Option<Box<ModelDay>>,
}

fn model_day(lab: &Lab, model: &crate::model::Model, d: NaiveDate, late_days: u32, recount: &[ModelRow]) -> Result<ModelDay> {
    Ok(ModelDay {
        check: crate::reports::model_lab::check_with(lab, model, d, recount)?,
        late: crate::reports::model_day::late(lab, model, d, late_days)?,
        resent: crate::reports::model_day::resent(lab, model, d, late_days)?,
        history: crate::reports::model_lab::history(lab, model, d, None, None)?,
    })
}

#[derive(Debug)]
pub enum Job {
    /// Refresh the navigator and the view of a date (or of the date the lab suggests).
    Load(Option<NaiveDate>),
    /// The view of another date only: the navigator has not changed.
    LoadDate(NaiveDate),
    RetryV1(NaiveDate),
    PreviewRebuild(NaiveDate),
    /// What reopening a date would take in, with the decision typed for it.
    PreviewReopen(NaiveDate, Reopening),
    /// Reopen a date (its rows past the window into gold) with the decision.
    Reopen(NaiveDate, Reopening),
    /// Rebuild a date with v2 under `late_days` (the window its preview showed).
    Rebuild {
        date: NaiveDate,
        late_days: u32,
        fail_after: Option<usize>,
    },
    LandNext,
    /// Land the next correction shipped with the world, and run v2 for its upload.
    LandCorrection,
    Rollback(i64),
    Reset,
}

/// A reopening as the person at the explorer decided it: why, and who (asked for when `$USER`
/// does not say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reopening {
    pub reason: String,
    pub by: String,
}

impl Job {
    /// Whether the job writes to the lab (quitting then waits for it).
    pub fn writes(&self) -> bool {
        !matches!(self, Job::Load(_) | Job::LoadDate(_) | Job::PreviewRebuild(_) | Job::PreviewReopen(..))
    }
}

/// The reply to a job that landed (and committed) and whose v2 run then failed: it says exactly
/// what committed and what did not.
pub fn landed_then_failed(what: &str, events: u64, e: &color_eyre::Report) -> Reply {
    let why = if lab_error(e) == Some(&LabError::Interrupted) { "was cancelled".to_string() } else { format!("failed ({e:#})") };
    Reply::Failed(format!(
        "{what} landed and committed ({events} events); its v2 run then {why}, and nothing of the run committed: \
         the date shows the landed rows once v2 runs (`recount run`)"
    ))
}

#[derive(Debug)]
pub enum Reply {
    Loaded(Box<LabOverview>, Option<Box<DateView>>),
    DateLoaded(Box<DateView>),
    Preview(v2::RebuildPreview),
    /// The date a reopening would widen, and the question to ask before it does.
    ReopenPreview(NaiveDate, String, Reopening),
    Done(String),
    Failed(String),
    /// The check of a date not loaded yet, ahead of its other reports: the Overview draws it
    /// while the rest loads (the view follows as `DateLoaded`).
    DateHead(Box<CheckReport>),
    /// Another process has taken the lab's write lock: the worker let go of the lab and waits.
    Paused(String),
    /// A model lab's navigator and dates (`Job::Load` on a lab of a model other than retail).
    ModelLoaded(Box<ModelLoad>),
    /// A model lab's date (`Job::LoadDate`).
    ModelDate(Box<ModelDay>),
    /// The foreign gold audited against the lab as just loaded, or why it could not be: sent
    /// after each full load (`tui --audit`), not an answer to the running job.
    Audited(Result<Box<crate::reports::audit::AuditReport>, String>),
    /// That process has finished: the lab is read again, and the screens should reload.
    Changed(String),
}

/// The running statement's interrupt and progress, for the UI thread. The worker reopens the lab
/// (to write, after another process wrote), so the handles are swapped each time it does.
pub struct Handles {
    inner: std::sync::Mutex<crate::store::Running>,
    /// Set when the UI quits: a warehouse's mirror being built gives up between its steps, which
    /// DuckDB's interrupt does not reach (the mirror is its own database).
    quitting: std::sync::atomic::AtomicBool,
}

impl Handles {
    fn of(lab: &Lab) -> Result<Handles> {
        Ok(Handles { inner: std::sync::Mutex::new(lab.store().running()?), quitting: Default::default() })
    }

    fn refresh(&self, lab: &Lab) -> Result<()> {
        let fresh = lab.store().running()?;
        *self.inner.lock().unwrap_or_else(|p| p.into_inner()) = fresh;
        Ok(())
    }

    /// Stops the statement running now, if any.
    pub(crate) fn interrupt(&self) {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).interrupt();
    }

    /// DuckDB's estimate of how far the running statement is, in percent.
    pub(crate) fn percent(&self) -> Option<f64> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).percent()
    }
}

pub struct Worker {
    pub jobs: Sender<Job>,
    pub replies: Receiver<Reply>,
    /// Esc's interrupt and the progress gauge's estimate.
    pub handles: Arc<Handles>,
    thread: std::thread::JoinHandle<()>,
}

impl Worker {
    /// Hangs up, stops the statement running (a prefetch, say) and waits for the worker to close
    /// the lab. Returning from main with the worker still inside DuckDB tore DuckDB down under
    /// it: a segmentation fault now and then when the explorer quit.
    pub fn stop(self) {
        let Worker { jobs, handles, thread, .. } = self;
        drop(jobs);
        handles.quitting.store(true, std::sync::atomic::Ordering::Relaxed);
        handles.interrupt();
        let _ = thread.join();
    }
}

pub struct Setup {
    pub lab_dir: PathBuf,
    pub world: PathBuf,
    /// Fill an empty lab from the world first (the default lab does; a named one does not).
    pub bootstrap: bool,
    /// The window of the explorer's own v2 runs (landing the next upload or a correction).
    pub late_days: u32,
    /// An Iceberg warehouse to explore instead of the lab: read through its mirror, written by
    /// the Spark job (src/warehouse.rs).
    pub warehouse: Option<crate::warehouse::Spark>,
    /// A foreign gold to audit after every full load (`tui --audit`).
    pub audit: Option<AuditSource>,
}

/// A foreign gold for the Audit screen, and the map of its columns.
#[derive(Debug, Clone)]
pub struct AuditSource {
    pub gold: PathBuf,
    pub map: crate::reports::audit::GoldMap,
}

/// How often an idle worker looks for another process's write lock.
const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// Opens the lab for reading; the default lab, while it is empty, is opened for writing first and
/// filled from the world.
/// A failure to fill it is returned beside the lab, which opens all the same.
fn open_lab(setup: &Setup) -> Result<(Lab, Option<String>)> {
    if let Some(spark) = &setup.warehouse {
        return Ok((crate::warehouse::open(&spark.warehouse)?, None));
    }
    let lab = Lab::open_read(&setup.lab_dir)?;
    if !setup.bootstrap || !lab.is_empty()? {
        return Ok((lab, None));
    }
    drop(lab);
    let mut lab = Lab::open(&setup.lab_dir)?;
    let failed = match setup.bootstrap {
        true => match bootstrap::fill_if_empty(&mut lab, &setup.world) {
            Err(e) => Some(format!("building the sample lab: {e:#}")),
            Ok(first) => Some(first.map(|f| f.held_lines()).unwrap_or_default().join("; ")).filter(|s| !s.is_empty()),
        },
        false => None,
    };
    lab.end_writing()?;
    Ok((lab, failed))
}

/// Opens the lab on a new thread and serves jobs until the UI hangs up.
pub fn spawn(setup: Setup) -> Result<Worker> {
    let (job_tx, job_rx) = std::sync::mpsc::channel::<Job>();
    let (reply_tx, reply_rx) = std::sync::mpsc::channel::<Reply>();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<Arc<Handles>>>();
    let thread = std::thread::Builder::new().name("recount-worker".into()).spawn(move || {
        let (lab, failed) = match open_lab(&setup) {
            Ok(opened) => opened,
            Err(e) => {
                let _ = ready_tx.send(Err(e));
                return;
            }
        };
        let handles = match Handles::of(&lab) {
            Ok(h) => Arc::new(h),
            Err(e) => {
                let _ = ready_tx.send(Err(e));
                return;
            }
        };
        if ready_tx.send(Ok(handles.clone())).is_err() {
            return;
        }
        if let Some(text) = failed {
            let _ = reply_tx.send(Reply::Failed(text));
        }
        let mut server = Server::new(lab, setup);
        server.handles = Some(handles);
        serve_jobs(server, &job_rx, &reply_tx);
    })?;
    let handles = ready_rx.recv().map_err(|_| color_eyre::eyre::eyre!("the worker thread died while opening the lab"))??;
    Ok(Worker { jobs: job_tx, replies: reply_rx, handles, thread })
}

/// Serves jobs until the UI hangs up: a writer elsewhere is let in between jobs, a date's check
/// goes ahead of its view, and the neighbouring dates load while the user reads.
fn serve_jobs(mut server: Server, job_rx: &std::sync::mpsc::Receiver<Job>, reply_tx: &std::sync::mpsc::Sender<Reply>) {
    let mut pending: std::collections::VecDeque<Job> = Default::default();
    loop {
        let mut job = match pending.pop_front().map(Ok).unwrap_or_else(|| job_rx.recv_timeout(WATCH_EVERY)) {
            Ok(job) => job,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if !server.watch(job_rx, reply_tx, &mut pending) {
                    return;
                }
                continue;
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
        };
        // A writer waiting for the lab is let in before the job, even while keys keep coming.
        if !server.watch(job_rx, reply_tx, &mut pending) {
            return;
        }
        // Moving through dates queues a view per key press; only the newest is worth loading.
        if matches!(job, Job::LoadDate(_)) {
            job = newest_load(job, job_rx, &mut pending);
        }
        // A date not loaded yet: its check first, so the Overview draws at once.
        if let Job::LoadDate(d) = job
            && let Ok(Some(check)) = server.head(d)
            && reply_tx.send(Reply::DateHead(Box::new(check))).is_err()
        {
            break;
        }
        let reply = match server.serve(job) {
            Ok(r) => r,
            Err(e) if lab_error(&e) == Some(&LabError::Interrupted) => Reply::Failed(LabError::Interrupted.to_string()),
            Err(e) => Reply::Failed(format!("{e:#}")),
        };
        let loaded = matches!(reply, Reply::Loaded(..));
        if reply_tx.send(reply).is_err() {
            break;
        }
        // The audit follows each full load, so that it is of the lab the screens show.
        if loaded
            && let Some(audited) = server.audit()
            && reply_tx.send(Reply::Audited(audited)).is_err()
        {
            break;
        }
        // While the user reads, load the neighbouring dates so the next move draws at once.
        // A key press stops it: the job waits at most for the one date being loaded.
        while pending.is_empty() {
            match job_rx.try_recv() {
                Ok(job) => pending.push_back(job),
                Err(std::sync::mpsc::TryRecvError::Empty) => {
                    if server.lab.writer_elsewhere().is_some() || !matches!(server.prefetch(), Ok(true)) {
                        break;
                    }
                }
                Err(std::sync::mpsc::TryRecvError::Disconnected) => return,
            }
        }
    }
}

/// The newest of the date loads queued behind `job` (the others are skipped); any other job
/// queued meanwhile waits in `pending`, in order.
fn newest_load(mut job: Job, job_rx: &std::sync::mpsc::Receiver<Job>, pending: &mut std::collections::VecDeque<Job>) -> Job {
    while let Ok(next) = job_rx.try_recv() {
        if matches!(next, Job::LoadDate(_)) && pending.is_empty() {
            job = next;
        } else {
            pending.push_back(next);
        }
    }
    job
}

/// The worker's state: the lab, and the views of the dates loaded so far. Every job that writes
/// empties the views; reading jobs fill them, and so does `prefetch` while the user reads.
pub struct Server {
    pub lab: Lab,
    setup: Setup,
    /// The UI's handles on the running statement, swapped whenever the lab is reopened.
    pub handles: Option<Arc<Handles>>,
    /// The lab was let go (another process wrote it) or a reopen failed: read it again first.
    closed: bool,
    /// The check of the date being loaded, sent ahead of its view (see `head`).
    head: Option<CheckReport>,
    /// The caches the screens read are up to date with the lab as it is open now: nothing
    /// changes it until this worker writes or lets go of it.
    fresh: bool,
    views: std::collections::HashMap<NaiveDate, DateView>,
    /// The navigator's dates, as of the last full load.
    dates: Vec<NaiveDate>,
    /// The date on screen: prefetching works outwards from it.
    focus: Option<NaiveDate>,
    /// On a warehouse: its tables' commits as the mirror read them (another process's commit
    /// changes them).
    commits: Vec<(String, Option<String>)>,
    /// The lab's model when it is not retail's: every job is then the model's (`serve_model`).
    model: Option<crate::model::Model>,
    /// A model lab's recount of its current files, made by the last full load and read by every
    /// date's view until the next; a write forgets it (None: make it again).
    model_recount: Option<Vec<ModelRow>>,
}

/// How far either side of the date on screen the worker loads ahead.
const PREFETCH_RADIUS: usize = 2;
/// Views kept at most (a view of the full world is a few hundred KiB).
const MAX_VIEWS: usize = 32;

impl Server {
    pub fn new(lab: Lab, setup: Setup) -> Server {
        let model = crate::lake::model::lab_model(&lab).ok().flatten();
        Server {
            lab,
            handles: None,
            closed: false,
            head: None,
            fresh: false,
            views: Default::default(),
            dates: Vec::new(),
            focus: None,
            commits: setup.warehouse.as_ref().map(|w| crate::warehouse::commits(&w.warehouse)).unwrap_or_default(),
            model,
            model_recount: None,
            setup,
        }
    }

    /// After the lab's database changed hands: the UI's handles follow it.
    fn refresh_handles(&self) -> Result<()> {
        match &self.handles {
            Some(h) => h.refresh(&self.lab),
            None => Ok(()),
        }
    }

    /// Reads the lab again if it was let go.
    fn ensure_open(&mut self) -> Result<()> {
        if self.closed {
            self.fresh = false;
            self.lab.reopen()?;
            self.closed = false;
            self.refresh_handles()?;
        }
        Ok(())
    }

    /// Before each job and while idle: when another process has taken the write lock, lets go of the lab (DuckDB
    /// gives a file to one writer or to readers), waits for the writer to finish and reads the
    /// lab again, telling the UI both times. Jobs that arrive meanwhile wait in `pending`. False
    /// when the UI hung up.
    pub(crate) fn watch(&mut self, jobs: &Receiver<Job>, replies: &Sender<Reply>, pending: &mut std::collections::VecDeque<Job>) -> bool {
        if self.setup.warehouse.is_some() {
            return self.watch_warehouse(replies);
        }
        let Some(pid) = self.lab.writer_elsewhere() else { return true };
        let who = pid.map(|p| format!("recount pid {p}")).unwrap_or_else(|| "another recount process".into());
        self.views.clear();
        self.head = None;
        self.fresh = false;
        if let Err(e) = self.lab.let_go() {
            return replies.send(Reply::Failed(format!("letting go of the lab: {e:#}"))).is_ok();
        }
        self.closed = true;
        if replies.send(Reply::Paused(format!("{who} is writing the lab: the explorer waits, and reloads when it is done"))).is_err() {
            return false;
        }
        while self.lab.writer_elsewhere().is_some() {
            match jobs.recv_timeout(WATCH_EVERY / 2) {
                Ok(job) => pending.push_back(job),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return false,
            }
        }
        let reply = match self.ensure_open() {
            Ok(()) => Reply::Changed(format!("{who} wrote the lab; reloaded")),
            Err(e) => Reply::Failed(format!("reading the lab again after {who} wrote it: {e:#}")),
        };
        replies.send(reply).is_ok()
    }

    /// On a warehouse: when another process has committed to it, reads it again (a new mirror)
    /// and tells the UI to reload. False when the UI hung up.
    fn watch_warehouse(&mut self, replies: &Sender<Reply>) -> bool {
        let Some(spark) = &self.setup.warehouse else { return true };
        if crate::warehouse::commits(&spark.warehouse) == self.commits {
            return true;
        }
        let reply = match self.read_warehouse() {
            Ok(()) => Reply::Changed("the warehouse has a new commit; reloaded".into()),
            Err(e) => Reply::Failed(format!("reading the warehouse again: {e:#}")),
        };
        replies.send(reply).is_ok()
    }

    /// The warehouse read again: its mirror, brought up to date, replaces the one open.
    fn read_warehouse(&mut self) -> Result<()> {
        let Some(spark) = &self.setup.warehouse else { return Ok(()) };
        self.views.clear();
        self.head = None;
        self.fresh = false;
        self.commits = crate::warehouse::commits(&spark.warehouse);
        let handles = self.handles.clone();
        let quitting = move || handles.as_ref().is_some_and(|h| h.quitting.load(std::sync::atomic::Ordering::Relaxed));
        self.lab = crate::warehouse::open_until(&spark.warehouse, &crate::warehouse::mirrors_dir(), &quitting)?;
        self.closed = false;
        self.refresh_handles()
    }

    /// A write on a warehouse: Spark does it, then the warehouse is read again.
    fn write_warehouse(&mut self, spark: crate::warehouse::Spark, job: Job) -> Result<Reply> {
        use crate::warehouse::Write;
        let write = match job {
            Job::LandNext => match reports::overview::overview(&self.lab, &self.setup.world)?.next_upload {
                Some(upload) => Write::Daily { world: self.setup.world.clone(), upload },
                None => return Ok(Reply::Done(format!("every upload of {} has landed", self.setup.world.display()))),
            },
            Job::LandCorrection => match land::pending_corrections(&self.lab, &self.setup.world)?.into_iter().next() {
                Some(c) => Write::Daily { world: c.dir, upload: c.upload_date },
                None => return Ok(Reply::Done(format!("no correction of {} is waiting to land", self.setup.world.display()))),
            },
            Job::Rollback(s) => Write::Rollback(s),
            Job::Reopen(date, Reopening { reason, by }) => Write::Reopen { date, reason, by },
            Job::RetryV1(d) => Write::RetryV1(d),
            Job::Rebuild { date, late_days, fail_after: None } => Write::Rebuild { date, late_days },
            Job::Rebuild { fail_after: Some(_), .. } | Job::Reset => {
                return Ok(Reply::Failed(
                    "on a warehouse the crash demo and a reset are the lab's (recount --lab): the warehouse is written by Spark".into(),
                ));
            }
            Job::Load(_) | Job::LoadDate(_) | Job::PreviewRebuild(_) | Job::PreviewReopen(..) => {
                color_eyre::eyre::bail!("a reading job reached the writer")
            }
        };
        let done = spark.write(&self.lab, write, |_| {});
        // Whatever Spark committed, the warehouse is read again.
        let read = self.read_warehouse();
        let done = done?;
        read?;
        Ok(Reply::Done(done))
    }

    fn view(&mut self, d: NaiveDate) -> Result<DateView> {
        if let Some(v) = self.views.get(&d) {
            return Ok(v.clone());
        }
        let v = match self.head.take() {
            Some(check) if check.business_date == d => view_of(&self.lab, check)?,
            _ => load_view(&self.lab, d)?,
        };
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
        let Some(focus) = self.focus.filter(|_| self.model.is_none()) else { return Ok(false) };
        let Some(i) = self.dates.iter().position(|&d| d == focus) else { return Ok(false) };
        for step in 1..=PREFETCH_RADIUS {
            for j in [i.checked_add(step), i.checked_sub(step)].into_iter().flatten() {
                if let Some(&d) = self.dates.get(j)
                    && !self.views.contains_key(&d)
                {
                    self.view(d)?;
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Readies the lab for reading: open, with the caches the screens read up to date (written
    /// briefly under the lock when they are not).
    fn ready_to_read(&mut self) -> Result<()> {
        self.ensure_open()?;
        // A model lab keeps none of retail's caches.
        if !self.fresh && self.model.is_none() {
            let fresh = reports::freshen(&mut self.lab);
            self.refresh_handles()?;
            fresh?;
            self.fresh = true;
        }
        Ok(())
    }

    /// A job on a model lab: its reads, and the writes the explorer offers there.
    fn serve_model(&mut self, model: &crate::model::Model, job: Job) -> Result<Reply> {
        self.ensure_open()?;
        let late = self.setup.late_days;
        match job {
            Job::Load(d) => {
                let recount = &*self.model_recount.insert(crate::lake::model::recompute(&self.lab, model)?.rows);
                let dates = crate::reports::model_day::dates_with(&self.lab, model, late, recount)?;
                let mut overview = dates.navigator();
                // What U lands: the world's first upload not landed (none when the world is not
                // the model's).
                let landed = self.lab.store().model_uploads()?;
                let world = crate::model::recount::files_of(&self.setup.world, model).unwrap_or_default();
                overview.next_upload = world.iter().map(|f| f.0).find(|u| !landed.contains(u));
                let on = d.filter(|d| overview.dates.iter().any(|x| x.business_date == *d)).or_else(|| overview.default_date());
                let day = on.map(|d| model_day(&self.lab, model, d, late, recount).map(Box::new)).transpose()?;
                Ok(Reply::ModelLoaded(Box::new(ModelLoad { overview, dates, day })))
            }
            Job::LoadDate(d) => {
                if self.model_recount.is_none() {
                    self.model_recount = Some(crate::lake::model::recompute(&self.lab, model)?.rows);
                }
                let recount = self.model_recount.as_deref().unwrap_or_default();
                Ok(Reply::ModelDate(Box::new(model_day(&self.lab, model, d, late, recount)?)))
            }
            Job::PreviewRebuild(d) => Ok(Reply::Preview(crate::lake::model::preview_rebuild(&self.lab, d, late)?)),
            Job::PreviewReopen(d, decision) => {
                Ok(Reply::ReopenPreview(d, crate::lake::model::reopen_question(&self.lab, model, d, late)?, decision))
            }
            Job::Reset => color_eyre::eyre::bail!("on a lab of model {}, reset it from the command line (`recount reset`)", model.name),
            job => self.writing(|lab, setup| model_write(lab, setup, model, job)),
        }
    }

    /// The foreign gold audited against the lab, when the explorer audits one.
    pub fn audit(&mut self) -> Option<Result<Box<crate::reports::audit::AuditReport>, String>> {
        let source = self.setup.audit.clone()?;
        let late_days = self.setup.late_days;
        let lab = &self.lab;
        let run = || -> Result<crate::reports::audit::AuditReport> {
            let currencies: std::collections::HashMap<String, String> =
                lab.store().stores()?.into_iter().map(|s| (s.store_id, s.currency)).collect();
            let rows = crate::reports::audit::read_foreign(
                &source.gold,
                &source.map,
                &|s| currencies.get(s).cloned(),
                &crate::warehouse::foreign_table_files,
            )?;
            let mut report = crate::reports::audit::audit(lab, &source.gold.display().to_string(), &rows, late_days)?;
            report.all = true;
            Ok(report)
        };
        Some(run().map(Box::new).map_err(|e| format!("{e:#}")))
    }

    /// The check of `d` when its view is not loaded yet (None when it is): computed once, and
    /// kept for the view that follows.
    pub fn head(&mut self, d: NaiveDate) -> Result<Option<CheckReport>> {
        if self.views.contains_key(&d) || self.model.is_some() {
            return Ok(None);
        }
        self.ready_to_read()?;
        let check = reports::check::check(&self.lab, d, None)?;
        self.head = Some(check.clone());
        Ok(Some(check))
    }

    pub fn serve(&mut self, job: Job) -> Result<Reply> {
        if let Some(model) = self.model.clone() {
            return self.serve_model(&model, job);
        }
        if job.writes() {
            self.ensure_open()?;
        } else {
            self.ready_to_read()?;
        }
        match job {
            Job::Load(d) => {
                self.views.clear();
                self.head = None;
                let snap = reports::overview::overview(&self.lab, &self.setup.world)?;
                self.dates = snap.dates.iter().map(|x| x.business_date).collect();
                let date = d.or_else(|| snap.default_date());
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
            Job::PreviewRebuild(d) => Ok(Reply::Preview(v2::preview_rebuild(&self.lab, d)?)),
            Job::PreviewReopen(d, decision) => Ok(Reply::ReopenPreview(d, crate::lake::reopen::plan(&self.lab, d)?.text(), decision)),
            job if self.setup.warehouse.is_some() => {
                let spark = self.setup.warehouse.clone().ok_or_else(|| color_eyre::eyre::eyre!("no warehouse"))?;
                self.write_warehouse(spark, job)
            }
            job => self.writing(|lab, setup| write(lab, setup, job)),
        }
    }

    /// Runs `write`: everything but reading writes (or may have written, if it failed halfway).
    /// The lab is written under its lock, then read again, so other processes may read it.
    fn writing(&mut self, write: impl FnOnce(&mut Lab, &Setup) -> Result<Reply>) -> Result<Reply> {
        self.views.clear();
        self.model_recount = None;
        self.head = None;
        self.fresh = false;
        let began = self.lab.begin_writing();
        // A lab that could not become the writer may not be readable as it was either: it is
        // read again before the next job.
        let began_ok = began.is_ok();
        let handles = self.refresh_handles();
        let written = began.and(handles).and_then(|()| write(&mut self.lab, &self.setup));
        let ended = self.lab.end_writing();
        self.closed = ended.is_err() || !began_ok;
        let handles = if self.closed { Ok(()) } else { self.refresh_handles() };
        let reply = written?;
        ended.and(handles)?;
        Ok(reply)
    }
}

fn write(lab: &mut Lab, setup: &Setup, job: Job) -> Result<Reply> {
    let opts = v2::V2Options { late_days: setup.late_days, fail_after: None, ..Default::default() };
    Ok(match job {
        Job::Load(_) | Job::LoadDate(_) | Job::PreviewRebuild(_) | Job::PreviewReopen(..) => {
            color_eyre::eyre::bail!("a reading job reached the writer")
        }
        Job::Reopen(d, Reopening { reason, by }) => {
            let r = crate::lake::reopen::reopen(lab, d, crate::lake::reopen::Decision { reason: &reason, by: &by }, opts)?;
            Reply::Done(format!("{d} reopened by {by} as snapshot {}: {}", r.snapshot.snapshot_id, r.snapshot.fingerprint))
        }
        Job::RetryV1(d) => {
            let r = v1::run(lab, d, None)?;
            Reply::Done(format!(
                "v1 for {d} appended {} row(s) as snapshot {}: the v1 column now counts every run",
                r.rows_added, r.snapshot_id
            ))
        }
        Job::Rebuild { date, late_days, fail_after } => {
            rebuild(lab, date, v2::V2Options { late_days, force: fail_after.is_some(), fail_after })?
        }
        Job::LandNext => land_next(lab, setup, opts)?,
        Job::LandCorrection => land_correction(lab, setup, opts)?,
        Job::Rollback(s) => {
            let r = snapshot::rollback(lab, s, None)?;
            Reply::Done(format!("rolled back to snapshot {s} as snapshot {}: {} date(s) restored", r.snapshot_id, r.dates_rewritten))
        }
        Job::Reset => {
            lab.reset()?;
            Reply::Done(format!(
                "lab {} is empty; press {} to land the first upload",
                lab.root.display(),
                crate::tui::keys::active().label_of(crate::tui::keys::Action::LandNext)
            ))
        }
    })
}

/// A write on a model lab: v1 retried, a date rebuilt or reopened, the world's next upload or
/// correction landed and run, or a rollback.
fn model_write(lab: &mut Lab, setup: &Setup, model: &crate::model::Model, job: Job) -> Result<Reply> {
    use crate::lake::model as lab_model;
    let done = |text: String| Ok(Reply::Done(text));
    match job {
        Job::RetryV1(d) => {
            let rows = lab_model::naive(lab, &[d])?;
            done(format!("v1 for {d} appended {rows} row(s): the v1 column now counts every run"))
        }
        Job::Rebuild { date, late_days, fail_after } => {
            let run = lab_model::rebuild(lab, model, &[date], late_days, fail_after.is_some())?;
            done(match run.snapshot {
                Some(id) => format!("{date} rebuilt as snapshot {id}: {}", run.fingerprint),
                None => format!("v2 found the inputs of {date} unchanged: nothing was rebuilt"),
            })
        }
        Job::Rollback(s) => {
            let id = lab_model::rollback(lab, model, s)?;
            done(format!("rolled back to snapshot {s} as snapshot {id}: {}", lab_model::fingerprint(lab, model, None)?))
        }
        Job::Reopen(d, Reopening { reason, by }) => {
            let run = lab_model::reopen(lab, model, d, setup.late_days, (&reason, &by))?;
            done(match run.snapshot {
                Some(id) => format!("{d} reopened by {by} as snapshot {id}: {}", run.fingerprint),
                None => format!("{d} reopened by {by}: nothing changed"),
            })
        }
        Job::LandCorrection => {
            let Some(c) = lab_model::pending_corrections(lab, &setup.world, model)?.into_iter().next() else {
                return done(format!("no correction of {} is waiting to land", setup.world.display()));
            };
            let u = c.upload_date;
            let landing = lab_model::land(lab, &c.dir, model, &[u])?;
            let landed: Vec<String> =
                landing.files.iter().filter(|f| f.status != "unchanged").map(|f| format!("{} v{}", f.file, f.version)).collect();
            let run = lab_model::run(lab, model, &[u], setup.late_days)
                .wrap_err_with(|| format!("the correction of upload {u} landed and committed; its v2 run then failed"))?;
            let rewritten: Vec<String> = run.iter().flat_map(|r| r.rewritten.iter().map(NaiveDate::to_string)).collect();
            let what = if rewritten.is_empty() { "nothing, its inputs unchanged".to_string() } else { rewritten.join(", ") };
            done(format!("correction of upload {u} landed ({}) and v2 rewrote {what}", landed.join(", ")))
        }
        Job::LandNext => {
            let landed = lab.store().model_uploads()?;
            let files = crate::model::recount::files_of(&setup.world, model)?;
            let Some(u) = files.iter().map(|f| f.0).find(|u| !landed.contains(u)) else {
                return done(format!("every upload of {} has landed", setup.world.display()));
            };
            let landing = lab_model::land(lab, &setup.world, model, &[u])?;
            let run = lab_model::run(lab, model, &[u], setup.late_days)
                .wrap_err_with(|| format!("upload {u} landed and committed ({} file(s)); its v2 run then failed", landing.files.len()))?;
            let rewritten: Vec<String> = run.iter().flat_map(|r| r.rewritten.iter().map(NaiveDate::to_string)).collect();
            let what = if rewritten.is_empty() { "nothing, its inputs unchanged".to_string() } else { rewritten.join(", ") };
            done(format!("upload {u} landed ({} file(s)) and v2 rewrote {what}", landing.files.len()))
        }
        _ => color_eyre::eyre::bail!("a reading job reached the writer"),
    }
}

/// U: lands the world's next upload and runs v2 for it (a pending store correction first).
fn land_next(lab: &mut Lab, setup: &Setup, opts: v2::V2Options) -> Result<Reply> {
    let Some(u) = reports::overview::overview(lab, &setup.world)?.next_upload else {
        return Ok(Reply::Done(format!("every upload of {} has landed", setup.world.display())));
    };
    let done = daily::land_and_run(lab, &setup.world, u, daily::Step { trigger: TriggerKind::Daily, v1_first: false, opts })?;
    let landed = done.landed;
    let stores = match &done.store_run {
        Some(s) => format!("{}: v2 snapshot {}; ", s.snapshot.trigger.detail, s.snapshot.snapshot_id),
        None => String::new(),
    };
    let r = match done.run {
        daily::RunOutcome::Ran(r) => r,
        daily::RunOutcome::Held(h) => return Ok(Reply::Failed(daily::LandAndRun::held_line(&h))),
        daily::RunOutcome::NothingLanded => {
            return Ok(Reply::Done(format!("upload {u} has no file in {}; nothing landed", setup.world.display())));
        }
        daily::RunOutcome::Failed(e) => return Ok(landed_then_failed(&format!("upload {u}"), landed.events, &e)),
    };
    let dates: Vec<String> = r.dates.iter().map(|d| format!("{} {}", d.business_date, d.action)).collect();
    Ok(Reply::Done(format!(
        "{stores}landed upload {u} ({} events); v2 snapshot {}: {}{}",
        landed.events,
        r.snapshot.snapshot_id,
        dates.join(", "),
        moves(lab, &r)?
    )))
}

/// C: lands the next correction shipped with the world and runs v2 for its upload.
fn land_correction(lab: &mut Lab, setup: &Setup, opts: v2::V2Options) -> Result<Reply> {
    let Some(c) = land::pending_corrections(lab, &setup.world)?.into_iter().next() else {
        return Ok(Reply::Done(format!("no correction of {} is waiting to land", setup.world.display())));
    };
    let done = daily::land_and_run(lab, &c.dir, c.upload_date, daily::Step { trigger: TriggerKind::Upload, v1_first: false, opts })?;
    let landed = done.landed;
    let versions: Vec<String> =
        landed.partitions.iter().flat_map(|p| p.corrected()).map(|f| format!("{} v{}", f.name, f.version)).collect();
    let r = match done.run {
        daily::RunOutcome::Ran(r) => r,
        daily::RunOutcome::Held(h) => return Ok(Reply::Failed(daily::LandAndRun::held_line(&h))),
        daily::RunOutcome::NothingLanded => {
            return Ok(Reply::Done(format!("the correction of upload {} had no file to land", c.upload_date)));
        }
        daily::RunOutcome::Failed(e) => {
            return Ok(landed_then_failed(&format!("the correction {}", versions.join(", ")), landed.events, &e));
        }
    };
    let dates: Vec<String> = r.dates.iter().filter(|d| d.action.writes()).map(|d| d.business_date.to_string()).collect();
    let what = if dates.is_empty() {
        "no date changed (the same rows)".to_string()
    } else {
        format!("rewrote {}; History explains it", dates.join(", "))
    };
    Ok(Reply::Done(format!(
        "landed a correction of upload {}: {}; v2 snapshot {}: {what}",
        c.upload_date,
        versions.join(", "),
        r.snapshot.snapshot_id
    )))
}

/// How much each date a run rewrote moved, per currency: "; moved 2026-10-30 +£1,827.90".
fn moves(lab: &Lab, r: &v2::RunReport) -> Result<String> {
    let mut out = Vec::new();
    for d in r.dates.iter().filter(|d| d.action.writes()) {
        let diff = reports::history::diff(lab, d.business_date, None, None)?;
        let mut by_currency: std::collections::BTreeMap<&str, i64> = Default::default();
        for c in &diff.countries {
            *by_currency.entry(&c.currency).or_default() += c.revenue_after_minor - c.revenue_before_minor;
        }
        let parts: Vec<String> = by_currency.iter().map(|(cur, delta)| crate::money::format_delta(*delta, cur)).collect();
        out.push(format!("{} {}", d.business_date, parts.join(" ")));
    }
    Ok(if out.is_empty() { String::new() } else { format!("; moved {}", out.join(", ")) })
}

/// A rebuild; with an injected failure (the crash demo), the reply says whether gold changed.
fn rebuild(lab: &Lab, date: NaiveDate, opts: v2::V2Options) -> Result<Reply> {
    let before = reports::fingerprint(lab, None)?;
    match v2::rebuild_dates(lab, &[date], opts) {
        Ok(r) if r.snapshot.operation == snapshot::Operation::Skipped => Ok(Reply::Done(format!(
            "v2 found the inputs of {date} unchanged: nothing was rebuilt (snapshot {} records the skip)",
            r.snapshot.snapshot_id
        ))),
        Ok(r) => Ok(Reply::Done(format!(
            "v2 rebuilt {date}: snapshot {} ({}), {}",
            r.snapshot.snapshot_id,
            r.snapshot.operation.as_str(),
            r.snapshot.fingerprint
        ))),
        // The crash demo's injected failure: the reply proves gold is as it was.
        Err(_) if opts.fail_after.is_some() => {
            let after = reports::fingerprint(lab, None)?;
            let same = if before.line == after.line { "unchanged" } else { "CHANGED" };
            // Short enough for the status line: what happened, then the proof.
            let at = opts.fail_after.map(|n| format!(" after statement {n}")).unwrap_or_default();
            Ok(Reply::Done(format!(
                "the rebuild crashed{at} and rolled back: gold {same} ({} rows, md5 {})",
                crate::money::format_count(after.rows),
                &after.md5[..after.md5.len().min(12)]
            )))
        }
        Err(e) => Err(e),
    }
}

pub fn load_view(lab: &Lab, d: NaiveDate) -> Result<DateView> {
    view_of(lab, reports::check::check(lab, d, None)?)
}

/// The rest of a date's view, around its check.
fn view_of(lab: &Lab, check: CheckReport) -> Result<DateView> {
    let d = check.business_date;
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
