-- model.sql (Spark): a model other than retail (docs/data-contract.md, "Models"), the same rules
-- as queries/model.sql (DuckDB) over Iceberg tables. Bronze keeps a model's grain, attributes and
-- measures in fixed columns (g1..g4, a1..a4, m1..m6); the gold table takes the model's own
-- column names from the driver (model_warehouse.py), which renames the columns of `gold_rows`.

-- name: schema_files
CREATE TABLE IF NOT EXISTS lake.recount.model_files (
    upload_date DATE, file_name STRING, version INT, md5 STRING, records BIGINT, quarantined BIGINT) USING iceberg

-- name: schema_records
CREATE TABLE IF NOT EXISTS lake.recount.model_records (
    upload_date DATE, file_name STRING, version INT, line INT, entity_key STRING, event_id STRING, arrival_ns BIGINT,
    business_date DATE, g1 STRING, g2 STRING, g3 STRING, g4 STRING, a1 STRING, a2 STRING, a3 STRING, a4 STRING,
    m1 BIGINT, m2 BIGINT, m3 BIGINT, m4 BIGINT, m5 BIGINT, m6 BIGINT, event_ns BIGINT) USING iceberg PARTITIONED BY (upload_date)

-- name: records_event_time
-- A warehouse whose bronze was made before it kept each record's event time gains the column
-- (its older rows NULL, which a mirror refuses: run those uploads into a new warehouse).
ALTER TABLE lake.recount.model_records ADD COLUMNS (event_ns BIGINT)

-- name: schema_dimension
CREATE TABLE IF NOT EXISTS lake.recount.model_dimension (version INT, md5 STRING, text STRING) USING iceberg

-- name: schema_definition
CREATE TABLE IF NOT EXISTS lake.recount.model_definition (name STRING, parts STRING) USING iceberg

-- name: schema_skipped
CREATE TABLE IF NOT EXISTS lake.recount.model_skipped_runs (upload DATE, dates STRING, at TIMESTAMP) USING iceberg

-- name: schema_naive
CREATE TABLE IF NOT EXISTS lake.recount.model_naive (
    run_date DATE, business_date DATE, g1 STRING, g2 STRING, g3 STRING, g4 STRING, a1 STRING, a2 STRING, a3 STRING,
    a4 STRING, m1 BIGINT, m2 BIGINT, m3 BIGINT, m4 BIGINT, m5 BIGINT, m6 BIGINT) USING iceberg

-- define: model_current
-- The current version's records of every landed file.
(SELECT r.* FROM lake.recount.model_records r
 JOIN (SELECT upload_date, file_name, max(version) AS version FROM lake.recount.model_files GROUP BY upload_date, file_name) c
   ON r.upload_date = c.upload_date AND r.file_name = c.file_name AND r.version = c.version)

