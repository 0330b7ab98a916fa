-- v2.sql (Spark): the idempotent job, the same rules as queries/v2.sql (DuckDB), written for
-- Spark SQL over Iceberg. One run per upload: the affected dates, an input hash per date, and
-- for the dates whose hash changed a new silver and gold, each written by overwritePartitions()
-- of exactly those dates. Parameters are bound by name (:name).

-- define: changed_dates
-- The dates a statement reads or rewrites, bound as one parameter :dates, ISO dates joined with
-- commas (as dates_of in queries/schema.sql): Spark binds literals only, and an array is none.
-- An empty text is no list (NULL). Written as a cast, which Spark folds into one literal array
-- when it plans the statement: a lambda (transform(..., x -> to_date(x))) is never folded, and
-- parsed every date again for every row (54-63 s against 4.5-5.5 s for the full world's silver
-- of 128 dates, docs/performance.md).
CAST(split(nullif(:dates, ''), ',') AS array<date>)

-- define: window_days
-- The lateness window (the contract's rule): business date d is built from the rows uploaded on
-- d-1 .. d+late. This is the smallest `late` whose window takes a row in: the days from its
-- business date to its upload (-1 for the eve); NULL when it was uploaded before the eve, which no
-- window takes in. Written for a row's own upload_date and business_date, in parentheses: a
-- define is put in as it is written.
(CASE WHEN upload_date >= date_sub(business_date, 1) THEN datediff(upload_date, business_date) END)

-- define: in_window
-- Whether a row is inside the window of :late_days.
(coalesce(@window_days <= :late_days, false))

-- define: window_uploads
-- The uploads the windows of the dates :first..:last take in under :late_days, together: from
-- the eve of the first to the far end of the last (what a statement's partitions are pruned to).
(upload_date BETWEEN date_sub(:first, 1) AND date_add(:last, :late_days))

-- define: past_window
-- Whether a row arrived after the far end of the window of :late_days (a row uploaded before its
-- date's eve came early: it is outside the window, and not past it).
(coalesce(@window_days > :late_days, false))

-- define: copy_order
-- THE order of an entity's copies, for every model, first one wins: the smallest arrival, then
-- event_id; an exact tie (the same message twice) goes to the copy first in the raw zone: upload
-- date, file name (byte order: Spark compares strings by their UTF-8 bytes), line. Every
-- statement that ranks copies writes ORDER BY @copy_order, over rows carrying these names:
-- retail's view `events` (current_events) and a model's records.
arrival_ns, event_id, upload_date, file_name, line

-- define: input_hash
-- A date's input hash over its rows `e` (grouped by date; e.line NULL: none): every row's content
-- (the fields the lab's row digest covers), the window :late_days and the rules' version :rules.
-- As the lab's: the count of the rows and the sum of a 64-bit hash of each (xxhash64 of the
-- fields' values, summed exactly as a decimal, never wrapping), which no order of rows changes.
concat('w', :late_days, ':', :rules, ':', count(e.line), ':', coalesce(sum(CASE WHEN e.line IS NOT NULL THEN @row_content END), 0))

-- define: row_content
-- One row `e`'s content as a 64-bit hash, a decimal: the fields the lab's row digest covers.
CAST(xxhash64(e.upload_date, e.event_id, e.basket_id, e.store_id, e.till_id,
              e.event_ts, e.uploaded_at_ns, e.country, e.currency, e.revenue_minor) AS DECIMAL(38, 0))

-- name: current_events
-- The events of current file versions: the highest version raw_files records of each path, with
-- `current` false for the rows of superseded versions (kept for history). Rows of an unrecorded
-- version (a landing that died before its record) and quarantined lines are not here. The driver
-- caches this as view `events` for a run's statements.
SELECT e.*, e.uploaded_at_ns AS arrival_ns, e.file_version = f.current_version AS current
FROM lake.recount.bronze_events e
JOIN (SELECT upload_date, file_name, max(version) AS current_version FROM lake.recount.raw_files
      GROUP BY upload_date, file_name) f
  ON f.upload_date = e.upload_date AND f.file_name = e.file_name AND e.file_version <= f.current_version
WHERE e.reason IS NULL;

-- name: redelivered
-- The file versions of upload :upload whose rows are exactly the rows of the version before them
-- (a re-delivery: the same rows in other bytes, such as the file compressed again), as the lab's
-- raw.redelivered_versions: as many rows, the same sum of their contents (@row_content), and as
-- many quarantined lines. Such a version is no correction.
WITH v AS (SELECT e.file_name, e.file_version, count(CASE WHEN e.reason IS NULL THEN 1 END) AS rows,
                  count(CASE WHEN e.reason IS NOT NULL THEN 1 END) AS refused,
                  coalesce(sum(CASE WHEN e.reason IS NULL THEN @row_content END), 0) AS content
           FROM lake.recount.bronze_events e WHERE e.upload_date = :upload GROUP BY e.file_name, e.file_version)
SELECT n.file_name, n.file_version FROM v n JOIN v o ON o.file_name = n.file_name AND o.file_version = n.file_version - 1
WHERE n.rows = o.rows AND n.refused = o.refused AND n.content = o.content;

-- name: upload_cells
-- What each upload holds per version (current or not), business date and currency, as
-- queries/v2.sql's upload_cells (whose caller tells `affected` by rules::LatenessWindow):
-- `affected`, the date is one a run of the upload rebuilds (no older
-- than upload - late_days; dates of superseded versions too, so a correction that withdrew a
-- date's rows rebuilds it); `beyond`, the rows never reach silver (older than the window, or dated
-- more than a day after their upload: a till clock in the future); `window_days`, the smallest
-- window that takes the rows in (NULL: none), which a reopened date's kept window is held to.
-- Computed once per state of bronze (runs do not change it): for every upload (:all), or after a landing for the uploads
-- :uploads it wrote; :ulo..:uhi are their first and last (a bound Iceberg prunes partitions by,
-- which array_contains is not).
SELECT upload_date, business_date, currency, current, count(*) AS rows, sum(revenue_minor) AS revenue_minor,
       NOT (@past_window) AS affected, NOT (@in_window) AS beyond,
       @window_days AS window_days
FROM events
WHERE (:all OR array_contains(@uploads, upload_date)) AND upload_date BETWEEN :ulo AND :uhi
GROUP BY upload_date, business_date, currency, current;

-- name: input_hashes
-- One hash per business date over what feeds it under the window (uploads d-1 .. d+late_days,
-- current versions): every row's content (the fields the lab's row digest covers) and the window
-- itself, not the rows' places: a file recompressed, or lines withdrawn around a row, keeps the
-- hash; a date whose rows were all withdrawn (only
-- superseded rows left) gets the hash of nothing. The version number is left out on purpose: the
-- same rows are not a change. Computed once per state of bronze, for every date (:all), or
-- after a landing for the dates of the rows of the uploads :uploads it wrote: no other date's
-- input changed. :lo..:hi bound the uploads read (partition pruning; the window of those dates).
-- :rules is the rules' version (recount's version and a digest of these files and the parser):
-- a changed rule changes every hash, as the lab's code version does.
SELECT d.date AS business_date, count(e.line) AS rows, @input_hash AS input_hash
FROM (SELECT DISTINCT business_date AS date FROM events
      WHERE (:all OR array_contains(@uploads, upload_date)) AND upload_date BETWEEN :ulo AND :uhi) d
LEFT JOIN (SELECT * FROM events WHERE current AND upload_date BETWEEN :lo AND :hi) e
  ON e.business_date = d.date AND @in_window
GROUP BY d.date;

-- name: window_hashes
-- input_hashes for the named dates :dates under the window :late_days: a reopened date's own,
-- which every write of it is built with.
SELECT d.date AS business_date, count(e.line) AS rows, @input_hash AS input_hash
FROM (SELECT explode(@changed_dates) AS date) d
LEFT JOIN (SELECT * FROM events WHERE current AND upload_date BETWEEN :lo AND :hi) e
  ON e.business_date = d.date AND @in_window
GROUP BY d.date;

-- name: reopen_plan
-- What reopening date :d, built under the window :late_days, takes in (as lake::reopen::plan in
-- the lab), per currency: its current rows past the window's far end, the newest upload of
-- them, and the baskets among them with no copy inside the window, each counted at its first
-- copy in @copy_order.
SELECT currency, count_if(late) AS rows, max(CASE WHEN late THEN upload_date END) AS newest,
       count_if(late AND copy_rank = 1 AND NOT basket_inside) AS baskets,
       coalesce(sum(CASE WHEN late AND copy_rank = 1 AND NOT basket_inside THEN revenue_minor END), 0) AS revenue_minor,
       array_sort(collect_set(CASE WHEN late THEN upload_date END)) AS uploads
FROM (
    SELECT *, @past_window AS late,
           row_number() OVER (PARTITION BY basket_id ORDER BY @copy_order) AS copy_rank,
           bool_or(@in_window) OVER (PARTITION BY basket_id) AS basket_inside
    FROM events
    WHERE current AND business_date = :d
)
GROUP BY currency
HAVING count_if(late) > 0;

-- name: silver_rows
-- One row per basket of the changed dates :dates: its first copy in @copy_order among the
-- current rows in the window; :first..:last bound the uploads read (partition pruning).
SELECT business_date, basket_id, store_id, country, currency, revenue_minor, event_id, uploaded_at,
       upload_date, file_name, file_version, line, copies
FROM (
    SELECT e.*, count(*) OVER (PARTITION BY basket_id) AS copies,
           row_number() OVER (PARTITION BY basket_id
                              ORDER BY @copy_order) AS copy_rank
    FROM events e
    WHERE current AND array_contains(@changed_dates, business_date)
      AND @in_window
      AND @window_uploads
)
WHERE copy_rank = 1;

-- name: gold_rows
-- Gold of the changed dates, from the run's silver rows (temp view `silver`, what it commits).
SELECT business_date, store_id, country, currency, count(*) AS baskets, sum(revenue_minor) AS revenue_minor
FROM silver
GROUP BY business_date, store_id, country, currency;

-- name: store_change_dates
-- The business dates a store correction moves, as queries/v2.sql's store_change_dates: those
-- holding store :store_id's events in the file versions its landing re-derived (:files, as
-- upload/name/version joined by commas) or in the versions they replaced (one version before).
SELECT DISTINCT business_date FROM events
WHERE store_id = :store_id
  AND (array_contains(split(:files, ','), concat(upload_date, '/', file_name, '/', file_version))
       OR array_contains(split(:files, ','), concat(upload_date, '/', file_name, '/', file_version + 1)));

-- name: naive_rows
-- v1's rows for run date :run_date: the current events of upload :run_date whose business date is
-- :run_date, per store, counted as events (the lab's v1.sql append).
SELECT CAST(:run_date AS DATE) AS run_date, business_date, store_id, country, currency,
       count(*) AS events, CAST(sum(revenue_minor) AS BIGINT) AS revenue_minor
FROM events
WHERE current AND upload_date = CAST(:run_date AS DATE) AND business_date = CAST(:run_date AS DATE)
GROUP BY business_date, store_id, country, currency;
