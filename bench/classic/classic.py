#!/usr/bin/env python3
"""The classic shape of the v2 job, as a team would first write it: the yardstick for recount's
benchmark (`recount-bench --baseline bench/classic/run.sh`) and a second opinion on fingerprints.

What makes it classic: no bronze. Every run reads the gzipped JSON of the uploads it needs with
DuckDB's read_json, then DELETEs and re-INSERTs silver and gold of the affected dates, one
transaction (and one commit to disk) per upload. The rules are recount's own
(docs/data-contract.md): the window, affected dates, one row per basket_id by (uploaded_at,
event_id, then raw-zone order), and the fingerprint.

usage: classic.py runs WORLD [--backward] [--db FILE] [--late-days N]
"""

import argparse
import datetime as dt
import os
import sys
import time

import duckdb

SCHEMA = """
CREATE TABLE IF NOT EXISTS silver_baskets (business_date DATE, basket_id VARCHAR, store_id VARCHAR, country VARCHAR,
    currency VARCHAR, revenue_minor BIGINT);
CREATE TABLE IF NOT EXISTS daily_store_sales (business_date DATE, store_id VARCHAR, country VARCHAR, currency VARCHAR,
    baskets BIGINT, revenue_minor BIGINT);
"""

# Raw events of the uploads in [first, last], with their business date: read again by every run.
EVENTS = """
CREATE OR REPLACE TEMP TABLE events AS
SELECT e.basket_id, e.event_id, e.store_id, s.country, e.currency,
       e.uploaded_at::TIMESTAMPTZ AS uploaded_at, e.upload_date::DATE AS upload_date, e.filename AS file_name,
       (e.event_ts::TIMESTAMPTZ AT TIME ZONE s.timezone)::DATE AS business_date,
       list_sum(list_transform(e.tenders, lambda t: t.amount_minor::BIGINT)) AS revenue_minor,
       row_number() OVER (PARTITION BY e.filename) AS line
FROM read_json($files, filename = true, hive_partitioning = true,
               columns = {event_id: 'VARCHAR', basket_id: 'VARCHAR', store_id: 'VARCHAR', currency: 'VARCHAR',
                          event_ts: 'VARCHAR', uploaded_at: 'VARCHAR',
                          tenders: 'STRUCT(method VARCHAR, amount_minor BIGINT)[]'}) e
JOIN read_csv($stores, header = true, all_varchar = true) s USING (store_id)
"""

REBUILD = [
    "DELETE FROM silver_baskets WHERE list_contains($dates, business_date)",
    """INSERT INTO silver_baskets
       SELECT business_date, basket_id, store_id, country, currency, revenue_minor FROM events
       WHERE list_contains($dates, business_date)
         AND upload_date BETWEEN business_date - 1 AND business_date + $late_days
       QUALIFY row_number() OVER (PARTITION BY basket_id
                                  ORDER BY uploaded_at, event_id, upload_date, file_name, line) = 1""",
    "DELETE FROM daily_store_sales WHERE list_contains($dates, business_date)",
    """INSERT INTO daily_store_sales
       SELECT business_date, store_id, country, currency, count(*), sum(revenue_minor) FROM silver_baskets
       WHERE list_contains($dates, business_date) GROUP BY ALL""",
]

FINGERPRINT = """
SELECT count(*), md5(coalesce(string_agg(concat_ws('|', strftime(business_date, '%Y-%m-%d'), store_id, country, currency,
                                                   baskets::VARCHAR, revenue_minor::VARCHAR), chr(10)
                                         ORDER BY business_date, store_id), ''))
FROM daily_store_sales
"""


def uploads(world):
    base = os.path.join(world, "pos", "events")
    return sorted(dt.date.fromisoformat(n.split("=", 1)[1]) for n in os.listdir(base) if n.startswith("upload_date="))


def files(world, first, last):
    out = []
    d = first
    while d <= last:
        part = os.path.join(world, "pos", "events", f"upload_date={d}")
        if os.path.isdir(part):
            out += sorted(os.path.join(part, n) for n in os.listdir(part) if n.endswith(".jsonl.gz"))
        d += dt.timedelta(days=1)
    return out


def runs(a):
    if a.db and os.path.exists(a.db):
        os.remove(a.db)
    con = duckdb.connect(a.db or ":memory:")
    con.execute("SET TimeZone = 'UTC'")
    con.execute(SCHEMA)
    stores = os.path.join(a.world, "stores.csv")
    order = uploads(a.world)
    if a.backward:
        order.reverse()
    late = dt.timedelta(days=a.late_days)
    started = time.perf_counter()
    for u in order:
        own = files(a.world, u, u)
        if not own:
            continue
        con.execute(EVENTS, {"files": own, "stores": stores})
        dates = [r[0] for r in con.execute("SELECT DISTINCT business_date FROM events WHERE business_date >= $oldest ORDER BY 1",
                                           {"oldest": u - late}).fetchall()]
        if not dates:
            continue
        con.execute("BEGIN")
        try:
            con.execute(EVENTS, {"files": files(a.world, min(dates) - dt.timedelta(days=1), max(dates) + late), "stores": stores})
            for statement in REBUILD:
                con.execute(statement, {k: v for k, v in {"dates": dates, "late_days": a.late_days}.items() if "$" + k in statement})
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
    elapsed = time.perf_counter() - started
    rows, md5 = con.execute(FINGERPRINT).fetchone()
    print(f"classic v2: {len(order)} uploads in {elapsed:.2f} s")
    print(f"gold.daily_store_sales: {rows:,} rows, md5 {md5}")


def main():
    p = argparse.ArgumentParser(prog="classic.py")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("runs")
    r.add_argument("world")
    r.add_argument("--db")
    r.add_argument("--backward", action="store_true")
    r.add_argument("--late-days", type=int, default=2)
    a = p.parse_args()
    {"runs": runs}[a.command](a)


if __name__ == "__main__":
    sys.exit(main())
