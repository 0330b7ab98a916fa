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


def session(warehouse: str, master: str, jar: str) -> Any:
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
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", os.environ.get("RECOUNT_SPARK_DRIVER_MEMORY", "2g"))
        # C1 only and the serial collector: a job of many short queries on a small heap spends
        # more in the JIT and GC threads than in the data (about 10% of a run, measured).
        .config(
            "spark.driver.extraJavaOptions",
            os.environ.get("RECOUNT_SPARK_JAVA_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"),
        )
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark
