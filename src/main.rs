use clap::{CommandFactory, FromArgMatches};

fn main() {
    // Panics still get color-eyre's report; errors are printed below, as plain text.
    let _ = color_eyre::install();
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
    let code = match recount::cli::Cli::from_arg_matches(&matches).map_err(color_eyre::Report::from).and_then(recount::commands::dispatch) {
        Ok(code) => code,
        Err(e) => {
            // One line per cause, and nothing from the data (a file name, a basket_id) reaches
            // the terminal raw.
            eprintln!("error: {}", recount::sanitize::for_terminal(&format!("{e:#}")));
            1
        }
    };
    std::process::exit(code);
}
