use clap::{CommandFactory, FromArgMatches};

fn main() {
    // The help names the default lab as it resolves on this machine.
    let default_lab = format!("{}\nDefault lab here: {}", recount::cli::AFTER_HELP, recount::lake::default_lab_dir().display());
    let matches = match recount::cli::Cli::command().after_long_help(default_lab.clone()).after_help(default_lab).try_get_matches() {
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
    let code = match cli.map_err(color_eyre::Report::from).and_then(recount::commands::dispatch) {
        Ok(code) => code,
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
