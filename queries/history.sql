-- history.sql: the snapshot trail of a business date, and what changed between two versions.
-- Reads: audit.snapshots, audit.snapshot_dates, audit.gold_history, silver.versions,
-- bronze.events. Writes: nothing.

-- name: snapshots
SELECT snapshot_id, parent_id, operation, trigger_kind, trigger_upload, trigger_detail, late_days,
       dates_rewritten, dates_skipped, rows_deleted, rows_added, beyond_window_rows, gold_rows, gold_md5,
       code_version, created_at
FROM audit.snapshots WHERE snapshot_id <= $1::BIGINT ORDER BY snapshot_id;

-- name: versions_of_date
-- Every snapshot that rewrote date $1, up to snapshot $2, oldest first.
SELECT snapshot_id FROM audit.snapshot_dates
WHERE business_date = $1::DATE AND action <> 'skip' AND snapshot_id <= $2::BIGINT ORDER BY 1;

-- name: gold_version
-- Per country: what version $1 of date $2 held.
SELECT country, currency, sum(baskets)::BIGINT, sum(revenue_minor)::BIGINT FROM audit.gold_history
WHERE snapshot_id = $1::BIGINT AND business_date = $2::DATE GROUP BY ALL ORDER BY 1;

-- name: diff_baskets
-- Baskets of date $3 that differ between version $1 (may be -1: none) and version $2 (the
-- diff_rows macro in schema.sql).
SELECT basket_id, kind, upload_date, country, currency, store_id, event_before, event_after,
       baskets_delta, revenue_delta_minor, copies_discarded_delta
FROM diff_rows($1::BIGINT, $2::BIGINT, $3::DATE)
ORDER BY country, basket_id;

-- name: diff_parts
-- The same baskets summed per country, kind and upload: what the history screen shows.
SELECT country, kind, upload_date, count(*), sum(baskets_delta)::BIGINT, sum(revenue_delta_minor)::BIGINT,
       sum(copies_discarded_delta)::BIGINT
FROM diff_rows($1::BIGINT, $2::BIGINT, $3::DATE)
GROUP BY ALL ORDER BY ALL;

-- name: other_dates_at
-- For evidence: each date's version and gold row count as of snapshot $1.
SELECT v.business_date, v.snapshot_id, count(g.store_id)
FROM (SELECT business_date, max(snapshot_id) AS snapshot_id FROM audit.snapshot_dates
      WHERE action <> 'skip' AND snapshot_id <= $1::BIGINT GROUP BY 1) v
LEFT JOIN audit.gold_history g ON g.snapshot_id = v.snapshot_id AND g.business_date = v.business_date
GROUP BY ALL ORDER BY 1;
