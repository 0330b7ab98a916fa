//! One progress line on stderr while long work runs (landing, a backfill, generating a world, the
//! benchmark, a Spark job): what is running, its step when known (`[ 7/22]`), and the seconds
//! so far, redrawn ten times a second by a thread of its own so it moves while the work blocks.
//! Only for a person: when stderr is not a terminal nothing is written, so logs and pipes stay
//! clean. Dropping it clears the line. `profile` and `profile_statement` are the other stderr
//! diagnostics: the phase times RECOUNT_PROFILE=1 asks for, and with RECOUNT_PROFILE=sql each
//! statement's time as well.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct State {
    message: String,
    step: Option<(u64, u64)>,
}

pub struct Progress {
    state: Arc<Mutex<State>>,
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The line as drawn: spinner, step, message and seconds.
fn line(frame: usize, s: &State, secs: f64) -> String {
    const SPIN: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    let step = match s.step {
        Some((done, total)) if total > 0 => format!("[{:>3}/{total}] ", done.min(total)),
        _ => String::new(),
    };
    format!("{} {step}{} ({secs:.0} s)", SPIN[frame % SPIN.len()], crate::sanitize::for_terminal(&s.message))
}

impl Progress {
    /// Starts a line saying `message`, on stderr when it is a terminal.
    pub fn start(message: impl Into<String>) -> Progress {
        Progress::with(message, std::io::stderr().is_terminal())
    }

    fn with(message: impl Into<String>, on: bool) -> Progress {
        let state = Arc::new(Mutex::new(State { message: message.into(), step: None }));
        if !on {
            return Progress { state, stop: None, thread: None };
        }
        let (tx, rx) = mpsc::channel::<()>();
        let shared = Arc::clone(&state);
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut frame = 0;
            loop {
                let s = shared.lock().map(|s| s.clone()).unwrap_or_default();
                eprint!("\r\x1b[2K{}", line(frame, &s, started.elapsed().as_secs_f64()));
                let _ = std::io::stderr().flush();
                frame += 1;
                match rx.recv_timeout(Duration::from_millis(100)) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => break,
                }
            }
            eprint!("\r\x1b[2K");
            let _ = std::io::stderr().flush();
        });
        Progress { state, stop: Some(tx), thread: Some(thread) }
    }

    /// What is running now, and its step of how many when known.
    pub fn set(&self, message: impl Into<String>, step: Option<(u64, u64)>) {
        if let Ok(mut s) = self.state.lock() {
            *s = State { message: message.into(), step };
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
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

    #[test]
    fn the_line_shows_the_step_the_message_and_the_seconds_without_control_characters() {
        let s = State { message: "landing\u{1b}[31m 2026-10-15".into(), step: Some((7, 22)) };
        let l = line(0, &s, 31.4);
        assert!(l.contains("[  7/22] "), "{l}");
        assert!(l.ends_with("(31 s)"), "{l}");
        assert!(!l.contains('\u{1b}'), "data text reaches the terminal sanitised: {l:?}");
        assert!(!line(1, &State { message: "x".into(), step: None }, 0.0).contains('['));
    }

    #[test]
    fn off_a_terminal_it_starts_no_thread_and_still_takes_updates() {
        let p = Progress::with("generating", false);
        assert!(p.thread.is_none());
        p.set("writing", Some((1, 2)));
        assert_eq!(p.state.lock().unwrap().step, Some((1, 2)));
    }
}
