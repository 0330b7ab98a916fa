-- schema.sql (Spark): the Iceberg tables of a warehouse, in catalog `lake`, namespace `recount`.
-- The same layers as the lab's schema.sql (DuckDB), as tables an engine-neutral catalog holds.
-- Every statement here is idempotent. Parameters are bound by name (:name), never formatted in.
-- The partitioned tables write without a shuffle ('none' distribution, a fanout writer per task):
-- a write holds a few dates, and the shuffle cost more than it saved (docs/performance.md).

-- name: namespace
CREATE NAMESPACE IF NOT EXISTS lake.recount;

-- name: stores
-- The world's stores.csv as of the newest landing that changed it (overwritten whole).
CREATE TABLE IF NOT EXISTS lake.recount.stores (
    store_id STRING NOT NULL, country STRING NOT NULL, timezone STRING NOT NULL, currency STRING NOT NULL
) USING iceberg;

-- name: store_changes
-- The store corrections, as a log: a 'landed' row per changed stores.csv row (the row before and
-- after, and the file versions the landing re-derived for it, as upload/name/version joined by
-- commas), and a 'rebuilt' row once a v2 run (`run`, its gold snapshot if it wrote one) rebuilt
-- the dates it moves. Append-only, as every other record here.
CREATE TABLE IF NOT EXISTS lake.recount.store_changes (
    event STRING NOT NULL, change_id INT NOT NULL, store_id STRING NOT NULL,
    old_country STRING, old_timezone STRING, old_currency STRING,
    new_country STRING, new_timezone STRING, new_currency STRING,
    files STRING, run INT, snapshot_id BIGINT, at TIMESTAMP NOT NULL
) USING iceberg;

-- name: raw_files
-- One row per landed version of a raw file (upload date + file name): its bytes' MD5, and what
-- parsing it gave. Append-only; the current version of a path is its highest.
CREATE TABLE IF NOT EXISTS lake.recount.raw_files (
    upload_date DATE NOT NULL, file_name STRING NOT NULL, version INT NOT NULL, md5 STRING NOT NULL,
    bytes BIGINT NOT NULL, events BIGINT NOT NULL, quarantined BIGINT NOT NULL, landed_at TIMESTAMP NOT NULL
) USING iceberg;

-- name: bronze_events
-- Every line of every landed version, parsed once: an event (reason NULL), with its business date
-- resolved from the store's named time zone at landing, or a quarantined line with the reason.
-- Keeping both in one table makes a landing one commit. Partitioned by upload date: a landing
-- replaces only its own uploads' partitions.
CREATE TABLE IF NOT EXISTS lake.recount.bronze_events (
    upload_date DATE NOT NULL, file_name STRING NOT NULL, file_version INT NOT NULL, line INT NOT NULL,
    event_id STRING, basket_id STRING, store_id STRING, till_id STRING,
    event_ts TIMESTAMP, uploaded_at TIMESTAMP, uploaded_at_ns BIGINT,
    currency STRING, country STRING, revenue_minor BIGINT, tenders INT, business_date DATE, reason STRING
) USING iceberg PARTITIONED BY (upload_date)
TBLPROPERTIES ('write.distribution-mode' = 'none', 'write.spark.fanout.enabled' = 'true');

-- name: silver_baskets
-- One row per basket: its winning copy (see copy_order in v2.sql) and how many copies it had.
CREATE TABLE IF NOT EXISTS lake.recount.silver_baskets (
    business_date DATE NOT NULL, basket_id STRING NOT NULL, store_id STRING NOT NULL, country STRING NOT NULL,
    currency STRING NOT NULL, revenue_minor BIGINT NOT NULL, event_id STRING NOT NULL, uploaded_at TIMESTAMP NOT NULL,
    upload_date DATE NOT NULL, file_name STRING NOT NULL, file_version INT NOT NULL, line INT NOT NULL, copies INT NOT NULL
) USING iceberg PARTITIONED BY (business_date)
TBLPROPERTIES ('write.distribution-mode' = 'none', 'write.spark.fanout.enabled' = 'true');

-- name: gold
-- gold.daily_store_sales of the contract. Its snapshots carry the runs' evidence as summary
-- properties (recount.upload, recount.trigger, recount.input-hash.DATE, ...).
CREATE TABLE IF NOT EXISTS lake.recount.daily_store_sales (
    business_date DATE NOT NULL, store_id STRING NOT NULL, country STRING NOT NULL, currency STRING NOT NULL,
    baskets BIGINT NOT NULL, revenue_minor BIGINT NOT NULL
) USING iceberg PARTITIONED BY (business_date)
TBLPROPERTIES ('write.distribution-mode' = 'none', 'write.spark.fanout.enabled' = 'true');

-- name: naive
-- v1, the naive job, kept on purpose (the lab's naive.daily_sales): each run appends the events
-- of one upload whose business date is the run date, counted as events (not baskets), and never
-- replaces anything, so a retry doubles the day. One append (one snapshot) per run.
CREATE TABLE IF NOT EXISTS lake.recount.naive_daily_sales (
    run_date DATE NOT NULL, business_date DATE NOT NULL, store_id STRING NOT NULL, country STRING NOT NULL,
    currency STRING NOT NULL, events BIGINT NOT NULL, revenue_minor BIGINT NOT NULL
) USING iceberg;

-- name: skipped_runs
-- The v2 runs that found every date's inputs unchanged: they write no silver or gold (so no gold
-- snapshot), and this log keeps them, one row per run with the summary properties a written run
-- would carry (JSON), so a reader's history lists them as the lab's does. Append-only.
CREATE TABLE IF NOT EXISTS lake.recount.skipped_runs (properties STRING NOT NULL, at TIMESTAMP NOT NULL) USING iceberg;
