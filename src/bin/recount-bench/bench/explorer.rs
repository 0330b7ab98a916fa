//! The explorer's figures, headless through the worker's own `Server`: its cold start, a move
//! to a date loaded ahead, and a jump to one that is not.

use super::{BenchFigure, BenchOptions, measure};
use crate::lake::Lab;
use chrono::NaiveDate;
use color_eyre::eyre::{Result, bail};
use std::path::Path;
use std::time::Instant;

/// The hidden child phase of the growth table: the explorer opened on a built lab (retail's or a
/// model's), its first load, then a jump to the date farthest from the one it opened on (not
/// loaded ahead), as the worker answers it. Prints the jump's time to the Overview and to every
/// screen, in ms.
pub(crate) fn far_jump(world: &Path, lab_dir: &Path) -> Result<String> {
    use crate::tui::worker::{Job, Reply, Server};
    let mut server = Server::new(Lab::open(lab_dir)?, explorer_setup(world, lab_dir));
    let mut app = crate::tui::app::App::new(crate::tui::theme::Theme::load("dark")?, false);
    app.outbox.clear();
    let loaded = server.serve(Job::Load(None))?;
    let dates: Vec<NaiveDate> = match &loaded {
        Reply::Loaded(snap, _) => snap.dates.iter().map(|d| d.business_date).collect(),
        Reply::ModelLoaded(load) => load.overview.dates.iter().map(|d| d.business_date).collect(),
        _ => bail!("the explorer's first load failed"),
    };
    app.on_reply(loaded);
    frame(&mut app)?;
    let ahead = server.loaded_dates();
    let Some(&far) = dates.iter().find(|d| !ahead.contains(d)) else { bail!("every date was loaded ahead") };
    let (first, whole) = jump(&mut app, &mut server, far)?;
    Ok(format!("{far}: Overview drawn in {first:.1} ms, every screen in {whole:.1} ms"))
}

/// A jump to `d`, not loaded ahead, as the worker answers it: the date's check first, which the
/// Overview draws, then the whole view. The ms to each.
pub(super) fn jump(app: &mut crate::tui::app::App, server: &mut crate::tui::worker::Server, d: NaiveDate) -> Result<(f64, f64)> {
    use crate::tui::worker::{Job, Reply};
    let t = Instant::now();
    app.jump_to(&d.to_string());
    app.outbox.clear();
    let Some(check) = server.head(d)? else { bail!("{d} was loaded ahead") };
    app.on_reply(Reply::DateHead(Box::new(check)));
    frame(app)?;
    let first = t.elapsed().as_secs_f64() * 1e3;
    app.on_reply(server.serve(Job::LoadDate(d))?);
    frame(app)?;
    Ok((first, t.elapsed().as_secs_f64() * 1e3))
}

pub(super) fn explorer_setup(world: &Path, lab_dir: &Path) -> crate::tui::worker::Setup {
    crate::tui::worker::Setup {
        lab_dir: lab_dir.to_path_buf(),
        world: world.to_path_buf(),
        bootstrap: false,
        late_days: crate::rules::DEFAULT_LATE_DAYS,
        warehouse: None,
        audit: None,
    }
}

/// The explorer, headless, through the worker's own Server: cold start to a complete first
/// frame, a move to a neighbouring date the worker has loaded ahead, and a jump to a date it has
/// not.
pub(super) fn bench_explorer(opts: &BenchOptions, world: &Path, lab_dir: &Path, measures: &mut Vec<BenchFigure>) -> Result<()> {
    use crate::tui::worker::{Job, Reply, Server};
    let setup = || explorer_setup(world, lab_dir);
    let new_app = || -> Result<crate::tui::app::App> {
        let mut app = crate::tui::app::App::new(crate::tui::theme::Theme::load("dark")?, false);
        app.outbox.clear();
        Ok(app)
    };
    measures.push(measure("explorer cold start to first complete frame (headless)", "≤ 1 s", opts.runs.max(3), || {
        let mut server = Server::new(Lab::open(lab_dir)?, setup());
        let mut app = new_app()?;
        app.on_reply(server.serve(Job::Load(None))?);
        frame(&mut app)?;
        Ok(())
    })?);
    let mut server = Server::new(Lab::open(lab_dir)?, setup());
    let mut app = new_app()?;
    let loaded = server.serve(Job::Load(None))?;
    let dates: Vec<NaiveDate> = match &loaded {
        Reply::Loaded(snap, _) => snap.dates.iter().map(|d| d.business_date).collect(),
        _ => bail!("the explorer's first load failed"),
    };
    if dates.is_empty() {
        bail!("the explorer's lab has no business dates");
    }
    app.on_reply(loaded);
    let switch = |i: usize, app: &mut crate::tui::app::App, server: &mut Server| -> Result<()> {
        app.on_reply(server.serve(Job::LoadDate(dates[i]))?);
        frame(app)
    };
    let mut i = dates.len() / 2;
    let mut near = Vec::new();
    for _ in 0..opts.runs.max(9) {
        switch(i, &mut app, &mut server)?;
        while server.prefetch()? {} // the worker's idle time, between two key presses
        i = (i + 1) % dates.len();
        let t = Instant::now();
        switch(i, &mut app, &mut server)?;
        near.push(t.elapsed().as_secs_f64() * 1e3);
    }
    measures.push(BenchFigure::from_times(
        "explorer date switch to the next date, loaded ahead while idle (headless)",
        "≤ 30 ms",
        &near,
        None,
    ));
    // Each jump goes to a date the worker has not loaded (no prefetch runs between them), as the
    // worker answers it: the date's check first, which the Overview draws, then the whole view.
    let loaded = server.loaded_dates();
    let targets: Vec<usize> = (0..dates.len()).filter(|&j| !loaded.contains(&dates[j])).take(opts.runs.max(9)).collect();
    if !targets.is_empty() {
        let (mut first, mut whole) = (Vec::new(), Vec::new());
        for j in targets {
            let (to_overview, to_all) = jump(&mut app, &mut server, dates[j])?;
            first.push(to_overview);
            whole.push(to_all);
        }
        measures.push(BenchFigure::from_times(
            "explorer jump to a date not loaded ahead: the Overview drawn (headless)",
            "≤ 50 ms",
            &first,
            None,
        ));
        measures.push(BenchFigure::from_times(
            "explorer jump to a date not loaded ahead: every screen loaded (headless)",
            "",
            &whole,
            None,
        ));
    }
    Ok(())
}

pub(super) fn frame(app: &mut crate::tui::app::App) -> Result<()> {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40))?;
    crate::tui::frame(&mut terminal, app)?;
    Ok(())
}
