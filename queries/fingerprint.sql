-- fingerprint.sql: the contract's gold fingerprint.
-- Reads: gold.daily_store_sales, or audit.gold_history for an as-of snapshot. Writes: nothing.

-- name: current
SELECT count(*),
       md5(coalesce(string_agg(gold_line(business_date, store_id, country, currency, baskets, revenue_minor),
                               chr(10) ORDER BY business_date, store_id), ''))
FROM gold.daily_store_sales;

-- name: as_of
SELECT count(*),
       md5(coalesce(string_agg(gold_line(g.business_date, g.store_id, g.country, g.currency, g.baskets, g.revenue_minor),
                               chr(10) ORDER BY g.business_date, g.store_id), ''))
FROM audit.gold_history g
JOIN (SELECT business_date, max(snapshot_id) AS snapshot_id FROM audit.snapshot_dates
      WHERE action <> 'skip' AND snapshot_id <= $1::BIGINT GROUP BY 1) v
  ON g.snapshot_id = v.snapshot_id AND g.business_date = v.business_date;

-- name: chunks
-- Gold as the fingerprint's text, one chunk per business date: the caller joins the chunks with
-- a newline and hashes them (see `current` for the whole).
SELECT business_date, count(*),
       string_agg(gold_line(business_date, store_id, country, currency, baskets, revenue_minor),
                  chr(10) ORDER BY store_id)
FROM gold.daily_store_sales
GROUP BY 1 ORDER BY 1;

-- name: version_chunks
-- The same chunks for the gold version snapshot $1 wrote, of its dates in $2..$3.
SELECT business_date, count(*),
       string_agg(gold_line(business_date, store_id, country, currency, baskets, revenue_minor),
                  chr(10) ORDER BY store_id)
FROM audit.gold_history
WHERE snapshot_id = $1::BIGINT AND business_date BETWEEN $2::DATE AND $3::DATE
GROUP BY 1 ORDER BY 1;

-- name: latest_record
-- The fingerprint the newest record carries: gold as it stands (every write of gold records one).
SELECT gold_rows, gold_md5 FROM audit.snapshots ORDER BY snapshot_id DESC LIMIT 1;
