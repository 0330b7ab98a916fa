use clap::{CommandFactory, FromArgMatches};

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let color = recount::cli::ColorChoice::from_args(&args);
    let stderr_colored = color.on(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    // Panics get color-eyre's report: coloured, with its RUST_BACKTRACE hint, only for a person
    // at a terminal (or --color always); plain text for a log or a pipe.
    let _ = color_eyre::config::HookBuilder::default()
        .theme(if stderr_colored { color_eyre::config::Theme::dark() } else { color_eyre::config::Theme::new() })
        .display_env_section(stderr_colored)
        .install();
    // The help names the default lab as it resolves on this machine.
    let default_lab = format!("{}\nDefault lab here: {}", recount::cli::AFTER_HELP, recount::lake::default_lab_dir().display());
    let matches =
        match recount::cli::Cli::command().after_long_help(default_lab.clone()).after_help(default_lab).try_get_matches_from(&args) {
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
    let code = match recount::cli::Cli::from_arg_matches(&matches).map_err(color_eyre::Report::from).and_then(recount::commands::dispatch) {
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
