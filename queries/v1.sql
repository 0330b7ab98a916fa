-- v1.sql: the naive job, kept on purpose to show the bug.
-- Reads: bronze.events (upload $2 only). Writes: naive.daily_sales (APPEND, never replaces).

-- name: append
-- $1 snapshot id, $2 run date: events of upload $2 whose business date is $2, counted as events.
INSERT INTO naive.daily_sales
SELECT $1::BIGINT, $2::DATE, business_date, store_id, country, currency, count(*), sum(revenue_minor)::BIGINT
FROM bronze.events
WHERE upload_date = $2::DATE AND business_date = $2::DATE
GROUP BY business_date, store_id, country, currency
ORDER BY store_id;
