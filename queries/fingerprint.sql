-- fingerprint.sql: the contract's gold fingerprint.
-- Reads: gold.daily_store_sales, or audit.gold_history for an as-of snapshot. Writes: nothing.

-- name: current
SELECT count(*) AS rows,
       md5(coalesce(string_agg(gold_line(business_date, store_id, country, currency, baskets, revenue_minor),
                               chr(10) ORDER BY business_date, store_id), '')) AS md5
FROM gold.daily_store_sales;

-- name: as_of
SELECT count(*) AS rows,
       md5(coalesce(string_agg(gold_line(g.business_date, g.store_id, g.country, g.currency, g.baskets, g.revenue_minor),
                               chr(10) ORDER BY g.business_date, g.store_id), '')) AS md5
FROM audit.gold_history g
JOIN audit.versions_as_of($snapshot_id::BIGINT) v ON g.snapshot_id = v.snapshot_id AND g.business_date = v.business_date;

-- name: chunks
-- Gold's dates $first..$last as the fingerprint's text, one chunk per business date: the caller
-- reads gold a slice of dates at a time, joins the chunks with a newline and hashes them (see
-- `current` for the whole).
SELECT business_date, count(*) AS rows,
       string_agg(gold_line(business_date, store_id, country, currency, baskets, revenue_minor),
                  chr(10) ORDER BY store_id) AS text
FROM gold.daily_store_sales
WHERE business_date BETWEEN $first::DATE AND $last::DATE
GROUP BY 1 ORDER BY 1;

-- name: gold_span
-- The first and last date any version of gold has held: the span the chunks are read over.
SELECT min(business_date) AS first, max(business_date) AS last FROM audit.gold_history;

-- name: version_chunks
-- The same chunks for the gold version $snapshot_id wrote, of its dates in $first..$last.
SELECT business_date, count(*) AS rows,
       string_agg(gold_line(business_date, store_id, country, currency, baskets, revenue_minor),
                  chr(10) ORDER BY store_id) AS text
FROM audit.gold_history
WHERE snapshot_id = $snapshot_id::BIGINT AND business_date BETWEEN $first::DATE AND $last::DATE
GROUP BY 1 ORDER BY 1;

-- name: latest_record
-- The fingerprint the newest record carries: gold as it stands (every write of gold records one).
SELECT gold_rows AS rows, gold_md5 AS md5 FROM audit.snapshots ORDER BY snapshot_id DESC LIMIT 1;
