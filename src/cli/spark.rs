//! `recount spark`'s commands and their arguments, as clap definitions.

use super::*;

#[derive(Debug, Args, Clone)]
pub struct SparkWarehouse {
    /// Spark's master URL
    #[arg(long, default_value = "local[2]", value_name = "URL")]
    pub master: String,
}

#[derive(Debug, Subcommand)]
pub enum SparkCommand {
    /// Make the Spark setup (Java 17, a venv with pyspark 3.5 and pyiceberg, the Iceberg jar); safe to run again
    Setup,
    /// Land uploads FROM..TO of a world, then run v2 over them: one pass over the range by default, one run per upload with --per-upload, or land and run day by day with --daily (TO earlier than FROM runs backwards)
    Run {
        #[command(flatten)]
        range: Range,
        /// The world to land from [default: the bundled sample-data/]
        #[arg(long, value_name = "DIR")]
        world: Option<PathBuf>,
        #[command(flatten)]
        warehouse: SparkWarehouse,
        #[command(flatten)]
        window: Window,
        /// Land one upload, then run it, day by day (default: land every upload first)
        #[arg(long)]
        daily: bool,
        /// One run (and gold snapshot) per upload, instead of one pass over the range
        #[arg(long, conflicts_with = "daily")]
        per_upload: bool,
    },
    /// The contract's fingerprint of the Iceberg gold table
    Fingerprint {
        #[command(flatten)]
        warehouse: SparkWarehouse,
        /// Read gold as of this Iceberg snapshot id (VERSION AS OF)
        #[arg(long, value_name = "SNAPSHOT")]
        as_of: Option<i64>,
        /// Who reads the table: Spark SQL, or pyiceberg (no JVM)
        #[arg(long, value_enum, default_value_t = SparkReader::Spark)]
        reader: SparkReader,
    },
    /// One row per Iceberg snapshot of gold, oldest first: id, parent, operation and properties
    Snapshots {
        #[command(flatten)]
        warehouse: SparkWarehouse,
        /// Another table of the warehouse (silver_baskets, bronze_events, raw_files, stores)
        #[arg(long, default_value = "daily_store_sales", value_name = "TABLE")]
        table: String,
    },
    /// Write the run-to-snapshot map, the date's gold and a snapshot comparison, from Iceberg's metadata
    Evidence {
        #[arg(value_parser = parse_date)]
        date: NaiveDate,
        #[command(flatten)]
        warehouse: SparkWarehouse,
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Spark's gold of a business date beside the lab's (--lab), store by store
    Check {
        #[arg(value_parser = parse_date)]
        date: NaiveDate,
        #[command(flatten)]
        warehouse: SparkWarehouse,
        /// Spark's gold as of this Iceberg snapshot id
        #[arg(long, value_name = "SNAPSHOT")]
        as_of: Option<i64>,
    },
    /// Put gold (and the silver its run wrote) back to an Iceberg snapshot, with rollback_to_snapshot
    Rollback {
        snapshot: i64,
        #[command(flatten)]
        warehouse: SparkWarehouse,
    },
    /// Keep one Spark session warm on a socket: every `recount spark` call made with
    /// RECOUNT_SPARK_SERVER=SOCKET runs on it instead of starting a JVM (a call at a time)
    Serve {
        /// The Unix socket to listen on
        #[arg(long, value_name = "PATH")]
        socket: PathBuf,
        /// End after this many seconds without a call (it also ends with the shell that started it)
        #[arg(long, default_value_t = 900, value_name = "SECONDS")]
        idle: u64,
        /// Spark's master URL
        #[arg(long, default_value = "local[2]", value_name = "URL")]
        master: String,
    },
    /// Take a closed date's rows past its window into the warehouse's silver and gold, with a reason
    Reopen {
        /// The business date (YYYY-MM-DD)
        #[arg(value_parser = parse_date)]
        date: NaiveDate,
        /// Why finance reopens the date: the gold snapshot's summary keeps it
        #[arg(long, value_name = "TEXT")]
        reason: String,
        /// Who decided [default: $USER]
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
        #[command(flatten)]
        warehouse: SparkWarehouse,
        #[command(flatten)]
        window: Window,
    },
    /// A gold table another pipeline wrote beside the warehouse, audited row by row against the
    /// warehouse's raw zone, as `recount audit` does against the lab's (exit 4 when any row is wrong)
    Audit {
        #[command(flatten)]
        foreign: ForeignGold,
        #[command(flatten)]
        window: Window,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SparkReader {
    Spark,
    Pyiceberg,
}
