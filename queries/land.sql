-- land.sql: landing raw files into bronze.
-- Reads: raw.*. Writes: raw.stores, raw.partitions, raw.landings (bronze.event_rows through
-- `events_insert`; bronze.store_rows, raw.files, bronze.cells and bronze.quarantine through
-- DuckDB's appender, in the same transaction).

-- name: landed_files
-- Every version of every landed file: its path, bytes' MD5, id and version, and whether it is
-- the current one.
SELECT f.file, f.md5, f.file_id, f.version, f.file_id NOT IN (SELECT file_id FROM raw.supersessions) AS current
FROM raw.files f;

-- name: stores
SELECT store_id, country, timezone, currency FROM raw.stores ORDER BY store_id;

-- name: store_update
-- A store correction: the store's newest row (its history is in raw.store_changes).
UPDATE raw.stores SET country = $country, timezone = $timezone, currency = $currency WHERE store_id = $store_id;

-- name: store_change_insert
INSERT INTO raw.store_changes
SELECT coalesce(max(change_id), 0) + 1, $store_id, $old_country, $old_timezone, $old_currency,
       $new_country, $new_timezone, $new_currency, $landing_id, $from_snapshot, NULL
FROM raw.store_changes;

-- define: listed_stores
-- The store ids of $store_ids, a JSON list bound as one parameter: the stores a landing corrects.
(SELECT unnest(from_json($store_ids::VARCHAR, '["VARCHAR"]')) AS store_id)

-- name: files_of_stores
-- The current file versions whose lines depend on the row of a store of $store_ids (a JSON list):
-- those holding its events, and those with a line quarantined for a reason that names it (an
-- unknown store, a currency other than its own). Its other lines would be read alike under any
-- row of it. One statement for all the stores a landing changes, since each statement reads
-- bronze whole: a statement a store grew with the stores times the lab.
WITH ids AS @listed_stores
SELECT f.file, f.upload_date, f.file_id, f.version FROM raw.current_files f
WHERE f.file_id IN (SELECT file_id FROM bronze.event_rows
                    WHERE store_row IN (SELECT store_row FROM bronze.store_rows WHERE store_id IN (SELECT store_id FROM ids)))
   OR f.file_id IN (SELECT q.file_id FROM bronze.quarantine q, ids WHERE contains(q.reason, ids.store_id))
ORDER BY f.upload_date, f.file;

-- name: unknown_stores
-- The store_ids lines were quarantined for as unknown (the reason raw/event.rs gives): a store
-- stores.csv adds later re-derives the files of those lines.
SELECT DISTINCT regexp_extract(reason, '^unknown store_id ''(.*)''$', 1) AS store_id FROM bronze.quarantine
WHERE starts_with(reason, 'unknown store_id ');

-- name: next_file_id
SELECT (coalesce(max(file_id), 0) + 1)::INTEGER AS file_id FROM raw.files;

-- name: key_rows_create
-- The copies of basket keys with more than one copy, filled a slice of keys at a time below.
CREATE OR REPLACE TEMP TABLE key_rows (basket_key BIGINT, basket_id VARCHAR, business_date DATE);

-- define: landed_row
-- A row whose key the landing looks up: a row of the files from $first_file_id on, except, in a
-- file re-derived for a store correction (file ids from $first_rederived_id on), the rows of the
-- stores not in $store_ids (a JSON list of the corrected stores): those rows are their previous
-- version's, with the same keys and dates, whose copies were listed when that version landed.
-- A store correction re-derives most of the raw zone; its search grows with the stores it moves.
(file_id >= $first_file_id::INTEGER
 AND (file_id < $first_rederived_id::INTEGER
      OR store_row IN (SELECT store_row FROM bronze.store_rows
                       WHERE store_id IN (SELECT store_id FROM @listed_stores))))

-- name: key_rows_count
-- The rows whose keys the landing looks up, how many keys the statements below group, and
-- bronze's rows: whether grouping all of them costs less than probing them with the new keys.
SELECT count(*) FILTER (WHERE @landed_row) AS rows, count(*) AS bronze FROM bronze.event_rows;

-- define: key_in_slice
-- The key is in slice $slice of the keys cut by their low bits $mask; every key is when there is
-- one slice ($mask 0), without the test: with the test, a day's landing on a long history spent
-- nearly twice as long in key_rows_since.
($mask::BIGINT = 0 OR (basket_key & $mask::BIGINT) = $slice::BIGINT)

-- define: copy_counts
-- A row counts as a copy: every row for a first landing (file id 1: a mirror's and a
-- migration's lists must hold the copies any snapshot read together, superseded or not), else a
-- row of a current file version (see key_rows_since).
($first_file_id::INTEGER = 1 OR file_id NOT IN (SELECT file_id FROM raw.supersessions))

-- name: key_rows_grouped
-- The copies (key, basket_id, business date) of every basket key with more than one copy and a
-- landed row (@landed_row), among the keys whose low bits ($mask) are $slice, found by grouping
-- every key of bronze: for a first landing (every key is new), and for one
-- whose rows are a large part of bronze (a store correction's re-derived files), where probing
-- bronze with the new keys costs more than grouping it. Grouping integers first keeps the
-- strings to the few keys with several copies, faster than grouping every basket_id.
INSERT INTO key_rows
SELECT basket_key, basket_id, business_date FROM bronze.event_rows
WHERE @key_in_slice AND @copy_counts
  AND basket_key IN (SELECT basket_key FROM bronze.event_rows WHERE @key_in_slice AND @copy_counts
                     GROUP BY basket_key HAVING count(*) > 1 AND bool_or(@landed_row));

-- name: key_rows_since
-- The same for the keys of the slice with a landed row (@landed_row), among the current file
-- versions (the landing's supersessions are recorded first): one scan of bronze's integer columns finds every copy of those keys, and only the
-- copies of keys with more than one are fetched whole, by their place (file, line). A superseded
-- version's copy is never read together with its successor's, and the copies it was read with
-- were listed when they landed: a store correction re-derives whole files, and counting their
-- old versions' copies listed every key they hold, and sent each through v2's ranking. A scan
-- that fetched the strings as it joined would read every basket_id of bronze, and a day's landing would grow with the lab's history (docs/performance.md, "A day as history grows").
INSERT INTO key_rows
WITH copies AS (SELECT basket_key, file_id, line FROM bronze.event_rows
                WHERE @key_in_slice AND @copy_counts
                  AND basket_key IN (SELECT basket_key FROM bronze.event_rows
                                     WHERE @landed_row AND @key_in_slice)),
     multi AS (SELECT file_id, line FROM copies
               WHERE basket_key IN (SELECT basket_key FROM copies GROUP BY basket_key HAVING count(*) > 1))
SELECT e.basket_key, e.basket_id, e.business_date FROM bronze.event_rows e
SEMI JOIN multi m ON e.file_id = m.file_id AND e.line = m.line;

-- name: key_candidates
-- Of those, the rows of every key whose copies have more than one business date (a split basket)
-- or more than one basket_id (a collision).
CREATE OR REPLACE TEMP TABLE key_candidates AS
SELECT * FROM key_rows
WHERE basket_key IN (SELECT basket_key FROM key_rows GROUP BY basket_key
                     HAVING min(business_date) <> max(business_date) OR min(basket_id) <> max(basket_id));

-- name: split_baskets_insert
-- Baskets with copies on more than one business date, from the candidates above; each
-- (basket, date) pair is kept once.
INSERT INTO bronze.split_baskets
SELECT DISTINCT basket_id, business_date FROM key_candidates
WHERE basket_id IN (SELECT basket_id FROM key_candidates GROUP BY basket_id HAVING min(business_date) <> max(business_date))
EXCEPT SELECT basket_id, business_date FROM bronze.split_baskets
ORDER BY 1, 2;

-- name: multi_copies_insert
-- Every key with more than one copy, once per business date of its copies (bronze.multi_copies),
-- from the copies found above.
INSERT INTO bronze.multi_copies
SELECT DISTINCT basket_key, business_date FROM key_rows
EXCEPT SELECT basket_key, business_date FROM bronze.multi_copies
ORDER BY 2, 1;

-- name: key_collisions_insert
-- Keys shared by different basket_ids, from the candidates above.
INSERT INTO bronze.key_collisions
SELECT basket_key FROM key_candidates GROUP BY basket_key HAVING min(basket_id) <> max(basket_id)
EXCEPT SELECT basket_key FROM bronze.key_collisions
ORDER BY 1;

-- name: revenue_past_limit
-- The first store or country whose revenue on a business date the landing's new files touch
-- (from file id $first_file_id on), summed as absolute values over every landed copy of any
-- version, passes $limit: exact in HUGEINT. Below the limit no sum recount makes of that date
-- (a store, a country, v2, both recounts, one v1 run) can pass 64 bits. Summed by store row
-- first, then named.
SELECT business_date, country, store_id, total::VARCHAR AS total FROM (
    SELECT business_date, country, store_id, sum(total) AS total
    FROM (SELECT business_date, store_row, sum(abs(revenue_minor::HUGEINT)) AS total FROM bronze.event_rows
          WHERE business_date IN (SELECT DISTINCT business_date FROM bronze.cells WHERE file_id >= $first_file_id::INTEGER)
          GROUP BY business_date, store_row)
    JOIN bronze.store_rows USING (store_row)
    GROUP BY GROUPING SETS ((business_date, country), (business_date, country, store_id)))
WHERE total > $limit::HUGEINT
ORDER BY business_date, country, store_id NULLS LAST
LIMIT 1;

-- name: corrected_files
-- The current files of upload $upload_date that are corrections: version 2 or later, and neither
-- a version a store correction re-derived (raw.rederived_versions) nor a re-delivery of the same
-- rows (raw.redelivered_versions).
SELECT f.file, f.version FROM raw.current_files f
WHERE f.upload_date = $upload_date::DATE AND f.version > 1
  AND f.file_id NOT IN (SELECT file_id FROM raw.rederived_versions)
  AND f.file_id NOT IN (SELECT file_id FROM raw.redelivered_versions)
ORDER BY f.file;

-- name: redelivered_files
-- The current files of upload $upload_date that re-deliver the rows of the version they replaced.
SELECT f.file, f.version FROM raw.current_files f
WHERE f.upload_date = $upload_date::DATE AND f.file_id IN (SELECT file_id FROM raw.redelivered_versions)
ORDER BY f.file;

-- name: supersession_insert
INSERT INTO raw.supersessions VALUES ($file_id, $by_file_id, $from_snapshot);

-- name: next_landing_id
SELECT coalesce(max(landing_id), 0) + 1 AS landing_id FROM raw.landings;

-- name: landing_insert
INSERT INTO raw.landings VALUES ($landing_id, $first_upload, $last_upload, $files, $events, $quarantined, $landed_at);

-- name: landed_uploads
SELECT upload_date FROM raw.partitions ORDER BY 1;

-- name: files_count
SELECT count(*) AS files FROM raw.files;

-- name: upload_files_count
SELECT count(*) AS files FROM raw.files WHERE upload_date = $upload_date;

-- name: store_rows
-- The store rows bronze's events carry so far (see bronze.store_rows).
SELECT store_row, store_id, country, currency FROM bronze.store_rows;

-- name: events_insert
-- Every row of the landing's files: recount_parse($job) parses them in DuckDB's own threads.
INSERT INTO bronze.event_rows SELECT * FROM recount_parse($job::BIGINT);

-- name: threads
SELECT current_setting('threads')::BIGINT AS threads;

-- name: threads_set
-- DuckDB's thread count on this connection: a long backfill writes on one thread, then puts back
-- what the lab was opened with (`Store::bulk`).
SET threads = $threads;

-- name: largest_date_rows
-- The rows of the lab's largest business date, every landed copy and country: what DuckDB's
-- memory limits follow (store::Limits), read at every open. bronze.cells holds a few rows a file,
-- and so does a model lab's model.file_date_hashes; the records of a file without its sums are
-- counted. (Counting every record by date cost a scan of the lab at each open.)
SELECT greatest(
    (SELECT coalesce(max(rows), 0) FROM (SELECT business_date, sum(rows) AS rows FROM bronze.cells GROUP BY business_date)),
    (SELECT coalesce(max(rows), 0) FROM (
        SELECT business_date, sum(rows) AS rows FROM (
            SELECT business_date, rows FROM model.file_date_hashes
            UNION ALL SELECT r.business_date, 1 FROM model.records r JOIN @model_unsummed f USING (file_id))
        GROUP BY business_date)))::BIGINT AS rows;

-- name: memory_limit_set
-- DuckDB's memory limit on this connection: the reports' (fitted to the lab's dates), and the
-- bulk one for a landing and a long backfill, then put back (`Store::bulk`).
SET memory_limit = $limit;

-- name: unordered_insert
-- Lets each of DuckDB's threads insert what it parsed into its own row groups. Rows keep their
-- file id and line; nothing reads bronze in its physical order.
SET preserve_insertion_order = false;

-- name: ordered_insert
RESET preserve_insertion_order;
