-- history.sql: the snapshot trail of a business date, and what changed between two versions.
-- Reads: audit.snapshots, audit.snapshot_dates, audit.gold_history, silver.versions,
-- bronze.events. Writes: nothing.

-- name: snapshots
SELECT snapshot_id, parent_id, operation, trigger_kind, trigger_upload, trigger_detail, late_days,
       dates_rewritten, dates_skipped, rows_replaced, rows_added, beyond_window_rows, gold_rows, gold_md5,
       code_version, created_at
FROM audit.snapshots WHERE snapshot_id <= $up_to::BIGINT ORDER BY snapshot_id;

-- name: versions_of_date
-- Every snapshot that rewrote date $business_date, up to snapshot $up_to, oldest first.
SELECT snapshot_id FROM audit.snapshot_dates
WHERE business_date = $business_date::DATE AND action <> 'skip' AND snapshot_id <= $up_to::BIGINT ORDER BY 1;

-- name: gold_versions
-- Per date, version and country: what each pair ($dates[i], $versions[i]) held, the dates and
-- snapshot ids joined with commas: a date's versions (history), or each date a write moved with
-- its versions before and after (the morning summary, once for all its dates: asked per date,
-- it was a third of the summary after a backfill).
WITH p AS (SELECT unnest(string_split($dates, ','))::DATE AS business_date,
                  unnest(string_split($versions, ','))::BIGINT AS snapshot_id)
SELECT g.business_date, g.snapshot_id AS version, g.country, g.currency, sum(g.baskets)::BIGINT AS baskets,
       sum(g.revenue_minor)::BIGINT AS revenue_minor
FROM audit.gold_history g SEMI JOIN p ON g.business_date = p.business_date AND g.snapshot_id = p.snapshot_id
GROUP BY ALL ORDER BY 1, 2, 3;

-- name: diff_baskets
-- Baskets of date $business_date that differ between version $before (may be -1: none) and
-- version $after (the diff_rows macro in schema.sql).
SELECT basket_id, kind, upload_date, file, file_version, country, currency, store_id, event_before, event_after,
       baskets_delta, revenue_delta_minor, copies_discarded_delta
FROM diff_rows($business_date::DATE, [$before::BIGINT], [$after::BIGINT])
ORDER BY country, basket_id;

-- name: diff_parts
-- The same baskets summed per pair, country, kind, upload and file version: what history shows.
-- The pairs: $befores[i] against $afters[i], versions joined with commas (-1: none); each row
-- names its pair by the newer version.
SELECT version, country, kind, upload_date, file, file_version, count(*) AS baskets,
       sum(baskets_delta)::BIGINT AS baskets_delta, sum(revenue_delta_minor)::BIGINT AS revenue_delta_minor,
       sum(copies_discarded_delta)::BIGINT AS copies_discarded_delta
FROM diff_rows($business_date::DATE, string_split($befores, ',')::BIGINT[], string_split($afters, ',')::BIGINT[])
GROUP BY ALL ORDER BY ALL;

-- name: dates_at
-- For evidence: each date's version and gold row count as of snapshot $snapshot_id.
SELECT v.business_date, v.snapshot_id AS version, count(g.store_id) AS gold_rows
FROM audit.versions_as_of($snapshot_id::BIGINT) v
LEFT JOIN audit.gold_history g ON g.snapshot_id = v.snapshot_id AND g.business_date = v.business_date
GROUP BY ALL ORDER BY 1;
