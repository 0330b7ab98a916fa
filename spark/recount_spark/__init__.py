"""recount's v2 job on Spark, into Iceberg tables.

The Rust CLI (`recount spark ...`) runs this package with the setup's Python
(`python -m recount_spark`); it is not meant to be called by hand, though it can be
(`python -m recount_spark --help`). The rules are the Spark SQL files in queries/spark/ (beside
the DuckDB ones in queries/); the package parses raw lines, binds parameters and commits. It talks
to its caller on stdout, one JSON object a line:

    {"event": "progress", "message": ..., "done": i, "total": n}
    {"event": "result", ...}          the command's answer, once
    {"event": "error", "message": ...} one line that says what failed

Everything else (Spark's and Java's logs, a Python traceback) goes to stderr, which the caller
keeps in a log file.

Modules: `parse` (the contract's line validation, no Spark), `sql` (the SQL files' loader, no
Spark), `wire` (the JSON lines and timings), `tables` (names and snapshot properties), `state`
(Iceberg metadata through pyiceberg, no JVM), `session` (the Spark session), `warehouse` (the
session on one warehouse, its cached state), `land` (landing), `v2` (a run), `evidence` (the
evidence files) and `cli` (the commands).
"""
