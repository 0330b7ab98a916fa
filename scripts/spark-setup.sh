#!/usr/bin/env bash
# Sets up what `recount spark` needs, from the package registries only, and is safe to run again:
#   - Java 17 (apt, only when no java 17+ is on PATH),
#   - a Python venv with pinned pyspark 3.5.x, pyiceberg, pyarrow and pandas,
#   - the Iceberg Spark runtime jar for Spark 3.5 / Scala 2.12, taken from the PyPI package
#     snowpark-connect-deps-iceberg 1.0.2 (there is no Maven here; 1.0.3's jars are broken).
# The setup goes to $RECOUNT_SPARK_HOME, else ~/.local/share/recount/spark; recount looks there.
# A finished setup leaves a `ready` stamp naming its versions; a run that finds it matching exits.
set -euo pipefail

PYSPARK_VERSION=3.5.9
PYICEBERG_VERSION=0.10.0
PYARROW_VERSION=21.0.0
# pyspark 3.5's Arrow paths (mapInArrow, which landing parses with) import pandas.
PANDAS_VERSION=2.2.3
NUMPY_VERSION=2.2.6
# pyiceberg's SQL catalog (a catalog on a SQLite file, or any SQL database) needs SQLAlchemy:
# recount reads a warehouse through any catalog pyiceberg's load_catalog names.
SQLALCHEMY_VERSION=2.0.36
ICEBERG_DEPS_VERSION=1.0.2
ICEBERG_JAR=iceberg-spark-runtime-3.5_2.12-1.10.2.jar

home="${RECOUNT_SPARK_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/recount/spark}"
stamp="pyspark=$PYSPARK_VERSION pyiceberg=$PYICEBERG_VERSION pyarrow=$PYARROW_VERSION pandas=$PANDAS_VERSION sqlalchemy=$SQLALCHEMY_VERSION jar=$ICEBERG_JAR"
if [[ -f "$home/ready" && "$(cat "$home/ready")" == "$stamp" && -x "$home/venv/bin/python" && -f "$home/jars/$ICEBERG_JAR" ]]; then
  echo "spark setup: ready in $home ($stamp)"
  exit 0
fi

java_major() { java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1; }
if ! command -v java >/dev/null 2>&1 || [[ "$(java_major)" -lt 17 ]]; then
  echo "spark setup: installing Java 17 with apt"
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "spark setup: no java 17+ on PATH and no apt-get to install it; install a JDK 17 and run again" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi

mkdir -p "$home/jars"
rm -f "$home/ready"
python="${PYTHON:-python3}"
if [[ ! -x "$home/venv/bin/python" ]]; then
  echo "spark setup: making a venv in $home/venv"
  "$python" -m venv "$home/venv"
fi
pip=("$home/venv/bin/python" -m pip --disable-pip-version-check -q)
echo "spark setup: pyspark $PYSPARK_VERSION, pyiceberg $PYICEBERG_VERSION, pyarrow $PYARROW_VERSION, pandas $PANDAS_VERSION"
"${pip[@]}" install "pyspark==$PYSPARK_VERSION" "pyiceberg==$PYICEBERG_VERSION" "pyarrow==$PYARROW_VERSION" \
  "pandas==$PANDAS_VERSION" "numpy==$NUMPY_VERSION" "sqlalchemy==$SQLALCHEMY_VERSION"

if [[ ! -f "$home/jars/$ICEBERG_JAR" ]]; then
  echo "spark setup: $ICEBERG_JAR from snowpark-connect-deps-iceberg $ICEBERG_DEPS_VERSION"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "${pip[@]}" download --no-deps -d "$tmp" "snowpark-connect-deps-iceberg==$ICEBERG_DEPS_VERSION"
  "$home/venv/bin/python" - "$tmp" "$home/jars" "$ICEBERG_JAR" <<'PY'
import pathlib, sys, zipfile
src, dest, name = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
for wheel in src.glob("*.whl"):
    with zipfile.ZipFile(wheel) as z:
        for member in z.namelist():
            if member.endswith("/" + name) or member == name:
                part = dest / (name + ".part")
                part.write_bytes(z.read(member))
                part.rename(dest / name)
                sys.exit(0)
sys.exit(f"{name} not found in {[w.name for w in src.glob('*.whl')]}")
PY
fi

# A session that makes an Iceberg table proves the jar, Java and pyspark work together.
smoke="$(mktemp -d)"
SPARK_LOCAL_IP=127.0.0.1 "$home/venv/bin/python" - "$home/jars/$ICEBERG_JAR" "$smoke" <<'PY'
import sys
from pyspark.sql import SparkSession
jar, warehouse = sys.argv[1], sys.argv[2]
s = (SparkSession.builder.master("local[1]").config("spark.jars", jar)
     .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
     .config("spark.sql.catalog.smoke", "org.apache.iceberg.spark.SparkCatalog")
     .config("spark.sql.catalog.smoke.type", "hadoop")
     .config("spark.sql.catalog.smoke.warehouse", warehouse).getOrCreate())
s.sparkContext.setLogLevel("ERROR")
s.sql("CREATE TABLE smoke.db.t (d DATE, n BIGINT) USING iceberg PARTITIONED BY (d)")
s.sql("INSERT INTO smoke.db.t VALUES (DATE'2026-10-15', 1)")
assert s.sql("SELECT sum(n) FROM smoke.db.t").first()[0] == 1
s.stop()
PY
rm -rf "$smoke"
echo "$stamp" > "$home/ready"
echo "spark setup: ready in $home ($stamp)"
