//! The command line, as clap definitions only.

use crate::reports::Format;
use crate::reports::day::{Day, parse_date};
use crate::world::Preset;
use chrono::NaiveDate;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

mod spark;
pub use spark::{SparkCommand, SparkReader, SparkWarehouse};

/// Every exit code recount gives: the help, the man page's EXIT STATUS and the commands read it.
/// A usage error: clap's, or a question answered no (or not asked).
pub const USAGE: i32 = 2;
/// A check found the polars and DuckDB recounts of a date differing.
pub const ENGINES_DISAGREE: i32 = 3;
/// A promise failed, or an audited row is wrong: something a scheduler gates on.
pub const FOUND_WRONG: i32 = 4;
/// `--alert-on beyond-window` met rows that arrived for a date already past its window.
pub const ALERTED: i32 = 5;

/// Every exit code and what it means: the man page's EXIT STATUS and `--help` read these.
pub const EXIT_CODES: [(i32, &str); 6] = [
    (0, "ok"),
    (1, "an error: the message says what, and whether anything was written"),
    (USAGE, "a usage error, or a question answered no (or not asked: no terminal, and no --yes)"),
    (ENGINES_DISAGREE, "the engines disagree: the polars and DuckDB recounts of a date differ"),
    (FOUND_WRONG, "a promise failed (recount promises), or an audited row is wrong (recount audit)"),
    (ALERTED, "--alert-on met what it watches (rows that arrived for a date past its window)"),
];

/// The environment recount reads, for the man page's ENVIRONMENT.
pub const ENVIRONMENT: [(&str, &str); 10] = [
    ("RECOUNT_MEMORY", "the memory budget (2GB, 512MB), where --memory is not given; it beats the config file's memory"),
    ("RECOUNT_LAB", "the lab directory, where --lab is not given"),
    ("XDG_DATA_HOME", "the default lab is $XDG_DATA_HOME/recount/lab (else ~/.local/share/recount/lab)"),
    ("RECOUNT_CONFIG", "the config file (else $XDG_CONFIG_HOME/recount/config.toml, else ~/.config/recount/config.toml)"),
    ("RECOUNT_WORLD", "the world the explorer and the first run build from (else the bundled sample world)"),
    ("RECOUNT_COLOR", "colour: auto, always or never, where --color is not given"),
    ("NO_COLOR", "set and not empty: no colour under auto"),
    ("RECOUNT_THEME", "the explorer's theme, where --theme is not given"),
    ("USER", "who reopens a date, where --by is not given (with none, recount asks)"),
    ("RECOUNT_WAREHOUSE", "the Iceberg warehouse of the recount spark commands, where --warehouse is not given"),
];

/// clap reads `--lab` from RECOUNT_LAB (and the like). A variable set to nothing is not set
/// (`RECOUNT_LAB= recount demo` names no lab, as `crate::env::var` reads it): such an argument
/// forgets its variable, where clap would refuse the empty value as if it had been typed.
pub fn without_empty_env(mut cmd: clap::Command) -> clap::Command {
    let empty: Vec<clap::Id> = cmd
        .get_arguments()
        .filter(|a| a.get_env().is_some_and(|v| std::env::var_os(v).is_some_and(|x| x.is_empty())))
        .map(|a| a.get_id().clone())
        .collect();
    for id in empty {
        cmd = cmd.mut_arg(id, |a| a.env(None));
    }
    cmd
}

/// What `--help` says after the commands: the lab, and the exit codes.
pub fn after_help() -> String {
    let codes: Vec<String> = EXIT_CODES.iter().map(|(c, m)| format!("{c} {m}")).collect();
    format!(
        "The lab is a directory holding the raw zone (raw/) and one DuckDB file (recount.duckdb); recount makes
a lab only in a new or empty directory.
Default lab: $RECOUNT_LAB, else $XDG_DATA_HOME/recount/lab, else ~/.local/share/recount/lab.
With no command, recount opens the explorer on the default lab, building it from the bundled
sample world on first run.
Exit codes: {}.",
        codes.join("; ")
    )
}

