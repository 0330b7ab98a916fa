-- reports.sql: the read-only questions users ask of a business date.
-- Reads: bronze.*, silver.baskets, gold.daily_store_sales, naive.daily_sales, recompute.*,
-- audit.*. Writes: nothing, except the lateness histogram's cache (recompute.lateness).

-- name: business_dates
SELECT DISTINCT business_date FROM bronze.current_cells ORDER BY 1;

-- name: v1_by_store
-- Everything the naive job appended for date $business_date up to snapshot $up_to (a retry shows
-- up twice).
SELECT store_id, country, currency, sum(events)::BIGINT AS events, sum(revenue_minor)::BIGINT AS revenue_minor
FROM naive.daily_sales WHERE business_date = $business_date::DATE AND snapshot_id <= $up_to::BIGINT
GROUP BY ALL ORDER BY store_id;

-- name: v1_runs
SELECT count(DISTINCT snapshot_id) AS runs FROM audit.snapshots
WHERE operation = 'append' AND trigger_upload = $business_date::DATE AND snapshot_id <= $up_to::BIGINT;

-- name: gold_by_store
-- Gold of date $business_date as of snapshot $up_to (NULL: now), per store.
SELECT g.store_id, g.country, g.currency, g.baskets, g.revenue_minor
FROM audit.gold_history g
JOIN audit.versions_as_of($up_to::BIGINT) v ON v.business_date = g.business_date AND v.snapshot_id = g.snapshot_id
WHERE g.business_date = $business_date::DATE
ORDER BY g.store_id;

-- name: recompute_by_store
SELECT store_id, country, currency, baskets, revenue_minor
FROM recompute.daily_store_sales WHERE business_date = $business_date::DATE ORDER BY store_id;

-- name: explain_baskets
-- Per basket dated $business_date (its winning copy over all landed events) that one v1 run gets
-- wrong: no copy in the upload of that date (missed) or more than one (double counted). How many
-- copies landed in that upload, the revenue of the first of them, and the winner's revenue.
-- Only the keys sent more than once (`sent_twice` in schema.sql) are ranked: any other basket
-- has one copy, which wins, and v1 gets it wrong only when it landed in another day's upload
-- (missed). The copies are read from bronze once and kept (MATERIALIZED), and the run's own
-- copies are taken from them: with the copies inlined into each reader and the run's read from
-- bronze apart, the statement took a fifth longer.
WITH copies AS MATERIALIZED (SELECT * FROM copies_of($business_date::DATE)),
multi AS @sent_twice,
ranked AS (
    SELECT e.*, row_number() OVER (PARTITION BY basket_id ORDER BY @copy_order) AS copy_rank
    FROM copies e WHERE basket_key IN (SELECT basket_key FROM multi)
),
winners AS (SELECT * FROM ranked WHERE copy_rank = 1 AND business_date = $business_date::DATE),
in_run AS (
    SELECT basket_id, count(*) AS copies_in_run, sum(revenue_minor)::BIGINT AS revenue_in_run,
           sum(CASE WHEN copy_rank = 1 THEN revenue_minor ELSE 0 END)::BIGINT AS first_in_run
    FROM (SELECT basket_id, revenue_minor,
                 row_number() OVER (PARTITION BY basket_id ORDER BY @copy_order) AS copy_rank
          FROM copies
          WHERE upload_date = $business_date::DATE AND business_date = $business_date::DATE
            AND basket_key IN (SELECT basket_key FROM multi))
    GROUP BY basket_id
),
wrong AS (
    SELECT w.store_row, w.basket_id, w.revenue_minor AS winner_revenue_minor,
           w.upload_date AS winner_upload, coalesce(r.copies_in_run, 0) AS copies_in_run,
           coalesce(r.revenue_in_run, 0) AS revenue_in_run, coalesce(r.first_in_run, 0) AS first_in_run
    FROM winners w LEFT JOIN in_run r USING (basket_id)
    WHERE coalesce(r.copies_in_run, 0) <> 1
    UNION ALL
    SELECT store_row, basket_id, revenue_minor, upload_date, 0, 0, 0
    FROM copies
    WHERE business_date = $business_date::DATE AND upload_date <> $business_date::DATE
      AND basket_key NOT IN (SELECT basket_key FROM multi)
)
SELECT s.country, s.currency, w.basket_id, s.store_id, w.winner_revenue_minor, w.winner_upload, w.copies_in_run,
       w.revenue_in_run, w.first_in_run
