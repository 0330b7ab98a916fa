-- Parquet files a source description names (raw/source.rs): read, one JSON object per row, for
-- the same mapping and checks as JSON Lines; and written, by `generate --shape parquet`.
-- The path is bound, as every parameter is.

-- name: rows_as_json
SELECT to_json(t)::VARCHAR AS row FROM read_parquet($path) t;

-- name: rows
SELECT * FROM read_parquet($path);

-- name: float_columns
SELECT name FROM parquet_schema($path) WHERE type IN ('FLOAT', 'DOUBLE') ORDER BY name;

-- name: events_from_json
CREATE OR REPLACE TEMP TABLE shaped AS
SELECT * FROM read_json($path, format = 'newline_delimited', columns = {
    event_id: 'VARCHAR', basket_id: 'VARCHAR', store_id: 'VARCHAR', till_id: 'VARCHAR',
    event_ts_us: 'BIGINT', uploaded_at: 'VARCHAR', currency: 'VARCHAR', amount_minor: 'BIGINT'
});

-- name: stores_from_json
CREATE OR REPLACE TEMP TABLE shaped AS
SELECT * FROM read_json($path, format = 'newline_delimited', columns = {
    store: 'VARCHAR', country: 'VARCHAR', zone: 'VARCHAR', ccy: 'VARCHAR'
});

-- name: write_shaped
COPY shaped TO $out (FORMAT parquet);

-- name: write_shaped_zstd
COPY shaped TO $out (FORMAT parquet, COMPRESSION zstd);
