use clap::Parser;

fn main() -> color_eyre::Result<()> {
    color_eyre::install()?;
    let cli = recount::cli::Cli::parse();
    let code = recount::commands::dispatch(cli)?;
    std::process::exit(code);
}
