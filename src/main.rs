use clap::{CommandFactory, FromArgMatches};

fn main() {
    // The help names the default lab as it resolves on this machine.
    let default_lab = format!("{}\nDefault lab here: {}", recount::cli::after_help(), recount::lake::default_lab_dir().display());
    let command = recount::cli::without_empty_env(recount::cli::Cli::command());
    let matches = match command.after_long_help(default_lab.clone()).after_help(default_lab).try_get_matches() {
        Ok(m) => m,
        Err(e) if !e.use_stderr() => e.exit(), // --help and --version
        Err(e) => {
            // A usage error quotes what was typed: it reaches the terminal without control or
            // bidi characters, line by line.
            let text = e.render().to_string();
            for line in text.lines() {
                eprintln!("{}", recount::sanitize::for_terminal(line));
            }
            std::process::exit(e.exit_code());
        }
    };
    let cli = recount::cli::Cli::from_arg_matches(&matches).map(|mut c| {
        c.global.sources = recount::cli::ArgSources::of(&matches);
        c
    });
    // --color as clap parsed it (with RECOUNT_COLOR and NO_COLOR) decides the error line and the
    // panic hook: colour and color-eyre's RUST_BACKTRACE hint only for a person at a terminal (or
    // --color always); plain text for a log or a pipe.
    let color = cli.as_ref().map(|c| c.global.color).unwrap_or_default();
    let stderr_colored = color.on(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let _ = color_eyre::config::HookBuilder::default()
        .theme(if stderr_colored { color_eyre::config::Theme::dark() } else { color_eyre::config::Theme::new() })
        .display_env_section(stderr_colored)
        .install();
    // A reader that closes the pipe (`recount … | head`) ends the command quietly, with exit 0:
    // Rust's print macros panic on EPIPE, so the panic hook turns that one panic into an exit. A
    // write in flight is then cut as a kill would cut it: the lab keeps what committed, and the
    // next command finishes the rest (stderr says so when the command was writing).
    let eyre_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info.payload().downcast_ref::<String>().map(String::as_str).or_else(|| info.payload().downcast_ref::<&str>().copied());
        if text.is_some_and(recount::sanitize::is_broken_pipe) {
            closed_reader();
        }
        eyre_hook(info)
    }));
    let code = match cli.map_err(color_eyre::Report::from).and_then(recount::commands::dispatch) {
        Ok(code) => code,
        Err(e) if e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)) => {
            closed_reader()
        }
        Err(e) => {
            // One line per cause, and nothing from the data (a file name, a basket_id) reaches
            // the terminal raw.
            let text = recount::sanitize::for_terminal(&format!("{e:#}")).into_owned();
            if stderr_colored {
                eprintln!("\x1b[1;31merror:\x1b[0m {text}");
            } else {
                eprintln!("error: {text}");
            }
            1
        }
    };
    std::process::exit(code);
}

/// The reader of stdout went away: exit 0 at once, saying on stderr what a writing command left.
fn closed_reader() -> ! {
    if recount::lake::writing_now() {
        eprintln!(
            "note: the output was closed; recount stopped there. The lab keeps what committed, and running the command again finishes the rest"
        );
    }
    std::process::exit(0)
}
