-- land.sql: landing raw files into bronze.
-- Reads: raw.*. Writes: raw.stores, raw.files, raw.partitions, raw.landings
-- (bronze.events and bronze.quarantine are filled through DuckDB's appender, in the same transaction).

-- name: landed_files
SELECT file, md5 FROM raw.files;

-- name: stores
SELECT store_id, country, timezone, currency FROM raw.stores ORDER BY store_id;

-- name: store_insert
INSERT INTO raw.stores VALUES (?, ?, ?, ?);

-- name: file_insert
INSERT INTO raw.files VALUES (?, ?, ?, ?, ?, ?, ?, ?);

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
