"""The driver's commands and its entry point: `python -m recount_spark --warehouse WH COMMAND`."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from recount_spark import model, model_mirror, model_warehouse, v2
from recount_spark.answers import (
    GoldAnswer,
    Landing,
    ModelFingerprintAnswer,
    ModelLanding,
    ModelNaiveAnswer,
    ModelRun,
    ModelRunAnswer,
    NaiveAnswer,
    RebuildAnswer,
    ReopenAnswer,
    RollbackAnswer,
    Run,
    RunAnswer,
    SnapshotsAnswer,
    StoreGold,
    StoresLanded,
    TableFilesAnswer,
)
from recount_spark.evidence import cmd_evidence
from recount_spark.land import land as land_uploads
from recount_spark.mirror import foreign_files, foreign_table
from recount_spark.mirror import plan as mirror_plan
from recount_spark.session import release
from recount_spark.source import load as load_source
from recount_spark.state import gold_rows, pyiceberg_fingerprint, snapshot_rows, static_table
from recount_spark.warehouse import Warehouse
from recount_spark.wire import emit, progress


def input_bytes(world: str, uploads: list[dt.date]) -> int:
    """The bytes of the world's files of `uploads`, as they are on disk: what sizes the JVM.
    A description that does not read is 0 here: the landing reports it."""
    try:
        src = load_source(world)
    except (OSError, ValueError):
        return 0
    total = 0
    for u in uploads:
        part = src.partition_dir(world, u)
        total += sum(os.path.getsize(os.path.join(part, n)) for n in src.files(world, u))
    return total


def cmd_run(a: argparse.Namespace) -> None:
    uploads = [dt.date.fromisoformat(u) for u in a.uploads.split(",")]
    w = Warehouse(a, input_bytes=input_bytes(a.world, uploads))
    w.digits = {c: int(n) for c, n in (p.split("=") for p in a.digits.split(",") if p)}
    if len(uploads) <= 3:
        w.only(uploads, a.late_days)
    runs: list[Run] = []
    landings: list[Landing] = []
    total = len(uploads) + (len(uploads) if a.daily else 1)
    step = 0

    def tick(message: str) -> None:
        nonlocal step
        progress(message, step, total)
        step += 1

    def held(u: dt.date) -> bool:
        """Landing held this upload back (a file it could not read whole): it gets no run."""
        return any(r["upload"] == str(u) and r.get("held") for r in landings)

    stores: StoresLanded = {"changed": [], "readmitted": [], "removed": [], "rederived_files": 0}

    def land(batch: list[dt.date]) -> None:
        """Lands `batch`, then rebuilds for any store correction pending (its own run, first)."""
        nonlocal landings
        reports, plan = land_uploads(w, a.world, batch)
        landings += reports
        got = plan.report()
        stores["changed"] += got["changed"]
        stores["readmitted"] += got["readmitted"]
        stores["removed"] = got["removed"]
        stores["rederived_files"] += got["rederived_files"]
        rebuilt = v2.v2_store_changes(w, a.late_days)
        if rebuilt is not None:
            runs.append(rebuilt)

    if a.daily:
        for u in uploads:
            tick(f"landing {u}")
            land([u])
            tick(f"v2 run of upload {u}")
            if not held(u):
                runs.append(v2.v2_run(w, u, a.late_days, a.trigger))
    else:
        tick(f"landing {len(uploads)} upload(s)")
        land(sorted(uploads))
        ran = [u for u in uploads if not held(u)]
        if len(ran) > 1 and not a.per_upload:
            tick(f"v2 over {len(ran)} uploads in one pass")
            runs.append(v2.v2_range(w, ran, a.late_days))
        else:
            for u in ran:
                tick(f"v2 run of upload {u}")
                runs.append(v2.v2_run(w, u, a.late_days, a.trigger))
    progress("fingerprint", step, total)
    answer: RunAnswer = {"landings": landings, "stores": stores, "runs": runs, "fingerprint": w.fingerprint()}
    emit("result", **answer)
    release(w.spark)


def cmd_fingerprint(a: argparse.Namespace) -> None:
    if a.reader == "pyiceberg":
        emit("result", **pyiceberg_fingerprint(a.warehouse, a.as_of))
        return
    w = Warehouse(a, writes=False)
    emit("result", **w.fingerprint(a.as_of))
    release(w.spark)


def cmd_rollback(a: argparse.Namespace) -> None:
    w = Warehouse(a)
    # What the rollback goes back to, read by time travel (VERSION AS OF) before it moves.
    target = w.fingerprint(a.snapshot)
    done = w.rollback(a.snapshot)
    answer: RollbackAnswer = {**done, "target_fingerprint": target, "fingerprint": w.fingerprint()}
    emit("result", **answer)
    release(w.spark)


def cmd_reopen(a: argparse.Namespace) -> None:
    w = Warehouse(a)
    before = w.fingerprint()
    run = v2.reopen(w, dt.date.fromisoformat(a.date), a.reason, a.by, a.late_days)
    answer: ReopenAnswer = {"runs": [run], "before": before, "fingerprint": w.fingerprint()}
    emit("result", **answer)
    release(w.spark)


def cmd_rebuild(a: argparse.Namespace) -> None:
    w = Warehouse(a)
    run = v2.rebuild(w, [dt.date.fromisoformat(d) for d in a.dates.split(",")], a.late_days)
    answer: RebuildAnswer = {"runs": [run], "fingerprint": w.fingerprint()}
    emit("result", **answer)
    release(w.spark)


def cmd_naive(a: argparse.Namespace) -> None:
    w = Warehouse(a)
    done = v2.naive(w, dt.date.fromisoformat(a.date))
    answer: NaiveAnswer = {**done, "fingerprint": w.fingerprint()}
    emit("result", **answer)
    release(w.spark)


def cmd_snapshots(a: argparse.Namespace) -> None:
    held = model_warehouse.warehouse_model(a.warehouse)
    if held is not None and a.table == "daily_store_sales":
        a.table = held["gold"]
    table = static_table(a.warehouse, a.table)
    answer: SnapshotsAnswer = {"table": f"recount.{a.table}", "snapshots": snapshot_rows(table)}
    emit("result", **answer)


def cmd_model_run(a: argparse.Namespace) -> None:
    """A model's world landed and run into the warehouse (model_warehouse.py)."""
    from recount_spark.session import session
    from recount_spark.sql import Sql

    uploads = [dt.date.fromisoformat(u) for u in a.uploads.split(",")]
    # A correction's folder carries no recount.toml: it lands under the warehouse's model.
    declared = os.path.exists(os.path.join(a.world, "recount.toml"))
    held = model.model_of(a.world) if declared else model_warehouse.warehouse_model(a.warehouse)
    if held is None:
        raise ValueError(f"{a.world} declares no model (recount.toml), and {a.warehouse} holds none yet")
    spark = session(a.warehouse, a.master, a.jar)
    sql = Sql(spark, a.queries)
    model_warehouse.ensure(spark, sql, held)
    landing: ModelLanding = {"model": held["name"], "files": [], "dimension_changed": [], "dimension_removed": [], "missing": [],
                             "held": []}
    runs: list[ModelRun] = []
    batches = [[u] for u in uploads] if a.daily else [uploads]
    for i, batch in enumerate(batches):
        progress(f"landing {len(batch)} upload(s)", i, len(batches))
        landed, again = model_warehouse.land(spark, sql, a.world, held, batch)
        landing["files"] += landed["files"]
        landing["missing"] += landed["missing"]
        landing["held"] += landed["held"]
        landing["dimension_changed"] = sorted(set(landing["dimension_changed"]) | set(landed["dimension_changed"]))
        landing["dimension_removed"] = landed["dimension_removed"]
        # The uploads whose files a corrected dimension row re-read run too: their dates move. A
        # held upload landed nothing, so it gets no run.
        skipped = set(landed["missing"]) | {h["upload_date"] for h in landed["held"]}
        # One pass for the batch (a range, or one upload with --daily), as the lab's run.
        ran = sorted({u for u in batch if str(u) not in skipped} | set(again))
        if ran:
            runs.append(model_warehouse.run(spark, sql, a.warehouse, held, ran, a.late_days))
    answer: ModelRunAnswer = {"landing": landing, "runs": runs, "fingerprint": model_warehouse.fingerprint(a.warehouse, held)}
    emit("result", **answer)
    release(spark)