FROM wrong w JOIN bronze.store_rows s USING (store_row)
ORDER BY s.country, w.basket_id;

-- name: model_explain_entities
-- The same of a model lab: each key dated $business_date (its first copy over every current
-- record, as the recount counts it) that one v1 run gets wrong: no copy in upload $business_date
-- (missed) or more than one (double counted); with its winner's upload and measures, its copies
-- in the run, their measures' sums (r1-r6) and the first copy's (f1-f6). Only keys with more than
-- one copy are ranked: a key with one has it as its winner, and v1 gets it wrong only when it
-- landed in another day's upload (missed), as retail's explain_baskets.
WITH keys AS (SELECT DISTINCT entity_key FROM model.current_records WHERE business_date = $business_date::DATE),
copies AS MATERIALIZED (SELECT * FROM model.current_records WHERE entity_key IN (SELECT entity_key FROM keys)),
multi AS (SELECT entity_key FROM copies GROUP BY entity_key HAVING count(*) > 1),
ranked AS MATERIALIZED (SELECT * FROM copies WHERE entity_key IN (SELECT entity_key FROM multi)),
winners AS (SELECT * FROM ranked QUALIFY row_number() OVER (PARTITION BY entity_key ORDER BY @copy_order) = 1),
run AS (SELECT *, row_number() OVER (PARTITION BY entity_key ORDER BY @copy_order) AS copy_rank FROM ranked
        WHERE upload_date = $business_date::DATE AND business_date = $business_date::DATE),
in_run AS (SELECT entity_key, count(*) AS copies_in_run,
                  sum(m1)::BIGINT AS r1, sum(m2)::BIGINT AS r2, sum(m3)::BIGINT AS r3, sum(m4)::BIGINT AS r4, sum(m5)::BIGINT AS r5, sum(m6)::BIGINT AS r6,
                  sum(m1) FILTER (WHERE copy_rank = 1)::BIGINT AS f1, sum(m2) FILTER (WHERE copy_rank = 1)::BIGINT AS f2, sum(m3) FILTER (WHERE copy_rank = 1)::BIGINT AS f3, sum(m4) FILTER (WHERE copy_rank = 1)::BIGINT AS f4, sum(m5) FILTER (WHERE copy_rank = 1)::BIGINT AS f5, sum(m6) FILTER (WHERE copy_rank = 1)::BIGINT AS f6
           FROM run GROUP BY entity_key)
SELECT w.entity_key, w.g1, w.g2, w.g3, w.g4, w.a1, w.a2, w.a3, w.a4, w.upload_date AS winner_upload,
       w.m1, w.m2, w.m3, w.m4, w.m5, w.m6, coalesce(r.copies_in_run, 0)::BIGINT AS copies_in_run,
       r.r1, r.r2, r.r3, r.r4, r.r5, r.r6, r.f1, r.f2, r.f3, r.f4, r.f5, r.f6
FROM winners w LEFT JOIN in_run r USING (entity_key)
WHERE w.business_date = $business_date::DATE AND coalesce(r.copies_in_run, 0) <> 1
UNION ALL
SELECT entity_key, g1, g2, g3, g4, a1, a2, a3, a4, upload_date, m1, m2, m3, m4, m5, m6, 0,
       NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::BIGINT
FROM copies
WHERE business_date = $business_date::DATE AND upload_date <> $business_date::DATE
  AND entity_key NOT IN (SELECT entity_key FROM multi)
ORDER BY a1, a2, a3, a4, entity_key;

