//! The worker on a lab of a model other than retail: a date's reports, the jobs it serves, and
//! the writes the explorer offers there.

use super::*;
use crate::reports::overview::LabOverview;

/// The entities of a change the History screen lists, and each kept view holds: a date's first
/// version adds every entity (a million on a large lab), which `recount history` lists in full.
const CHANGES_LISTED: usize = 1_000;

/// The rest of a model lab's date view, around its check.
pub(super) fn view_of(lab: &Lab, check: crate::reports::check::ModelCheckReport, late_days: u32, recount: &[ModelRow]) -> Result<DateView> {
    let (model, d) = (&check.model, check.business_date);
    Ok(DateView {
        promises: crate::reports::promises::model_promises(lab, &check)?,
        explain: crate::reports::explain::model_explain_with(lab, model, d, recount)?,
        late: crate::reports::listings::model_late(lab, model, Some(d), late_days)?,
        baskets: crate::reports::baskets::model_resent(lab, model, d, late_days)?,
        history: DateHistory::Model(Box::new(crate::reports::model_lab::history_listing(
            lab,
            model,
            d,
            (None, None),
            Some(late_days),
            Some(CHANGES_LISTED),
        )?)),
        check: DateCheck::Model(Box::new(check)),
    })
}

impl Server {
    /// A job on a model lab: its reads, and the writes the explorer offers there. Its dates are
    /// loaded as retail's are (`Server::view`): the check ahead, the rest after, neighbours ahead.
    pub(super) fn serve_model(&mut self, model: &crate::model::Model, job: Job) -> Result<Reply> {
        self.ensure_open()?;
        let late = self.setup.late_days;
        match job {
            Job::Load(d) => {
                self.views.clear();
                self.head = None;
                let recount = &*self.model_recount.insert(crate::lake::model::recompute(&self.lab, model)?);
                let dates = crate::reports::model_day::dates_with(&self.lab, model, late, recount)?;
                // The histograms scan every record: kept until a file lands (a reset or another
                // writer forgets them).
                let files = self.lab.store().model_next_file_id()?;
                let histograms = match self.model_lateness.take() {
                    Some((kept, h)) if kept == files => h,
                    _ => LabOverview::model_histograms(&self.lab, model, late)?,
                };
                self.model_lateness = Some((files, histograms.clone()));
                let mut overview = LabOverview::of_model(&self.lab, model, &dates, late, histograms)?;
                // What U lands: the world's first upload not landed (none when the world is not
                // the model's).
                let landed = self.lab.store().model_uploads(None)?;
                let world = crate::model::recount::files_of(&self.setup.world, model).unwrap_or_default();
                overview.next_upload = world.iter().map(|f| f.0).find(|u| !landed.contains(u));
                self.dates = overview.dates.iter().map(|x| x.business_date).collect();
                let on = d.filter(|d| self.dates.contains(d)).or_else(|| overview.default_date());
                self.focus = on;
                let view = on.map(|d| self.view(d)).transpose()?;
                Ok(Reply::ModelLoaded(Box::new(ModelLoad { overview, model: model.clone(), view })))
            }
            Job::LoadDate(d) => {
                self.focus = Some(d);
                Ok(Reply::DateLoaded(self.view(d)?))
            }
            Job::PreviewRebuild(d) => Ok(Reply::Preview(crate::lake::v2::preview_model_rebuild(&self.lab, d, late)?)),
            Job::PreviewReopen(d, decision) => {
                Ok(Reply::ReopenPreview(d, crate::lake::model::reopen_plan(&self.lab, model, d, late)?.text(&model.entity), decision))
            }
            // A model's warehouse is read through its mirror, which no write may change: Spark
            // writes the warehouse, which is then read again.
            job if self.setup.warehouse.is_some() => self.write_model_warehouse(model, job),
            job => {
                let reset = matches!(job, Job::Reset);
                let reply = self.writing(|lab, setup| model_write(lab, setup, model, job));
                if reset {
                    // The recount of the files that were there is gone with them.
                    self.model_recount = None;
                    self.model_lateness = None;
                }
                reply
            }
        }
    }
}

/// A write on a model lab: v1 retried, a date rebuilt or reopened, the world's next upload or
/// correction landed and run, a rollback, or the lab emptied.
pub(super) fn model_write(lab: &mut Lab, setup: &Setup, model: &crate::model::Model, job: Job) -> Result<Reply> {
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
            let what = rewritten(&run);
            done(format!("correction of upload {u} landed ({}) and v2 rewrote {what}", landed.join(", ")))
        }
        Job::LandNext => {
            let landed = lab.store().model_uploads(None)?;
            let files = crate::model::recount::files_of(&setup.world, model)?;
            let Some(u) = files.iter().map(|f| f.0).find(|u| !landed.contains(u)) else {
                return done(format!("every upload of {} has landed", setup.world.display()));
            };
            let landing = lab_model::land(lab, &setup.world, model, &[u])?;
            let run = lab_model::run(lab, model, &[u], setup.late_days)
                .wrap_err_with(|| format!("upload {u} landed and committed ({} file(s)); its v2 run then failed", landing.files.len()))?;
            let what = rewritten(&run);
            done(format!("upload {u} landed ({} file(s)) and v2 rewrote {what}", landing.files.len()))
        }
        Job::Reset => {
            // The lab stays the model's: its next landing (U) makes the model's tables again.
            lab.reset()?;
            done(format!(
                "lab {} is empty; press {} to land the first upload of {} (model {})",
                lab.root.display(),
                crate::tui::keys::active().label_of(crate::tui::keys::Action::LandNext),
                setup.world.display(),
                model.name
            ))
        }
        _ => color_eyre::eyre::bail!("a reading job reached the writer"),
    }
}

/// The dates a model lab's runs rewrote, as the explorer's line names them.
fn rewritten(runs: &[crate::lake::model::ModelRun]) -> String {
    let dates: Vec<String> = runs.iter().flat_map(|r| r.rewritten.iter().map(NaiveDate::to_string)).collect();
    if dates.is_empty() { "nothing, its inputs unchanged".to_string() } else { dates.join(", ") }
}

impl Server {
    /// A write on a model's warehouse: Spark does it (`warehouse::Spark::write_model`), then the
    /// warehouse is read again.
    fn write_model_warehouse(&mut self, model: &crate::model::Model, job: Job) -> Result<Reply> {
        let Some(spark) = self.setup.warehouse.clone() else { color_eyre::eyre::bail!("no warehouse to write") };
        let world = self.setup.world.clone();
        let next = || {
            let landed = self.lab.store().model_uploads(None)?;
            Ok(crate::model::recount::files_of(&world, model)?.iter().map(|f| f.0).find(|u| !landed.contains(u)))
        };
        let correction = || {
            let pending = crate::lake::model::pending_corrections(&self.lab, &world, model)?;
            Ok(pending.into_iter().next().map(|c| (c.dir, c.upload_date)))
        };
        let write = match super::warehouse::warehouse_write(job, &world, next, correction)? {
            Ok(write) => write,
            Err(reply) => return Ok(reply),
        };
        let done = spark.write_model(&self.lab, write);
        self.model_recount = None;
        // Whatever Spark committed, the warehouse is read again.
        let read = self.read_warehouse();
        let done = done?;
        read?;
        Ok(Reply::Done(done))
    }
}
