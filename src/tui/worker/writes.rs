//! The writes the explorer asks of a retail lab: v1 retried, a date rebuilt or reopened, the next
//! upload or correction landed and run, a rollback, a reset.

use super::*;

pub(super) fn write(lab: &mut Lab, setup: &Setup, job: Job) -> Result<Reply> {
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

/// U: lands the world's next upload and runs v2 for it (a pending store correction first).
pub(super) fn land_next(lab: &mut Lab, setup: &Setup, opts: v2::V2Options) -> Result<Reply> {
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
        date_moves(lab, &r)?
    )))
}

/// C: lands the next correction shipped with the world and runs v2 for its upload.
pub(super) fn land_correction(lab: &mut Lab, setup: &Setup, opts: v2::V2Options) -> Result<Reply> {
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
pub(super) fn date_moves(lab: &Lab, r: &v2::RunReport) -> Result<String> {
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
pub(super) fn rebuild(lab: &Lab, date: NaiveDate, opts: v2::V2Options) -> Result<Reply> {
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