-- define: model_visible
-- The copies a v2 write sees: current records, each inside its own date's window: the run's
-- (:late_days), or the wider one a reopening gave the date (the view model_kept, which the
-- driver makes from gold's lineage before every statement that reads this).
(SELECT c.* FROM @model_current c LEFT JOIN model_kept k ON c.business_date = k.kept_date
 WHERE coalesce(@window_days <= greatest(:late_days, coalesce(k.kept_days, 0)), false))

-- name: measure_totals
-- The current copies of :dates, each measure summed as absolute values (exact as DECIMAL(38,0),
-- past 64 bits) per date, grain and file: the driver adds a landing's new copies and refuses a
-- total that would leave 64 bits (model_warehouse.past_limit), as the lab's landing does.
SELECT business_date, g1, g2, g3, g4, upload_date, file_name,
       sum(abs(CAST(m1 AS DECIMAL(38,0)))) AS t1, sum(abs(CAST(m2 AS DECIMAL(38,0)))) AS t2,
       sum(abs(CAST(m3 AS DECIMAL(38,0)))) AS t3, sum(abs(CAST(m4 AS DECIMAL(38,0)))) AS t4,
       sum(abs(CAST(m5 AS DECIMAL(38,0)))) AS t5, sum(abs(CAST(m6 AS DECIMAL(38,0)))) AS t6
FROM @model_current c
WHERE array_contains(@changed_dates, business_date)
GROUP BY business_date, g1, g2, g3, g4, upload_date, file_name

-- name: late_rows
-- The current records of :d past its window (:late_days, a reopening's already in it): how many,
-- and the most days after the date one arrived (a record uploaded before the date's eve is -2 or
-- less, which no window takes in).
SELECT count(*) AS rows, max(datediff(upload_date, business_date)) AS widest
FROM @model_current c
WHERE business_date = CAST(:d AS DATE) AND NOT (@in_window)

-- name: redelivered
-- The file versions of the uploads :uploads whose records are exactly those of the version
-- before them (a re-delivery: the same rows in other bytes), as the lab's same_rows_as_before: as
-- many records, the same sum of a 64-bit hash of each one's content (wherever it stands in the
-- file), and as many quarantined lines. Such a version is no correction.
WITH r AS (SELECT upload_date, file_name, version, count(*) AS records,
                  sum(CAST(xxhash64(entity_key, event_id, arrival_ns, event_ns, business_date, g1, g2, g3, g4,
                                    a1, a2, a3, a4, m1, m2, m3, m4, m5, m6) AS DECIMAL(38, 0))) AS content
           FROM lake.recount.model_records WHERE array_contains(@uploads, upload_date) GROUP BY upload_date, file_name, version),
v AS (SELECT f.upload_date, f.file_name, f.version, f.quarantined, coalesce(r.records, 0) AS records, coalesce(r.content, 0) AS content
      FROM lake.recount.model_files f LEFT JOIN r USING (upload_date, file_name, version)
      WHERE array_contains(@uploads, f.upload_date))
SELECT n.upload_date, n.file_name, n.version FROM v n
JOIN v o ON o.upload_date = n.upload_date AND o.file_name = n.file_name AND o.version = n.version - 1
WHERE n.records = o.records AND n.content = o.content AND n.quarantined = o.quarantined

-- name: upload_dates
-- What each of the uploads :uploads holds per business date, in every version of its files, and
-- whether the version is current.
SELECT r.upload_date, r.business_date, r.version = c.version AS current, count(*) AS rows
FROM lake.recount.model_records r
JOIN (SELECT upload_date, file_name, max(version) AS version FROM lake.recount.model_files
      WHERE array_contains(@uploads, upload_date) GROUP BY upload_date, file_name) c
  ON r.upload_date = c.upload_date AND r.file_name = c.file_name
WHERE array_contains(@uploads, r.upload_date)
GROUP BY r.upload_date, r.business_date, r.version = c.version

-- name: input_hashes
-- Each of :dates as its input: the hash of every copy that feeds it (its own order, as the
-- lab's: a hash is compared only with the same engine's).
SELECT business_date, count(*) AS rows,
       md5(concat_ws(chr(10), array_sort(collect_list(concat_ws('|', CAST(upload_date AS STRING), file_name, CAST(line AS STRING),
           entity_key, event_id, CAST(arrival_ns AS STRING), g1, g2, g3, g4, a1, a2, a3, a4, CAST(m1 AS STRING),
           CAST(m2 AS STRING), CAST(m3 AS STRING), CAST(m4 AS STRING), CAST(m5 AS STRING), CAST(m6 AS STRING)))))) AS input_hash
FROM @model_visible v
WHERE array_contains(@changed_dates, business_date)
GROUP BY business_date

-- name: silver_rows
-- THE winners of :dates: one row per business key among every copy the write sees, the first by
-- the contract's order (arrival, event id, then raw-zone order); a key counts on its winner's date.
WITH keyed AS (SELECT DISTINCT entity_key FROM @model_visible v WHERE array_contains(@changed_dates, business_date)),
ranked AS (
    SELECT v.*, count(*) OVER (PARTITION BY v.entity_key) AS copies,
           row_number() OVER (PARTITION BY v.entity_key ORDER BY @copy_order) AS n
    FROM @model_visible v LEFT SEMI JOIN keyed k ON v.entity_key = k.entity_key)
SELECT * FROM ranked WHERE n = 1 AND array_contains(@changed_dates, business_date)

-- name: gold_rows
-- The silver view's winners summed per date and grain (ANSI mode: a sum past 64 bits is an error).
SELECT business_date, g1, g2, g3, g4, a1, a2, a3, a4,
       sum(m1) AS m1, sum(m2) AS m2, sum(m3) AS m3, sum(m4) AS m4, sum(m5) AS m5, sum(m6) AS m6
FROM silver
GROUP BY business_date, g1, g2, g3, g4, a1, a2, a3, a4

-- name: naive_rows
-- v1 for run date :run_date: upload :run_date's current records dated :run_date, every copy
-- counted, to be APPENDED (a retry doubles the day, on purpose), as the lab's naive_append.
SELECT CAST(:run_date AS DATE) AS run_date, business_date, g1, g2, g3, g4, a1, a2, a3, a4,
       sum(m1) AS m1, sum(m2) AS m2, sum(m3) AS m3, sum(m4) AS m4, sum(m5) AS m5, sum(m6) AS m6
FROM @model_current c
WHERE upload_date = CAST(:run_date AS DATE) AND business_date = CAST(:run_date AS DATE)
GROUP BY business_date, g1, g2, g3, g4, a1, a2, a3, a4
