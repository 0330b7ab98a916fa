//! The worker on a Spark warehouse's mirror: read again when Spark commits, and the writes that
//! go to Spark, after which the warehouse is read again.

use super::*;

impl Server {
    /// On a warehouse: when another process has committed to it, reads it again (a new mirror)
    /// and tells the UI to reload. False when the UI hung up.
    pub(super) fn watch_warehouse(&mut self, replies: &Sender<Reply>) -> bool {
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
    pub(super) fn read_warehouse(&mut self) -> Result<()> {
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
    pub(super) fn write_warehouse(&mut self, spark: crate::warehouse::Spark, job: Job) -> Result<Reply> {
        let world = self.setup.world.clone();
        let next = || Ok(reports::overview::overview(&self.lab, &world)?.next_upload);
        let correction = || Ok(land::pending_corrections(&self.lab, &world)?.into_iter().next().map(|c| (c.dir, c.upload_date)));
        let write = match warehouse_write(job, &world, next, correction)? {
            Ok(write) => write,
            Err(reply) => return Ok(reply),
        };
        let done = spark.write(&self.lab, write, |_| {});
        // Whatever Spark committed, the warehouse is read again.
        let read = self.read_warehouse();
        let done = done?;
        read?;
        Ok(Reply::Done(done))
    }
}

/// What `job` asks of a warehouse, which Spark does; U's upload and C's correction are found by
/// `next` and `correction` (retail's and a model's find them apart). Err: the reply to a job a
/// warehouse does not take, or that finds nothing to land.
pub(super) fn warehouse_write(
    job: Job,
    world: &std::path::Path,
    next: impl FnOnce() -> Result<Option<NaiveDate>>,
    correction: impl FnOnce() -> Result<Option<(std::path::PathBuf, NaiveDate)>>,
) -> Result<std::result::Result<crate::warehouse::Write, Reply>> {
    use crate::warehouse::Write;
    Ok(Ok(match job {
        Job::LandNext => match next()? {
            Some(upload) => Write::Daily { world: world.to_path_buf(), upload },
            None => return Ok(Err(Reply::Done(format!("every upload of {} has landed", world.display())))),
        },
        Job::LandCorrection => match correction()? {
            Some((dir, upload)) => Write::Daily { world: dir, upload },
            None => return Ok(Err(Reply::Done(format!("no correction of {} is waiting to land", world.display())))),
        },
        Job::Rollback(s) => Write::Rollback(s),
        Job::Reopen(date, Reopening { reason, by }) => Write::Reopen { date, reason, by },
        Job::RetryV1(d) => Write::RetryV1(d),
        Job::Rebuild { date, late_days, fail_after: None } => Write::Rebuild { date, late_days },
        Job::Rebuild { fail_after: Some(_), .. } | Job::Reset => {
            return Ok(Err(Reply::Failed(
                "on a warehouse the crash demo and a reset are the lab's (recount --lab): the warehouse is written by Spark".into(),
            )));
        }
        Job::Load(_) | Job::LoadDate(_) | Job::PreviewRebuild(_) | Job::PreviewReopen(..) => {
            color_eyre::eyre::bail!("a reading job reached the writer")
        }
    }))
}
