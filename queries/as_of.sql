-- as_of.sql: the lab as it was when a snapshot was recorded, for the reports that read "as of S".
-- THE rule for "the raw zone as of snapshot s": every file version whose landing had committed by
-- the time s was recorded (a landing's time against the snapshot's, both this lab's clock), less
-- the versions a version landed by then had replaced. Not part of v2's rules (nothing writes
-- from it), so not in the code version the input hashes cover.

-- name: create
-- The macros for as-of reads, kept in the lab's file (schema.sql's create runs this after it).
CREATE OR REPLACE MACRO files_as_of(s) AS TABLE
    WITH landed AS (
        SELECT f.file_id, f.file, f.upload_date, f.version
        FROM raw.files f JOIN raw.landings l USING (landing_id)
        WHERE l.landed_at <= (SELECT created_at FROM audit.snapshots WHERE snapshot_id = s)
    )
    SELECT * FROM landed
    WHERE file_id NOT IN (SELECT x.file_id FROM raw.supersessions x JOIN landed b ON b.file_id = x.by_file_id);
-- Bronze as of s: the rows of those versions, with each row's file and its rank in its upload
-- (and its store row's number, as copies_of's rows).
CREATE OR REPLACE MACRO events_as_of(s) AS TABLE
    SELECT e.*, e.uploaded_at AS arrival, f.file, f.file_rank FROM bronze.event_rows e
    JOIN (SELECT file_id, file, rank() OVER (ORDER BY upload_date, file) AS file_rank FROM files_as_of(s)) f
    USING (file_id);

-- name: uploads
-- The uploads that had landed by snapshot $snapshot_id.
SELECT DISTINCT upload_date FROM files_as_of($snapshot_id::BIGINT) ORDER BY 1;

-- name: files
-- The file versions current as of snapshot $snapshot_id, and whether a later one has replaced
-- them since (their bytes are then kept under raw/versions/).
SELECT f.upload_date, f.file, f.version, f.file_id IN (SELECT file_id FROM raw.supersessions) AS superseded_now
FROM files_as_of($snapshot_id::BIGINT) f ORDER BY f.upload_date, f.file;

-- name: input_cells
-- What fed dates $first..$last under the window as of snapshot $snapshot_id, file by file (as
-- v2.sql's input_cells for now).
SELECT c.business_date, c.rows, c.digest FROM bronze.cells c
WHERE c.file_id IN (SELECT file_id FROM files_as_of($snapshot_id::BIGINT))
  AND c.business_date BETWEEN $first::DATE AND $last::DATE
  AND in_window(c.upload_date, c.business_date, $late_days::INTEGER);

-- name: duckdb_date
-- DuckDB's own recount of date $business_date as of snapshot $snapshot_id (recompute.sql's
-- `date_recount` over the raw zone as it was). A key that has one copy in all of bronze now had
-- at most one as of any snapshot, so the copies read are the rows of the date and of the dates
-- the list gives its listed keys' copies: zone maps keep the scan to those dates. Looking for
-- the date's basket_ids in all of bronze instead read every basket_id landed, several times
-- slower, and far slower when cold.
WITH multi AS @sent_twice,
copies AS NOT MATERIALIZED (
    SELECT * FROM events_as_of($snapshot_id::BIGINT)
    WHERE business_date IN (SELECT business_date FROM bronze.multi_copies WHERE basket_key IN (SELECT basket_key FROM multi)
                            UNION SELECT $business_date::DATE)),
@date_recount
@recounted_date;

-- name: stores
-- Each store's row as of snapshot $snapshot_id: the row before the first store correction whose
-- landing came after that snapshot was recorded, else its newest row.
WITH later AS (
    SELECT c.* FROM raw.store_changes c JOIN raw.landings l USING (landing_id)
    WHERE l.landed_at > (SELECT created_at FROM audit.snapshots WHERE snapshot_id = $snapshot_id::BIGINT)
    QUALIFY row_number() OVER (PARTITION BY c.store_id ORDER BY c.change_id) = 1)
SELECT s.store_id, coalesce(c.old_country, s.country) AS country, coalesce(c.old_timezone, s.timezone) AS timezone,
       coalesce(c.old_currency, s.currency) AS currency
FROM raw.stores s LEFT JOIN later c USING (store_id)
WHERE coalesce(c.old_timezone, s.timezone) <> ''  -- a store added since: not yet there
ORDER BY s.store_id;
