-- schema.sql: the lab's tables, views and macros.
-- Reads: nothing. Writes: creates every schema and table if missing (drops only audit.gold_text,
-- a copy of gold that earlier builds kept); replaces the views and macros, which hold no data.
-- Bronze is append-only (one row per valid raw line). Every version of silver and gold that a
-- snapshot wrote is kept (silver.versions, audit.gold_history); silver and gold now are views of
-- each date's newest version, so nothing is ever deleted from them.

-- name: create
CREATE SCHEMA IF NOT EXISTS raw;
CREATE SCHEMA IF NOT EXISTS bronze;
CREATE SCHEMA IF NOT EXISTS silver;
CREATE SCHEMA IF NOT EXISTS gold;
CREATE SCHEMA IF NOT EXISTS naive;
CREATE SCHEMA IF NOT EXISTS audit;
CREATE SCHEMA IF NOT EXISTS recompute;
CREATE TABLE IF NOT EXISTS raw.stores (
    store_id VARCHAR NOT NULL, country VARCHAR NOT NULL, timezone VARCHAR NOT NULL, currency VARCHAR NOT NULL);
-- Every change of a landed store's row (a store correction; an empty old row: a store stores.csv
-- added whose lines had been quarantined as an unknown store): the row before and after, the
-- landing that brought it, the first snapshot that sees it, and the v2 run that rebuilt the
-- dates it moved (NULL until one has). raw.stores holds each store's newest row; with these,
-- its row as of any snapshot is known. The landing re-derives every file whose lines depend on
-- the store as the file's next version, from the same bytes (see land.sql files_of_stores).
CREATE TABLE IF NOT EXISTS raw.store_changes (
    change_id INTEGER NOT NULL, store_id VARCHAR NOT NULL,
    old_country VARCHAR NOT NULL, old_timezone VARCHAR NOT NULL, old_currency VARCHAR NOT NULL,
    new_country VARCHAR NOT NULL, new_timezone VARCHAR NOT NULL, new_currency VARCHAR NOT NULL,
    landing_id BIGINT NOT NULL, from_snapshot BIGINT NOT NULL, applied_by BIGINT);
-- Every version of every landed file: a path (upload date and name) that arrives again with
-- other bytes lands as its next version (a correction). Every version's bytes stay in the raw
-- zone; the newest is current.
CREATE TABLE IF NOT EXISTS raw.files (
    file_id INTEGER NOT NULL, file VARCHAR NOT NULL, upload_date DATE NOT NULL, bytes BIGINT NOT NULL, md5 VARCHAR NOT NULL,
    lines BIGINT NOT NULL, events BIGINT NOT NULL, quarantined BIGINT NOT NULL, landing_id BIGINT NOT NULL,
    version INTEGER NOT NULL);
