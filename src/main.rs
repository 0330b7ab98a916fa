use clap::{CommandFactory, FromArgMatches};

fn main() -> color_eyre::Result<()> {
    color_eyre::install()?;
    // The help names the default lab as it resolves on this machine.
    let default_lab = format!("{}\nDefault lab here: {}", recount::cli::AFTER_HELP, recount::lake::default_lab_dir().display());
    let matches = recount::cli::Cli::command().after_long_help(default_lab.clone()).after_help(default_lab).get_matches();
    let cli = recount::cli::Cli::from_arg_matches(&matches)?;
    let code = recount::commands::dispatch(cli)?;
    std::process::exit(code);
}
