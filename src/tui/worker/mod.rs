//! The explorer's background worker: it owns the lab, so the UI thread never blocks on a query.
//! Esc interrupts the running statement through DuckDB. It calls only `lake` and `reports`.

use crate::error::{LabError, lab_error};
use crate::lake::snapshot::TriggerKind;
use crate::lake::{Lab, bootstrap, daily, land, snapshot, v1, v2};
use crate::model::recount::ModelRow;
use crate::reports::overview::LabOverview;
use crate::reports::{self, check::CheckReport};
use chrono::NaiveDate;
use color_eyre::eyre::{Result, WrapErr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};

pub use crate::reports::overview::DateSummary;

mod models;
mod thread;
mod views;
mod warehouse;
mod writes;

use thread::WATCH_EVERY;
pub use thread::spawn;
pub use views::{Audited, DateCheck, DateHistory, DateView};
use writes::*;

/// A full load of a model lab: its navigator, its model, and the date it opens on.
#[derive(Debug)]
pub struct ModelLoad {
    pub overview: LabOverview,
    pub model: crate::model::Model,
    pub view: Option<Arc<DateView>>,
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
    Loaded(Box<LabOverview>, Option<Arc<DateView>>),
    /// A date's view, shared with the worker's kept views (a large lab's view is not copied).
    DateLoaded(Arc<DateView>),
    Preview(v2::RebuildPreview),
    /// The date a reopening would widen, and the question to ask before it does.
    ReopenPreview(NaiveDate, String, Reopening),
    Done(String),
    Failed(String),
    /// The check of a date not loaded yet, ahead of its other reports: the Overview draws it
    /// while the rest loads (the view follows as `DateLoaded`).
    DateHead(Box<DateCheck>),
    /// Another process has taken the lab's write lock: the worker let go of the lab and waits.
    Paused(String),
    /// A model lab's navigator and first date (`Job::Load` on a lab of a model other than
    /// retail): `Loaded`, with the model the screens name things by.
    ModelLoaded(Box<ModelLoad>),
    /// The foreign gold audited against the lab as just loaded, or why it could not be: sent
    /// after each full load (`tui --audit`), not an answer to the running job.
    Audited(Result<Box<Audited>, String>),
    /// That process has finished: the lab is read again, and the screens should reload.
    Changed(String),
}

/// The running statement's interrupt and progress, for the UI thread. The worker reopens the lab
/// (to write, after another process wrote), so the handles are swapped each time it does.
pub struct Handles {
    inner: std::sync::Mutex<crate::lake::Running>,
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
    /// the Spark job (crates/spark/src/warehouse/).
    pub warehouse: Option<crate::warehouse::Spark>,
    /// A foreign gold to audit after every full load (`tui --audit`).
    pub audit: Option<AuditSource>,
}

/// A foreign gold for the Audit screen, and the map of its columns.
#[derive(Debug, Clone)]
pub struct AuditSource {
    pub gold: PathBuf,
    pub map: crate::reports::foreign::GoldMap,
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
    head: Option<DateCheck>,
    /// The caches the screens read are up to date with the lab as it is open now: nothing
    /// changes it until this worker writes or lets go of it.
    fresh: bool,
    views: std::collections::HashMap<NaiveDate, Arc<DateView>>,
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
    /// A model lab's lateness histograms, with the next file id they were counted at.
    model_lateness: Option<(i32, crate::reports::overview::Histograms)>,
    /// The weight of the heaviest view loaded yet (`DateView::weight`): what prefetching makes
    /// room for.
    heaviest: u64,
    /// What kept views may hold, in bytes: a share of the memory budget.
    views_budget: u64,
}

/// How far either side of the date on screen the worker loads ahead.
const PREFETCH_RADIUS: usize = 2;
/// Views kept at most (a view of the full world is a few hundred KiB).
const MAX_VIEWS: usize = 32;

/// The share of the memory budget kept views may hold (`Server::views_budget`): a view of a large
/// model lab's date lists every entity one v1 run misses (hundreds of thousands), where retail's
/// lists a few hundred.
const VIEWS_SHARE: u64 = 8;

