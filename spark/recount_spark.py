"""recount's v2 job on Spark, into Iceberg tables.

The Rust CLI (`recount spark ...`) runs this driver with the setup's Python; it is not meant to
be called by hand, though it can be (`python recount_spark.py --help`). The rules are the Spark
SQL files in queries/spark/ (beside the DuckDB ones in queries/); this file parses raw lines,
binds parameters and commits. It talks to its caller on stdout, one JSON object a line:

    {"event": "progress", "message": ..., "done": i, "total": n}
    {"event": "result", ...}          the command's answer, once
    {"event": "error", "message": ...} one line that says what failed

Everything else (Spark's and Java's logs, a Python traceback) goes to stderr, which the caller
keeps in a log file.
"""

import argparse
import csv
import datetime as dt
import gzip
import hashlib
import io
import json
import os
import re
import sys
import time
import traceback
import zlib

CATALOG = "lake"
NS = f"{CATALOG}.recount"
GOLD = f"{NS}.daily_store_sales"
SILVER = f"{NS}.silver_baskets"
BRONZE = f"{NS}.bronze_events"
QUARANTINE = f"{NS}.quarantine"
RAW_FILES = f"{NS}.raw_files"
STORES = f"{NS}.stores"
PROP = "recount."  # every summary property this job writes starts with it
HASH = PROP + "input-hash."  # then a business date: that date's input hash


def summary_of(snapshot):
    """A pyiceberg snapshot's summary properties (none for a snapshot without a summary)."""
    return dict(snapshot.summary.additional_properties) if snapshot is not None and snapshot.summary else {}


def hashes_in(props):
    """{business date (text): input hash} that a gold snapshot's properties name."""
    return {k[len(HASH):]: v for k, v in props.items() if k.startswith(HASH)}

# The same limits as the Rust parser (src/raw/mod.rs): a file, a line, an id.
MAX_INFLATED_BYTES = 256 << 20
MAX_LINE_BYTES = 64 << 10
MAX_ID_BYTES = 256
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\.jsonl\.gz$")


def emit(event, **fields):
    print(json.dumps({"event": event, **fields}, default=str), flush=True)


def progress(message, done=None, total=None):
    emit("progress", message=message, done=done, total=total)


class timed:
    """With RECOUNT_PROFILE set, how long a step took, on stderr (the log)."""

    on = bool(os.environ.get("RECOUNT_PROFILE"))

    def __init__(self, step):
        self.step = step

    def __enter__(self):
        self.t = time.perf_counter()

    def __exit__(self, *exc):
        if self.on:
            print(f"recount-profile {self.step}: {(time.perf_counter() - self.t) * 1000:.0f} ms", file=sys.stderr, flush=True)


# --- the SQL files -------------------------------------------------------------------------------