-- Each superseded version: file_id was replaced by by_file_id (the same path's next version),
-- seen by every snapshot from from_snapshot on. Only current versions feed v1, v2, the recounts
-- and the reports; superseded rows stay in bronze for history and diff.
CREATE TABLE IF NOT EXISTS raw.supersessions (
    file_id INTEGER NOT NULL, by_file_id INTEGER NOT NULL, from_snapshot BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS raw.partitions (
    upload_date DATE NOT NULL, files INTEGER NOT NULL, landing_id BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS raw.landings (
    landing_id BIGINT NOT NULL, first_upload DATE, last_upload DATE, files INTEGER NOT NULL,
    events BIGINT NOT NULL, quarantined BIGINT NOT NULL, landed_at TIMESTAMP NOT NULL);
-- Each store row bronze's events carry (a store's id, country and currency as the landing that
-- parsed them read stores.csv; a store correction adds a row), numbered: bronze keeps the number
-- (store_row), not three strings a row (layout 8): three of the six string columns a landing's
-- insert held in memory and compressed, and the landing a tenth faster (docs/performance.md).
CREATE TABLE IF NOT EXISTS bronze.store_rows (
    store_row INTEGER NOT NULL, store_id VARCHAR NOT NULL, country VARCHAR NOT NULL, currency VARCHAR NOT NULL);
-- event_id and basket_id are stored uncompressed: nearly every value is distinct, so choosing
-- and applying DuckDB's dictionary and FSST compression was a large share of a landing's insert,
-- for a file a third smaller (docs/performance.md). A lab that has them compressed reads the same.
CREATE TABLE IF NOT EXISTS bronze.event_rows (
    event_id VARCHAR NOT NULL USING COMPRESSION uncompressed, basket_id VARCHAR NOT NULL USING COMPRESSION uncompressed,
    store_row INTEGER NOT NULL, till_id VARCHAR NOT NULL,
    event_ts TIMESTAMP_NS NOT NULL, uploaded_at TIMESTAMP_NS NOT NULL, upload_date DATE NOT NULL,
    business_date DATE NOT NULL, revenue_minor BIGINT NOT NULL, tenders SMALLINT NOT NULL, file_id INTEGER NOT NULL,
    line INTEGER NOT NULL, basket_key BIGINT NOT NULL);
-- Bronze's events with their store rows' strings: what every reader that wants a store's names
-- reads. v2's winners and gold's sums read bronze.event_rows, and name a store after grouping.
CREATE OR REPLACE VIEW bronze.events AS
SELECT e.event_id, e.basket_id, s.store_id, e.till_id, s.country, s.currency, e.event_ts, e.uploaded_at, e.upload_date,
       e.business_date, e.revenue_minor, e.tenders, e.file_id, e.line, e.basket_key, e.store_row
FROM bronze.event_rows e JOIN bronze.store_rows s USING (store_row);
-- basket_key: a 64-bit hash of basket_id (xxh3), so that v2 picks winners by grouping integers.
-- Keys that two different basket_ids share are listed here at landing (normally none); while
-- any is, v2 groups by basket_id itself.
CREATE TABLE IF NOT EXISTS bronze.key_collisions (basket_key BIGINT NOT NULL);
-- What each raw file holds per (business date, currency): rows, revenue and an order-independent
-- digest of the rows (the wrapping sum of a 64-bit hash of each). Written with the file's events;
-- v2's affected dates, beyond-window report and input hashes are answered from here.
CREATE TABLE IF NOT EXISTS bronze.cells (
    file_id INTEGER NOT NULL, upload_date DATE NOT NULL, business_date DATE NOT NULL, currency VARCHAR NOT NULL,
    rows BIGINT NOT NULL, revenue_minor BIGINT NOT NULL, digest BIGINT NOT NULL);
-- Baskets whose copies carry more than one business date, one row per (basket, date). Normally
-- empty; the per-date reports add these copies to the date's own rows.
CREATE TABLE IF NOT EXISTS bronze.split_baskets (basket_id VARCHAR NOT NULL, business_date DATE NOT NULL);
-- Every basket key with more than one copy in bronze (of any file version), once per business
-- date of its copies; landing adds to it (layout 7). A key not listed has one copy, so v2 takes it
-- as its own winner without ranking: only the listed keys' copies go through the window.
CREATE TABLE IF NOT EXISTS bronze.multi_copies (basket_key BIGINT NOT NULL, business_date DATE NOT NULL);
CREATE TABLE IF NOT EXISTS bronze.quarantine (
    file VARCHAR NOT NULL, line INTEGER NOT NULL, upload_date DATE NOT NULL, reason VARCHAR NOT NULL,
    raw_line VARCHAR NOT NULL, file_id INTEGER);
-- The file version each quarantined line belongs to (a lab written before this column had none:
-- its lines go to their path's newest version), so that only current versions' lines are listed.
ALTER TABLE bronze.quarantine ADD COLUMN IF NOT EXISTS file_id INTEGER;
UPDATE bronze.quarantine q SET file_id = (SELECT max(f.file_id) FROM raw.files f WHERE f.file = q.file AND f.upload_date = q.upload_date)
WHERE q.file_id IS NULL;
-- Every version of silver a snapshot wrote: the winners of each date it rebuilt, one row per
-- basket, pointing at the winning bronze row (file id and line). Rows are written once, when
-- their snapshot writes them, and never updated: silver now and silver history are views of it.
CREATE TABLE IF NOT EXISTS silver.versions (
    snapshot_id BIGINT NOT NULL, business_date DATE NOT NULL, file_id INTEGER NOT NULL, line INTEGER NOT NULL,
    copies INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS naive.daily_sales (
    snapshot_id BIGINT NOT NULL, run_date DATE NOT NULL, business_date DATE NOT NULL, store_id VARCHAR NOT NULL,
    country VARCHAR NOT NULL, currency VARCHAR NOT NULL, events BIGINT NOT NULL, revenue_minor BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS audit.snapshots (
    snapshot_id BIGINT NOT NULL, parent_id BIGINT, operation VARCHAR NOT NULL, trigger_kind VARCHAR NOT NULL,
    trigger_upload DATE, trigger_detail VARCHAR NOT NULL, late_days INTEGER NOT NULL,
    dates_rewritten INTEGER NOT NULL, dates_skipped INTEGER NOT NULL, rows_replaced BIGINT NOT NULL,
    rows_added BIGINT NOT NULL, beyond_window_rows BIGINT NOT NULL, gold_rows BIGINT NOT NULL,
    gold_md5 VARCHAR NOT NULL, code_version VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL);
CREATE TABLE IF NOT EXISTS audit.snapshot_dates (
    snapshot_id BIGINT NOT NULL, business_date DATE NOT NULL, action VARCHAR NOT NULL, input_hash VARCHAR NOT NULL,
    input_rows BIGINT NOT NULL, silver_replaced BIGINT NOT NULL, silver_added BIGINT NOT NULL,
    gold_replaced BIGINT NOT NULL, gold_added BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS audit.gold_history (
    snapshot_id BIGINT NOT NULL, business_date DATE NOT NULL, store_id VARCHAR NOT NULL, country VARCHAR NOT NULL,
    currency VARCHAR NOT NULL, baskets BIGINT NOT NULL, revenue_minor BIGINT NOT NULL);
-- Earlier builds kept each gold version's fingerprint text here, one long string a date. It was a
-- copy of gold_history, and all of it sat in one row group that every checkpoint rewrote, so each
-- write's close cost more as history grew. The text is read from gold_history now (fingerprint.sql).
DROP VIEW IF EXISTS audit.gold_text_now;
DROP TABLE IF EXISTS audit.gold_text;
-- The fingerprint's MD5 state at the end of each date of gold's text (the text of every date up to
-- it, joined by newlines), and gold's rows up to it, as the write snapshot_id left gold: each write
-- records the dates from its first rewritten one on, so the next write hashes only the text from
-- its own first date on, not all of gold. A state is used only while no later write has rewritten
-- its date or any earlier one (see prefix_before in fingerprint.sql). A write drops the states from
-- its first date on before it records its own, so there is at most one per date; a write that left
-- its dates' text as it was carries them to its own id instead (carry_prefix).
CREATE TABLE IF NOT EXISTS audit.gold_prefix (
    snapshot_id BIGINT NOT NULL, business_date DATE NOT NULL, rows BIGINT NOT NULL, state BLOB NOT NULL);
-- A date's window kept past its own snapshot's: `reopen` widened it, and every later write of the
-- date carries it (a row for the date under the new snapshot); a rollback's restore copies the
-- restored version's row, so rolling back past a reopening narrows the date again.
CREATE TABLE IF NOT EXISTS audit.date_windows (
    snapshot_id BIGINT NOT NULL, business_date DATE NOT NULL, late_days INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS audit.lab (format INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS recompute.daily_store_sales (
    business_date DATE NOT NULL, store_id VARCHAR NOT NULL, country VARCHAR NOT NULL, currency VARCHAR NOT NULL,
    baskets BIGINT NOT NULL, revenue_minor BIGINT NOT NULL);
-- Lateness histogram of bronze through file id through_file_id (bronze only grows by files),
-- over every country (country NULL) and per country: recomputed when a file lands after it.
CREATE TABLE IF NOT EXISTS recompute.lateness (
    through_file_id INTEGER NOT NULL, country VARCHAR, days BIGINT NOT NULL, events BIGINT NOT NULL,
    baskets BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS recompute.state (
    manifest VARCHAR NOT NULL, events BIGINT NOT NULL, baskets BIGINT NOT NULL, computed_at TIMESTAMP NOT NULL);
-- DuckDB's own recount of every business date, per store, for window late_days, of bronze through
-- file id through_file_id (recompute.sql's `date_recount`): what `check` and the explorer's
-- Overview compare polars' recount with. Kept per window, and counted again when a file lands;
-- recompute.duckdb_recounted lists the (file, window) pairs it holds, so that a report's start
-- asks a table of a few rows, not this one.
CREATE TABLE IF NOT EXISTS recompute.duckdb_recount (
    through_file_id INTEGER NOT NULL, late_days INTEGER NOT NULL, business_date DATE NOT NULL,
    store_id VARCHAR NOT NULL, country VARCHAR NOT NULL, currency VARCHAR NOT NULL, baskets BIGINT NOT NULL,
    revenue_minor BIGINT NOT NULL, beyond_baskets BIGINT NOT NULL, beyond_revenue_minor BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS recompute.duckdb_recounted (through_file_id INTEGER NOT NULL, late_days INTEGER NOT NULL);
-- A lab of another model than retail (docs/data-contract.md, "Models"; crates/lab/src/lake/model.rs) keeps
-- its layers here, beside retail's empty ones. A model's grain, attributes and measures are held
-- in fixed columns (g1..g4, a1..a4, m1..m6, unused ones NULL), so that every statement is one
-- text for every model; a count is a measure of 1 per record.
CREATE SCHEMA IF NOT EXISTS model;
-- The lab's model (no row: the lab is retail's): its name and its parts as JSON.
CREATE TABLE IF NOT EXISTS model.definition (name VARCHAR NOT NULL, parts VARCHAR NOT NULL);
-- Every version of the dimension file, as landed.
CREATE TABLE IF NOT EXISTS model.dimension_versions (
    version INTEGER NOT NULL, md5 VARCHAR NOT NULL, text VARCHAR NOT NULL, landed_at TIMESTAMP NOT NULL);
-- Every version of every landed file, as raw.files: a path that arrives again with other bytes
-- is its next version, and so is a file read again under a corrected dimension.
CREATE TABLE IF NOT EXISTS model.files (
    file_id INTEGER NOT NULL, file VARCHAR NOT NULL, upload_date DATE NOT NULL, version INTEGER NOT NULL,
    md5 VARCHAR NOT NULL, records BIGINT NOT NULL, quarantined BIGINT NOT NULL, landed_at TIMESTAMP NOT NULL);
-- The file versions a landing re-read under a corrected dimension row whose dates no v2 run has
-- rebuilt yet: the next run rebuilds every date they, or the versions they follow, hold (as
-- retail's raw.store_changes waits for its run), whatever upload it is asked for.
CREATE TABLE IF NOT EXISTS model.reread_pending (file_id INTEGER NOT NULL);
-- Bronze: one row per valid line of every file version, with its business date. entity_key and
-- event_id are stored uncompressed, as bronze.event_rows' ids are: nearly every value is distinct.
CREATE TABLE IF NOT EXISTS model.records (
    file_id INTEGER NOT NULL, line INTEGER NOT NULL, entity_key VARCHAR NOT NULL USING COMPRESSION uncompressed,
    event_id VARCHAR NOT NULL USING COMPRESSION uncompressed,
    arrival_ns BIGINT NOT NULL, event_ns BIGINT NOT NULL, business_date DATE NOT NULL,
    g1 VARCHAR, g2 VARCHAR, g3 VARCHAR, g4 VARCHAR, a1 VARCHAR, a2 VARCHAR, a3 VARCHAR, a4 VARCHAR,
    m1 BIGINT, m2 BIGINT, m3 BIGINT, m4 BIGINT, m5 BIGINT, m6 BIGINT, key_hash UBIGINT);
-- key_hash: model_key_hash(entity_key), kept at landing, so that a write finds the keys with more
-- than one copy by integers (shared_stage) and fetches only their copies. A lab an older build
-- landed gets the column here, and every hash is made again by this build's DuckDB (the schema's
-- digest names DuckDB's version, so an upgrade that changed hash() re-runs this).
CREATE OR REPLACE MACRO model_key_hash(k) AS hash(k);
ALTER TABLE model.records ADD COLUMN IF NOT EXISTS key_hash UBIGINT;
UPDATE model.records SET key_hash = model_key_hash(entity_key) WHERE key_hash IS DISTINCT FROM model_key_hash(entity_key);
-- Each file version's records per business date: how many, and the exact sum of their input
-- hashes (@model_row_hash), so that a date's input hash adds a few rows per file rather than
-- hashing every record of the date again. Filled as a file lands (`file_hashes_fill`); a file
-- without them (landed by an older build, or a warehouse's mirror) is hashed from its records
-- where it is read, to the same sum.
CREATE TABLE IF NOT EXISTS model.file_date_hashes (
    file_id INTEGER NOT NULL, business_date DATE NOT NULL, rows BIGINT NOT NULL, input HUGEINT NOT NULL);
CREATE TABLE IF NOT EXISTS model.quarantine (
    file_id INTEGER NOT NULL, line INTEGER NOT NULL, reason VARCHAR NOT NULL, raw_line VARCHAR NOT NULL);
-- Every v2 write (and rollback): what it did and gold's fingerprint after it.
CREATE TABLE IF NOT EXISTS model.snapshots (
    snapshot_id BIGINT NOT NULL, operation VARCHAR NOT NULL, upload DATE, late_days INTEGER NOT NULL,
    files VARCHAR NOT NULL, dates_rewritten INTEGER NOT NULL, beyond_window BIGINT NOT NULL,
    gold_rows BIGINT NOT NULL, gold_md5 VARCHAR NOT NULL, created_at TIMESTAMP NOT NULL);
-- Each date a snapshot wrote: the input hash it was built from and the version's gold rows.
CREATE TABLE IF NOT EXISTS model.snapshot_dates (
    snapshot_id BIGINT NOT NULL, business_date DATE NOT NULL, input_hash VARCHAR NOT NULL, gold_rows BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS model.gold_history (
    snapshot_id BIGINT NOT NULL, business_date DATE NOT NULL,
    g1 VARCHAR, g2 VARCHAR, g3 VARCHAR, g4 VARCHAR, a1 VARCHAR, a2 VARCHAR, a3 VARCHAR, a4 VARCHAR,
    m1 BIGINT, m2 BIGINT, m3 BIGINT, m4 BIGINT, m5 BIGINT, m6 BIGINT);
-- Silver's versions: each winner as a pointer to its bronze row, with its number of copies.
CREATE TABLE IF NOT EXISTS model.silver_history (
    snapshot_id BIGINT NOT NULL, business_date DATE NOT NULL, file_id INTEGER NOT NULL, line INTEGER NOT NULL,
    copies BIGINT NOT NULL);
-- Where hashing a model's gold text may resume, as audit.gold_prefix is for retail's: the MD5
-- state at the end of a date's text and gold's rows up to it, as write snapshot_id left gold.
-- A state is used only while no later write has rewritten its date or an earlier one.
CREATE TABLE IF NOT EXISTS model.gold_prefix (
    snapshot_id BIGINT NOT NULL, business_date DATE NOT NULL, rows BIGINT NOT NULL, state BLOB NOT NULL);
-- A run whose every date's input hash was unchanged: no snapshot, but a line here.
CREATE TABLE IF NOT EXISTS model.skipped_runs (uploads VARCHAR NOT NULL, dates VARCHAR NOT NULL, skipped_at TIMESTAMP NOT NULL);
-- A reopened date's wider window, with the decision: every later build of the date keeps it.
CREATE TABLE IF NOT EXISTS model.date_windows (
    business_date DATE NOT NULL, late_days INTEGER NOT NULL, snapshot_id BIGINT NOT NULL,
    reason VARCHAR NOT NULL, decided_by VARCHAR NOT NULL, decided_at TIMESTAMP NOT NULL);
-- v1, the naive append, on purpose.
-- The independent recount of a model lab's current files, kept (lake::model::recompute): its rows,
-- and what it counted (`input`: every current file version and dimension version). A landing
-- changes the input, and the next report that reads the recount counts again.
CREATE TABLE IF NOT EXISTS model.recount_input (input VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS model.recount_rows (
    business_date DATE NOT NULL,
    g1 VARCHAR, g2 VARCHAR, g3 VARCHAR, g4 VARCHAR, a1 VARCHAR, a2 VARCHAR, a3 VARCHAR, a4 VARCHAR,
    m1 BIGINT, m2 BIGINT, m3 BIGINT, m4 BIGINT, m5 BIGINT, m6 BIGINT);
CREATE TABLE IF NOT EXISTS model.naive (
    run_date DATE NOT NULL, business_date DATE NOT NULL,
    g1 VARCHAR, g2 VARCHAR, g3 VARCHAR, g4 VARCHAR, a1 VARCHAR, a2 VARCHAR, a3 VARCHAR, a4 VARCHAR,
    m1 BIGINT, m2 BIGINT, m3 BIGINT, m4 BIGINT, m5 BIGINT, m6 BIGINT);
-- When each row was appended (check --as-of counts v1 as it stood at a snapshot). A lab made
-- before the column has none for its older rows: they count at every snapshot.
ALTER TABLE model.naive ADD COLUMN IF NOT EXISTS appended_at TIMESTAMP;
-- The current version of each landed file, and bronze's rows and cells from current versions:
-- what every reader of landed data reads (silver's versions point at bronze rows of any version).
CREATE OR REPLACE VIEW raw.current_files AS
SELECT file_id, file, upload_date, md5, version FROM raw.files WHERE file_id NOT IN (SELECT file_id FROM raw.supersessions);
-- file_rank orders the current files by upload date, then name: within an upload it is the name's
-- order, which @copy_order needs (after upload_date). One sort of every file, not a partition per
-- upload: about a millisecond less of every statement that ranks copies (docs/performance.md).
CREATE OR REPLACE VIEW raw.current_file_ranks AS
SELECT file_id, file, rank() OVER (ORDER BY upload_date, file) AS file_rank FROM raw.current_files;
-- `arrival` is the copy's arrival time under the name @copy_order reads for every model.
CREATE OR REPLACE VIEW bronze.current_events AS
SELECT e.*, e.uploaded_at AS arrival, f.file, f.file_rank FROM bronze.events e JOIN raw.current_file_ranks f USING (file_id);
CREATE OR REPLACE VIEW bronze.current_event_rows AS
SELECT e.*, e.uploaded_at AS arrival, f.file, f.file_rank FROM bronze.event_rows e JOIN raw.current_file_ranks f USING (file_id);
-- THE rule for a store correction's file versions: a version with the same bytes as the version it
-- replaced was re-derived (only a store's row changed); other bytes are a file correction.
-- corrected_files, diff_rows and store_change_dates read it from here.
CREATE OR REPLACE VIEW raw.rederived_versions AS
SELECT s.file_id AS replaced_file_id, s.by_file_id AS file_id, n.landing_id
FROM raw.supersessions s
JOIN raw.files o ON o.file_id = s.file_id
JOIN raw.files n ON n.file_id = s.by_file_id
WHERE n.md5 = o.md5;
-- THE rule for a re-delivery: a version in other bytes whose rows are exactly the rows of the
-- version it replaced (the same file compressed again), read as bronze's cells (date, currency,
-- rows, revenue and the rows' digest) with as many quarantined lines. It changes no date, and is
-- no correction: corrected_files leaves it out and the landing calls it re-delivered.
CREATE OR REPLACE VIEW raw.redelivered_versions AS
SELECT s.by_file_id AS file_id
FROM raw.supersessions s
JOIN raw.files o ON o.file_id = s.file_id
JOIN raw.files n ON n.file_id = s.by_file_id
WHERE n.md5 <> o.md5
  AND NOT EXISTS (SELECT business_date, currency, rows, revenue_minor, digest FROM bronze.cells c WHERE c.file_id = s.file_id
                  EXCEPT ALL
                  SELECT business_date, currency, rows, revenue_minor, digest FROM bronze.cells c WHERE c.file_id = s.by_file_id)
  AND NOT EXISTS (SELECT business_date, currency, rows, revenue_minor, digest FROM bronze.cells c WHERE c.file_id = s.by_file_id
                  EXCEPT ALL
                  SELECT business_date, currency, rows, revenue_minor, digest FROM bronze.cells c WHERE c.file_id = s.file_id)
  AND (SELECT count(*) FROM bronze.quarantine q WHERE q.file_id = s.file_id)
      = (SELECT count(*) FROM bronze.quarantine q WHERE q.file_id = s.by_file_id);
CREATE OR REPLACE VIEW bronze.current_cells AS
SELECT * FROM bronze.cells WHERE file_id NOT IN (SELECT file_id FROM raw.supersessions);
-- THE rule for "the version of a date as of snapshot s": the newest snapshot up to s that
-- rewrote the date (a v2 overwrite or a rollback's restore; a skip writes nothing). s NULL: now.
-- Every statement and view that needs a date's version reads it from here.
CREATE OR REPLACE MACRO audit.versions_as_of(s) AS TABLE
    SELECT business_date, max(snapshot_id) AS snapshot_id FROM audit.snapshot_dates
    WHERE action <> 'skip' AND (s IS NULL OR snapshot_id <= s)
    GROUP BY business_date;
-- Gold now: the rows of each date's current version. Every version of gold is kept once, in
-- audit.gold_history, as silver's are in silver.versions.
CREATE OR REPLACE VIEW gold.daily_store_sales AS
SELECT g.business_date, g.store_id, g.country, g.currency, g.baskets, g.revenue_minor
FROM audit.gold_history g
JOIN audit.versions_as_of(NULL) c ON c.business_date = g.business_date AND c.snapshot_id = g.snapshot_id;
-- Silver as each snapshot wrote it, with the winning copy's fields from bronze.
CREATE OR REPLACE VIEW audit.silver_history AS
SELECT v.snapshot_id, v.business_date, e.basket_id, e.event_id, e.revenue_minor, v.copies
FROM silver.versions v
JOIN bronze.events e ON e.business_date = v.business_date AND e.file_id = v.file_id AND e.line = v.line;
-- Silver now: one row per basket of each date, from the date's current version.
CREATE OR REPLACE VIEW silver.baskets AS
SELECT v.business_date, e.basket_id, e.event_id, e.store_id, e.till_id, e.country, e.currency, e.event_ts,
       e.uploaded_at, e.upload_date, e.revenue_minor, v.copies
FROM silver.versions v
JOIN audit.versions_as_of(NULL) c ON c.business_date = v.business_date AND c.snapshot_id = v.snapshot_id
JOIN bronze.events e ON e.business_date = v.business_date AND e.file_id = v.file_id AND e.line = v.line;
-- The digest of `create` this build wrote (see Store::prepare): a reader opened by another build
-- knows its views are not its own.
CREATE TABLE IF NOT EXISTS audit.schema (digest VARCHAR NOT NULL);

-- The lab's macros, kept in its file with the views (a reading connection finds them there):
-- created as TEMP macros by every connection before, their text cost DuckDB's parser about 10 ms
-- on every open.
-- The window each date's version as of snapshot s (NULL: now) was built with: the window a
-- date's finality is judged by. A version with a kept window (audit.date_windows: reopened) has
-- that one; otherwise the newest v2 overwrite's without one, since a rollback's restore records no
-- window of its own.
CREATE OR REPLACE MACRO windows_as_of(s) AS TABLE
    WITH w AS (
        SELECT sd.business_date, sd.snapshot_id, sd.action, r.late_days, dw.late_days AS kept
        FROM audit.snapshot_dates sd JOIN audit.snapshots r USING (snapshot_id)
        LEFT JOIN audit.date_windows dw USING (snapshot_id, business_date)
        WHERE sd.action <> 'skip' AND (s IS NULL OR sd.snapshot_id <= s))
    SELECT business_date,
           coalesce(max(kept) FILTER (WHERE snapshot_id = newest),
                    arg_max(late_days, snapshot_id) FILTER (WHERE action = 'overwrite' AND kept IS NULL)) AS late_days
    FROM (SELECT *, max(snapshot_id) OVER (PARTITION BY business_date) AS newest FROM w)
    GROUP BY business_date;
-- The lateness window (the contract's rule): business date d is built from the rows uploaded on
-- d-1 .. d+late; the dates first..last together from those uploaded on first-1 .. last+late.
-- Every statement that applies the window calls these.
CREATE OR REPLACE MACRO in_windows(upload, first, last, late) AS upload BETWEEN first - 1 AND last + late;
CREATE OR REPLACE MACRO in_window(upload, d, late) AS in_windows(upload, d, d, late);
-- A model lab's current file versions, each date's version as of snapshot s (NULL: now), and gold.
CREATE OR REPLACE VIEW model.current_files AS
SELECT f.* FROM model.files f
WHERE f.version = (SELECT max(x.version) FROM model.files x WHERE x.file = f.file AND x.upload_date = f.upload_date);
-- The current files in raw-zone order (upload date, then name), as raw.current_file_ranks.
CREATE OR REPLACE VIEW model.current_file_ranks AS
SELECT file_id, file, upload_date, rank() OVER (ORDER BY upload_date, file) AS file_rank FROM model.current_files;
-- The current files' records, each with its arrival and its file's place under the names
-- @copy_order reads.
CREATE OR REPLACE VIEW model.current_records AS
SELECT r.*, r.rowid AS record_row, r.arrival_ns AS arrival, f.upload_date, f.file, f.file_rank
FROM model.records r JOIN model.current_file_ranks f USING (file_id);
-- The file versions as of snapshot s (NULL: now), in raw-zone order: each path's newest version
-- landed by the time s was recorded. What `check --as-of` reads; the writes read the views above.
CREATE OR REPLACE MACRO model.file_ranks_at(s) AS TABLE
    WITH landed AS (SELECT * FROM model.files
                    WHERE s IS NULL OR landed_at <= (SELECT created_at FROM model.snapshots WHERE snapshot_id = s)),
    newest AS (SELECT * FROM landed QUALIFY version = max(version) OVER (PARTITION BY upload_date, file))
    SELECT *, rank() OVER (ORDER BY upload_date, file) AS file_rank FROM newest;
-- Their records, under the names @copy_order reads (as model.current_records).
CREATE OR REPLACE MACRO model.records_at(s) AS TABLE
    SELECT r.*, r.arrival_ns AS arrival, f.upload_date, f.file, f.file_rank
    FROM model.records r JOIN model.file_ranks_at(s) f USING (file_id);
-- THE window each reopened date of a model keeps, as of snapshot s (NULL: now): the widest a
-- reopening gave it. Every write and report of the date reads its copies inside the wider of it
-- and the run's own (model_window).
CREATE OR REPLACE MACRO model.kept_windows(s) AS TABLE
    SELECT business_date, max(late_days) AS kept FROM model.date_windows
    WHERE s IS NULL OR snapshot_id <= s GROUP BY business_date;
CREATE OR REPLACE MACRO model_window(late, kept) AS greatest(late, coalesce(kept, 0));
CREATE OR REPLACE MACRO model.versions_as_of(s) AS TABLE
    SELECT business_date, max(snapshot_id) AS snapshot_id FROM model.snapshot_dates
    WHERE s IS NULL OR snapshot_id <= s GROUP BY business_date;
CREATE OR REPLACE VIEW model.gold AS
SELECT g.* FROM model.gold_history g JOIN model.versions_as_of(NULL) v USING (business_date, snapshot_id);
-- One gold row as the contract's fingerprint text: business_date|store_id|country|currency|
-- baskets|revenue_minor, the date as YYYY-MM-DD and integers in plain decimal.
CREATE OR REPLACE MACRO gold_line(d, store, country, currency, baskets, revenue) AS
    concat_ws('|', strftime(d, '%Y-%m-%d'), store, country, currency, baskets::VARCHAR, revenue::VARCHAR);
-- The dates a write rewrites, bound as one parameter: ISO dates joined with commas.
CREATE OR REPLACE MACRO dates_of(list) AS TABLE
    SELECT unnest(string_split(list, ','))::DATE AS business_date;
-- Every copy (of current file versions) of every basket that has a current copy dated d: the
-- date's own rows (zone maps keep the scan to a few row groups) plus the other-dated copies of
-- its split baskets. The list of split baskets only grows, so it can name a basket on a date
-- none of its current copies holds any more (a correction moved them): such a basket is not d's.
-- Rows carry their store row's number: a statement names the few stores it returns
-- (bronze.store_rows), not every copy it reads.
CREATE OR REPLACE MACRO copies_of(d) AS TABLE
    SELECT * FROM bronze.current_event_rows WHERE business_date = d
    UNION ALL
    SELECT * FROM bronze.current_event_rows
    WHERE business_date <> d
      AND business_date IN (SELECT o.business_date FROM bronze.split_baskets s
                            JOIN bronze.split_baskets o USING (basket_id) WHERE s.business_date = d)
      AND basket_id IN (SELECT basket_id FROM bronze.split_baskets WHERE business_date = d
                        INTERSECT SELECT basket_id FROM bronze.current_event_rows WHERE business_date = d);

-- The baskets of date d whose silver differs between two of its versions, for each pair
-- (vas[i], vbs[i]) of the two lists (a version -1: none): each with the pair's newer version,
-- its kind (see ChangeKind), the upload its newer winning copy arrived in (the older one's for a
-- removal), its deltas, and for the kinds a correction causes, the file version it came from
-- (added_by_correction, revenue_corrected) or that withdrew it (withdrawn). The newer versions of
-- the pairs are distinct: a pair is named by its newer version. Every version is read in one scan,
-- so a date's whole history is one query. Both versions point at bronze rows, so pointers both
-- hold with the same copies are skipped before any join; a basket whose winner only moved to a
-- newer version of its file with the same event, amount and copies did not change and is left
-- out. `diff` lists these rows; `history` sums them per country, kind, upload and file version.
-- A pair with no older version (a date's first) is every basket of its newer one, added (moved in,
-- when a store correction brought the date into being): its rows come straight from silver and bronze (the last SELECT), not through the comparison and
-- the kinds' joins: 3-4 ms less of `diff_parts`' 21-26 ms on the full world, although the
-- second SELECT costs DuckDB's optimizer more (docs/performance.md). The comparison takes the
-- other pairs (`po`).
CREATE OR REPLACE MACRO diff_rows(d, vas, vbs) AS TABLE
    WITH p AS (SELECT unnest(vas) AS va, unnest(vbs) AS vb),
         po AS (SELECT * FROM p WHERE va >= 0),
         -- The compared pairs' versions, each once.
         compared AS (SELECT va AS v FROM po UNION SELECT vb FROM po),
         -- Their rows, by a semi-join (a list_contains on every row grew with the versions).
         s AS (SELECT snapshot_id, file_id, line, copies FROM silver.versions
               WHERE business_date = d AND snapshot_id BETWEEN least(list_min(vas), list_min(vbs)) AND greatest(list_max(vas), list_max(vbs))
                 AND snapshot_id IN (SELECT v FROM compared)),
         -- A pointer that every compared version holds with the same copies differs in no pair,
         -- so only the others are crossed with the pairs: a date rewritten many times with the
         -- same baskets no longer crosses each of them with every pair (`diff_parts` on a date
         -- with 84 versions: 81-104 ms, against 236-327 ms; docs/performance.md).
         partial AS (SELECT file_id, line, copies FROM s GROUP BY ALL
                     HAVING count(*) < (SELECT count(*) FROM compared)),
         held AS (SELECT file_id, line, copies, list(snapshot_id) AS versions
                  FROM s SEMI JOIN partial USING (file_id, line, copies) GROUP BY ALL),
         moved AS (SELECT p.vb, h.file_id, h.line, h.copies, list_contains(h.versions, p.vb) AS in_b
                   FROM held h CROSS JOIN po p WHERE list_contains(h.versions, p.va) <> list_contains(h.versions, p.vb)),
         e AS (SELECT m.vb, m.in_b, m.copies, e.file_id, e.basket_id, e.event_id, e.revenue_minor, e.upload_date,
                      e.country, e.currency, e.store_id
               FROM moved m JOIN bronze.events e ON e.business_date = d AND e.file_id = m.file_id AND e.line = m.line),
         ea AS (SELECT * FROM e WHERE NOT in_b),
         eb AS (SELECT *, file_id IN (SELECT file_id FROM raw.rederived_versions) AS rederived FROM e WHERE in_b),
         gone AS (SELECT p.vb, r.file_id, r.by_file_id, r.file_id IN (SELECT replaced_file_id FROM raw.rederived_versions) AS rederived
                  FROM raw.supersessions r JOIN po p ON r.from_snapshot <= p.vb),
         -- kind first, then the file it names (below): a CASE on the alias `kind` in the same
         -- SELECT made DuckDB copy kind's whole CASE into each, which cost its optimizer 2-4 ms
         -- more in every history (docs/performance.md).
         pairs AS (
            SELECT coalesce(eb.vb, ea.vb) AS version, coalesce(eb.basket_id, ea.basket_id) AS basket_id,
                   CASE WHEN ea.event_id IS NULL THEN
                            CASE WHEN fb.version > 1 AND eb.rederived THEN 'store_moved_in'
                                 WHEN fb.version > 1 THEN 'added_by_correction' ELSE 'added' END
                        WHEN eb.event_id IS NULL THEN
                            CASE WHEN g.rederived THEN 'store_moved_out'
                                 WHEN g.by_file_id IS NOT NULL THEN 'withdrawn' ELSE 'removed' END
                        WHEN ea.event_id <> eb.event_id THEN 'winner_changed'
                        WHEN ea.revenue_minor <> eb.revenue_minor THEN 'revenue_corrected'
                        WHEN ea.copies <> eb.copies THEN 'copies_discarded' END AS kind,
                   CASE WHEN eb.event_id IS NULL THEN ea.upload_date ELSE eb.upload_date END AS upload_date,
                   fw.file AS withdrawing_file, fw.version AS withdrawing_version, fb.file AS newer_file, fb.version AS newer_version,
                   coalesce(eb.country, ea.country) AS country, coalesce(eb.currency, ea.currency) AS currency,
                   coalesce(eb.store_id, ea.store_id) AS store_id,
                   ea.event_id AS event_before, eb.event_id AS event_after,
                   (eb.event_id IS NOT NULL)::BIGINT - (ea.event_id IS NOT NULL)::BIGINT AS baskets_delta,
                   coalesce(eb.revenue_minor, 0) - coalesce(ea.revenue_minor, 0) AS revenue_delta_minor,
                   coalesce(eb.copies - 1, 0) - coalesce(ea.copies - 1, 0) AS copies_discarded_delta
            -- A basket a store correction gave another country or currency is two rows: out of
            -- the old, into the new, so that each country's parts sum to its change.
            FROM ea FULL OUTER JOIN eb
              ON ea.vb = eb.vb AND ea.basket_id = eb.basket_id AND ea.country = eb.country AND ea.currency = eb.currency
            JOIN po p ON p.vb = coalesce(eb.vb, ea.vb)
            LEFT JOIN raw.files fb ON fb.file_id = eb.file_id
            LEFT JOIN gone g ON g.vb = ea.vb AND g.file_id = ea.file_id
            LEFT JOIN raw.files fw ON fw.file_id = g.by_file_id)
    SELECT version, basket_id, kind, upload_date,
           CASE WHEN kind IN ('withdrawn', 'store_moved_out') THEN withdrawing_file
                WHEN kind IN ('added_by_correction', 'revenue_corrected', 'store_moved_in') THEN newer_file END AS file,
           CASE WHEN kind IN ('withdrawn', 'store_moved_out') THEN withdrawing_version
                WHEN kind IN ('added_by_correction', 'revenue_corrected', 'store_moved_in') THEN newer_version END AS file_version,
           country, currency, store_id, event_before, event_after, baskets_delta, revenue_delta_minor, copies_discarded_delta
    FROM pairs WHERE kind IS NOT NULL
    UNION ALL
    SELECT p.vb, e.basket_id, CASE WHEN r.file_id IS NULL THEN 'added' ELSE 'store_moved_in' END, e.upload_date,
           f.file, f.version, e.country, e.currency, e.store_id, NULL, e.event_id, 1, e.revenue_minor, v.copies - 1
    FROM p JOIN silver.versions v ON v.business_date = d AND v.snapshot_id = p.vb
    JOIN bronze.events e ON e.business_date = d AND e.file_id = v.file_id AND e.line = v.line
    -- A date a store correction brought into being: its baskets moved in from another date.
    LEFT JOIN (SELECT DISTINCT file_id FROM raw.rederived_versions) r ON r.file_id = e.file_id
    LEFT JOIN raw.files f ON f.file_id = r.file_id
    WHERE p.va < 0;

-- define: sent_twice
-- THE keys of date $business_date's baskets that were sent more than once: bronze.multi_copies
-- lists every basket key with several copies in bronze, once per business date of its copies.
-- A key it does not list has one copy in all of bronze, so a statement that ranks a date's
-- copies lets that row win alone and ranks only these keys' copies (a few percent of a date's
-- rows; the windows over every copy were most of those statements: docs/performance.md). A
-- statement using it binds $business_date.
(SELECT basket_key FROM bronze.multi_copies WHERE business_date = $business_date::DATE)

-- define: newest_file
-- THE newest landed file's id (0: none). Bronze only grows by files (a correction or a store
-- correction lands new file versions), so a cache counted through this id (the lateness
-- histogram, DuckDB's recount of every date) is current while it is still the newest.
(SELECT coalesce(max(file_id), 0) FROM raw.files)

-- define: copy_order
-- THE order of an entity's copies, for every model, first one wins: the smallest arrival, then
-- event_id; an exact tie (the same message twice) goes to the copy first in the raw zone: upload
-- date, file name (byte order), line. Every statement that ranks copies writes ORDER BY
-- @copy_order (a test holds them to it), over rows that carry these names: retail's
-- bronze.current_event_rows and a model's model.current_records, each with its file's rank in
-- raw-zone order (file_rank, which orders as the name within an upload).
arrival, event_id, upload_date, file_rank, line

-- name: current
-- The layout and the schema digest in one read: an open of a lab this build has brought up to
-- date needs nothing more. It fails on a lab without these tables (an old layout), which the
-- open then tells apart with the statements below; a new file is not asked (Store::prepare).
SELECT (SELECT max(format) FROM audit.lab) AS format, (SELECT max(digest) FROM audit.schema) AS digest;

-- name: old_layout
-- Layouts older than audit.lab's record, told apart before anything is created: layout 1 kept
-- the file's path on every bronze row, layout 2 kept silver as a table, layout 3 had no basket
-- key in bronze, layout 4 kept gold as a table. 0: none of them (or no lab yet).
SELECT CASE
    WHEN EXISTS (SELECT 1 FROM information_schema.columns
                 WHERE table_schema = 'bronze' AND table_name = 'events' AND column_name = 'file') THEN 1
    WHEN EXISTS (SELECT 1 FROM information_schema.tables
                 WHERE table_schema = 'silver' AND table_name = 'baskets' AND table_type = 'BASE TABLE') THEN 2
    WHEN EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = 'bronze' AND table_name = 'events')
     AND NOT EXISTS (SELECT 1 FROM information_schema.columns
                     WHERE table_schema = 'bronze' AND table_name = 'events' AND column_name = 'basket_key') THEN 3
    WHEN EXISTS (SELECT 1 FROM information_schema.tables
                 WHERE table_schema = 'gold' AND table_name = 'daily_store_sales' AND table_type = 'BASE TABLE') THEN 4
    ELSE 0 END AS layout;

-- name: has_format
-- Whether the lab records its layout (a new lab does not, until the schema is created).
SELECT count(*) AS tables FROM information_schema.tables WHERE table_schema = 'audit' AND table_name = 'lab';

-- name: format
-- The lab's layout version: a lab written by another layout is refused with a clear error.
SELECT (SELECT max(format) FROM audit.lab) AS format, (SELECT count(*) FROM raw.files) AS files;

-- name: schema_digest
SELECT (SELECT max(digest) FROM audit.schema) AS digest;

-- name: schema_digest_clear
DELETE FROM audit.schema;

-- name: schema_digest_insert
INSERT INTO audit.schema VALUES ($digest);

-- name: format_insert
INSERT INTO audit.lab VALUES ($format);

-- name: format_set
UPDATE audit.lab SET format = $format::INTEGER;

-- name: migrate_5_to_6
-- Layout 6 names what a rewrite does to the rows it supersedes since layout 5: they are
-- replaced (they stay in the versions tables), never deleted. It also versions raw files (every
-- file landed so far is version 1; `create` adds raw.supersessions and the current views).
BEGIN TRANSACTION;
ALTER TABLE raw.files ADD COLUMN version INTEGER DEFAULT 1;
ALTER TABLE audit.snapshots RENAME COLUMN rows_deleted TO rows_replaced;
ALTER TABLE audit.snapshot_dates RENAME COLUMN silver_deleted TO silver_replaced;
ALTER TABLE audit.snapshot_dates RENAME COLUMN gold_deleted TO gold_replaced;
UPDATE audit.lab SET format = 6;
COMMIT;

-- name: events_is_table
-- Whether bronze's events are still one table of strings (a lab of layout 7 or older), to be
-- moved aside and renumbered by `migrate_store_rows`.
SELECT count(*) AS tables FROM information_schema.tables
WHERE table_schema = 'bronze' AND table_name = 'events' AND table_type = 'BASE TABLE';

-- name: set_events_aside
-- The old table of events, renamed before `create` makes bronze.events a view of the same name.
ALTER TABLE bronze.events RENAME TO events_7;

-- name: migrate_store_rows
-- Layout 8: the set-aside events' store rows are numbered in the order of their strings, and
-- every event is written again with its store row's number, in file and line order (the order a
-- landing writes: a row group holds neighbouring uploads). Run in the transaction of `create`.
INSERT INTO bronze.store_rows
SELECT row_number() OVER (ORDER BY store_id, country, currency)::INTEGER, store_id, country, currency
FROM (SELECT DISTINCT store_id, country, currency FROM bronze.events_7);
INSERT INTO bronze.event_rows
SELECT e.event_id, e.basket_id, s.store_row, e.till_id, e.event_ts, e.uploaded_at, e.upload_date, e.business_date,
       e.revenue_minor, e.tenders, e.file_id, e.line, e.basket_key
FROM bronze.events_7 e JOIN bronze.store_rows s USING (store_id, country, currency)
ORDER BY e.file_id, e.line;
DROP TABLE bronze.events_7;