-- name: model_version_changes
-- The keys whose winner differs between silver's versions $from (NULL: none, before the date's
-- first) and $to of $business_date: added, withdrawn, or another copy (file, upload, line) or
-- other measures; by key, the first $limit of them, each row with how many there are in all.
-- The two versions are diffed here, not in memory: a date of a million keys whose few changed
-- sends back the few.
WITH w AS (
    SELECT s.snapshot_id, r.entity_key, f.file, f.upload_date, f.version, s.line, r.m1, r.m2, r.m3, r.m4, r.m5, r.m6
    FROM model.silver_history s JOIN model.records r USING (file_id, line) JOIN model.files f USING (file_id)
    -- The records' own date too: the row groups of other dates' uploads are skipped unread.
    WHERE s.business_date = $business_date::DATE AND r.business_date = $business_date::DATE
      AND (s.snapshot_id = $to::BIGINT OR s.snapshot_id = $from::BIGINT)),
b AS (SELECT * FROM w WHERE snapshot_id = $from::BIGINT),
a AS (SELECT * FROM w WHERE snapshot_id = $to::BIGINT),
c AS (
    SELECT coalesce(a.entity_key, b.entity_key) AS entity_key,
           b.file AS file_before, b.upload_date AS upload_before, b.version AS version_before,
           a.file AS file_after, a.upload_date AS upload_after, a.version AS version_after,
           b.m1 AS b1, b.m2 AS b2, b.m3 AS b3, b.m4 AS b4, b.m5 AS b5, b.m6 AS b6,
           a.m1 AS a1, a.m2 AS a2, a.m3 AS a3, a.m4 AS a4, a.m5 AS a5, a.m6 AS a6
    FROM a FULL JOIN b ON a.entity_key = b.entity_key
    WHERE a.entity_key IS NULL OR b.entity_key IS NULL
       OR a.file <> b.file OR a.upload_date <> b.upload_date OR a.line <> b.line
       OR a.m1 IS DISTINCT FROM b.m1 OR a.m2 IS DISTINCT FROM b.m2 OR a.m3 IS DISTINCT FROM b.m3
       OR a.m4 IS DISTINCT FROM b.m4 OR a.m5 IS DISTINCT FROM b.m5 OR a.m6 IS DISTINCT FROM b.m6)
SELECT *, count(*) OVER () AS total FROM c ORDER BY entity_key LIMIT $limit::BIGINT;

-- name: model_v1_once
-- What ONE naive run for date $business_date counts on a model lab, per value of the attributes:
-- every record of upload $business_date dated $business_date, each copy counted.
SELECT a1, a2, a3, a4,
       sum(m1)::BIGINT AS m1, sum(m2)::BIGINT AS m2, sum(m3)::BIGINT AS m3, sum(m4)::BIGINT AS m4, sum(m5)::BIGINT AS m5, sum(m6)::BIGINT AS m6
FROM model.current_records
WHERE upload_date = $business_date::DATE AND business_date = $business_date::DATE
GROUP BY ALL ORDER BY a1, a2, a3, a4;

-- name: v1_once_by_country
-- What ONE naive run for date $business_date counts, straight from bronze: summed by store row,
-- then by country.
SELECT s.country, s.currency, sum(e.events)::BIGINT AS events, sum(e.revenue_minor)::BIGINT AS revenue_minor
FROM (SELECT store_row, count(*) AS events, sum(revenue_minor) AS revenue_minor FROM bronze.current_event_rows
      WHERE upload_date = $business_date::DATE AND business_date = $business_date::DATE GROUP BY store_row) e
JOIN bronze.store_rows s USING (store_row)
GROUP BY s.country, s.currency ORDER BY 1;

-- name: lateness_state
-- The newest landed file, and the newest the cached histogram counts.
SELECT @newest_file AS newest_file,
       (SELECT coalesce(max(through_file_id), -1) FROM recompute.lateness) AS counted_file;

-- name: lateness_clear
DELETE FROM recompute.lateness;

-- name: lateness_fill
-- Upload date minus business date, in events and distinct baskets: over every country (country
-- NULL) and per country, in one pass over bronze, through file $newest_file. Baskets are told
-- apart by basket_key (8 bytes, not the id's text: within the lab's memory limit on the full
-- world), which landing checks no two basket_ids share; lateness_fill_by_id is for a lab where
-- some do.
INSERT INTO recompute.lateness
SELECT $newest_file::INTEGER, country, days, count(*), count(DISTINCT basket_key)
FROM (SELECT country, (upload_date - business_date)::BIGINT AS days, basket_key FROM bronze.current_events)
GROUP BY GROUPING SETS ((days), (country, days));

