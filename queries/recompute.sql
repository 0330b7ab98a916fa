-- recompute.sql: the polars recount's cache, and DuckDB's own recount to cross-check it.
-- Reads: bronze.current_event_rows, bronze.store_rows, recompute.*. Writes:
-- recompute.daily_store_sales, recompute.state (replaced whole when the raw zone's manifest
-- changes) and recompute.duckdb_recount (DuckDB's recount, kept per window until a file lands).

-- name: state
SELECT manifest FROM recompute.state;

-- name: clear_rows
DELETE FROM recompute.daily_store_sales;

-- name: clear_state
DELETE FROM recompute.state;

-- name: state_insert
INSERT INTO recompute.state VALUES ($manifest, $events, $baskets, $computed_at);

-- define: date_recount
-- THE body of DuckDB's own recount, after a WITH that names `copies` (the rows to recount and
-- every copy of the keys `multi` lists) and `multi` (keys sent more than once: @sent_twice for
-- one date): every copy deduplicated by basket over ALL copies (no window), then the winners per
-- business date and store, as the CTE `recounted`. Baskets are told apart by basket_key, and by
-- basket_id as well when $key_collisions (the lab lists colliding keys). From the same ranking,
-- beyond_*: the winners none of whose copies is inside the window ($late_days), so their revenue
-- is in the recount and not in v2 (`late_rows`' missing_from_v2). A key `multi` does not list
-- has one copy in all of bronze: its row wins alone, and only the listed keys' copies are
-- ranked. The window over every copy of a date was most of the statement, and of the explorer's
-- Overview. Should that list miss a key, this recount and v2 would both
-- keep two copies, and polars' recount, which reads the raw files and no list, would disagree
-- with both. One date now (`duckdb_date` below), every date now (`duckdb_recount_fill`) and one
-- date as of a snapshot (as_of.sql's `duckdb_date`) read it, each selecting from `recounted`
-- (a date's filter there reaches the copies' scan). Summed by store row, then named.
ranked AS (
    SELECT business_date, store_row, revenue_minor, true AS wins,
           in_window(upload_date, business_date, $late_days::INTEGER) AS basket_in_window
    FROM copies
    WHERE basket_key NOT IN (SELECT basket_key FROM multi)
    UNION ALL
    SELECT business_date, store_row, revenue_minor,
           row_number() OVER (PARTITION BY basket_key, CASE WHEN $key_collisions::BOOLEAN THEN basket_id END
                              ORDER BY @copy_order) = 1 AS wins,
           bool_or(in_window(upload_date, business_date, $late_days::INTEGER))
               OVER (PARTITION BY basket_key, CASE WHEN $key_collisions::BOOLEAN THEN basket_id END) AS basket_in_window
    FROM copies
    WHERE basket_key IN (SELECT basket_key FROM multi)
),
recounted AS (
    SELECT r.business_date, s.store_id, s.country, s.currency, r.baskets, r.revenue_minor, r.beyond_baskets,
           r.beyond_revenue_minor
    FROM (SELECT business_date, store_row, count(*) AS baskets, sum(revenue_minor)::BIGINT AS revenue_minor,
                 count(*) FILTER (WHERE NOT basket_in_window) AS beyond_baskets,
                 coalesce(sum(revenue_minor) FILTER (WHERE NOT basket_in_window), 0)::BIGINT AS beyond_revenue_minor
          FROM ranked WHERE wins
          GROUP BY business_date, store_row) r
    JOIN bronze.store_rows s USING (store_row))

-- define: recounted_date
-- `recounted`'s rows of date $business_date, by store: what `check` compares, whether counted
-- now (`duckdb_date`) or kept (`duckdb_recount_kept`).
SELECT store_id, country, currency, baskets, revenue_minor, beyond_baskets, beyond_revenue_minor FROM recounted
WHERE business_date = $business_date::DATE ORDER BY store_id

-- name: duckdb_date
-- DuckDB's own recount of date $business_date (`date_recount` above) over every landed event:
-- the copies of the date's baskets are copies_of's. polars' recount, which this is compared
-- with, groups the basket_id strings themselves.
WITH copies AS NOT MATERIALIZED (SELECT * FROM copies_of($business_date::DATE)),
multi AS @sent_twice,
@date_recount
@recounted_date;

-- name: duckdb_recount_state
-- The newest landed file, and whether DuckDB's recount through it for window $late_days is kept
-- (recompute.duckdb_recounted lists it).
SELECT @newest_file AS newest_file,
       EXISTS (SELECT 1 FROM recompute.duckdb_recounted
               WHERE late_days = $late_days::INTEGER AND through_file_id = @newest_file) AS kept;

-- name: duckdb_recount_missing
-- The windows a reader's kept recount should hold and does not hold through the newest landed
-- file, with that file: every window a write of the lab used (audit.snapshots and
-- audit.date_windows: a superset of those its dates are built with now, read without
-- windows_as_of's grouping, which costs more than the question) and the default $late_days a date not built yet
-- is read with.
WITH newest AS (SELECT @newest_file AS newest_file),
windows AS (SELECT late_days FROM audit.snapshots UNION SELECT late_days FROM audit.date_windows
            UNION SELECT $late_days::INTEGER)
SELECT w.late_days::INTEGER AS late_days, n.newest_file FROM windows w, newest n
WHERE NOT EXISTS (SELECT 1 FROM recompute.duckdb_recounted r
                  WHERE r.late_days = w.late_days AND r.through_file_id = n.newest_file)
ORDER BY 1;

-- name: duckdb_recount_clear
-- Forgets the kept recount of window $late_days, and every recount of bronze before file
-- $newest_file.
DELETE FROM recompute.duckdb_recount WHERE late_days = $late_days::INTEGER OR through_file_id <> $newest_file::INTEGER;

-- name: duckdb_recounted_clear
-- The same, in the list of what is kept.
DELETE FROM recompute.duckdb_recounted WHERE late_days = $late_days::INTEGER OR through_file_id <> $newest_file::INTEGER;

-- name: duckdb_recounted_insert
-- The recount of window $late_days through file $newest_file is kept.
INSERT INTO recompute.duckdb_recounted VALUES ($newest_file::INTEGER, $late_days::INTEGER);

-- name: duckdb_recount_forget
-- Forgets every kept recount (the bench measures the first one after a landing).
DELETE FROM recompute.duckdb_recount;

-- name: duckdb_recounted_forget
DELETE FROM recompute.duckdb_recounted;

-- name: duckdb_recount_fill
-- DuckDB's own recount of every business date (`date_recount` over every current row, every key
-- sent more than once ranked), kept for window $late_days through file $newest_file: one pass
-- over bronze, the time of about ten dates' own recounts. In date order, so that a date's read skips the other dates' blocks.
INSERT INTO recompute.duckdb_recount
WITH copies AS NOT MATERIALIZED (SELECT * FROM bronze.current_event_rows),
multi AS (SELECT DISTINCT basket_key FROM bronze.multi_copies),
@date_recount
SELECT $newest_file::INTEGER, $late_days::INTEGER, * FROM recounted ORDER BY business_date, store_id;

-- name: duckdb_recount_kept
-- The kept recount of date $business_date for window $late_days through file $newest_file, read
-- as `duckdb_date` reads its own (`recounted_date`).
WITH recounted AS (SELECT * FROM recompute.duckdb_recount
                   WHERE through_file_id = $newest_file::INTEGER AND late_days = $late_days::INTEGER)
@recounted_date;