impl DateView {
    /// Roughly what the view holds, in bytes: its listed rows at a few hundred bytes each (a key,
    /// a grain, measures, a file).
    fn weight(&self) -> u64 {
        const ROW_BYTES: u64 = 256;
        let explain: usize = self.explain.parts.iter().map(|p| p.missed_lines.len() + p.double_counted_lines.len()).sum();
        let baskets: usize = self.baskets.baskets.iter().map(|b| b.copies.len()).sum();
        let history = self.history.model().map_or(0, |h| h.changes.len() + h.gold_before.len() + h.gold_after.len());
        let check = self.check.model().map_or(0, |c| c.v1.len() + c.v2.len() + c.recompute.len() + c.beyond_window.len());
        (explain + baskets + self.late.rows.len() + history + check + 1) as u64 * ROW_BYTES
    }
}

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
            model_lateness: None,
            heaviest: 0,
            views_budget: crate::lake::memory_budget() / VIEWS_SHARE,
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
        self.model_lateness = None;
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

    fn view(&mut self, d: NaiveDate) -> Result<Arc<DateView>> {
        if let Some(v) = self.views.get(&d) {
            return Ok(Arc::clone(v));
        }
        let check = match self.head.take() {
            Some(check) if check.business_date() == d => check,
            _ => self.check_of(d)?,
        };
        let v = Arc::new(self.view_of(check)?);
        // Kept views follow the memory budget: the dates farthest from the one on screen are
        // forgotten first, and the one on screen (or being loaded for it) never.
        self.heaviest = self.heaviest.max(v.weight());
        let focus = self.focus.unwrap_or(d);
        while self.views.len() >= MAX_VIEWS || (!self.views.is_empty() && self.weight() + v.weight() > self.views_budget) {
            let far = self.views.keys().filter(|k| **k != focus).max_by_key(|k| (**k - focus).num_days().abs()).copied();
            let Some(far) = far else { break };
            self.views.remove(&far);
        }
        self.views.insert(d, Arc::clone(&v));
        Ok(v)
    }

    /// The server, keeping views within `bytes` (a test's small budget).
    pub fn with_views_budget(self, bytes: u64) -> Server {
        Server { views_budget: bytes, ..self }
    }

    /// What the kept views hold, roughly, in bytes.
    fn weight(&self) -> u64 {
        self.views.values().map(|v| v.weight()).sum()
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
        // No room for another view as heavy as the heaviest yet: loading one would only make
        // another neighbour's room, and the next prefetch that one's.
        if self.weight() + self.heaviest > self.views_budget {
            return Ok(false);
        }
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

    /// The foreign gold audited against the lab, when the explorer audits one: in the model's
    /// columns on a model lab, as `recount audit --gold` reads it there.
    pub fn audit(&mut self) -> Option<Result<Box<Audited>, String>> {
        let source = self.setup.audit.clone()?;
        let late_days = self.setup.late_days;
        let lab = &self.lab;
        let spill = crate::reports::audit_spill::spill_of(lab);
        let run = || -> Result<Audited> {
            if let Some(model) = &self.model {
                let rows = crate::reports::model_audit::read_foreign(
                    &source.gold,
                    lab,
                    model,
                    &source.map,
                    &crate::warehouse::foreign_table_files,
                    &spill,
                )?;
                let mut report = crate::reports::model_audit::audit(lab, model, &source.gold.display().to_string(), rows, late_days)?;
                report.all = true;
                return Ok(Audited::Model(Box::new(report)));
            }
            let currencies: std::collections::HashMap<String, String> =
                lab.store().stores()?.into_iter().map(|s| (s.store_id, s.currency)).collect();
            let rows = crate::reports::audit::read_foreign(
                &source.gold,
                &source.map,
                &|s| currencies.get(s).cloned(),
                &crate::warehouse::foreign_table_files,
                &spill,
            )?;
            let mut report = crate::reports::audit::audit(lab, &source.gold.display().to_string(), rows, late_days)?;
            report.all = true;
            Ok(Audited::Retail(Box::new(report)))
        };
        Some(run().map(Box::new).map_err(|e| format!("{e:#}")))
    }

    /// The check of `d` when its view is not loaded yet (None when it is): computed once, and
    /// kept for the view that follows.
    pub fn head(&mut self, d: NaiveDate) -> Result<Option<DateCheck>> {
        if self.views.contains_key(&d) {
            return Ok(None);
        }
        self.ready_to_read()?;
        let check = self.check_of(d)?;
        self.head = Some(check.clone());
        Ok(Some(check))
    }

    /// The check of `d`, on either kind of lab: a model lab's beside its recount of the current
    /// files, made once per full load.
    fn check_of(&mut self, d: NaiveDate) -> Result<DateCheck> {
        let Some(model) = &self.model else { return Ok(DateCheck::Retail(reports::check::check(&self.lab, d, None)?)) };
        if self.model_recount.is_none() {
            self.model_recount = Some(crate::lake::model::recompute(&self.lab, model)?);
        }
        let recount = self.model_recount.as_deref().unwrap_or_default();
        let check = reports::check::model_check_with(&self.lab, model, d, recount, self.setup.late_days, None)?;
        Ok(DateCheck::Model(Box::new(check)))
    }

    /// The rest of a date's view, around its check.
    fn view_of(&self, check: DateCheck) -> Result<DateView> {
        match check {
            DateCheck::Retail(check) => view_of(&self.lab, check),
            DateCheck::Model(check) => {
                let recount = self.model_recount.as_deref().unwrap_or_default();
                models::view_of(&self.lab, *check, self.setup.late_days, recount)
            }
        }
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
                        Some(self.view(d)?)
                    }
                    _ => None,
                };
                Ok(Reply::Loaded(Box::new(snap), view))
            }
            Job::LoadDate(d) => {
                self.focus = Some(d);
                Ok(Reply::DateLoaded(self.view(d)?))
            }
            Job::PreviewRebuild(d) => Ok(Reply::Preview(v2::preview_rebuild(&self.lab, d)?)),
            Job::PreviewReopen(d, decision) => {
                Ok(Reply::ReopenPreview(d, crate::lake::reopen::plan(&self.lab, d)?.text("basket"), decision))
            }
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

/// A retail lab's view of `d`.
pub fn load_view(lab: &Lab, d: NaiveDate) -> Result<DateView> {
    view_of(lab, reports::check::check(lab, d, None)?)
}

/// The rest of a retail date's view, around its check.
fn view_of(lab: &Lab, check: CheckReport) -> Result<DateView> {
    let d = check.business_date;
    let late_days = check.status.late_days;
    Ok(DateView {
        explain: reports::explain::explain(lab, d)?,
        baskets: reports::baskets::resent(lab, d, late_days)?,
        late: reports::listings::late(lab, Some(d), late_days)?,
        history: DateHistory::Retail(reports::history::history(lab, d, None)?),
        promises: reports::promises::promises(lab, &check)?,
        check: DateCheck::Retail(check),
    })
}
