-- mirror.sql: an Iceberg warehouse (`recount spark`) read into a lab-shaped database, so that every
-- report reads it with the lab's own SQL (src/warehouse.rs). pyiceberg plans which Parquet data
-- files each table and each gold snapshot holds; these statements read them (the path bound, one
-- file at a time) into temporary stage tables, then lay the stage out as the lab's tables.
-- Reads: the warehouse's Parquet files. Writes: a new mirror's tables (never a lab's).

-- name: stage
CREATE OR REPLACE TEMP TABLE m_stores (store_id VARCHAR, country VARCHAR, timezone VARCHAR, currency VARCHAR);

-- name: stage_changes
CREATE OR REPLACE TEMP TABLE m_changes (
    event VARCHAR, change_id INTEGER, store_id VARCHAR, old_country VARCHAR, old_timezone VARCHAR, old_currency VARCHAR,
    new_country VARCHAR, new_timezone VARCHAR, new_currency VARCHAR, run INTEGER, snapshot_id BIGINT, changed_at TIMESTAMP);

-- name: stage_files
CREATE OR REPLACE TEMP TABLE m_files (
    upload_date DATE, file_name VARCHAR, version INTEGER, md5 VARCHAR, bytes BIGINT, events BIGINT, quarantined BIGINT,
    landed_at TIMESTAMP);

-- name: stage_bronze
CREATE OR REPLACE TEMP TABLE m_bronze (
    upload_date DATE, file_name VARCHAR, file_version INTEGER, line INTEGER, event_id VARCHAR, basket_id VARCHAR,
    store_id VARCHAR, till_id VARCHAR, event_ts TIMESTAMP, uploaded_at_ns BIGINT, currency VARCHAR, country VARCHAR,
    revenue_minor BIGINT, tenders INTEGER, business_date DATE, reason VARCHAR);

-- name: stage_silver
CREATE OR REPLACE TEMP TABLE m_silver (
    ice BIGINT, business_date DATE, upload_date DATE, file_name VARCHAR, file_version INTEGER, line INTEGER, copies INTEGER);

-- name: stage_gold
CREATE OR REPLACE TEMP TABLE m_gold (
    ice BIGINT, business_date DATE, store_id VARCHAR, country VARCHAR, currency VARCHAR, baskets BIGINT, revenue_minor BIGINT);

-- name: stage_naive
CREATE OR REPLACE TEMP TABLE m_naive (
    ice BIGINT, run_date DATE, business_date DATE, store_id VARCHAR, country VARCHAR, currency VARCHAR, events BIGINT,
    revenue_minor BIGINT);

-- name: stage_skipped
CREATE OR REPLACE TEMP TABLE m_skipped (ice BIGINT, properties VARCHAR);

-- name: load_stores
INSERT INTO m_stores SELECT store_id, country, timezone, currency FROM read_parquet($path);

-- name: load_changes
INSERT INTO m_changes
SELECT event, change_id, store_id, old_country, old_timezone, old_currency, new_country, new_timezone, new_currency,
       run, snapshot_id, "at"::TIMESTAMP
FROM read_parquet($path);

-- name: load_files
INSERT INTO m_files
SELECT upload_date, file_name, version, md5, bytes, events, quarantined, landed_at::TIMESTAMP FROM read_parquet($path);

-- name: load_bronze
INSERT INTO m_bronze
SELECT upload_date, file_name, file_version, line, event_id, basket_id, store_id, till_id, event_ts::TIMESTAMP,
       uploaded_at_ns, currency, country, revenue_minor, tenders, business_date, reason
FROM read_parquet($path);

-- name: load_silver
-- Silver as Iceberg snapshot $ice holds it, for the dates $dates that gold's snapshot wrote.
INSERT INTO m_silver
SELECT $ice::BIGINT, business_date, upload_date, file_name, file_version, line, copies FROM read_parquet($path)
WHERE business_date IN (SELECT business_date FROM dates_of($dates));

-- name: load_gold
-- Gold as Iceberg snapshot $ice holds it, for the dates $dates it wrote.
INSERT INTO m_gold
SELECT $ice::BIGINT, business_date, store_id, country, currency, baskets, revenue_minor FROM read_parquet($path)
WHERE business_date IN (SELECT business_date FROM dates_of($dates));

-- name: load_naive
-- The rows v1's run appended in Iceberg snapshot $ice of naive_daily_sales.
INSERT INTO m_naive
SELECT $ice::BIGINT, run_date, business_date, store_id, country, currency, events, revenue_minor FROM read_parquet($path);

-- name: load_skipped
-- The runs that wrote nothing, as Iceberg snapshot $ice of skipped_runs appended them.
INSERT INTO m_skipped SELECT $ice::BIGINT, properties FROM read_parquet($path);

-- name: skipped_properties
SELECT properties FROM m_skipped WHERE ice = $ice::BIGINT;

-- name: file_ids
-- Every recorded file version, numbered in landing order (a file id is the lab's handle on a
-- version); each distinct landing time is one landing. The warehouse's rows name a version by
-- (upload date, file name, version): every statement below finds its id here.
CREATE OR REPLACE TEMP TABLE m_ids AS
SELECT row_number() OVER (ORDER BY landed_at, upload_date, file_name, version)::INTEGER AS file_id,
       dense_rank() OVER (ORDER BY landed_at) AS landing_id, upload_date, file_name, version
FROM m_files;

-- name: raw_files
-- The versions as the lab records them; a file's path is the contract's layout.
INSERT INTO raw.files
SELECT i.file_id, 'pos/events/upload_date=' || strftime(m.upload_date, '%Y-%m-%d') || '/' || m.file_name AS file,
       m.upload_date, m.bytes, m.md5, m.events + m.quarantined AS lines, m.events, m.quarantined, i.landing_id, m.version
FROM m_files m JOIN m_ids i USING (upload_date, file_name, version)
ORDER BY i.file_id;

-- name: landings
INSERT INTO raw.landings
SELECT i.landing_id, min(m.upload_date), max(m.upload_date), count(*)::INTEGER, sum(m.events)::BIGINT,
       sum(m.quarantined)::BIGINT, min(m.landed_at)
FROM m_files m JOIN m_ids i USING (upload_date, file_name, version)
GROUP BY i.landing_id;

-- name: supersessions
-- Each version replaced by its path's next; from_snapshot is set once the snapshots are laid out.
INSERT INTO raw.supersessions
SELECT o.file_id, n.file_id, 0 FROM raw.files o JOIN raw.files n ON n.file = o.file AND n.version = o.version + 1;

-- name: partitions
INSERT INTO raw.partitions
SELECT upload_date, count(*)::INTEGER, max(landing_id) FROM raw.current_files JOIN raw.files USING (file_id, file, upload_date, md5, version)
GROUP BY upload_date;

-- name: stores
INSERT INTO raw.stores SELECT store_id, country, timezone, currency FROM m_stores ORDER BY store_id;

-- name: store_changes
-- Each landed store correction (a 'landed' row of the log), in the landing nearest before it;
-- applied_by and from_snapshot are set once the snapshots are laid out.
INSERT INTO raw.store_changes
SELECT c.change_id, c.store_id, coalesce(c.old_country, ''), coalesce(c.old_timezone, ''), coalesce(c.old_currency, ''),
       c.new_country, c.new_timezone, c.new_currency,
       coalesce((SELECT max(l.landing_id) FROM raw.landings l WHERE l.landed_at <= c.changed_at),
                (SELECT min(l.landing_id) FROM raw.landings l)) AS landing_id,
       0, NULL
FROM m_changes c WHERE c.event = 'landed' ORDER BY c.change_id;

-- name: store_rows
-- The store rows bronze's events carry, numbered in the order of their strings.
INSERT INTO bronze.store_rows
SELECT row_number() OVER (ORDER BY store_id, country, currency)::INTEGER, store_id, country, currency
FROM (SELECT DISTINCT store_id, country, currency FROM m_bronze WHERE reason IS NULL);

-- name: events
-- Bronze: the events of recorded versions, with the lab's handles (file id, store row, a 64-bit
-- key of the basket). Uploaded_at keeps its nanoseconds (uploaded_at_ns).
INSERT INTO bronze.event_rows
SELECT b.event_id, b.basket_id, s.store_row, b.till_id, b.event_ts::TIMESTAMP_NS,
       make_timestamp_ns(b.uploaded_at_ns) AS uploaded_at,
       b.upload_date, b.business_date, b.revenue_minor, b.tenders::SMALLINT, f.file_id, b.line,
       (hash(b.basket_id) & 9223372036854775807)::BIGINT AS basket_key
