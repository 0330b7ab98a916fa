//! One progress line on stderr while long work runs (landing, a backfill, generating a world, the
//! benchmark, a Spark job): what is running, its step when known (`[ 7/22]`), and the seconds
//! so far, drawn by indicatif and redrawn ten times a second on a thread of its own, so that it
//! moves while the work blocks. Only for a person: when stderr is not a terminal nothing is
//! written, so logs and pipes stay clean. Dropping it clears the line. `profile` and `profile_statement` are the other stderr
//! diagnostics: the phase times RECOUNT_PROFILE=1 asks for, and with RECOUNT_PROFILE=sql each
//! statement's time as well.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// The line while long work runs; dropping it clears the line.
pub struct Progress {
    bar: ProgressBar,
}

/// The line's shape: spinner, the step when known, the message and the seconds so far.
fn style(step: bool) -> ProgressStyle {
    let template = if step { "{spinner} [{pos:>3}/{len}] {msg} ({elapsed})" } else { "{spinner} {msg} ({elapsed})" };
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner()).tick_chars("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ ")
}

impl Progress {
    /// Starts a line saying `message`, on stderr when it is a terminal.
    pub fn start(message: impl Into<String>) -> Progress {
        let target = if std::io::stderr().is_terminal() { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        Progress::on(message, target)
    }

    fn on(message: impl Into<String>, target: ProgressDrawTarget) -> Progress {
        let bar = ProgressBar::with_draw_target(None, target);
        bar.set_style(style(false));
        bar.set_message(crate::sanitize::for_terminal(&message.into()).into_owned());
        if !bar.is_hidden() {
            // Redrawn by a thread of indicatif's own, so the line moves while the work blocks.
            bar.enable_steady_tick(Duration::from_millis(100));
        }
        Progress { bar }
    }

    /// What is running now, and its step of how many when known.
    pub fn set(&self, message: impl Into<String>, step: Option<(u64, u64)>) {
        self.bar.set_style(style(step.is_some_and(|(_, total)| total > 0)));
        if let Some((done, total)) = step {
            self.bar.set_length(total);
            self.bar.set_position(done.min(total));
        }
        self.bar.set_message(crate::sanitize::for_terminal(&message.into()).into_owned());
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// Whether RECOUNT_PROFILE=sql asks for each statement's time beside the phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Statements {
    Timed,
    Untimed,
}

/// RECOUNT_PROFILE, read once per process by both printers below: unset, or set (to `sql`: the
/// statements timed too).
fn profile_setting() -> Option<Statements> {
    static SETTING: std::sync::OnceLock<Option<Statements>> = std::sync::OnceLock::new();
    *SETTING.get_or_init(|| std::env::var_os("RECOUNT_PROFILE").map(|v| if v == "sql" { Statements::Timed } else { Statements::Untimed }))
}

/// RECOUNT_PROFILE=1 prints where a command's time went (opening the lab, a landing's or a run's
/// phases, the close), phase by phase, on stderr.
pub fn profile(phases: &[(String, f64)]) {
    if profile_setting().is_some() {
        for (phase, ms) in phases {
            eprintln!("  {ms:9.2} ms  {phase}");
        }
    }
}

/// RECOUNT_PROFILE=sql prints each named statement of `queries/*.sql` the store runs, with its
/// wall time (a query's includes the caller's work on its rows): where a report's time goes.
pub fn profile_statement(file: &str, name: &str, started: std::time::Instant) {
    if profile_setting() == Some(Statements::Timed) {
        eprintln!("  {:9.2} ms  queries/{file}.sql {name}", started.elapsed().as_secs_f64() * 1e3);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A terminal that keeps what is written to it.
    #[derive(Debug, Clone, Default)]
    struct Recorded(Arc<Mutex<String>>);

    impl indicatif::TermLike for Recorded {
        fn width(&self) -> u16 {
            120
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(&format!("{s}\n"))
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            self.write_str("<clear>")
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_line_shows_the_step_the_message_and_the_seconds_without_control_characters() {
        let screen = Recorded::default();
        let p = Progress::on("starting", ProgressDrawTarget::term_like(Box::new(screen.clone())));
        p.set("landing\u{1b}[31m 2026-10-15", Some((7, 22)));
        p.bar.tick();
        let drawn = screen.0.lock().unwrap().clone();
        let last = drawn.rsplit("<clear>").find(|l| !l.is_empty()).unwrap_or_default().to_string();
        assert!(last.contains("[  7/22] landing") && last.contains("2026-10-15 (0s)"), "{drawn:?}");
        assert!(!drawn.contains('\u{1b}'), "data text reaches the terminal sanitised: {drawn:?}");
        p.set("writing", None);
        p.bar.tick();
        let drawn = screen.0.lock().unwrap().clone();
        assert!(drawn.rsplit("<clear>").find(|l| !l.is_empty()).is_some_and(|l| l.contains("writing") && !l.contains('[')), "{drawn:?}");
        drop(p);
        assert!(screen.0.lock().unwrap().ends_with("<clear>"), "dropping it clears the line");
    }

    #[test]
    fn off_a_terminal_it_draws_nothing_and_still_takes_updates() {
        let p = Progress::on("generating", ProgressDrawTarget::hidden());
        p.set("writing", Some((1, 2)));
        assert!(p.bar.is_hidden());
        assert_eq!((p.bar.position(), p.bar.length()), (1, Some(2)));
    }
}
