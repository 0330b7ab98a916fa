-- land.sql: landing raw files into bronze.
-- Reads: raw.*. Writes: raw.stores, raw.files, raw.partitions, raw.landings
-- (bronze.events through `events_insert`; bronze.cells and bronze.quarantine through DuckDB's appender,
-- in the same transaction).

-- name: landed_files
SELECT file, md5 FROM raw.files;

-- name: stores
SELECT store_id, country, timezone, currency FROM raw.stores ORDER BY store_id;

-- name: store_insert
INSERT INTO raw.stores VALUES (?, ?, ?, ?);

-- name: file_insert
INSERT INTO raw.files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: next_file_id
SELECT coalesce(max(file_id), 0) + 1 FROM raw.files;

-- name: split_baskets_insert
-- Baskets with copies on more than one business date, among those with a copy in the files
-- landed from file id $1 on; each (basket, date) pair is kept once. $2: true when nothing was
-- landed before (every basket is new; the membership test then has nothing to build).
INSERT INTO bronze.split_baskets
SELECT DISTINCT e.basket_id, e.business_date FROM bronze.events e
JOIN (SELECT basket_id FROM bronze.events
      WHERE $2::BOOLEAN
         OR basket_id IN (SELECT basket_id FROM bronze.events WHERE file_id >= $1::INTEGER AND NOT $2::BOOLEAN)
      GROUP BY basket_id HAVING min(business_date) <> max(business_date)) s USING (basket_id)
EXCEPT SELECT basket_id, business_date FROM bronze.split_baskets
ORDER BY 1, 2;

-- name: partition_insert
INSERT INTO raw.partitions VALUES (?, ?, ?);

-- name: next_landing_id
SELECT coalesce(max(landing_id), 0) + 1 FROM raw.landings;

-- name: landing_insert
INSERT INTO raw.landings VALUES (?, ?, ?, ?, ?, ?, ?);

-- name: landed_uploads
SELECT upload_date FROM raw.partitions ORDER BY 1;

-- name: manifest
SELECT count(*), coalesce(string_agg(file || ':' || md5, ',' ORDER BY file), '') FROM raw.files;

-- name: files_count
SELECT count(*) FROM raw.files;

-- name: upload_files_count
SELECT count(*) FROM raw.files WHERE upload_date = ?;

-- name: events_insert
-- Every row of the landing's files: recount_parse($1) parses them in DuckDB's own threads.
INSERT INTO bronze.events SELECT * FROM recount_parse($1::BIGINT);

-- name: threads
SELECT current_setting('threads')::BIGINT;

-- name: unordered_insert
-- Lets each of DuckDB's threads insert what it parsed into its own row groups. Rows keep their
-- file id and line; nothing reads bronze in its physical order.
SET preserve_insertion_order = false;

-- name: ordered_insert
RESET preserve_insertion_order;