def load_queries(directory):
    """Every `-- name: NAME` block of queries/spark/*.sql, as {file: {name: sql}}. A `-- define:
    NAME` block holds text that statements use as `@NAME`, as build.rs does for the DuckDB files:
    a rule Spark cannot hold in a function (a window's ORDER BY) is still written once."""
    raw, defines = {}, {}
    for entry in sorted(os.listdir(directory)):
        if not entry.endswith(".sql"):
            continue
        blocks, kind, name, body = {}, None, None, []

        def close():
            if name:
                text = "".join(body).strip().rstrip(";")
                (defines if kind == "define" else blocks)[name] = text

        with open(os.path.join(directory, entry), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^-- (name|define): (\w+)\s*$", line)
                if m:
                    close()
                    kind, name, body = m.group(1), m.group(2), []
                elif name is not None and not line.lstrip().startswith("--"):
                    body.append(line)
        close()
        raw[entry[:-4]] = blocks

    def expand(text, where):
        def one(m):
            if m.group(1) not in defines:
                raise ValueError(f"{where}: @{m.group(1)} is defined by no `-- define:` block")
            return "(" + defines[m.group(1)] + ")" if m.group(1) != "copy_order" else defines[m.group(1)]
        return re.sub(r"@(\w+)", one, text)

    return {f: {n: expand(t, f"{f}.sql {n}") for n, t in blocks.items()} for f, blocks in raw.items()}


class Sql:
    def __init__(self, spark, directory):
        self.spark = spark
        self.q = load_queries(directory)

    def __call__(self, file, name, **args):
        """Runs one named statement with its parameters bound by name (never formatted in)."""
        from pyspark.sql import functions as F

        # A list of dates is bound as one text of ISO dates joined by commas (dates_of in v2.sql):
        # Spark binds literals only, and an array is not one.
        bound = {k: F.lit(",".join(str(x) for x in v) if isinstance(v, list) else v) for k, v in args.items()}
        text = self.q[file][name]
        return self.spark.sql(text, args=bound) if bound else self.spark.sql(text)


# --- the session ---------------------------------------------------------------------------------


def session(warehouse, master, jar):
    from pyspark.sql import SparkSession

    # The executors' Python is this one (the setup's venv, with pyarrow and pandas).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.appName("recount-v2")
        .master(master)
        .config("spark.jars", jar)

        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config(f"spark.sql.catalog.{CATALOG}", "org.apache.iceberg.spark.SparkCatalog")
        .config(f"spark.sql.catalog.{CATALOG}.type", "hadoop")
        .config(f"spark.sql.catalog.{CATALOG}.warehouse", os.path.abspath(warehouse))
        # Every run reads the tables as the previous commit left them.
        .config(f"spark.sql.catalog.{CATALOG}.cache-enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        # An overflowing sum is an error, never a wrapped number.
        .config("spark.sql.ansi.enabled", "true")
        # Few shuffle partitions and no adaptive planning: a run's data is a few dates, and on
        # local[2] planning and task start-up, not data, were most of its time (docs/performance.md).
        # A cluster sets both to its size through RECOUNT_SPARK_SHUFFLE_PARTITIONS / _AQE.
        .config("spark.sql.shuffle.partitions", os.environ.get("RECOUNT_SPARK_SHUFFLE_PARTITIONS", "2"))
        .config("spark.sql.adaptive.enabled", os.environ.get("RECOUNT_SPARK_AQE", "false"))
        .config("spark.sql.codegen.wholeStage", os.environ.get("RECOUNT_SPARK_CODEGEN", "true"))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", os.environ.get("RECOUNT_SPARK_DRIVER_MEMORY", "2g"))
        # C1 only and the serial collector: a job of many short queries on a small heap spends
        # more in the JIT and GC threads than in the data (about 10% of a run, measured).
        .config("spark.driver.extraJavaOptions",
                os.environ.get("RECOUNT_SPARK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"))
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def schema(sql):
    for name in sql.q["schema"]:
        sql("schema", name)


# --- parsing, in the executors -------------------------------------------------------------------

INSTANT = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def instant(text, name):
    """An RFC 3339 instant as (aware datetime, nanoseconds since 1970), or the quarantine reason."""
    m = INSTANT.match(text)
    bad = f"{name} '{printable(text)}' is not an ISO-8601 instant"
    if not m:
        return None, bad
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    frac, zone = m.group(7), m.group(8)
    try:
        t = dt.datetime(y, mo, d, h, mi, s, tzinfo=dt.timezone.utc)
    except ValueError:
        return None, bad
    if zone not in ("Z", "z"):
        sign = 1 if zone[0] == "+" else -1
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            return None, bad
        t -= sign * dt.timedelta(hours=zh, minutes=zm)
    nanos_frac = int((frac[1:] + "000000000")[:9]) if frac else 0
    ns = (t - EPOCH) // dt.timedelta(seconds=1) * 1_000_000_000 + nanos_frac
    # Kept as nanoseconds since 1970, as the lab does: 1677..2262 only.
    if not (I64_MIN <= ns <= I64_MAX):
        return None, f"{name} '{printable(text)}' is out of range"
    return t + dt.timedelta(microseconds=nanos_frac // 1000), ns


def printable(text):
    return "".join(c if c.isprintable() else "\ufffd" for c in text)


def no_duplicates(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise ValueError(f"duplicate field `{k}`")
        seen[k] = v
    return seen


def parse_line(text, stores, upload_date):
    """One line against the contract: a dict of the row's fields, or a quarantine reason (str)."""
    if len(text.encode("utf-8")) > MAX_LINE_BYTES:
        return f"line of {len(text.encode('utf-8'))} bytes, longer than the {MAX_LINE_BYTES} recount parses"
    try:
        raw = json.loads(text, object_pairs_hook=no_duplicates)
    except ValueError as e:
        return f"malformed JSON: {e}"
    if not isinstance(raw, dict):
        return "malformed JSON: not an object"
    fields = {}
    for name in ("event_id", "basket_id", "store_id", "till_id", "event_ts", "uploaded_at", "currency"):
        v = raw.get(name)
        if v is None:
            return f"missing required field {name}"
        if not isinstance(v, str):
            return f"malformed JSON: {name} is not a string"
        if v == "":
            return f"empty required field {name}"
        fields[name] = v
    event_ts, ev_ns = instant(fields["event_ts"], "event_ts")
    if event_ts is None:
        return ev_ns
    uploaded_at, up_ns = instant(fields["uploaded_at"], "uploaded_at")
    if uploaded_at is None:
        return up_ns
    for name in ("event_id", "basket_id", "store_id", "till_id", "currency"):
        n = len(fields[name].encode("utf-8"))
        if n > MAX_ID_BYTES:
            return f"{name} of {n} bytes, longer than the {MAX_ID_BYTES} recount keeps"
    tenders = raw.get("tenders")
    if tenders is None:
        return "missing required field tenders"
    if not isinstance(tenders, list):
        return "malformed JSON: tenders is not an array"
    if not tenders:
        return "tenders is empty: a basket needs at least one payment"
    revenue = 0
    for i, t in enumerate(tenders, 1):
        if not isinstance(t, dict):
            return "malformed JSON: a tender is not an object"
        amount = t.get("amount_minor")
        if amount is None:
            return f"tender {i}: missing amount_minor"
        if isinstance(amount, bool) or not isinstance(amount, int) or not (I64_MIN <= amount <= I64_MAX):
            return f"tender {i}: amount_minor {amount} is not a 64-bit integer"
        revenue += amount
        if not (I64_MIN <= revenue <= I64_MAX):
            return f"tender {i}: revenue overflows 64 bits"
    store = stores.get(fields["store_id"])
    if store is None:
        return f"unknown store_id '{printable(fields['store_id'])}'"
    if fields["currency"] != store["currency"]:
        return f"currency '{printable(fields['currency'])}' differs from store {store['store_id']}'s {store['currency']}"
    if uploaded_at.date() != upload_date:
        return f"uploaded_at {uploaded_at.strftime('%Y-%m-%dT%H:%M:%S')} is not in partition upload_date={upload_date}"
    return {
        **fields,
        "event_ts": event_ts,
        "uploaded_at": uploaded_at,
        "uploaded_at_ns": up_ns,
        "revenue_minor": revenue,
        "tenders": len(tenders),
    }


def gunzip(data, limit=MAX_INFLATED_BYTES):
    """Every member of a gzip file, never inflating past `limit` bytes."""
    if not data:
        raise ValueError("empty file: not a gzip stream")
    out, rest = [], data
    total = 0
    while rest:
        d = zlib.decompressobj(wbits=31)
        while True:
            chunk = d.decompress(rest, limit + 1 - total)
            total += len(chunk)
            out.append(chunk)
            if total > limit:
                raise ValueError(f"inflates to more than {limit >> 20} MiB, the most one raw file may hold")
            if d.eof:
                rest = d.unused_data
                break
            if d.unconsumed_tail:
                rest = d.unconsumed_tail
                continue
            raise ValueError("not a complete gzip stream (bad header, data or checksum, or cut short)")
    return b"".join(out)


def parse_file(upload_date, file_name, version, data, stores):
    """Every line of one file as a row: an event, or a quarantined line with its reason."""
    try:
        text = gunzip(data).decode("utf-8")
    except (ValueError, zlib.error, UnicodeDecodeError) as e:
        raise ValueError(f"{upload_date}/{file_name}: truncated or corrupt .gz file ({e})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, line in enumerate(lines, 1):
        if line.endswith("\r"):
            line = line[:-1]
        base = {"upload_date": upload_date, "file_name": file_name, "file_version": version, "line": i}
        parsed = "blank line" if not line.strip() else parse_line(line, stores, upload_date)
        if isinstance(parsed, str):
            yield {**base, "reason": parsed}
        else:
            yield {**base, **parsed, "reason": None}


# --- landing -------------------------------------------------------------------------------------


def read_stores(world):
    path = os.path.join(world, "stores.csv")
    with open(path, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or list(rows[0].keys()) != ["store_id", "country", "timezone", "currency"]:
        raise ValueError(f"{path}: header must be store_id,country,timezone,currency")
    return rows


PARSED_FIELDS = [
    ("upload_date", "date"), ("file_name", "string"), ("file_version", "int"), ("line", "int"),
    ("event_id", "string"), ("basket_id", "string"), ("store_id", "string"), ("till_id", "string"),
    ("event_ts", "timestamp"), ("uploaded_at", "timestamp"), ("uploaded_at_ns", "bigint"), ("currency", "string"),
    ("revenue_minor", "bigint"), ("tenders", "int"), ("reason", "string"),
]


def arrow_schema():
    import pyarrow as pa

    types = {"date": pa.date32(), "string": pa.string(), "int": pa.int32(), "bigint": pa.int64(),
             "timestamp": pa.timestamp("us", tz="UTC")}
    return pa.schema([(c, types[t]) for c, t in PARSED_FIELDS])


class Warehouse:
    """One Spark session on one warehouse, and what a session's runs share: the current events
    (cached until a landing changes them), the per-upload cells and per-date input hashes of that
    state of bronze, the landed file versions, and each date's input hash as gold holds it. Small
    metadata (snapshots, raw_files, stores) is read with pyiceberg: no Spark job for it."""

    def __init__(self, a, writes=True):
        self.path = a.warehouse
        with timed("session"):
            self.spark = session(a.warehouse, a.master, a.jar)
        self.sql = Sql(self.spark, a.queries)
        with timed("schema"):
            if not all(has_table(a.warehouse, t) for t in TABLES):
                schema(self.sql)
        self._events = None
        self._state = None
        self._dirty = set()
        self.few = False
        if writes:
            with timed("gold state"):
                self.recover()
                self.hashes, self.last_run = gold_state(a.warehouse)
                self.files = landed_versions(a.warehouse)

    def table(self, name):
        """The Iceberg table itself (Java), for its current snapshot id."""
        jvm = self.spark._jvm
        return jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(self.spark._jsparkSession, name)

    def rollback_to(self, name, snapshot):
        """Iceberg's rollback_to_snapshot (the procedure `CALL lake.system.rollback_to_snapshot`
        runs), through the table API: a procedure's arguments cannot be bound parameters, and
        nothing is formatted into SQL text here."""
        t = self.table(name)
        t.refresh()
        t.manageSnapshots().rollbackTo(int(snapshot)).commit()

    def current_snapshot(self, name):
        t = self.table(name)
        t.refresh()
        snap = t.currentSnapshot()
        return None if snap is None else snap.snapshotId()

    def recover(self):
        """A run commits silver, then gold. One killed between the two leaves silver ahead of
        gold: silver is put back to the snapshot gold's current one names."""
        from pyspark.sql import functions as F

        gold = static_table(self.path, "daily_store_sales").current_snapshot()
        silver = static_table(self.path, "silver_baskets").current_snapshot()
        if gold is None:
            if silver is not None and self.spark.table(SILVER).limit(1).count():
                self.spark.table(SILVER).limit(0).writeTo(SILVER).overwrite(F.lit(True))
                progress("recovered: silver emptied, as no gold snapshot was committed")
            return
        want = summary_of(gold).get(PROP + "silver-snapshot")
        if want and silver is not None and int(want) != silver.snapshot_id:
            self.rollback_to(SILVER, int(want))
            progress(f"recovered: silver put back to snapshot {want}, the one gold's current snapshot names")

    def events(self):
        """The current events as view `events`: cached for a backfill, which reads them run after
        run; read straight from Iceberg (each statement pruned to the uploads it needs) for a
        command of a few uploads, which would otherwise cache all of bronze for one run."""
        if self._events is None:
            df = self.sql("v2", "current_events")
            self._events = df if self.few else df.cache()
            self._events.createOrReplaceTempView("events")
        return self._events

    def only(self, uploads, late_days):
        """A command that runs just `uploads`: its state is computed for them alone."""
        self.few = True
        self._state, self._dirty = (late_days, {}, {}), set(uploads)

    def state(self, late_days):
        """Per upload, its cells; per date, its input hash and rows. Runs do not change bronze, so
        this is computed once per state of it: whole at first, then after a landing only for the
        uploads it wrote and the dates their rows carry."""
        self.events()
        if self._state is not None and self._state[0] == late_days and not self._dirty:
            return self._state[1], self._state[2]
        whole = self._state is None or self._state[0] != late_days
        ulo, uhi = (dt.date(1000, 1, 1), dt.date(9999, 12, 31)) if whole else (min(self._dirty), max(self._dirty))
        args = {"late_days": late_days, "all": whole, "uploads": sorted(self._dirty) if not whole else [], "ulo": ulo, "uhi": uhi}
        cells = {} if whole else dict(self._state[1])
        hashes = {} if whole else dict(self._state[2])
        with timed("state: cells"):
            fresh = {}
            for c in self.sql("v2", "upload_cells", **args).collect():
                fresh.setdefault(c.upload_date, []).append(c)
            for u in ([] if whole else self._dirty):
                cells.pop(u, None)
            cells.update(fresh)
        if whole:
            lo, hi = dt.date(1000, 1, 1), dt.date(9999, 12, 31)  # py4j passes dates as YYYY-MM-DD text
        else:
            dates = [c.business_date for rows in fresh.values() for c in rows] or [min(self._dirty)]
            lo, hi = min(dates) - dt.timedelta(days=1), max(dates) + dt.timedelta(days=late_days)
        with timed("state: hashes"):
            hashes.update({r.business_date: (r.input_hash, r.rows)
                           for r in self.sql("v2", "input_hashes", lo=lo, hi=hi, **args).collect()})
        self._state, self._dirty = (late_days, cells, hashes), set()
        return cells, hashes

    def land(self, world, uploads):
        """Lands uploads of `world` in one commit: each file new, corrected (its path's next
        version) or unchanged. The uploads' bronze partitions are rewritten with the rows they
        keep plus the new ones; the raw_files record, written after, is what makes a version
        count (a landing killed between the two leaves rows no reader sees, and the next
        landing drops them)."""
        with timed("land: stores and plan"):
            todo, reports, stores = self._plan(world, uploads)
        if not todo:
            return reports
        with timed("land: parse, write"):
            return self._land(todo, reports, stores)

    def _plan(self, world, uploads):
        from pyspark.sql import functions as F

        stores = read_stores(world)
        if stores_now(self.path) != sorted(stores, key=lambda r: r["store_id"]):
            self.spark.createDataFrame(stores, schema=self.spark.table(STORES).schema).writeTo(STORES).overwrite(F.lit(True))
        reports, todo = [], []
        for u in uploads:
            part = os.path.join(world, "pos", "events", f"upload_date={u}")
            names = sorted(n for n in os.listdir(part) if n.endswith(".jsonl.gz")) if os.path.isdir(part) else []
            report = {"upload": str(u), "new": [], "corrected": [], "unchanged": [], "missing": [], "events": 0, "quarantined": 0}
            for n in names:
                if not FILE_NAME.match(n):
                    raise ValueError(f"{part}: the file name {printable(n)!r} is not one the Spark job lands (letters, digits, . _ -)")
                path = os.path.join(part, n)
                with open(path, "rb") as f:
                    md5 = hashlib.md5(f.read()).hexdigest()
                old = self.files.get((u, n))
                if old is None:
                    todo.append((u, n, 1, md5, path))
                    report["new"].append(n)
                elif old[1] != md5:
                    todo.append((u, n, old[0] + 1, md5, path))
                    report["corrected"].append(f"{n} v{old[0] + 1}")
                else:
                    report["unchanged"].append(n)
            report["missing"] = sorted(n for (d, n) in self.files if d == u and n not in names)
            reports.append(report)
        return todo, reports, stores

    def _land(self, todo, reports, stores):
        from pyspark.sql import Row, functions as F

        by_path = {os.path.abspath(p): (u, n, v) for u, n, v, _, p in todo}
        b_stores = self.spark.sparkContext.broadcast({s["store_id"]: s for s in stores})
        cols = [c for c, _ in PARSED_FIELDS]
        ddl = ", ".join(f"{c} {t}" for c, t in PARSED_FIELDS)

        def parse(batches):
            # In the executors' Python workers: each file's lines out as Arrow batches (no row
            # pickling between Python and the JVM).
            import pyarrow as pa

            schema = arrow_schema()
            for batch in batches:
                for path, data in zip(batch.column("path").to_pylist(), batch.column("content").to_pylist()):
                    local = path[len("file:"):] if path.startswith("file:") else path
                    u, name, version = by_path[os.path.abspath(local)]
                    rows = list(parse_file(u, name, version, data, b_stores.value))
                    yield pa.RecordBatch.from_pydict({c: [r.get(c) for r in rows] for c in cols}, schema=schema)

        files = self.spark.read.format("binaryFile").load(["file://" + p for p in by_path]).select("path", "content")
        parsed = files.mapInArrow(parse, ddl).cache()
        parsed.createOrReplaceTempView("parsed")
        per_file = parsed.groupBy("upload_date", "file_name", "file_version").agg(
            F.count(F.when(parsed.reason.isNull(), 1)).alias("events"), F.count(parsed.reason).alias("quarantined"))
        with timed("land: parse"):
            counts = {(r.upload_date, r.file_name, r.file_version): (r.events, r.quarantined) for r in per_file.collect()}
        touched = sorted({u for u, *_ in todo})
        rows = self.sql("land", "kept_rows", uploads=touched).unionByName(self.sql("land", "new_rows"))
        with timed("land: bronze write"):
            rows.writeTo(BRONZE).option("snapshot-property.recount.uploads", ",".join(map(str, touched))).overwritePartitions()
        now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        records = [
            Row(upload_date=u, file_name=n, version=v, md5=md5, bytes=os.path.getsize(p),
                events=counts.get((u, n, v), (0, 0))[0], quarantined=counts.get((u, n, v), (0, 0))[1], landed_at=now)
            for u, n, v, md5, p in todo
        ]
        self.spark.createDataFrame(records, schema=self.spark.table(RAW_FILES).schema).writeTo(RAW_FILES).append()
        if self._events is not None:
            self._events.unpersist()
            self._events = None
        parsed.unpersist()
        for u, n, v, md5, _ in todo:
            self.files[(u, n)] = (v, md5)
        for report in reports:
            u = dt.date.fromisoformat(report["upload"])
            mine = [counts.get((u, n, v), (0, 0)) for (d, n, v, _, _) in todo if d == u]
            report["events"] = sum(e for e, _ in mine)
            report["quarantined"] = sum(q for _, q in mine)
        self._dirty |= set(touched)
        return reports

    def corrected(self, upload):
        """The current files of `upload` that are corrections (version 2 or later)."""
        return sorted(f"{n} v{v}" for (u, n), (v, _) in self.files.items() if u == upload and v > 1)

    def v2_run(self, upload, late_days, trigger):
        """One v2 run for `upload`: the affected dates, their input hashes, and for the dates whose
        hash changed new silver and gold, each written with overwritePartitions() of exactly those
        dates (silver first; gold, with the run's evidence as snapshot properties, commits it)."""
        from pyspark.sql import functions as F

        with timed("state"):
            cells, date_hashes = self.state(late_days)
        affected, beyond = set(), {}
        for c in cells.get(upload, []):
            if c.affected:
                affected.add(c.business_date)
            if c.beyond and c.current:
                b = beyond.setdefault((c.business_date, c.currency), [0, 0])
                b[0] += c.rows
                b[1] += c.revenue_minor
        affected = sorted(affected)
        result = {
            "upload": str(upload), "trigger": trigger, "late_days": late_days, "action": "skipped", "dates": [],
            "beyond_window": [{"business_date": str(d), "currency": cur, "rows": n, "revenue_minor": r}
                              for (d, cur), (n, r) in sorted(beyond.items())],
        }
        hashes = {d: date_hashes[d] for d in affected}
        changed = [d for d in affected if self.hashes.get(d) != hashes[d][0]]
        for d in affected:
            result["dates"].append({"business_date": str(d), "action": "overwrite" if d in changed else "skip",
                                    "input_rows": hashes[d][1], "input_hash": hashes[d][0]})
        if not changed:
            return result
        run_id = self.last_run + 1
        corrected = self.corrected(upload)
        props = {
            PROP + "run": str(run_id), PROP + "upload": str(upload), PROP + "trigger": trigger,
            PROP + "late-days": str(late_days), PROP + "dates": ",".join(map(str, changed)),
        }
        if corrected:
            props[PROP + "corrected"] = ",".join(corrected)
        for d in changed:
            props[f"{HASH}{d}"] = hashes[d][0]

        def write(df, table, present, extra):
            # overwritePartitions() replaces exactly the partitions the rows hold. A changed date
            # left with no rows (a correction withdrew them all) is in no partition of `df`, so then
            # the same dates are replaced by an explicit filter: one atomic overwrite either way.
            w = df.writeTo(table)
            for k, v in {**props, **extra}.items():
                w = w.option("snapshot-property." + k, v)
            if present == set(changed):
                w.overwritePartitions()
            else:
                w.overwrite(F.col("business_date").isin(changed))
            return self.current_snapshot(table)

        silver = self.sql("v2", "silver_rows", dates=changed, late_days=late_days, first=min(changed), last=max(changed)).cache()
        silver.createOrReplaceTempView("silver")
        gold = self.sql("v2", "gold_rows").cache()
        counts = {}
        with timed("silver+gold rows"):
            for r in gold.groupBy("business_date").agg(F.count("*").alias("g"), F.sum("baskets").alias("s")).collect():
                counts[r.business_date] = (r.s, r.g)
        with timed("silver write"):
            silver_snapshot = write(silver, SILVER, set(counts), {})
        if os.environ.get("RECOUNT_SPARK_CRASH") == f"after-silver:{upload}":
            # Test hook: die as a kill would, between the two commits of a run.
            os._exit(137)
        with timed("gold write"):
            gold_snapshot = write(gold, GOLD, set(counts), {PROP + "silver-snapshot": str(silver_snapshot)})
        silver.unpersist()
        gold.unpersist()
        self.last_run = run_id
        for d in changed:
            self.hashes[d] = hashes[d][0]
        for entry in result["dates"]:
            d = dt.date.fromisoformat(entry["business_date"])
            if d in changed:
                entry["silver_rows"], entry["gold_rows"] = counts.get(d, (0, 0))
        result.update(action="overwrite", run=run_id, snapshot_id=gold_snapshot, silver_snapshot_id=silver_snapshot,
                      corrected=corrected)
        return result

    def fingerprint(self, as_of=None):
        if as_of is None:
            self.spark.table(GOLD).createOrReplaceTempView("gold")
        else:
            # Time travel, as SQL's `SELECT ... FROM gold VERSION AS OF s`.
            self.spark.read.option("snapshot-id", int(as_of)).table(GOLD).createOrReplaceTempView("gold")
        r = self.sql("fingerprint", "fingerprint").first()
        return {"rows": r.rows, "md5": r.md5, "as_of": as_of, "reader": "spark"}

    def rollback(self, snapshot):
        """Gold back to `snapshot` with Iceberg's rollback_to_snapshot, and silver to the snapshot
        that run wrote (silver first: gold's current snapshot is what runs read hashes from)."""
        from pyspark.sql import functions as F

        gold = static_table(self.path, "daily_store_sales")
        snap = gold.snapshot_by_id(snapshot)
        if snap is None:
            raise ValueError(f"gold has no snapshot {snapshot}; `recount spark snapshots` lists them")
        silver = summary_of(snap).get(PROP + "silver-snapshot")
        if silver:
            self.rollback_to(SILVER, int(silver))
        self.rollback_to(GOLD, snapshot)
        self.hashes, self.last_run = gold_state(self.path)
        return {"snapshot_id": snapshot, "silver_snapshot_id": int(silver) if silver else None}


TABLES = ["stores", "raw_files", "bronze_events", "silver_baskets", "daily_store_sales"]


def has_table(warehouse, name):
    return os.path.exists(os.path.join(os.path.abspath(warehouse), "recount", name, "metadata", "version-hint.text"))


def gold_state(warehouse):
    """Each date's input hash and the last run id, from gold's current snapshot and its
    ancestors: the newest one that wrote a date names its hash. Gold's commit is a run's commit
    point, so this is what the last finished run left."""
    table = static_table(warehouse, "daily_store_sales")
    hashes = {}
    for snap in lineage(table):
        for d, h in hashes_in(summary_of(snap)).items():
            hashes.setdefault(dt.date.fromisoformat(d), h)
    # Run ids keep counting past a rollback: a run id names one run, ever.
    last_run = max((int(summary_of(snap).get(PROP + "run", 0)) for snap in table.snapshots()), default=0)
    return hashes, last_run


def landed_versions(warehouse):
    """{(upload_date, file_name): (current version, its md5)} from raw_files."""
    out = {}
    for r in static_table(warehouse, "raw_files").scan().to_arrow().to_pylist():
        key = (r["upload_date"], r["file_name"])
        if key not in out or r["version"] > out[key][0]:
            out[key] = (r["version"], r["md5"])
    return out


def stores_now(warehouse):
    rows = static_table(warehouse, "stores").scan().to_arrow().to_pylist()
    return sorted(rows, key=lambda r: r["store_id"])


def cmd_run(a):
    w = Warehouse(a)
    uploads = [dt.date.fromisoformat(u) for u in a.uploads.split(",")]
    if len(uploads) <= 3:
        w.only(uploads, a.late_days)
    runs, landings = [], []
    total = len(uploads) + (len(uploads) if a.daily else 1)
    step = 0

    def tick(message):
        nonlocal step
        progress(message, step, total)
        step += 1

    if a.daily:
        for u in uploads:
            tick(f"landing {u}")
            landings += w.land(a.world, [u])
            tick(f"v2 run of upload {u}")
            runs.append(w.v2_run(u, a.late_days, a.trigger))
    else:
        tick(f"landing {len(uploads)} upload(s)")
        landings += w.land(a.world, sorted(uploads))
        for u in uploads:
            tick(f"v2 run of upload {u}")
            runs.append(w.v2_run(u, a.late_days, a.trigger))
    progress("fingerprint", step, total)
    emit("result", landings=landings, runs=runs, fingerprint=w.fingerprint())
    w.spark.stop()


def cmd_fingerprint(a):
    if a.reader == "pyiceberg":
        emit("result", **pyiceberg_fingerprint(a.warehouse, a.as_of))
        return
    w = Warehouse(a, writes=False)
    emit("result", **w.fingerprint(a.as_of))
    w.spark.stop()


def cmd_rollback(a):
    w = Warehouse(a)
    # What the rollback goes back to, read by time travel (VERSION AS OF) before it moves.
    target = w.fingerprint(a.snapshot)
    done = w.rollback(a.snapshot)
    emit("result", **done, target_fingerprint=target, fingerprint=w.fingerprint())
    w.spark.stop()


# --- reading Iceberg's metadata with pyiceberg (no JVM) ------------------------------------------


def static_table(warehouse, name):
    from pyiceberg.table import StaticTable

    meta = os.path.join(os.path.abspath(warehouse), "recount", name, "metadata")
    hint = os.path.join(meta, "version-hint.text")
    if not os.path.exists(hint):
        raise ValueError(f"{warehouse} holds no Iceberg table recount.{name}: run `recount spark run` first")
    with open(hint) as f:
        version = f.read().strip()
    return StaticTable.from_metadata(os.path.join(meta, f"v{version}.metadata.json"))


def lineage(table):
    """The table's current snapshot and its ancestors, newest first: the line a rollback keeps."""
    by_id = {s.snapshot_id: s for s in table.snapshots()}
    out, s = [], table.current_snapshot()
    while s is not None:
        out.append(s)
        s = by_id.get(s.parent_snapshot_id) if s.parent_snapshot_id is not None else None
    return out


def snapshot_rows(table):
    current = table.current_snapshot()
    ancestors = {s.snapshot_id for s in lineage(table)}
    rows = []
    for s in sorted(table.snapshots(), key=lambda s: (s.timestamp_ms, s.sequence_number or 0)):
        summary = summary_of(s)
        rows.append({
            "snapshot_id": s.snapshot_id,
            "parent_id": s.parent_snapshot_id,
            "committed_at": dt.datetime.fromtimestamp(s.timestamp_ms / 1000, dt.timezone.utc).isoformat(timespec="milliseconds"),
            "operation": s.summary.operation.value if s.summary else None,
            "current": current is not None and s.snapshot_id == current.snapshot_id,
            "current_ancestor": s.snapshot_id in ancestors,
            "properties": {k: v for k, v in sorted(summary.items())},
        })
    return rows


def gold_rows(table, snapshot_id=None, date=None):
    from pyiceberg.expressions import AlwaysTrue, EqualTo

    scan = table.scan(snapshot_id=snapshot_id, row_filter=EqualTo("business_date", date.isoformat()) if date else AlwaysTrue())
    arrow = scan.to_arrow()
    rows = arrow.to_pylist()
    rows.sort(key=lambda r: (r["business_date"], r["store_id"].encode("utf-8")))
    return rows


def pyiceberg_fingerprint(warehouse, as_of=None):
    table = static_table(warehouse, "daily_store_sales")
    rows = gold_rows(table, snapshot_id=as_of)
    text = "\n".join(
        f"{r['business_date']:%Y-%m-%d}|{r['store_id']}|{r['country']}|{r['currency']}|{r['baskets']}|{r['revenue_minor']}" for r in rows
    )
    return {"rows": len(rows), "md5": hashlib.md5(text.encode("utf-8")).hexdigest(), "as_of": as_of, "reader": "pyiceberg"}


def cmd_snapshots(a):
    table = static_table(a.warehouse, a.table)
    emit("result", table=f"recount.{a.table}", snapshots=snapshot_rows(table))


def files_by_partition(table, snapshot_id):
    """The data files each business_date partition holds at a snapshot (None: no snapshot)."""
    out = {}
    if snapshot_id is None:
        return out
    for task in table.scan(snapshot_id=snapshot_id).plan_files():
        d = task.file.partition[0]
        key = str(dt.date(1970, 1, 1) + dt.timedelta(days=d)) if isinstance(d, int) else str(d)
        out.setdefault(key, []).append(task.file.file_path)
    return {k: sorted(v) for k, v in out.items()}


def cmd_gold(a):
    table = static_table(a.warehouse, "daily_store_sales")
    date = dt.date.fromisoformat(a.date)
    rows = gold_rows(table, snapshot_id=a.as_of, date=date)
    current = table.current_snapshot()
    emit("result", business_date=a.date, snapshot_id=a.as_of or (current.snapshot_id if current else None),
         rows=[{k: (str(v) if k == "business_date" else v) for k, v in r.items()} for r in rows])


def cmd_evidence(a):
    """Three files from Iceberg's metadata: the run-to-snapshot map, the date's current gold, and
    the last snapshot that rewrote it against its parent (store by store, and every other
    partition's data files before and after, for gold and silver)."""
    table = static_table(a.warehouse, "daily_store_sales")
    date = dt.date.fromisoformat(a.date)
    snaps = snapshot_rows(table)
    runs = [
        {
            "run": int(s["properties"].get(PROP + "run", 0)) or None,
            "snapshot_id": s["snapshot_id"],
            "parent_id": s["parent_id"],
            "committed_at": s["committed_at"],
            "operation": s["operation"],
            "current_ancestor": s["current_ancestor"],
            "upload": s["properties"].get(PROP + "upload"),
            "trigger": s["properties"].get(PROP + "trigger"),
            "late_days": s["properties"].get(PROP + "late-days"),
            "dates": [d for d in s["properties"].get(PROP + "dates", "").split(",") if d],
            "corrected": [c for c in s["properties"].get(PROP + "corrected", "").split(",") if c],
            "silver_snapshot_id": s["properties"].get(PROP + "silver-snapshot"),
            "input_hashes": hashes_in(s["properties"]),
        }
        for s in snaps
    ]
    # The last change of the date: the newest snapshot in gold's current line that rewrote it,
    # against its parent, the state just before that commit.
    writers = [r for r in runs if r["current_ancestor"] and a.date in r["dates"]]
    current = table.current_snapshot()
    gold_now = gold_rows(table, snapshot_id=current.snapshot_id, date=date) if current else []
    after = writers[-1]["snapshot_id"] if writers else None
    before = writers[-1]["parent_id"] if writers else None
    rows_before = {r["store_id"]: r for r in gold_rows(table, snapshot_id=before, date=date)} if before else {}
    rows_after = {r["store_id"]: r for r in gold_rows(table, snapshot_id=after, date=date)} if after else {}
    stores = []
    for sid in sorted(set(rows_before) | set(rows_after), key=lambda s: s.encode("utf-8")):
        b, n = rows_before.get(sid), rows_after.get(sid)
        stores.append({
            "store_id": sid,
            "currency": (n or b)["currency"],
            "baskets_before": b["baskets"] if b else 0,
            "baskets_after": n["baskets"] if n else 0,
            "revenue_before_minor": b["revenue_minor"] if b else 0,
            "revenue_after_minor": n["revenue_minor"] if n else 0,
            "revenue_delta_minor": (n["revenue_minor"] if n else 0) - (b["revenue_minor"] if b else 0),
        })

    def partitions(t, snap_before, snap_after, rewritten):
        fb, fa = files_by_partition(t, snap_before), files_by_partition(t, snap_after)
        others = [
            {"business_date": d, "files_before": len(fb.get(d, [])), "files_after": len(fa.get(d, [])),
             "same_files": fb.get(d) == fa.get(d)}
            for d in sorted(set(fb) | set(fa)) if d not in rewritten
        ]
        return {
            "rewritten": sorted(rewritten),
            "rewritten_files_changed": all(fb.get(d) != fa.get(d) for d in rewritten),
            "other_partitions": others,
            "other_partitions_untouched": all(o["same_files"] for o in others),
        }

    last = writers[-1] if writers else None
    comparison = {
        "business_date": a.date,
        "snapshot_before": before,
        "snapshot_after": after,
        "run": last["run"] if last else None,
        "upload": last["upload"] if last else None,
        "corrected": last["corrected"] if last else [],
        "stores": stores,
        "gold": partitions(table, before, after, last["dates"]) if last else None,
    }
    if last and last["silver_snapshot_id"]:
        silver = static_table(a.warehouse, "silver_baskets")
        snap = silver.snapshot_by_id(int(last["silver_snapshot_id"]))
        if snap is not None:
            comparison["silver"] = partitions(silver, snap.parent_snapshot_id, snap.snapshot_id, last["dates"])
    os.makedirs(a.out, exist_ok=True)
    files = []
    for name, body in (
        ("run_snapshot_map.json", {"table": "recount.daily_store_sales", "runs": runs}),
        (f"gold_{a.date}.json", {"business_date": a.date, "snapshot_id": current.snapshot_id if current else None,
                                 "rows": [{k: (str(v) if k == "business_date" else v) for k, v in r.items()} for r in gold_now]}),
        (f"snapshot_comparison_{a.date}.json", comparison),
    ):
        path = os.path.join(a.out, name)
        text = json.dumps(body, indent=2, sort_keys=False, default=str) + "\n"
        with open(path + ".part", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".part", path)
        files.append({"path": path, "md5": hashlib.md5(text.encode("utf-8")).hexdigest()})
    emit("result", files=files, comparison=comparison)


# --- entry ---------------------------------------------------------------------------------------


def one_line(e):
    """What failed, in one line: for an error raised in a Python worker, the worker's own last
    exception line; for a Java exception, its class and first message line; else Python's."""
    text = str(e)
    found = re.findall(r"^(?:[\w.]+\.)?\w*(?:Error|Exception): .+$", text, re.M)
    java = getattr(e, "java_exception", None)
    if "PythonException" in type(e).__name__ and found:
        return found[-1].strip()
    if java is not None and type(e).__name__ == "Py4JJavaError":
        try:
            text = f"{java.getClass().getName()}: {java.getMessage()}"
        except Exception:  # the gateway may be gone
            pass
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(e).__name__)
    return first if re.match(r"^[\w.]+: ", first) else f"{type(e).__name__}: {first}"


def main(argv=None):
    p = argparse.ArgumentParser(prog="recount_spark")
    p.add_argument("--warehouse", required=True)
    p.add_argument("--queries", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "queries", "spark"))
    p.add_argument("--jar", default=os.environ.get("RECOUNT_ICEBERG_JAR", ""))
    p.add_argument("--master", default="local[2]")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--world", required=True)
    r.add_argument("--uploads", required=True, help="upload dates, comma-separated, in run order")
    r.add_argument("--late-days", type=int, default=2)
    r.add_argument("--daily", action="store_true")
    r.add_argument("--trigger", default="upload")
    f = sub.add_parser("fingerprint")
    f.add_argument("--as-of", type=int)
    f.add_argument("--reader", choices=["spark", "pyiceberg"], default="spark")
    s = sub.add_parser("snapshots")
    s.add_argument("--table", default="daily_store_sales")
    g = sub.add_parser("gold")
    g.add_argument("--date", required=True)
    g.add_argument("--as-of", type=int)
    e = sub.add_parser("evidence")
    e.add_argument("--date", required=True)
    e.add_argument("--out", required=True)
    b = sub.add_parser("rollback")
    b.add_argument("--snapshot", type=int, required=True)
    a = p.parse_args(argv)
    commands = {"run": cmd_run, "fingerprint": cmd_fingerprint, "snapshots": cmd_snapshots, "gold": cmd_gold,
                "evidence": cmd_evidence, "rollback": cmd_rollback}
    try:
        commands[a.command](a)
    except Exception as e:  # noqa: BLE001 - the caller gets one line, the log the rest
        traceback.print_exc(file=sys.stderr)
        emit("error", message=one_line(e))
        sys.exit(1)


if __name__ == "__main__":
    main()
