//! The worker's thread: it opens the lab, then serves the UI's jobs in order, a newer load
//! replacing an older one, and watches the lab (or the warehouse) for other writers between jobs.

use super::*;

/// How often an idle worker looks for another process's write lock.
pub(super) const WATCH_EVERY: std::time::Duration = std::time::Duration::from_millis(200);

/// Opens the lab for reading; the default lab, while it is empty, is opened for writing first and
/// filled from the world.
/// A failure to fill it is returned beside the lab, which opens all the same.
pub(super) fn open_lab(setup: &Setup) -> Result<(Lab, Option<String>)> {
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
pub(super) fn serve_jobs(mut server: Server, job_rx: &std::sync::mpsc::Receiver<Job>, reply_tx: &std::sync::mpsc::Sender<Reply>) {
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
        // A model lab's full load is ModelLoaded: its audit was never run, and the screen said
        // "auditing" for ever.
        let loaded = matches!(reply, Reply::Loaded(..) | Reply::ModelLoaded(..));
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
pub(super) fn newest_load(mut job: Job, job_rx: &std::sync::mpsc::Receiver<Job>, pending: &mut std::collections::VecDeque<Job>) -> Job {
    while let Ok(next) = job_rx.try_recv() {
        if matches!(next, Job::LoadDate(_)) && pending.is_empty() {
            job = next;
        } else {
            pending.push_back(next);
        }
    }
    job
}