FROM m_bronze b
JOIN m_ids f ON f.upload_date = b.upload_date AND f.file_name = b.file_name AND f.version = b.file_version
JOIN bronze.store_rows s ON s.store_id = b.store_id AND s.country = b.country AND s.currency = b.currency
WHERE b.reason IS NULL
ORDER BY b.business_date, f.file_id, b.line;

-- name: quarantine
-- Quarantined lines. The warehouse keeps no raw line text, so it is empty here.
INSERT INTO bronze.quarantine
SELECT f.file, b.line, b.upload_date, b.reason, '', f.file_id
FROM m_bronze b
JOIN m_ids i ON i.upload_date = b.upload_date AND i.file_name = b.file_name AND i.version = b.file_version
JOIN raw.files f ON f.file_id = i.file_id
WHERE b.reason IS NOT NULL
ORDER BY f.file_id, b.line;

-- name: cells
-- Per file, date and currency: rows, revenue and the wrapping sum of a 64-bit hash of each row,
-- as landing sums them (DuckDB's hash here, not the lab's xxh3: a mirror's input hashes are
-- compared only with its own).
INSERT INTO bronze.cells
SELECT file_id, upload_date, business_date, currency, n, revenue,
       (CASE WHEN s >= 9223372036854775808 THEN s - 18446744073709551616 ELSE s END)::BIGINT
