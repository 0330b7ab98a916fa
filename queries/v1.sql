-- v1.sql: the naive job, kept on purpose to show the bug.
-- Reads: bronze.current_event_rows (upload $run_date only), bronze.store_rows. Writes:
-- naive.daily_sales (APPEND, never replaces).

-- name: append
-- Snapshot $snapshot_id appends the events of upload $run_date whose business date is
-- $run_date, counted as events (not baskets): summed by store row, then named.
INSERT INTO naive.daily_sales
SELECT $snapshot_id::BIGINT, $run_date::DATE, e.business_date, s.store_id, s.country, s.currency, e.events, e.revenue_minor::BIGINT
FROM (SELECT business_date, store_row, count(*) AS events, sum(revenue_minor) AS revenue_minor FROM bronze.current_event_rows
      WHERE upload_date = $run_date::DATE AND business_date = $run_date::DATE
      GROUP BY business_date, store_row) e
JOIN bronze.store_rows s USING (store_row)
ORDER BY s.store_id;