#[derive(Debug, Parser)]
#[command(name = "recount", version, about = "Why did the number move? v1, v2 and an independent recount of daily sales, with snapshots.")]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Args, Clone)]
pub struct Global {
    /// The lab directory [default: $XDG_DATA_HOME/recount/lab, else ~/.local/share/recount/lab]
    #[arg(long, global = true, env = "RECOUNT_LAB", value_name = "DIR")]
    pub lab: Option<PathBuf>,
    /// An Iceberg warehouse (`recount spark`): reports and the explorer read it instead of the lab;
    /// the `spark` commands write it (or $RECOUNT_WAREHOUSE for those)
    #[arg(long, global = true, value_name = "DIR")]
    pub warehouse: Option<PathBuf>,
    /// Output format of reports
    #[arg(long, global = true, default_value = "table", value_parser = format_parser())]
    pub format: Format,
    /// The memory budget for DuckDB, the recount and the parser together: 2GB, 512MB, … (past
    /// it DuckDB spills to the lab's recount.spill/) [default: RECOUNT_MEMORY, else memory in the
    /// config file, else a quarter of this machine's memory]
    #[arg(long, global = true, value_name = "SIZE", value_parser = crate::store::parse_size)]
    pub memory: Option<u64>,
    /// With --format csv: begin with a UTF-8 byte-order mark (a spreadsheet on Windows then reads £ and ₹ as they are)
    #[arg(long, global = true)]
    pub bom: bool,
    /// Colour in reports and errors: auto is on for a terminal, unless NO_COLOR is set
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, env = "RECOUNT_COLOR", value_name = "WHEN")]
    pub color: ColorChoice,
    /// Test hook: make the next write fail after its N-th statement
    #[arg(long, global = true, hide = true, env = "RECOUNT_FAIL_AFTER", value_name = "N")]
    pub fail_after: Option<usize>,
    /// Where --lab and --color came from (a flag, the environment or the default), for `recount config`.
    #[arg(skip)]
    pub sources: ArgSources,
}

/// Where the global options' values came from, as clap parsed them.
#[derive(Debug, Clone, Default)]
pub struct ArgSources {
    pub lab: crate::config::SettingSource,
    pub color: crate::config::SettingSource,
}

impl ArgSources {
    pub fn of(matches: &clap::ArgMatches) -> ArgSources {
        let source = |id: &str, flag: &str, env: &str| match matches.value_source(id) {
            Some(clap::parser::ValueSource::CommandLine) => crate::config::SettingSource::Flag(flag.into()),
            Some(clap::parser::ValueSource::EnvVariable) => crate::config::SettingSource::Env(env.into()),
            _ => crate::config::SettingSource::Default,
        };
        ArgSources { lab: source("lab", "--lab", "RECOUNT_LAB"), color: source("color", "--color", "RECOUNT_COLOR") }
    }
}

