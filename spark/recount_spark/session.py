"""The Spark session: Iceberg's catalog on the warehouse directory, and the settings a job of
many small statements wants on local[2]."""

from __future__ import annotations

import os
import sys
from typing import Any

from recount_spark.tables import CATALOG

# The one session `serve` keeps warm: each call gets a session of its own on it (its own SQL
# settings and catalogs, so its own warehouse), sharing the JVM, the SparkContext and its jars.
_shared: Any = None


def share(spark: Any) -> None:
    global _shared
    _shared = spark


def shared() -> Any:
    return _shared


def release(spark: Any) -> None:
    """The end of a command: its session stops, unless it is a call's on the shared one."""
    if _shared is None:
        spark.stop()


# From how many bytes of raw input a command's JVM compiles its hot code fully (C2). On two cores
# a short command spends more in the JIT's threads than it saves: C1 alone ran the sample's
# one pass (2 MB) in 16.7-17.9 s against 21.3-22.9 s with C2. A pass over the full world (207 MB)
# is the other way round: caching the events took 13 s against 29 s with C1 alone, silver 6-8 s
# against 19-21 s, and the whole pass 134 s against 153 s (docs/performance.md).
FULL_JIT_BYTES = 64 << 20


def java_options(input_bytes: int) -> str:
    """The driver JVM's options for a command reading `input_bytes` of raw files:
    RECOUNT_SPARK_JAVA_OPTIONS when set; else, below FULL_JIT_BYTES, C1 alone and the serial
    collector (a small heap, short pauses), and from there on the full JIT and the parallel
    collector (the options the full world's pass was measured with)."""
    chosen = os.environ.get("RECOUNT_SPARK_JAVA_OPTIONS")
    if chosen is not None:
        return chosen
    return "-XX:+UseParallelGC" if input_bytes >= FULL_JIT_BYTES else "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def session(warehouse: str, master: str, jar: str, input_bytes: int = 0) -> Any:
    if _shared is not None:
        child = _shared.newSession()
        child.conf.set(f"spark.sql.catalog.{CATALOG}.warehouse", os.path.abspath(warehouse))
        # Iceberg's own calls from Python (Spark3Util, a table's API) find their session as
        # Spark's active one, else the default: both are this call's (calls run one at a time).
        jvm = child._jvm.org.apache.spark.sql.SparkSession
        jvm.setActiveSession(child._jsparkSession)
        jvm.setDefaultSession(child._jsparkSession)
        return child
    from pyspark.sql import SparkSession

    # The executors' Python is this one (the setup's venv, with pyarrow and pandas), and they
    # import this package from where the driver does.
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
        # The job's caches (a landing's parsed lines, the events of bronze) live for one command:
        # compressing them cost more than it saved (the full world's parsed lines cached in 11-14 s
        # uncompressed against 20 s compressed, one session, docs/performance.md).
        .config("spark.sql.inMemoryColumnarStorage.compressed", os.environ.get("RECOUNT_SPARK_CACHE_COMPRESSED", "false"))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", os.environ.get("RECOUNT_SPARK_DRIVER_MEMORY", "2g"))
        # The JIT by the command's size (java_options); a served JVM is a short command's.
        .config("spark.driver.extraJavaOptions", java_options(input_bytes))
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark
