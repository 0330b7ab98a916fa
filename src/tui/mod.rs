//! The explorer: an interactive terminal UI over raw, silver, gold and their snapshots.

pub mod app;
mod charts;
pub mod draw;
pub mod keys;
pub mod screen;
pub(crate) mod screens;
pub mod theme;
pub(crate) mod widgets;
pub mod worker;

use app::{App, Popup};
use color_eyre::eyre::Result;
use ratatui::crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind, MouseEventKind};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

pub struct TuiOptions {
    pub lab_dir: PathBuf,
    pub world: PathBuf,
    /// Build the lab from the world when it is empty (the default lab).
    pub bootstrap: bool,
    pub theme: String,
    pub mouse: bool,
    /// The lateness window the explorer's own v2 runs use (the config file's, else the default).
    pub late_days: u32,
    /// An Iceberg warehouse to explore instead of the lab (`--warehouse`).
    pub warehouse: Option<PathBuf>,
    /// A foreign gold the Audit screen audits (`--audit`).
    pub audit: Option<worker::AuditSource>,
}

pub fn run(opts: TuiOptions) -> Result<()> {
    let theme = theme::Theme::load(&opts.theme)?;
    // Open the lab before touching the terminal, so a busy or broken lab is a plain error.
    let store = opts.warehouse.as_ref().map(|w| format!("warehouse {}", w.display())).unwrap_or_default();
    let warehouse =
        opts.warehouse.map(|warehouse| crate::warehouse::Spark { warehouse, master: "local[2]".into(), late_days: opts.late_days });
    let worker = worker::spawn(worker::Setup {
        lab_dir: opts.lab_dir,
        world: opts.world,
        bootstrap: opts.bootstrap,
        late_days: opts.late_days,
        warehouse,
        audit: opts.audit.clone(),
    })?;
    let mut app = App::new(theme, opts.mouse);
    app.store = store;
    if let Some(a) = &opts.audit {
        app.audit = Some(app::AuditState::Pending(a.gold.display().to_string()));
        app.screen = screen::Screen::Audit;
    }
    // ratatui::init restores the terminal on panic as well as here.
    let mut terminal = ratatui::init();
    let mut mouse_on = false;
    let result = event_loop(&mut terminal, &mut app, &worker, &mut mouse_on);
    if mouse_on {
        let _ = execute!(std::io::stdout(), DisableMouseCapture);
    }
    ratatui::restore();
    worker.stop();
    result
}

fn event_loop(terminal: &mut ratatui::DefaultTerminal, app: &mut App, worker: &worker::Worker, mouse_on: &mut bool) -> Result<()> {
    let mut out = std::io::stdout();
    loop {
        for job in app.outbox.drain(..) {
            if worker.jobs.send(job).is_err() {
                app.popup = Some(Popup::Error("the worker stopped".into()));
            }
        }
        for w in app.terminal_writes.drain(..) {
            out.write_all(w.as_bytes())?;
            out.flush()?;
        }
        if let Some(r) = &mut app.running {
            r.percent = worker.handles.percent();
        }
        if app.cancel {
            worker.handles.interrupt();
            app.cancel = false;
        }
        if app.mouse != *mouse_on {
            if app.mouse {
                execute!(out, EnableMouseCapture)?;
            } else {
                execute!(out, DisableMouseCapture)?;
            }
            *mouse_on = app.mouse;
        }
        // A synchronized update: the terminal shows whole frames only, so there is no flicker.
        execute!(out, BeginSynchronizedUpdate)?;
        frame(terminal, app)?;
        execute!(out, EndSynchronizedUpdate)?;
        if app.quit {
            return Ok(());
        }
        if event::poll(Duration::from_millis(if app.running.is_some() { 80 } else { 250 }))? {
            match event::read()? {
                Event::Key(ev) if ev.kind != KeyEventKind::Release => handle_key(app, &ev),
                Event::Mouse(m) if app.mouse => match m.kind {
                    MouseEventKind::ScrollDown => app.update(keys::Action::RowDown),
                    MouseEventKind::ScrollUp => app.update(keys::Action::RowUp),
                    _ => {}
                },
                _ => {}
            }
        }
        while let Ok(reply) = worker.replies.try_recv() {
            app.on_reply(reply);
        }
    }
}

/// Draws one frame of the app, then gives the app what the frame measured (`draw::FrameMeasures`).
pub fn frame<B: ratatui::backend::Backend>(terminal: &mut ratatui::Terminal<B>, app: &mut App) -> Result<(), B::Error> {
    let mut drawn = app.last_drawn();
    terminal.draw(|f| drawn = draw::draw(f, app))?;
    app.measured(drawn);
    Ok(())
}

pub fn handle_key(app: &mut App, ev: &ratatui::crossterm::event::KeyEvent) {
    if app.on_input_key(ev) || app.on_confirm_key(ev) {
        return;
    }
    if let Some(action) = keys::action_for(ev, app.screen) {
        app.update(action);
    }
}
