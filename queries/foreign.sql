-- A foreign gold (`recount audit`) in another DuckDB database, opened read-only with external
-- access off (store/foreign.rs): only a base table is read, never a view's query. The table's
-- name is bound, as every parameter is, and looked up by DuckDB.

-- name: table_kind
-- What $schema.$name is in that database: a table, a view, or nothing (no row).
SELECT 'table' AS kind FROM duckdb_tables() WHERE schema_name = $schema AND table_name = $name
UNION ALL
SELECT 'view' AS kind FROM duckdb_views() WHERE schema_name = $schema AND view_name = $name AND NOT internal;

-- name: table_rows
SELECT * FROM query_table($table);
