-- v2.sql: the idempotent job.
-- Reads: bronze.current_event_rows, bronze.store_rows, bronze.cells, audit.snapshot_dates.
-- Writes: silver.versions and audit.gold_history (the changed dates' new versions: nothing is
-- deleted). The run's audit rows are written by snapshot.sql in the same transaction. The dates a
-- run rewrites are bound as one list (see dates_of in schema.sql).

-- name: upload_cells
-- What uploads $first..$last hold per upload, file version, business date and currency, with two
-- flags: `beyond`, the rows never enter silver (older than the window, or dated more than a day
-- after their upload: a till clock in the future); `current`, the file version is current. Dates
-- of superseded versions count too: a correction that withdraws a date's rows rebuilds it. The
-- caller tells which dates each upload's run rebuilds, and sums the files (a GROUP BY and ORDER
-- BY on these few rows cost more than the rest). One query for a range: a backfill asking once
-- per upload spent a noticeable share of its pass here.
SELECT upload_date, business_date, currency, rows, revenue_minor,
       NOT in_window(upload_date, business_date, $late_days::INTEGER) AS beyond,
       file_id NOT IN (SELECT file_id FROM raw.supersessions) AS current
FROM bronze.cells
WHERE upload_date BETWEEN $first::DATE AND $last::DATE;

-- name: input_cells
-- What feeds dates $first..$last under the window rule, file by file: rows and the digest sum
-- of each cell. Summed per date (wrapping) by the caller.
SELECT business_date, rows, digest FROM bronze.current_cells
WHERE business_date BETWEEN $first::DATE AND $last::DATE
  AND in_window(upload_date, business_date, $late_days::INTEGER);

-- name: current_versions
-- The version silver and gold hold now of each date from $first to $last (the rule in
-- audit.versions_as_of), with the input hash it was built from, its row counts and the window
-- it keeps (a reopening's, audit.date_windows: every later write of the date is built with it;
-- NULL: none).
SELECT sd.business_date, sd.input_hash, sd.silver_added AS silver_rows, sd.gold_added AS gold_rows,
       dw.late_days AS kept_late_days
FROM audit.snapshot_dates sd
JOIN audit.versions_as_of(NULL) v USING (business_date, snapshot_id)
LEFT JOIN audit.date_windows dw USING (business_date, snapshot_id)
WHERE sd.business_date BETWEEN $first::DATE AND $last::DATE;

-- define: winners
-- THE winners of a v2 write, as a subquery: one row per basket of the dates $first..$last, its
-- first copy in @copy_order among the current file versions' rows in window $late_days, with the
-- copies it won over and the columns gold sums (its store row's number: gold names the store
-- after summing, so no row pays for a store's strings). Silver keeps each as a pointer (file id,
-- line), and gold sums them (`winners_rows`, `silver_insert`): both read the rule from here.
-- Baskets are told apart by basket_key, which landing checks no two basket_ids share;
-- $key_collisions is true in a lab where some do, and basket_id then tells them apart too
-- (partitioning by the key is faster than by the string). A key bronze.multi_copies does not
-- list has one copy in all of bronze, so its row is its basket's winner with one copy; only the
-- listed keys' rows are ranked (about 3% of a date's rows): grouped by basket, the winner is the
-- copy whose @copy_order, compared as one row of those columns, is least (`arg_min`; the rank
-- in each basket's window it replaced was slower). No two current rows share a file rank and line, so no two copies tie.
-- $first..$last are the first and last changed date (bounds for zone maps), $dates the changed
-- dates (a list; NULL when they are every date of $first..$last, as in most runs).
(WITH candidates AS NOT MATERIALIZED (
    SELECT * FROM bronze.current_event_rows
    WHERE in_window(upload_date, business_date, $late_days::INTEGER)
      AND business_date BETWEEN $first::DATE AND $last::DATE
      AND in_windows(upload_date, $first::DATE, $last::DATE, $late_days::INTEGER)
      AND ($dates::VARCHAR IS NULL OR business_date IN (SELECT business_date FROM dates_of($dates::VARCHAR)))),
multi AS (SELECT basket_key FROM bronze.multi_copies WHERE business_date BETWEEN $first::DATE AND $last::DATE)
SELECT business_date, file_id, line, 1 AS copies, store_row, revenue_minor FROM candidates
WHERE basket_key NOT IN (SELECT basket_key FROM multi)
UNION ALL
SELECT w.business_date, w.file_id, w.line, copies, w.store_row, w.revenue_minor FROM (
    SELECT arg_min(struct_pack(business_date, file_id, line, store_row, revenue_minor), row(@copy_order)) AS w,
           count(*) AS copies
    FROM candidates
    WHERE basket_key IN (SELECT basket_key FROM multi)
    GROUP BY basket_key, CASE WHEN $key_collisions::BOOLEAN THEN basket_id END))

-- name: winners_rows
-- The winners of a write (`winners` above), to the caller: silver's columns of each (the
-- snapshot's id, date, file id, line and copies: silver keeps a winner as a pointer to its bronze
-- row), then what gold sums of it (its store row and revenue). A short write keeps them, sums
-- gold's (`GoldSums`, src/store/v2.rs) and inserts silver's new version from them as they come
-- (`silver_from_rows`; bronze's order: by upload, so nearly by date; every reader of silver
-- filters or groups): the winners are found once. Silver's insert, then gold's from
-- silver's new rows joined back to bronze, found them twice in effect (measured when the
-- winners were first found once). A long write streams them into gold's sums after `silver_insert`.
SELECT $snapshot_id::BIGINT AS snapshot_id, business_date, file_id, line, copies::INTEGER AS copies,
       store_row, revenue_minor