FROM (SELECT file_id, upload_date, business_date, currency, count(*) AS n, sum(revenue_minor)::BIGINT AS revenue,
             sum(hash(event_id, basket_id, store_id, till_id, country, currency, event_ts, uploaded_at, upload_date,
                      business_date, revenue_minor)::HUGEINT) % 18446744073709551616 AS s
      FROM bronze.events GROUP BY file_id, upload_date, business_date, currency);

-- name: gold_version
-- Gold's rows of the dates $dates that Iceberg snapshot $ice wrote, as mirror snapshot $snapshot_id.
INSERT INTO audit.gold_history
SELECT $snapshot_id::BIGINT, business_date, store_id, country, currency, baskets, revenue_minor FROM m_gold
WHERE ice = $ice::BIGINT ORDER BY business_date, store_id;

-- name: silver_version
-- Silver's winners of the same dates, as pointers to bronze rows (file id, line).
INSERT INTO silver.versions
SELECT $snapshot_id::BIGINT, s.business_date, f.file_id, s.line, s.copies FROM m_silver s
JOIN m_ids f ON f.upload_date = s.upload_date AND f.file_name = s.file_name AND f.version = s.file_version
WHERE s.ice = $ice::BIGINT ORDER BY s.business_date, f.file_id, s.line;

-- name: naive_version
-- v1's rows of Iceberg snapshot $ice, as the mirror's snapshot $snapshot_id appended them.
INSERT INTO naive.daily_sales
SELECT $snapshot_id::BIGINT, run_date, business_date, store_id, country, currency, events, revenue_minor FROM m_naive
WHERE ice = $ice::BIGINT ORDER BY store_id;