def cmd_model_fingerprint(a: argparse.Namespace) -> None:
    held = model_warehouse.warehouse_model(a.warehouse)
    if held is None:
        raise ValueError(f"{a.warehouse} holds no model's tables")
    answer: ModelFingerprintAnswer = {"line": model_warehouse.fingerprint(a.warehouse, held, a.as_of)}
    emit("result", **answer)


def _on_model_warehouse(a: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """A Spark session on the model's warehouse `a` names, and the model it holds."""
    from recount_spark.session import session

    held = model_warehouse.warehouse_model(a.warehouse)
    if held is None:
        raise ValueError(f"{a.warehouse} holds no model's tables")
    return session(a.warehouse, a.master, a.jar), held


def cmd_model_rollback(a: argparse.Namespace) -> None:
    """A model warehouse's gold back to a snapshot (model_warehouse.rollback)."""
    spark, held = _on_model_warehouse(a)
    emit("result", **model_warehouse.rollback(spark, a.warehouse, held, a.snapshot))
    release(spark)


def cmd_model_reopen(a: argparse.Namespace) -> None:
    """A model warehouse's date reopened under the window its late records need
    (model_warehouse.reopen)."""
    from recount_spark.sql import Sql

    spark, held = _on_model_warehouse(a)
    run = model_warehouse.reopen(spark, Sql(spark, a.queries), a.warehouse, held, dt.date.fromisoformat(a.date), a.late_days,
                                 (a.reason, a.by))
    emit("result", **run)
    release(spark)


def cmd_model_naive(a: argparse.Namespace) -> None:
    """v1 of a model warehouse's run date, appended (model_warehouse.naive)."""
    from recount_spark.sql import Sql

    spark, held = _on_model_warehouse(a)
    answer: ModelNaiveAnswer = {"run_date": a.date, "rows_added": model_warehouse.naive(spark, Sql(spark, a.queries), held,
                                                                                        dt.date.fromisoformat(a.date))}
    emit("result", **answer)
    release(spark)


def cmd_model_rebuild(a: argparse.Namespace) -> None:
    """A model warehouse's named dates rebuilt (model_warehouse.rebuild)."""
    from recount_spark.sql import Sql

    spark, held = _on_model_warehouse(a)
    dates = [dt.date.fromisoformat(d) for d in a.dates.split(",")]
    emit("result", **model_warehouse.rebuild(spark, Sql(spark, a.queries), a.warehouse, held, dates, a.late_days, a.force))
    release(spark)


def cmd_gold(a: argparse.Namespace) -> None:
    table = static_table(a.warehouse, "daily_store_sales")
    date = dt.date.fromisoformat(a.date)
    rows = gold_rows(table, snapshot_id=a.as_of, date=date)
    current = table.current_snapshot()
    stores: list[StoreGold] = [{"store_id": r["store_id"], "country": r["country"], "currency": r["currency"],
                                "baskets": r["baskets"], "revenue_minor": r["revenue_minor"]} for r in rows]
    answer: GoldAnswer = {"business_date": a.date, "snapshot_id": a.as_of or (current.snapshot_id if current else None),
                          "rows": stores}
    emit("result", **answer)


def cmd_plan(a: argparse.Namespace) -> None:
    """What a reader mirrors of the warehouse (mirror.py), planned by pyiceberg: no JVM."""
    emit("result", **mirror_plan(a.warehouse))


def cmd_model_plan(a: argparse.Namespace) -> None:
    """What a reader mirrors of a model's warehouse (model_mirror.py), planned by pyiceberg: no JVM."""
    emit("result", **model_mirror.plan(a.warehouse))


def cmd_table_files(a: argparse.Namespace) -> None:
    """The Parquet data files of another pipeline's Iceberg table at its current snapshot, which
    recount reads with DuckDB (`audit --gold iceberg:WH#namespace.table`): no JVM."""
    answer: TableFilesAnswer = {"files": foreign_files(foreign_table(a.warehouse, a.table), a.warehouse)}
    emit("result", **answer)


def cmd_serve(a: argparse.Namespace) -> None:
    """One warm Spark session for many calls: each connection on the socket sends one call (its
    argv, as `main` takes it, in a JSON line) and reads that call's JSON lines back, as a driver
    process would print them. Calls run one at a time. It ends when the process `--watch` names
    has gone, or after `--idle` seconds without a call."""
    import json
    import select
    import socket

    from recount_spark import session as sessions
    from recount_spark import wire

    sessions.share(sessions.session(a.warehouse or ".", a.master, a.jar))
    # Bound and listening under another name, then renamed: a caller that sees the socket's
    # path can connect (between bind and listen, a connect is refused).
    binding = a.socket + "~"
    for path in (a.socket, binding):
        if os.path.exists(path):
            os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(binding)
    server.listen(64)
    os.rename(binding, a.socket)
    progress(f"serving on {a.socket}")
    home = os.getcwd()
    last = time.monotonic()
    while time.monotonic() - last < a.idle and all(alive(pid) for pid in a.watch):
        if not select.select([server], [], [], 1.0)[0]:
            continue
        conn, _ = server.accept()
        with conn, conn.makefile("rw", encoding="utf-8") as f:
            request = json.loads(f.readline() or "{}")
            wire.OUT = f
            try:
                serve_one(a, request)
            except BrokenPipeError:
                pass
            finally:
                wire.OUT = None
                os.chdir(home)
                sessions.shared().catalog.clearCache()
        last = time.monotonic()
    server.close()
    os.unlink(a.socket)


def serve_one(a: argparse.Namespace, request: dict[str, Any]) -> None:
    """One served call, in its caller's working directory (its relative paths are the caller's),
    refused when it wants another build of the job or another master than this session's."""
    argv = [str(x) for x in request.get("argv", [])]
    known, _ = parser().parse_known_args(argv)
    if request.get("queries") != a.queries:
        emit("error", message=f"this server runs the job in {a.queries}: restart `recount spark serve`")
    elif known.master != a.master:
        emit("error", message=f"this server runs on {a.master}, not {known.master}: start one with --master {known.master}")
    else:
        os.chdir(request.get("cwd") or os.getcwd())
        main(argv, served=True)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def one_line(e: BaseException) -> str:
    """What failed, in one line: for an error raised in a Python worker, the worker's own last
    exception line; for a Java exception, its class and first message line; else Python's."""
    text = str(e)
    found = re.findall(r"^(?:[\w.]+\.)?\w*(?:Error|Exception): .+$", text, re.M)
    java = getattr(e, "java_exception", None)
    if "PythonException" in type(e).__name__ and found:
        return str(found[-1]).strip()
    if java is not None and type(e).__name__ == "Py4JJavaError":
        try:
            text = f"{java.getClass().getName()}: {java.getMessage()}"
        except Exception:  # noqa: BLE001 - the gateway may be gone
            pass
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(e).__name__)
    return first if re.match(r"^[\w.]+: ", first) else f"{type(e).__name__}: {first}"


