"""The Spark SQL files (queries/spark/*.sql): every `-- name:` block a statement, bound by name.

The format is build.rs's for the DuckDB files: a `-- define: NAME` block holds text that
statements use as `@NAME`, put in as it is written (a define that must stand as one expression
carries its own parentheses; a define may use another), so a rule Spark cannot hold in a function
(a window's ORDER BY) is still written once. No Spark here: plain python3 tests the loader."""

from __future__ import annotations

import os
import re
from typing import Any

Queries = dict[str, dict[str, str]]

_HEAD = re.compile(r"^-- (name|define): (\w+)\s*$")
_USE = re.compile(r"@(\w+)")


def _blocks(text: str) -> list[tuple[str, str, str]]:
    """(kind, name, body) of each block, comment lines left out of the body."""
    out: list[tuple[str, str, str]] = []
    kind: str | None = None
    name: str | None = None
    body: list[str] = []

    def close() -> None:
        if kind is not None and name is not None:
            out.append((kind, name, "".join(body).strip().rstrip(";")))

    for line in text.splitlines(keepends=True):
        m = _HEAD.match(line)
        if m:
            close()
            kind, name, body = m.group(1), m.group(2), []
        elif name is not None and not line.lstrip().startswith("--"):
            body.append(line)
    close()
    return out


def load_queries(directory: str) -> Queries:
    """Every `-- name: NAME` block of DIRECTORY/*.sql, as {file: {name: sql}}, with `@NAME` put in
    from the `-- define:` blocks of any file. A use of an undefined name, or a name defined twice,
    is an error naming the file and the statement."""
    raw: dict[str, dict[str, str]] = {}
    defines: dict[str, str] = {}
    for entry in sorted(os.listdir(directory)):
        if not entry.endswith(".sql"):
            continue
        with open(os.path.join(directory, entry), encoding="utf-8") as f:
            text = f.read()
        blocks: dict[str, str] = {}
        for kind, name, body in _blocks(text):
            target = defines if kind == "define" else blocks
            if name in target:
                raise ValueError(f"{entry}: `-- {kind}: {name}` is written twice")
            target[name] = body
        raw[entry[:-4]] = blocks

    def expand(text: str, where: str, within: tuple[str, ...] = ()) -> str:
        def one(m: re.Match[str]) -> str:
            name = m.group(1)
            if name not in defines:
                raise ValueError(f"{where}: @{name} is defined by no `-- define:` block")
            if name in within:
                raise ValueError(f"{where}: @{name} is put in within itself")
            return expand(defines[name], where, (*within, name))

        return _USE.sub(one, text)

    return {f: {n: expand(t, f"{f}.sql {n}") for n, t in blocks.items()} for f, blocks in raw.items()}


class Sql:
    """The statements on one Spark session."""

    def __init__(self, spark: Any, directory: str) -> None:
        self.spark = spark
        self.q = load_queries(directory)

    def __call__(self, file: str, name: str, **args: Any) -> Any:
        """Runs one named statement with its parameters bound by name (never formatted in)."""
        from pyspark.sql import functions as F

        # A list of dates is bound as one text of ISO dates joined by commas (dates_of in v2.sql):
        # Spark binds literals only, and an array is not one.
        bound = {k: F.lit(",".join(str(x) for x in v) if isinstance(v, list) else v) for k, v in args.items()}
        text = self.q[file][name]
        return self.spark.sql(text, args=bound) if bound else self.spark.sql(text)
