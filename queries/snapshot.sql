-- snapshot.sql: the audit trail. Every write commits one record here, in its own transaction.
-- Reads: audit.*, silver.versions.
-- Writes: audit.snapshots (audit.snapshot_dates by the appender), and, for a rollback, silver.versions
-- and audit.gold_history.

-- name: ids
-- The next snapshot id, and the head: the newest data snapshot (skipped runs change nothing, so
-- they are never a parent).
SELECT coalesce(max(snapshot_id), 0) + 1, max(snapshot_id) FILTER (WHERE operation <> 'skipped') FROM audit.snapshots;

-- name: insert
INSERT INTO audit.snapshots VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: versions_as_of
-- For each date, the snapshot whose rows it held as of snapshot $1.
SELECT business_date, max(snapshot_id) FROM audit.snapshot_dates
WHERE action <> 'skip' AND snapshot_id <= $1::BIGINT GROUP BY 1 ORDER BY 1;

-- name: restore_silver
-- Snapshot $1 takes the silver version of date $3 that snapshot $2 wrote (a copy of its pointers).
INSERT INTO silver.versions
SELECT $1::BIGINT, business_date, file_id, line, copies FROM silver.versions
WHERE snapshot_id = $2::BIGINT AND business_date = $3::DATE
ORDER BY file_id, line;

-- name: rows_of_version
-- Silver's and gold's rows in the version of date $2 that snapshot $1 wrote.
SELECT (SELECT count(*) FROM silver.versions WHERE snapshot_id = $1::BIGINT AND business_date = $2::DATE),
       (SELECT count(*) FROM audit.gold_history WHERE snapshot_id = $1::BIGINT AND business_date = $2::DATE);

-- name: restore_gold
-- Snapshot $1 takes the gold version of date $3 that snapshot $2 wrote (a copy of its rows).
INSERT INTO audit.gold_history
SELECT $1::BIGINT, business_date, store_id, country, currency, baskets, revenue_minor FROM audit.gold_history
WHERE snapshot_id = $2::BIGINT AND business_date = $3::DATE ORDER BY store_id;

-- name: version_of
-- The input hash that snapshot $1 recorded for date $2.
SELECT input_hash, input_rows FROM audit.snapshot_dates
WHERE snapshot_id = $1::BIGINT AND business_date = $2::DATE AND action <> 'skip';

-- name: exists
SELECT count(*) FROM audit.snapshots WHERE snapshot_id = ?;

-- name: version_at
-- The version of date $1 as of snapshot $2: the newest snapshot up to $2 that rewrote it.
SELECT max(snapshot_id) FROM audit.snapshot_dates
WHERE business_date = $1::DATE AND action <> 'skip' AND snapshot_id <= $2::BIGINT;

-- name: current_hash
-- The input hash of the version of date $1 that silver and gold hold now.
SELECT arg_max(input_hash, snapshot_id) FROM audit.snapshot_dates WHERE business_date = ? AND action <> 'skip';

-- name: late_days_of
-- The window the date was last rewritten with.
SELECT s.late_days FROM audit.snapshot_dates sd JOIN audit.snapshots s USING (snapshot_id)
WHERE sd.business_date = ? AND sd.action = 'overwrite' ORDER BY sd.snapshot_id DESC LIMIT 1;

