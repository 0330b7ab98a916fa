-- snapshot.sql: the audit trail. Every write commits one record here, in its own transaction.
-- Reads: audit.*, silver.versions.
-- Writes: audit.snapshots (audit.snapshot_dates by the appender), and, for a rollback, silver.versions
-- and audit.gold_history.

-- name: ids
-- The next snapshot id, and the head: the newest data snapshot (skipped runs change nothing, so
-- they are never a parent).
SELECT coalesce(max(snapshot_id), 0) + 1 AS next_id, max(snapshot_id) FILTER (WHERE operation <> 'skipped') AS head
FROM audit.snapshots;

-- name: insert
INSERT INTO audit.snapshots VALUES ($snapshot_id, $parent_id, $operation, $trigger_kind, $trigger_upload,
    $trigger_detail, $late_days, $dates_rewritten, $dates_skipped, $rows_replaced, $rows_added,
    $beyond_window_rows, $gold_rows, $gold_md5, $code_version, $created_at);

-- name: versions_as_of
-- For each date, the snapshot whose rows it held as of snapshot $snapshot_id.
SELECT business_date, snapshot_id AS version FROM audit.versions_as_of($snapshot_id::BIGINT) ORDER BY 1;

-- name: restore_silver
-- Snapshot $snapshot_id takes the silver version of date $business_date that snapshot $version
-- wrote (a copy of its pointers).
INSERT INTO silver.versions
SELECT $snapshot_id::BIGINT, business_date, file_id, line, copies FROM silver.versions
WHERE snapshot_id = $version::BIGINT AND business_date = $business_date::DATE
ORDER BY file_id, line;

-- name: restore_window
-- Snapshot $snapshot_id takes the kept window (a reopening's), if any, of the version of date
-- $business_date that snapshot $version wrote.
INSERT INTO audit.date_windows
SELECT $snapshot_id::BIGINT, business_date, late_days FROM audit.date_windows
WHERE snapshot_id = $version::BIGINT AND business_date = $business_date::DATE;

-- name: rows_of_version
-- Silver's and gold's rows in the version of date $business_date that snapshot $version wrote.
SELECT (SELECT count(*) FROM silver.versions WHERE snapshot_id = $version::BIGINT AND business_date = $business_date::DATE) AS silver_rows,
       (SELECT count(*) FROM audit.gold_history WHERE snapshot_id = $version::BIGINT AND business_date = $business_date::DATE) AS gold_rows;

-- name: restore_gold
-- Snapshot $snapshot_id takes the gold version of date $business_date that snapshot $version
-- wrote (a copy of its rows).
INSERT INTO audit.gold_history
SELECT $snapshot_id::BIGINT, business_date, store_id, country, currency, baskets, revenue_minor FROM audit.gold_history
WHERE snapshot_id = $version::BIGINT AND business_date = $business_date::DATE ORDER BY store_id;

-- name: version_inputs
-- The input hash and rows that snapshot $version recorded for date $business_date.
SELECT input_hash, input_rows FROM audit.snapshot_dates
WHERE snapshot_id = $version::BIGINT AND business_date = $business_date::DATE AND action <> 'skip';

-- name: exists
SELECT count(*) AS found FROM audit.snapshots WHERE snapshot_id = $snapshot_id;

-- name: versions_at
-- The version of each of dates $dates (a list, dates_of in schema.sql) as of snapshot
-- $snapshot_id (NULL: now), with the input hash it was built from and the window of the newest
-- v2 overwrite of the date up to then; a date with no version has no row. One statement for any
-- number of dates: the morning summary after a backfill asked it once per date, which was most
-- of the summary's time.
SELECT v.business_date, v.snapshot_id AS version, sd.input_hash, w.late_days
FROM audit.versions_as_of($snapshot_id::BIGINT) v
JOIN audit.snapshot_dates sd ON sd.business_date = v.business_date AND sd.snapshot_id = v.snapshot_id
LEFT JOIN windows_as_of($snapshot_id::BIGINT) w ON w.business_date = v.business_date
WHERE v.business_date IN (SELECT business_date FROM dates_of($dates::VARCHAR));