/// `--format`'s words, mapped onto the reports' own `Format` (which knows nothing of clap).
pub fn format_parser() -> impl clap::builder::TypedValueParser<Value = Format> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(["table", "json", "csv"]).map(|word| match word.as_str() {
        "json" => Format::Json,
        "csv" => Format::Csv,
        _ => Format::Table,
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour a stream: `always`, `never`, or for `auto` a terminal without NO_COLOR.
    pub fn on(self, terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }
}

/// A foreign gold to audit, and how its columns map onto gold's.
#[derive(Args, Debug, Clone)]
pub struct ForeignGold {
    /// The foreign gold: a .csv file with a header, a .parquet file or a folder of them, a DuckDB
    /// table (duckdb:FILE#schema.table), or an Iceberg table read by pyiceberg
    /// (iceberg:WAREHOUSE#namespace.table, WAREHOUSE a directory or catalog:NAME); gold's columns
    /// (retail: business_date, store_id, baskets, revenue_minor)
    #[arg(long, value_name = "SOURCE")]
    pub gold: PathBuf,
    /// List every row, the matching ones too (always, with --format csv or json)
    #[arg(long)]
    pub all: bool,
    /// The audit's rows by one field instead: a grain field (store_id; a model's plant_id …),
    /// country on retail, or week; each value's rows, wrong rows and how concentrated they are
    #[arg(long, value_name = "FIELD")]
    pub by: Option<String>,
    /// A TOML file (a world's recount.toml will do) whose [gold] table names the foreign columns
    /// (revenue_minor = "net_sales") and the unit of money (unit = "major": exact decimals in the
    /// currency's digits)
    #[arg(long, value_name = "FILE")]
    pub map: Option<PathBuf>,
}

#[derive(Debug, Args, Clone, Copy)]
pub struct Window {
    /// Lateness window: business date d is built from uploads d-1 .. d+N (0 to 366) [default: late_days in the config file, else 2]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=crate::rules::MAX_LATE_DAYS as i64))]
    pub late_days: Option<u32>,
}

/// What a scheduler is alerted to.
/// The built-in models a world can be generated for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WorldModel {
    Retail,
    Manufacturing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AlertOn {
    /// Rows that arrived for a date already past its window: exit 5, with the dates, counts and amounts on stderr
    BeyondWindow,
}

#[derive(Debug, Args, Clone, Copy)]
pub struct Alert {
    /// Exit 5 when the runs met rows of this kind (the dates, counts and amounts on stderr), for a scheduler to act on
    #[arg(long, value_enum, value_name = "WHAT")]
    pub alert_on: Option<AlertOn>,
}

#[derive(Debug, Args, Clone)]
pub struct Range {
    /// First upload date (YYYY-MM-DD)
    #[arg(value_parser = parse_date)]
    pub from: NaiveDate,
    /// Last upload date; earlier than FROM runs backwards
    #[arg(value_parser = parse_date)]
    pub to: Option<NaiveDate>,
}

impl Range {
    /// Every date from FROM to TO inclusive, in the order given.
    pub fn dates(&self) -> Vec<NaiveDate> {
        let to = self.to.unwrap_or(self.from);
        if to >= self.from {
            self.from.iter_days().take_while(|d| *d <= to).collect()
        } else {
            to.iter_days().take_while(|d| *d <= self.from).collect::<Vec<_>>().into_iter().rev().collect()
        }
    }
}

#[derive(Debug, Args, Clone)]
pub struct TuiArgs {
    /// A bundled theme (dark, light, high-contrast, colour-blind) or a theme TOML file [default: $RECOUNT_THEME, else theme in the config file, else dark]
    #[arg(long, value_name = "THEME")]
    pub theme: Option<String>,
    /// Leave the mouse to the terminal (its own text selection keeps working)
    #[arg(long)]
    pub no_mouse: bool,
    /// The world that `n` (land the next upload) lands from [default: the bundled sample-data/]
    #[arg(long, value_name = "DIR")]
    pub world: Option<PathBuf>,
    /// A foreign gold to audit, as `recount audit --gold` reads it: the Audit screen shows each
    /// date's rows and their causes, and the dates are coloured by verdict
    #[arg(long, value_name = "SOURCE")]
    pub audit: Option<PathBuf>,
    /// The [gold] table naming the foreign gold's columns, as `recount audit --map`
    #[arg(long, value_name = "FILE", requires = "audit")]
    pub map: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the explorer (the default command)
    Tui {
        #[command(flatten)]
        tui: TuiArgs,
    },
    /// A scripted walk through the story, for a presenter: land four uploads; v1 once, then its
    /// retry doubling the day; v2 per upload and its skipped retry; the trend's spike; a late
    /// upload moving a provisional day and its history; a vendor's corrected file rewriting
    /// exactly its dates, and an identical re-delivery skipped; rows past a closed window, and
    /// finance reopening the date; the morning's summary line. Each step pauses for Enter on a
    /// terminal. It runs in a new lab of its own unless --lab names one (which it then empties,
    /// asking first)
    Demo {
        /// Run every step without waiting for Enter
        #[arg(long)]
        no_pause: bool,
        /// Reset a lab named by --lab or RECOUNT_LAB that holds data, without asking
        #[arg(long, short = 'y')]
        yes: bool,
        /// The world to tell the story on [default: the bundled sample world]; it needs five uploads or more
        #[arg(long, value_name = "DIR")]
        world: Option<PathBuf>,
    },
    /// Write a deterministic world of till uploads
    Generate {
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        #[arg(long, value_enum, default_value_t = Preset::Small)]
        preset: Preset,
        #[arg(long, default_value_t = crate::world::DEFAULT_SEED)]
        seed: u64,
        /// Multiply the preset's stores per country (scaling measurements); with --model manufacturing, each plant's production lines
        #[arg(long, default_value_t = 1.0, value_name = "F")]
        store_factor: f64,
        /// Also write corrected deliveries of four files under DIR/corrections/ (changed amounts,
        /// withdrawn lines, an added basket, the same lines recompressed)
        #[arg(long)]
        corrections: bool,
        /// Upload days, ending at the preset's last upload [default: the preset's]
        #[arg(long, value_name = "N")]
        days: Option<u32>,
        /// The raw zone's shape: the contract's, or another with the recount.toml that reads it
        #[arg(long, value_enum, default_value_t = crate::world::shape::Shape::Contract)]
        shape: crate::world::shape::Shape,
        /// The daily metric: retail's till uploads, or a plant's production records (three
        /// plants, its own recount.toml and corrections; --preset, --store-factor, --days and
        /// --shape are retail's)
        #[arg(long, value_enum, default_value_t = WorldModel::Retail)]
        model: WorldModel,
        /// Instead of a world: a foreign gold for `recount audit`, as CSV at --out, built from the
        /// world --world names (default: the bundled sample) with one row of each fault in it
        #[arg(long)]
        foreign_gold: bool,
        /// The world --foreign-gold builds from (retail's, or a model's: gold in its columns)
        #[arg(long, value_name = "DIR", requires = "foreign_gold")]
        world: Option<PathBuf>,
    },
    /// A world's model checked, its gold recounted from the raw files with it, and the
    /// contract's fingerprint of that gold (docs/data-contract.md, "Models")
    Model {
        /// The world [default: the bundled sample-data/]
        world: Option<PathBuf>,
        /// How many gold rows to show (0: all)
        #[arg(long, default_value_t = 20, value_name = "N")]
        rows: usize,
    },
    /// Copy upload partitions (and stores.csv) from a world into the lab and parse them once
    Land {
        #[command(flatten)]
        range: Range,
        /// The world to land from [default: the bundled sample-data/]
        #[arg(long, value_name = "DIR")]
        world: Option<PathBuf>,
        /// The source description to read the world through [default: WORLD/recount.toml, else
        /// the contract's layout]
        #[arg(long, value_name = "FILE")]
        source: Option<PathBuf>,
        /// The world's model, when its recount.toml does not say (`manufacturing`; `retail`
        /// is the contract's) [default: the world's, else the lab's, else retail]
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
    },
    /// The morning's lines: what the newest write of gold did, date by date, and whether each
    /// date is final (for a cron mail)
    Summary,
    /// A world's source description: how its raw zone maps onto the contract
    Source {
        #[command(subcommand)]
        action: SourceAction,
    },
    /// Empty the lab: raw zone, bronze, silver, gold and every snapshot (asks first)
    Reset {
        /// Empty it without asking
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// v1, the naive job: read one upload, count events, APPEND (a retry doubles the day)
    Naive {
        #[command(flatten)]
        range: Range,
    },
    /// v2, the idempotent job: one upload, or a range of them in one pass (one transaction, one
    /// snapshot)
    Run {
        #[command(flatten)]
        range: Range,
        #[command(flatten)]
        window: Window,
        #[command(flatten)]
        alert: Alert,
        /// One run (and snapshot) per upload, in the order given, instead of one pass
        #[arg(long)]
        per_upload: bool,
    },
    /// Land one upload, then run v2 for it, day by day
    Daily {
        #[command(flatten)]
        range: Range,
        #[arg(long, value_name = "DIR")]
        world: Option<PathBuf>,
        #[command(flatten)]
        window: Window,
        #[command(flatten)]
        alert: Alert,
    },
    /// Rebuild named business dates with v2
    Rebuild {
        #[arg(required = true)]
        #[arg(value_parser = parse_date)]
        dates: Vec<NaiveDate>,
        /// Rewrite even if the inputs are unchanged
        #[arg(long)]
        force: bool,
        #[command(flatten)]
        window: Window,
    },
    /// Revenue per business date and country (a model's money, else each measure, per part): v1, v2 gold and the recompute (a v1 retry is a spike)
    Trend {
        /// Only this country (GB, IN, SG, ...), or a model's part by name
        #[arg(long, value_name = "CODE")]
        country: Option<String>,
    },
    /// Take a closed date's rows that arrived past its window into silver and gold, with a reason
    Reopen {
        /// The business date: YYYY-MM-DD, or MM-DD within the lab's years
        #[arg(value_parser = Day::parse)]
        date: Day,
        /// Why finance reopens the date: history and diff show it
        #[arg(long, value_name = "TEXT")]
        reason: String,
        /// Who decided [default: $USER]
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
    /// Per country: v1, v2 gold, recompute and baskets for a business date
    Check {
        /// The business date: YYYY-MM-DD, MM-DD within the lab's years, or `yesterday` [default: yesterday, the business date of the newest landed upload]
        #[arg(value_parser = Day::parse)]
        date: Option<Day>,
        /// Read the lab as it was at this snapshot (`recount snapshots` lists them) [default: the newest]
        #[arg(long, value_name = "SNAPSHOT")]
        as_of: Option<i64>,
    },
    /// Why v1 is wrong: missed baskets and double-counted copies, with the identity
    Explain {
        /// The business date: YYYY-MM-DD, or MM-DD within the lab's years
        #[arg(value_parser = Day::parse)]
        date: Day,
        /// Also list the baskets behind each number (with --format csv: the basket rows alone, under one header)
        #[arg(long)]
        baskets: bool,
    },
    /// Upload date minus business date, in events and baskets (a model's entities), each bucket's fate by the window
    Lateness {
        /// Per country as well (a model's: per value of its attribute that names a part of a date)
        #[arg(long)]
        by_country: bool,
    },
    /// The contract's gold fingerprint
    Fingerprint {
        /// Gold as it was at this snapshot (`recount snapshots` lists them) [default: the newest]
        #[arg(long, value_name = "SNAPSHOT")]
        as_of: Option<i64>,
    },
    /// Rows beyond the lateness window or future-dated, every date's or one date's
    Late {
        /// Only this business date: YYYY-MM-DD, or MM-DD within the lab's years
        #[arg(value_parser = Day::parse)]
        date: Option<Day>,
        #[command(flatten)]
        window: Window,
    },
    /// Lines rejected at landing, with file, line and reason
    Quarantine {
        /// Only this upload date
        #[arg(value_parser = parse_date)]
        upload: Option<NaiveDate>,
    },
    /// The five promises for a business date: completeness, uniqueness, correctness, timeliness, consistency (exit 4 when one fails)
    Promises {
        /// The business date: YYYY-MM-DD, or MM-DD within the lab's years
        #[arg(value_parser = Day::parse)]
        date: Day,
    },
    /// A gold table another pipeline wrote (CSV, Parquet, DuckDB or Iceberg), row by row against the lab's gold:
    /// each wrong row with the cause that explains it exactly (exit 4 when any row is wrong)
    Audit {
        #[command(flatten)]
        foreign: ForeignGold,
        #[command(flatten)]
        window: Window,
    },
    /// Baskets (a model's entities) of a business date sent more than once: every copy, which won and why
    Baskets {
        /// The business date: YYYY-MM-DD, or MM-DD within the lab's years
        #[arg(value_parser = Day::parse)]
        date: Day,
        #[command(flatten)]
        window: Window,
    },
    /// Every snapshot record, oldest first (skipped runs included)
    Snapshots,
    /// Every snapshot that changed a business date, with deltas and their causes
    History {
        /// The business date: YYYY-MM-DD, or MM-DD within the lab's years
        #[arg(value_parser = Day::parse)]
        date: Day,
        /// The history up to this snapshot (`recount snapshots` lists them) [default: the newest]
        #[arg(long, value_name = "SNAPSHOT")]
        as_of: Option<i64>,
    },
    /// Why a business date changed between two snapshots, basket by basket
    Diff {
        /// The business date: YYYY-MM-DD, or MM-DD within the lab's years
        #[arg(value_parser = Day::parse)]
        date: Day,
        /// Older snapshot [default: the version before the current one]
        #[arg(long, value_name = "SNAPSHOT")]
        from: Option<i64>,
        /// Newer snapshot [default: the newest] (--as-of is another name for it)
        #[arg(long, value_name = "SNAPSHOT", alias = "as-of")]
        to: Option<i64>,
        /// Also list every basket behind the parts (with --format csv: the basket rows alone, under one header)
        #[arg(long)]
        baskets: bool,
    },
    /// Restore silver and gold as of a snapshot, as a new snapshot (asks first; a rollback to
    /// the state already current writes nothing)
    Rollback {
        /// The snapshot to go back to (`recount snapshots` lists them)
        snapshot: i64,
        /// Go ahead without asking (scripts; with no terminal, a rollback without it is refused)
        #[arg(long)]
        yes: bool,
    },
    /// Write JSON evidence for a business date: run-to-snapshot map, gold rows, last change
    Evidence {
        /// The business date: YYYY-MM-DD, or MM-DD within the lab's years
        #[arg(value_parser = Day::parse)]
        date: Day,
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Print each effective setting (lab, theme, mouse, late_days, color) and the explorer's keys, with where each came from
    Config,
    /// Print a shell's completion script: `recount completions bash > ~/.local/share/bash-completion/completions/recount`
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `recount man | man -l -`, or `--out DIR` for a page per command
    Man {
        /// Write recount.1 and recount-COMMAND.1 into DIR instead
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// The same v2 on Spark, into Iceberg tables (see docs/spark.md)
    Spark {
        #[command(subcommand)]
        command: SparkCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum SourceAction {
    /// Read a few files through the description before anything lands: per field its path,
    /// sample values and how many lines miss it; how many lines would be quarantined and why.
    /// Exit 1 when a required field maps nothing.
    Check {
        /// The world [default: the bundled sample-data/]
        world: Option<PathBuf>,
        /// The description [default: WORLD/recount.toml, else the contract's layout]
        #[arg(long, value_name = "FILE")]
        source: Option<PathBuf>,
        /// How many files to read (the first of the first uploads)
        #[arg(long, default_value_t = 3, value_name = "N")]
        files: usize,
    },
}