-- name: lateness_fill_by_id
-- lateness_fill, for a lab where two basket_ids share a key: baskets told apart by their ids.
INSERT INTO recompute.lateness
SELECT $newest_file::INTEGER, country, days, count(*), count(DISTINCT basket_id)
FROM (SELECT country, (upload_date - business_date)::BIGINT AS days, basket_id FROM bronze.current_events)
GROUP BY GROUPING SETS ((days), (country, days));

-- name: lateness
-- $by_country: the buckets per country, else over every country.
SELECT country, days, events, baskets AS keys FROM recompute.lateness
WHERE (country IS NOT NULL) = $by_country::BOOLEAN ORDER BY country, days;

-- name: late_dates
-- Business dates with rows outside the window, from the per-file cells.
SELECT DISTINCT business_date FROM bronze.current_cells
WHERE NOT in_window(upload_date, business_date, $late_days::INTEGER) ORDER BY 1;

-- name: model_late_dates
-- The same of a model lab: its dates with a current record past the window (a reopened date's
-- wider window is applied by each date's `late_rows` in model.sql).
SELECT DISTINCT business_date FROM model.current_records
WHERE NOT in_window(upload_date, business_date, $late_days::INTEGER) ORDER BY 1;

-- name: late_rows
-- Rows outside the window for business date $business_date.
-- missing_from_v2: the basket (every copy of it carries its basket's flag) has no copy inside the
-- window, so it is in the recompute and not in v2. recompute_copy: this row is the copy the
-- recompute counts (its basket's smallest (uploaded_at, event_id)); a basket's revenue is its
-- missing_from_v2 AND recompute_copy row's.
WITH flagged AS MATERIALIZED (  -- read once, not once per reference
    SELECT e.*, s.store_id, s.country, s.currency, in_window(upload_date, business_date, $late_days::INTEGER) AS in_window
    FROM copies_of($business_date::DATE) e JOIN bronze.store_rows s USING (store_row)
),
ranked AS (
    SELECT *, row_number() OVER (PARTITION BY basket_id ORDER BY @copy_order) = 1 AS wins,
           bool_or(in_window) OVER (PARTITION BY basket_id) AS basket_in_window
    FROM flagged
    WHERE basket_id IN (SELECT basket_id FROM flagged WHERE NOT in_window AND business_date = $business_date::DATE)
)
SELECT r.business_date, r.upload_date, (r.upload_date - r.business_date)::BIGINT AS days_late, r.event_id,
       r.basket_id, r.store_id, r.country, r.currency, r.revenue_minor, r.file, r.line::BIGINT AS line,
       NOT r.basket_in_window AS missing_from_v2, r.wins AS recompute_copy
FROM ranked r
WHERE NOT r.in_window AND r.business_date = $business_date::DATE
ORDER BY r.upload_date, r.file, r.line;  -- the raw zone's order, as a model lab's late_rows

-- name: quarantine_rows
-- The quarantined lines of current file versions (a superseded version's stay for history).
SELECT upload_date, file, line::BIGINT AS line, reason, raw_line FROM bronze.quarantine
WHERE ($upload_date::DATE IS NULL OR upload_date = $upload_date::DATE)
  AND file_id NOT IN (SELECT file_id FROM raw.supersessions)
ORDER BY upload_date, file, line;

-- name: quarantined_lines
-- How many lines landings refused in current file versions (of upload $upload_date; NULL: all):
-- every one, where quarantine_rows keeps a file's first thousand and a row that counts the rest.
SELECT coalesce(sum(quarantined), 0)::BIGINT AS lines FROM raw.files
WHERE ($upload_date::DATE IS NULL OR upload_date = $upload_date::DATE)
  AND file_id NOT IN (SELECT file_id FROM raw.supersessions);

-- name: date_summaries
-- Per business date, country and currency: v1 (all appends), v2 gold and the recompute, for the
-- navigator's disagreement marks and the trend, and the window the date was last built with
-- (NULL: never). The recompute holds every date of a landed event; v1 and v2 can add none.
-- beyond_*: the baskets the rules keep out of v2 (every copy outside the date's window, as
-- `check` counts them), from DuckDB's recount kept through the newest file for that window
-- (`reports::freshen` keeps the default's; $late_days is the default, for a date never built).
-- A date whose window's recount is not kept shows none, and its difference stays unexplained.
WITH v1 AS (SELECT business_date, country, currency, sum(revenue_minor) AS rev FROM naive.daily_sales GROUP BY ALL),
v2 AS (SELECT business_date, country, currency, sum(baskets) AS b, sum(revenue_minor) AS rev FROM gold.daily_store_sales GROUP BY ALL),
rc AS (SELECT business_date, country, currency, sum(baskets) AS b, sum(revenue_minor) AS rev FROM recompute.daily_store_sales GROUP BY ALL),
windows AS (SELECT * FROM windows_as_of(NULL)),
bw AS (SELECT r.business_date, r.country, r.currency, sum(r.beyond_baskets) AS b, sum(r.beyond_revenue_minor) AS rev
       FROM recompute.duckdb_recount r LEFT JOIN windows w USING (business_date)
       WHERE r.through_file_id = @newest_file AND r.late_days = coalesce(w.late_days, $late_days::INTEGER)
       GROUP BY ALL),
keys AS (SELECT business_date, country, currency FROM rc UNION SELECT business_date, country, currency FROM v1
         UNION SELECT business_date, country, currency FROM v2)
SELECT k.business_date, k.country, k.currency, v1.rev IS NOT NULL AS v1_ran, coalesce(v1.rev, 0)::BIGINT AS v1_revenue_minor,
       coalesce(v2.b, 0)::BIGINT AS v2_baskets, coalesce(v2.rev, 0)::BIGINT AS v2_revenue_minor,
       coalesce(rc.b, 0)::BIGINT AS recompute_baskets, coalesce(rc.rev, 0)::BIGINT AS recompute_revenue_minor,
       coalesce(bw.b, 0)::BIGINT AS beyond_baskets, coalesce(bw.rev, 0)::BIGINT AS beyond_revenue_minor,
       w.late_days
FROM keys k
LEFT JOIN v1 USING (business_date, country, currency)
LEFT JOIN v2 USING (business_date, country, currency)
LEFT JOIN rc USING (business_date, country, currency)
LEFT JOIN bw USING (business_date, country, currency)
LEFT JOIN windows w USING (business_date)
ORDER BY 1, 2, 3;

-- name: basket_copies
-- Every copy of every basket of date $business_date that was sent more than once: only the keys
-- sent more than once (`sent_twice` in schema.sql) can be; a superseded copy does not count.
WITH copies AS (SELECT * FROM copies_of($business_date::DATE) WHERE basket_key IN @sent_twice),
multi AS (SELECT basket_id FROM copies GROUP BY basket_id HAVING count(*) > 1)
SELECT e.basket_id, s.store_id, s.country, s.currency, e.event_id, e.business_date, e.upload_date,
       strftime(e.uploaded_at::TIMESTAMP, '%Y-%m-%dT%H:%M:%S.%fZ') AS uploaded_at,
       e.revenue_minor, in_window(e.upload_date, e.business_date, $late_days::INTEGER) AS in_window,
       count(*) OVER (PARTITION BY e.basket_id, e.uploaded_at) AS same_instant,
       count(*) OVER (PARTITION BY e.basket_id, e.uploaded_at, e.event_id) AS same_message, e.file, e.line::BIGINT AS line
FROM copies e JOIN multi USING (basket_id) JOIN bronze.store_rows s USING (store_row)
ORDER BY s.country, e.basket_id, @copy_order;

-- name: completeness
-- Baskets of date $business_date landed (any upload, current file versions): how many silver
-- holds, and how many of the rest have every copy outside the window. Silver's rows are counted
-- against the landed baskets, never beside them: a silver row whose basket no current file holds
-- (a version a rollback restored, built before a correction withdrew it) is `silver_not_landed`,
-- not a landed basket accounted for, so the figure never says more than landed.
WITH landed AS (
    SELECT basket_id, bool_or(in_window(upload_date, business_date, $late_days::INTEGER)) AS in_window
    FROM bronze.current_event_rows WHERE business_date = $business_date::DATE GROUP BY basket_id),
silver AS (SELECT DISTINCT basket_id FROM silver.baskets WHERE business_date = $business_date::DATE)
SELECT (SELECT count(*) FROM landed) AS landed,
       (SELECT count(*) FROM silver.baskets WHERE business_date = $business_date::DATE) AS silver_rows,
       (SELECT count(*) FROM silver) AS silver_baskets,
       (SELECT count(*) FROM landed SEMI JOIN silver USING (basket_id)) AS silver_landed,
       (SELECT count(*) FROM silver ANTI JOIN landed USING (basket_id)) AS silver_not_landed,
       (SELECT count(*) FROM landed ANTI JOIN silver USING (basket_id) WHERE NOT in_window) AS beyond;

-- name: model_completeness
-- The same of a model lab's date: its keys landed in the current files, and its silver (the
-- winners of its current version) counted against them.
WITH landed AS (
    SELECT entity_key AS k, bool_or(in_window(upload_date, business_date, $late_days::INTEGER)) AS in_window
    FROM model.current_records WHERE business_date = $business_date::DATE GROUP BY entity_key),
winners AS (
    SELECT r.entity_key AS k
    FROM model.silver_history s JOIN model.versions_as_of(NULL) v USING (business_date, snapshot_id)
    JOIN model.records r USING (file_id, line) WHERE s.business_date = $business_date::DATE),
silver AS (SELECT DISTINCT k FROM winners)
SELECT (SELECT count(*) FROM landed) AS landed,
       (SELECT count(*) FROM winners) AS silver_rows,
       (SELECT count(*) FROM silver) AS silver_baskets,
       (SELECT count(*) FROM landed SEMI JOIN silver USING (k)) AS silver_landed,
       (SELECT count(*) FROM silver ANTI JOIN landed USING (k)) AS silver_not_landed,
       (SELECT count(*) FROM landed ANTI JOIN silver USING (k) WHERE NOT in_window) AS beyond;

-- name: model_gold_against_silver
-- A model lab's date: how many of gold's rows differ from its silver winners summed per grain
-- and attributes (both current), as store_sums_vs_silver holds retail's gold to its silver.
WITH s AS (
    SELECT r.g1, r.g2, r.g3, r.g4, r.a1, r.a2, r.a3, r.a4, sum(r.m1)::BIGINT AS m1, sum(r.m2)::BIGINT AS m2,
           sum(r.m3)::BIGINT AS m3, sum(r.m4)::BIGINT AS m4, sum(r.m5)::BIGINT AS m5, sum(r.m6)::BIGINT AS m6
    FROM model.silver_history h JOIN model.versions_as_of(NULL) v USING (business_date, snapshot_id)
    JOIN model.records r USING (file_id, line) WHERE h.business_date = $business_date::DATE
    GROUP BY ALL),
g AS (SELECT g1, g2, g3, g4, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6 FROM model.gold WHERE business_date = $business_date::DATE)
SELECT count(*)::BIGINT AS rows FROM ((SELECT * FROM s EXCEPT ALL SELECT * FROM g) UNION ALL (SELECT * FROM g EXCEPT ALL SELECT * FROM s));

-- name: store_sums_vs_silver
-- Gold's store rows summed per country, against silver counted per country, for date $business_date.
SELECT coalesce(g.country, s.country) AS country, coalesce(g.b, 0)::BIGINT AS gold_baskets,
       coalesce(g.rev, 0)::BIGINT AS gold_revenue_minor, coalesce(s.b, 0)::BIGINT AS silver_baskets,
       coalesce(s.rev, 0)::BIGINT AS silver_revenue_minor
FROM (SELECT country, sum(baskets) AS b, sum(revenue_minor) AS rev FROM gold.daily_store_sales WHERE business_date = $business_date::DATE GROUP BY 1) g
FULL OUTER JOIN (SELECT country, count(*) AS b, sum(revenue_minor) AS rev FROM silver.baskets WHERE business_date = $business_date::DATE GROUP BY 1) s
  ON g.country = s.country
ORDER BY 1;

-- name: rows_held
-- Silver and gold rows date $business_date holds now.
SELECT (SELECT count(*) FROM silver.baskets WHERE business_date = $business_date::DATE) AS silver_rows,
       (SELECT count(*) FROM gold.daily_store_sales WHERE business_date = $business_date::DATE) AS gold_rows;

-- name: copies_counted
-- Date $business_date as a job without dedup sums it: every current copy dated that date that
-- arrived within window $late_days, each counted as a basket (`audit`'s duplicates_counted).
SELECT store_id, country, currency, count(*)::BIGINT AS baskets, sum(revenue_minor)::BIGINT AS revenue_minor
FROM bronze.current_events
WHERE business_date = $business_date::DATE AND in_window(upload_date, business_date, $late_days::INTEGER)
GROUP BY store_id, country, currency
ORDER BY store_id;

-- name: windowed
-- Date $business_date as v2 builds it with window $late_days (`audit`'s late_arrivals_missed, for
-- a job with a narrower window than the lab's): each basket's first copy in the contract's order
-- among every copy of it that its own date's window sees, counted on that copy's date, as v2 and a
-- model's windowed alternative count it. A basket whose first copy is dated another day is not
-- the date's.
WITH winners AS (
    SELECT * FROM copies_of($business_date::DATE)
    WHERE in_window(upload_date, business_date, $late_days::INTEGER)
    QUALIFY row_number() OVER (PARTITION BY basket_id ORDER BY @copy_order) = 1)
SELECT s.store_id, s.country, s.currency, count(*)::BIGINT AS baskets, sum(w.revenue_minor)::BIGINT AS revenue_minor
FROM winners w JOIN bronze.store_rows s USING (store_row)
WHERE w.business_date = $business_date::DATE
GROUP BY s.store_id, s.country, s.currency
ORDER BY s.store_id;

-- name: utc_dated
-- Date $business_date as a job that takes each event's date in UTC instead of its store's zone
-- builds it (`audit`'s utc_business_date), as a model's utc_dated does: each basket with a copy
-- of that UTC date, its first copy in the contract's order among every copy inside the window
-- ($late_days) of its own UTC date, counted on that copy's UTC date. A UTC date is within a day
-- of the business date, so the baskets are among three dates' copies, with their split baskets'
-- copies on other dates (as copies_of finds them for one date).
WITH near AS (SELECT * FROM bronze.split_baskets WHERE business_date BETWEEN $business_date::DATE - 1 AND $business_date::DATE + 1),
c AS (
    SELECT *, CAST(event_ts AS DATE) AS utc_date FROM bronze.current_event_rows
    WHERE business_date BETWEEN $business_date::DATE - 1 AND $business_date::DATE + 1
    UNION ALL
    SELECT *, CAST(event_ts AS DATE) AS utc_date FROM bronze.current_event_rows
    WHERE business_date NOT BETWEEN $business_date::DATE - 1 AND $business_date::DATE + 1
      AND business_date IN (SELECT o.business_date FROM near JOIN bronze.split_baskets o USING (basket_id))
      AND basket_id IN (SELECT basket_id FROM near)),
winners AS (
    SELECT * FROM c
    WHERE in_window(upload_date, utc_date, $late_days::INTEGER)
      AND basket_id IN (SELECT basket_id FROM c WHERE utc_date = $business_date::DATE)
    QUALIFY row_number() OVER (PARTITION BY basket_id ORDER BY @copy_order) = 1)
SELECT s.store_id, s.country, s.currency, count(*)::BIGINT AS baskets, sum(w.revenue_minor)::BIGINT AS revenue_minor
FROM winners w JOIN bronze.store_rows s USING (store_row)
WHERE w.utc_date = $business_date::DATE
GROUP BY s.store_id, s.country, s.currency
ORDER BY s.store_id;
