-- model_mirror.sql: the warehouse of a model other than retail (`recount spark run` on a model's
-- world) read into a model lab (src/warehouse/model_mirror.rs). pyiceberg plans what the tables
-- hold; the file rows, dimension versions and skipped runs come as values, bronze's records as
-- Parquet files read here. The lab's own writes then replay gold's snapshots over them.
-- Reads: the warehouse's Parquet files. Writes: a new mirror's model tables (never a lab's).

-- name: ids_stage
-- Every file version the warehouse recorded, with the id the mirror gives it: its records load
-- once, and a version counts only from the moment its row enters model.files.
CREATE OR REPLACE TEMP TABLE m_ids (file_id INTEGER, upload_date DATE, file VARCHAR, version INTEGER);

-- name: id_insert
INSERT INTO m_ids VALUES ($file_id, $upload_date, $file, $version);

-- name: records_load
-- One data file of model_records, its rows under their file version's id (a version no file row
-- names is one a killed landing left, which no reader counts). A record without its event time
-- was landed before the warehouse kept it.
INSERT INTO model.records
SELECT i.file_id, r.line, r.entity_key, r.event_id, r.arrival_ns,
       CASE WHEN r.event_ns IS NULL THEN error('a record landed before the warehouse kept event times: run its uploads into a new warehouse')
            ELSE r.event_ns END,
       r.business_date, r.g1, r.g2, r.g3, r.g4, r.a1, r.a2, r.a3, r.a4, r.m1, r.m2, r.m3, r.m4, r.m5, r.m6,
       model_key_hash(r.entity_key)
FROM read_parquet($path) r JOIN m_ids i ON i.upload_date = r.upload_date AND i.file = r.file_name AND i.version = r.version;

-- name: file_insert
INSERT INTO model.files VALUES ($file_id, $file, $upload_date, $version, $md5, $records, $quarantined, $landed_at);

-- name: dimension_insert
INSERT INTO model.dimension_versions VALUES ($version, $md5, $text, $landed_at);

-- name: skipped_insert
INSERT INTO model.skipped_runs VALUES ($uploads, $dates, $skipped_at);

-- name: snapshot_time
UPDATE model.snapshots SET created_at = $created_at WHERE snapshot_id = $snapshot_id;

-- name: records_size
-- What the recount of bronze would hold: its current records and their ids' bytes.
SELECT count(*)::BIGINT AS records, coalesce(sum(strlen(entity_key) + strlen(event_id)), 0)::BIGINT AS id_bytes
FROM model.records JOIN model.current_files USING (file_id);

-- name: recount_records
-- Pass $pass of $passes of the recount of bronze (a mirror keeps no raw bytes): the current
-- records whose key falls in the pass, each with its file's rank in raw-zone order.
SELECT r.entity_key, r.event_id, r.arrival_ns, r.file_rank::BIGINT AS file_rank, r.line, r.business_date,
       r.g1, r.g2, r.g3, r.g4, r.a1, r.a2, r.a3, r.a4, r.m1, r.m2, r.m3, r.m4, r.m5, r.m6
FROM model.current_records r
WHERE hash(r.entity_key) % $passes::UBIGINT = $pass::UBIGINT;

-- name: naive_load
-- One data file of model_naive, v1's rows as Spark appended them (the warehouse keeps no time of
-- an append).
INSERT INTO model.naive
SELECT run_date, business_date, g1, g2, g3, g4, a1, a2, a3, a4, m1, m2, m3, m4, m5, m6, NULL FROM read_parquet($path);
