#!/usr/bin/env bash
# The classic-shape pipeline recount is measured against, in its own Python environment
# (DuckDB from PyPI, which has the ICU time zones the bundled Rust DuckDB lacks).
#   bench/classic/run.sh runs WORLD [--backward] [--db FILE] [--late-days N]
# The venv goes to $RECOUNT_CLASSIC_VENV, else ~/.cache/recount-classic-venv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${RECOUNT_CLASSIC_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/recount-classic-venv}
if [[ ! -x $venv/bin/python ]] || ! "$venv/bin/python" -c 'import duckdb' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check duckdb==2.0.0
fi
exec "$venv/bin/python" "$here/classic.py" "$@"
