-- v2.sql: the idempotent job.
-- Reads: bronze.events, bronze.cells, audit.snapshot_dates.
-- Writes: silver.versions and audit.gold_history (the changed dates' new versions: nothing is
-- deleted). The run's audit rows are written by snapshot.sql in the same transaction. The dates a
-- run rewrites are bound as one list (see dates_of in schema.sql).

-- name: upload_cells
-- What upload $1 holds per file, business date and currency, with two flags: `affected`, the
-- date is one the run rebuilds (no older than $2 = upload - late_days); `beyond`, the rows never
-- enter silver (older than the window, or dated more than a day after their upload: a till clock
-- in the future). $3 = late_days. The caller sums the files (a GROUP BY and ORDER BY on these
-- few rows cost DuckDB about a millisecond, every run).
SELECT business_date, currency, rows, revenue_minor,
       business_date >= $2::DATE AS affected,
       NOT in_window($1::DATE, business_date, $3::INTEGER) AS beyond
FROM bronze.cells
WHERE upload_date = $1::DATE;

-- name: input_cells
-- What feeds dates $2..$3 under the window rule ($1 = late_days), file by file: rows and the
-- digest sum of each cell. Summed per date (wrapping) by the caller.
SELECT business_date, rows, digest FROM bronze.cells
WHERE business_date BETWEEN $2::DATE AND $3::DATE
  AND in_window(upload_date, business_date, $1::INTEGER);

-- name: current_versions
-- Every version of the dates from $1 to $2: the caller keeps each date's newest, the one silver
-- and gold hold now.
SELECT business_date, input_hash, silver_added, gold_added, snapshot_id
FROM audit.snapshot_dates
WHERE action <> 'skip' AND business_date BETWEEN $1::DATE AND $2::DATE;

-- name: silver_insert
-- One row per basket: the copy with the smallest (uploaded_at, event_id), kept as a pointer to its
-- bronze row under the new snapshot's id ($1). Baskets are told apart by basket_key, which
-- landing checks no two basket_ids share; $5 is true in a lab where some do, and basket_id then
-- tells them apart too (partitioning by the key measured 25% faster than by basket_id).
-- $2 = late_days, $3..$4 the first and last changed date (bounds for zone maps), $6 the changed
-- dates (a list; unneeded when they are every date of $3..$4, as in most runs). The version it replaces stays in silver.versions as history. (An arg_min
-- aggregate measured no faster than this window.)
INSERT INTO silver.versions
SELECT $1::BIGINT, business_date, file_id, line, copies::INTEGER
FROM (
    SELECT e.business_date, e.file_id, e.line,
           count(*) OVER baskets AS copies,
           row_number() OVER (baskets ORDER BY e.uploaded_at, e.event_id) AS copy_rank
    FROM bronze.events e
    WHERE in_window(e.upload_date, e.business_date, $2::INTEGER)
      AND e.business_date BETWEEN $3::DATE AND $4::DATE
      AND e.upload_date BETWEEN $3::DATE - 1 AND $4::DATE + $2::INTEGER
      AND ($6::VARCHAR IS NULL OR e.business_date IN (SELECT business_date FROM dates_of($6::VARCHAR)))
    WINDOW baskets AS (PARTITION BY e.basket_key, CASE WHEN $5::BOOLEAN THEN e.basket_id END)
)
WHERE copy_rank = 1
ORDER BY business_date, file_id, line;

-- name: key_collisions
SELECT count(*) FROM bronze.key_collisions;

-- name: gold_insert
-- The changed dates' gold from the silver version snapshot $1 just wrote, as its version of gold
-- (gold.daily_store_sales shows it once the snapshot's dates are recorded); $2..$3 as above.
INSERT INTO audit.gold_history
SELECT $1::BIGINT, e.business_date, e.store_id, e.country, e.currency, count(*), sum(e.revenue_minor)::BIGINT
FROM silver.versions v
JOIN bronze.events e ON e.business_date = v.business_date AND e.file_id = v.file_id AND e.line = v.line
WHERE v.snapshot_id = $1::BIGINT
  AND v.business_date BETWEEN $2::DATE AND $3::DATE
  AND e.business_date BETWEEN $2::DATE AND $3::DATE
GROUP BY e.business_date, e.store_id, e.country, e.currency
ORDER BY e.business_date, e.store_id;

-- name: changed_counts
-- Rows per changed date after the rewrite: silver (snapshot $1's version), then gold. $2..$3 as above.
SELECT w.business_date, coalesce(s.n, 0), coalesce(g.n, 0)
FROM dates_of($4::VARCHAR) w
LEFT JOIN (SELECT business_date, count(*) AS n FROM silver.versions
           WHERE snapshot_id = $1::BIGINT GROUP BY 1) s USING (business_date)
LEFT JOIN (SELECT business_date, count(*) AS n FROM audit.gold_history
           WHERE snapshot_id = $1::BIGINT AND business_date BETWEEN $2::DATE AND $3::DATE GROUP BY 1) g USING (business_date)
ORDER BY 1;
