-- recompute.sql: the polars recount's cache, and DuckDB's own recount to cross-check it.
-- Reads: bronze.current_event_rows, bronze.store_rows, recompute.*. Writes:
-- recompute.daily_store_sales, recompute.state (replaced whole when the raw zone's manifest
-- changes).

-- name: state
SELECT manifest FROM recompute.state;

-- name: clear_rows
DELETE FROM recompute.daily_store_sales;

-- name: clear_state
DELETE FROM recompute.state;

-- name: state_insert
INSERT INTO recompute.state VALUES ($manifest, $events, $baskets, $computed_at);

-- define: date_recount
-- THE body of DuckDB's own recount of date $business_date, after a WITH that names `copies` (the
-- date's rows and every copy of the keys it lists; other rows are ignored) and `multi` (the keys
-- of the date sent more than once, @sent_twice): every copy deduplicated by basket over ALL
-- copies (no window), then the winners of the date, per store. Baskets are told apart by
-- basket_key, and by basket_id as well when $key_collisions (the lab lists colliding keys).
-- From the same ranking, beyond_*: the date's winners none of whose copies is inside the window
-- ($late_days), so their revenue is in the recount and not in v2 (`late_rows`' missing_from_v2).
-- A key `multi` does not list has one copy in all of bronze: its row wins alone, and only the
-- listed keys' copies are ranked. The window over every copy of a date was most of the
-- statement, and of the explorer's Overview (docs/performance.md). Should that list miss a key,
-- this recount and v2 would both keep two copies, and polars' recount, which reads the raw files
-- and no list, would disagree with both. Now (`duckdb_date` below) and as of a snapshot
-- (as_of.sql's `duckdb_date`) read it. Summed by store row, then named.
ranked AS (
    SELECT business_date, store_row, revenue_minor, true AS wins,
           in_window(upload_date, business_date, $late_days::INTEGER) AS basket_in_window
    FROM copies
    WHERE business_date = $business_date::DATE AND basket_key NOT IN (SELECT basket_key FROM multi)
    UNION ALL
    SELECT business_date, store_row, revenue_minor,
           row_number() OVER (PARTITION BY basket_key, CASE WHEN $key_collisions::BOOLEAN THEN basket_id END
                              ORDER BY @copy_order) = 1 AS wins,
           bool_or(in_window(upload_date, business_date, $late_days::INTEGER))
               OVER (PARTITION BY basket_key, CASE WHEN $key_collisions::BOOLEAN THEN basket_id END) AS basket_in_window
    FROM copies
    WHERE basket_key IN (SELECT basket_key FROM multi)
)
SELECT s.store_id, s.country, s.currency, r.baskets, r.revenue_minor, r.beyond_baskets, r.beyond_revenue_minor
FROM (SELECT store_row, count(*) AS baskets, sum(revenue_minor)::BIGINT AS revenue_minor,
             count(*) FILTER (WHERE NOT basket_in_window) AS beyond_baskets,
             coalesce(sum(revenue_minor) FILTER (WHERE NOT basket_in_window), 0)::BIGINT AS beyond_revenue_minor
      FROM ranked WHERE wins AND business_date = $business_date::DATE
      GROUP BY store_row) r
JOIN bronze.store_rows s USING (store_row)
ORDER BY s.store_id

-- name: duckdb_date
-- DuckDB's own recount of date $business_date (`date_recount` above) over every landed event:
-- the copies of the date's baskets are copies_of's. polars' recount, which this is compared
-- with, groups the basket_id strings themselves.
WITH copies AS NOT MATERIALIZED (SELECT * FROM copies_of($business_date::DATE)),
multi AS @sent_twice,
@date_recount;
