-- v1.sql: the naive job, kept on purpose to show the bug.
-- Reads: bronze.current_events (upload $run_date only). Writes: naive.daily_sales (APPEND, never replaces).

-- name: append
-- Snapshot $snapshot_id appends the events of upload $run_date whose business date is
-- $run_date, counted as events (not baskets).
INSERT INTO naive.daily_sales
SELECT $snapshot_id::BIGINT, $run_date::DATE, business_date, store_id, country, currency, count(*), sum(revenue_minor)::BIGINT
FROM bronze.current_events
WHERE upload_date = $run_date::DATE AND business_date = $run_date::DATE
GROUP BY business_date, store_id, country, currency
ORDER BY store_id;
