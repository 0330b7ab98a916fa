-- fingerprint.sql: the contract's gold fingerprint.
-- Reads: gold's versions (audit.gold_history), the snapshots' dates and the recorded hash states.
-- Writes: the hash states (audit.gold_prefix).

-- name: chunks
-- Gold's dates $first..$last as the fingerprint's text, one chunk per business date, as it stood
-- at snapshot $snapshot_id (NULL: now, gold.daily_store_sales): the caller reads gold a slice of
-- dates at a time and hashes the chunks joined by newlines as they come, so no read holds all of
-- gold's text (one string of it outgrew DuckDB's 80 MB at 512 days of history).
SELECT g.business_date, count(*) AS rows,
       string_agg(gold_line(g.business_date, g.store_id, g.country, g.currency, g.baskets, g.revenue_minor),
                  chr(10) ORDER BY g.store_id) AS text
FROM audit.gold_history g
JOIN audit.versions_as_of($snapshot_id::BIGINT) v ON g.snapshot_id = v.snapshot_id AND g.business_date = v.business_date
WHERE g.business_date BETWEEN $first::DATE AND $last::DATE
GROUP BY 1 ORDER BY 1;

-- name: gold_span
-- The first and last date any version of gold has held: the span the chunks are read over.
SELECT min(business_date) AS first, max(business_date) AS last FROM audit.gold_history;

-- name: latest_record
-- The fingerprint the newest record carries: gold as it stands (every write of gold records one).
SELECT gold_rows AS rows, gold_md5 AS md5 FROM audit.snapshots ORDER BY snapshot_id DESC LIMIT 1;

-- name: version_text
-- The fingerprint text of the gold version snapshot $snapshot_id wrote, for each of its dates
-- $dates (a list): a date it emptied gets 0 rows and no text. A process that holds gold's text
-- brings it up to date with these, without reading the rest of gold again.
SELECT d.business_date, count(g.store_id) AS rows,
       string_agg(gold_line(g.business_date, g.store_id, g.country, g.currency, g.baskets, g.revenue_minor),
                  chr(10) ORDER BY g.store_id) AS text
FROM dates_of($dates::VARCHAR) d
LEFT JOIN audit.gold_history g ON g.snapshot_id = $snapshot_id::BIGINT AND g.business_date = d.business_date
GROUP BY 1;

-- name: prefix_before
-- Where hashing gold's text may resume for a write whose first date is $first: the newest
-- recorded state of the last date before $first that holds rows now. It holds only if no write
-- after it rewrote that date or any date before it (then gold's text up to that date is what the
-- state hashed). No row: hash from gold's first date.
WITH p AS (SELECT max(sd.business_date) AS d FROM audit.snapshot_dates sd
           JOIN audit.versions_as_of(NULL::BIGINT) v ON v.business_date = sd.business_date AND v.snapshot_id = sd.snapshot_id
           WHERE sd.business_date < $first::DATE AND sd.gold_added > 0),
     s AS (SELECT g.snapshot_id, g.business_date, g.rows, g.state FROM audit.gold_prefix g JOIN p ON g.business_date = p.d
           ORDER BY g.snapshot_id DESC LIMIT 1)
SELECT s.business_date, s.rows, s.state FROM s
WHERE NOT EXISTS (SELECT 1 FROM audit.snapshot_dates x
                  WHERE x.snapshot_id > s.snapshot_id AND x.business_date <= s.business_date AND x.action <> 'skip');

-- name: forget_prefix
-- The states from date $first on: a write that rewrote $first has made them stale, and records
-- its own. The table keeps at most one state per date.
DELETE FROM audit.gold_prefix WHERE business_date >= $first::DATE;

-- name: carry_prefix
-- A write $snapshot_id that left the text of its dates (from $first on) as it was also leaves the
-- states as they were: the states from $first on that held before it are carried to it, so that
-- prefix_before still finds them. A state held unless a write between the oldest of them and this
-- one rewrote its date or an earlier one (a cautious test: it may drop a state that held, which
-- only costs the next write some hashing).
UPDATE audit.gold_prefix SET snapshot_id = $snapshot_id::BIGINT
WHERE business_date >= $first::DATE
  AND business_date < coalesce(
      (SELECT min(x.business_date) FROM audit.snapshot_dates x
       WHERE x.snapshot_id > (SELECT min(snapshot_id) FROM audit.gold_prefix WHERE business_date >= $first::DATE)
         AND x.snapshot_id < $snapshot_id::BIGINT AND x.action <> 'skip'),
      DATE '9999-12-31');

-- name: keep_prefix
-- The states a write $snapshot_id reached at the end of each of its dates $dates: gold's rows up to
-- each ($rows) and the MD5 state ($states, hex), each list joined with commas, in the same order.
INSERT INTO audit.gold_prefix
SELECT $snapshot_id::BIGINT, unnest(string_split($dates::VARCHAR, ','))::DATE,
       unnest(string_split($rows::VARCHAR, ','))::BIGINT, unhex(unnest(string_split($states::VARCHAR, ',')));