def parser() -> argparse.ArgumentParser:
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(prog="recount_spark")
    p.add_argument("--warehouse", default="")
    p.add_argument("--queries", default=os.path.join(here, "..", "..", "queries", "spark"))
    p.add_argument("--jar", default=os.environ.get("RECOUNT_ICEBERG_JAR", ""))
    p.add_argument("--master", default="local[2]")
    p.add_argument("--rules", default="", help="the rules' version, which every input hash covers")
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--world", required=True)
    r.add_argument("--uploads", required=True, help="upload dates, comma-separated, in run order")
    r.add_argument("--late-days", type=int, default=2)
    r.add_argument("--daily", action="store_true")
    r.add_argument("--per-upload", action="store_true", help="one run per upload, not one pass over the range")
    r.add_argument("--trigger", default="upload")
    r.add_argument("--digits", default="", help="each store currency's ISO-4217 minor digits: GBP=2,JPY=0")
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
    o = sub.add_parser("reopen")
    o.add_argument("--date", required=True)
    o.add_argument("--reason", required=True)
    o.add_argument("--by", required=True)
    o.add_argument("--late-days", type=int, default=2)
    sub.add_parser("plan")
    sub.add_parser("model-plan")
    tf = sub.add_parser("table-files")
    tf.add_argument("--table", required=True, help="namespace.table")
    rb = sub.add_parser("rebuild")
    rb.add_argument("--dates", required=True, help="business dates, comma-separated")
    rb.add_argument("--late-days", type=int, default=2)
    mr = sub.add_parser("model-run")
    mr.add_argument("--world", required=True)
    mr.add_argument("--uploads", required=True, help="upload dates, comma-separated, in run order")
    mr.add_argument("--late-days", type=int, default=2)
    mr.add_argument("--daily", action="store_true")
    mb = sub.add_parser("model-rollback")
    mb.add_argument("--snapshot", type=int, required=True)
    mo = sub.add_parser("model-reopen")
    mo.add_argument("--date", required=True)
    mo.add_argument("--reason", required=True)
    mo.add_argument("--by", required=True)
    mo.add_argument("--late-days", type=int, default=2)
    mr2 = sub.add_parser("model-rebuild")
    mr2.add_argument("--dates", required=True, help="business dates, comma-separated")
    mr2.add_argument("--late-days", type=int, default=2)
    mr2.add_argument("--force", action="store_true")
    mn = sub.add_parser("model-naive")
    mn.add_argument("--date", required=True)
    mf = sub.add_parser("model-fingerprint")
    mf.add_argument("--as-of", type=int)
    nv = sub.add_parser("naive")
    nv.add_argument("--date", required=True)
    v = sub.add_parser("serve")
    v.add_argument("--socket", required=True)
    v.add_argument("--idle", type=float, default=900.0, help="seconds without a call before it ends")
    v.add_argument("--watch", type=int, action="append", default=[], help="end when this process has gone")
    return p