-- name: unmatched_silver
-- Silver rows of Iceberg snapshot $ice whose file version bronze does not hold (none, in a
-- warehouse written by recount).
SELECT count(*) AS rows FROM m_silver s
WHERE s.ice = $ice::BIGINT AND NOT EXISTS (
    SELECT 1 FROM m_ids f WHERE f.upload_date = s.upload_date AND f.file_name = s.file_name AND f.version = s.file_version);

-- name: window
INSERT INTO audit.date_windows VALUES ($snapshot_id, $business_date, $late_days);

-- name: record_totals
UPDATE audit.snapshots SET gold_rows = $rows, gold_md5 = $md5, rows_replaced = $rows_replaced, rows_added = $rows_added
WHERE snapshot_id = $snapshot_id;

-- name: record_time
UPDATE audit.snapshots SET created_at = $created_at WHERE snapshot_id = $snapshot_id;

-- name: from_snapshots
-- The first mirror snapshot recorded after each correction's landing sees it (as a lab's
-- landing names the next snapshot id); the store change's rebuild is the mirror snapshot of the
-- Iceberg snapshot its log names ($ids: Iceberg id = mirror id, joined by commas).
UPDATE raw.supersessions x SET from_snapshot = coalesce(
    (SELECT min(s.snapshot_id) FROM audit.snapshots s WHERE s.created_at >= l.landed_at),
    (SELECT coalesce(max(snapshot_id), 0) + 1 FROM audit.snapshots))
FROM raw.files f JOIN raw.landings l USING (landing_id) WHERE f.file_id = x.by_file_id;

-- name: store_change_snapshots
UPDATE raw.store_changes c SET from_snapshot = coalesce(
    (SELECT min(s.snapshot_id) FROM audit.snapshots s WHERE s.created_at >= l.landed_at),
    (SELECT coalesce(max(snapshot_id), 0) + 1 FROM audit.snapshots)),
    applied_by = (SELECT m.mirror FROM (SELECT split_part(p, '=', 1)::BIGINT AS ice, split_part(p, '=', 2)::BIGINT AS mirror
                                        FROM unnest(string_split($ids, ',')) t(p) WHERE p <> '') m
                  JOIN m_changes r ON r.snapshot_id = m.ice
                  WHERE r.event = 'rebuilt' AND r.change_id = c.change_id LIMIT 1)
FROM raw.landings l WHERE l.landing_id = c.landing_id;

-- name: recount_events
-- Every event of a current file version, for the independent recount (polars): the fields it
-- dedups, orders and sums by; dates as days since the epoch.
SELECT basket_id, event_id, epoch_ns(uploaded_at) AS uploaded_at_ns, (upload_date - DATE '1970-01-01')::INTEGER AS upload_day,
       file, line::BIGINT AS line, (business_date - DATE '1970-01-01')::INTEGER AS business_day, store_id, country, currency,
       revenue_minor
FROM bronze.current_events;

-- name: iceberg_table
-- The Iceberg snapshot that was gold's current one after each of the mirror's snapshots: what a
-- rollback to that snapshot asks Spark for. Only a mirror has this table.
CREATE TABLE IF NOT EXISTS audit.iceberg_snapshots (snapshot_id BIGINT NOT NULL, iceberg_id BIGINT NOT NULL);

-- name: iceberg_insert
INSERT INTO audit.iceberg_snapshots VALUES ($snapshot_id, $iceberg_id);

-- name: iceberg_of
SELECT iceberg_id FROM audit.iceberg_snapshots WHERE snapshot_id = $snapshot_id;

-- name: recount_events_as_of
-- The same, over bronze as it was when snapshot $snapshot_id was recorded (as_of.sql's rule):
-- a mirror's as-of recount, since a mirror holds no raw files.
SELECT basket_id, event_id, epoch_ns(uploaded_at) AS uploaded_at_ns, (upload_date - DATE '1970-01-01')::INTEGER AS upload_day,
       file, line::BIGINT AS line, (business_date - DATE '1970-01-01')::INTEGER AS business_day, store_id, country, currency,
       revenue_minor
FROM events_as_of($snapshot_id::BIGINT) JOIN bronze.store_rows USING (store_row);