FROM @winners;

-- name: silver_insert
-- A long write's silver (bulk work: one thread, 32 MB): the winners inserted by DuckDB itself,
-- which keeps none of them in the process (`Rewrite::long`).
INSERT INTO silver.versions
SELECT $snapshot_id::BIGINT, business_date, file_id, line, copies::INTEGER FROM @winners;

-- name: silver_from_rows
-- A short write's silver: its winners (`winners_rows`), handed back as the caller read them
-- (`recount_rows($job)`), in their order: a little faster than DuckDB's appender.
INSERT INTO silver.versions
SELECT snapshot_id, business_date, file_id, line, copies FROM recount_rows($job::BIGINT);

-- name: key_collisions
SELECT count(*) AS keys FROM bronze.key_collisions;

-- define: gold_from_sums_insert
-- The new gold version of a write's dates, as snapshot $snapshot_id's version of gold
-- (gold.daily_store_sales shows it once the snapshot's dates are recorded): the sums the caller
-- made of the winners per date and store row (`recount_rows($job)`), each store row named. A
-- store row is one (store, country, currency).
INSERT INTO audit.gold_history
SELECT $snapshot_id::BIGINT, w.business_date, s.store_id, s.country, s.currency, w.baskets, w.revenue_minor
FROM recount_rows($job::BIGINT) w
JOIN bronze.store_rows s USING (store_row)
ORDER BY w.business_date, s.store_id

-- name: gold_from_sums
@gold_from_sums_insert;

-- name: gold_from_sums_text
-- The same, in a process that holds gold's text: each new row also comes back as its store and
-- its line of the fingerprint's text (`gold_line`), so that the written dates' new text comes
-- from here, not from a second read of gold after the insert (`version_text`).
@gold_from_sums_insert
RETURNING business_date, store_id, gold_line(business_date, store_id, country, currency, baskets, revenue_minor) AS line;

-- name: pending_store_changes
-- The store corrections no v2 run has rebuilt for yet, oldest first.
SELECT change_id, store_id, old_country, old_timezone, old_currency, new_country, new_timezone, new_currency, landing_id
FROM raw.store_changes WHERE applied_by IS NULL ORDER BY change_id;

-- name: store_change_dates
-- The business dates the pending store corrections move: those holding a corrected store's
-- events in a file version its correction's landing re-derived (raw.rederived_versions), or in
-- the version that one replaced: one scan of bronze for every pending correction (asked one
-- correction at a time, a run read bronze once per moved store).
WITH pending AS (SELECT DISTINCT store_id, landing_id FROM raw.store_changes WHERE applied_by IS NULL),
redone AS (SELECT r.replaced_file_id, r.file_id, p.store_id FROM raw.rederived_versions r JOIN pending p USING (landing_id)),
files AS (SELECT replaced_file_id AS file_id, store_id FROM redone UNION SELECT file_id, store_id FROM redone),
store_rows AS (SELECT s.store_row, f.file_id FROM bronze.store_rows s JOIN files f USING (store_id))
SELECT DISTINCT e.business_date FROM bronze.event_rows e
SEMI JOIN store_rows r ON e.file_id = r.file_id AND e.store_row = r.store_row
ORDER BY 1;

-- name: store_changes_applied
-- The v2 run $snapshot_id rebuilt the dates of every pending store correction.
UPDATE raw.store_changes SET applied_by = $snapshot_id WHERE applied_by IS NULL;

-- name: date_windows_insert
-- Snapshot $snapshot_id keeps window $late_days for the dates $dates (a list) it writes.
INSERT INTO audit.date_windows SELECT $snapshot_id::BIGINT, business_date, $late_days::INTEGER FROM dates_of($dates);