COMMANDS: dict[str, Callable[[argparse.Namespace], None]] = {
    "run": cmd_run, "fingerprint": cmd_fingerprint, "snapshots": cmd_snapshots, "gold": cmd_gold,
    "evidence": cmd_evidence, "rollback": cmd_rollback, "reopen": cmd_reopen, "plan": cmd_plan,
    "rebuild": cmd_rebuild, "naive": cmd_naive, "model-run": cmd_model_run, "model-fingerprint": cmd_model_fingerprint,
    "table-files": cmd_table_files, "model-plan": cmd_model_plan, "model-rollback": cmd_model_rollback,
    "model-reopen": cmd_model_reopen, "model-naive": cmd_model_naive,
    "model-rebuild": cmd_model_rebuild, "serve": cmd_serve,
}


def main(argv: list[str] | None = None, served: bool = False) -> None:
    """One command. Served (a call on `serve`'s session), its traceback goes to the caller as a
    `log` line, and it returns instead of exiting."""
    try:
        a = parser().parse_args(argv)
        if served and a.command == "serve":
            raise ValueError("a served call cannot serve")
        COMMANDS[a.command](a)
    except SystemExit as e:  # argparse's own refusal
        if not served:
            raise
        emit("error", message=f"the driver refused its arguments (exit {e.code})")
    except Exception as e:  # noqa: BLE001 - the caller gets one line, the log the rest
        text = traceback.format_exc()
        if served:
            emit("log", text=text)
        else:
            print(text, file=sys.stderr, end="")
        emit("error", message=one_line(e))
        if not served:
            sys.exit(1)
