"""Models (docs/data-contract.md, "Models"): the parts of a daily metric, one line read and checked
with a model, and any model's recount of a world's raw files with its fingerprint. The lab's
twin is crates/raw/src/model/ (read.rs, recount.rs); tests/corpus/models.jsonl holds both to the same
verdict on every case, and tests/models.rs holds both recounts to one fingerprint. No Spark.

    python -m recount_spark.model WORLD      # prints the model's gold fingerprint of WORLD
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import os
import re
import sys
import tomllib
import zoneinfo
from typing import Any

from .parse import I64_MAX, I64_MIN, MAX_LINE_BYTES, gunzip, instant, is_blank, printable, split_lines

MAX_ID_BYTES = 256

MANUFACTURING: dict[str, Any] = {
    "name": "manufacturing", "gold": "daily_metrics", "entity": "record", "key": "record_id",
    "event_id": "event_id", "event_time": "produced_at", "arrival_time": "uploaded_at",
    "events_root": "mes/records",
    "dimension": {"file": "plants.csv", "key": "plant_id", "timezone": "timezone"},
    "business_date": None, "grain": ["plant_id", "line_id", "product_id"], "attributes": [],
    "measures": [{"name": "records", "of": "count"}, {"name": "units_produced", "of": "units"},
                 {"name": "defect_count", "of": "defects"}],
    "checks": [{"name": "units_non_negative", "rule": "units >= 0"},
               {"name": "defects_non_negative", "rule": "defects >= 0"},
               {"name": "defects_within_units", "rule": "defects <= units"}],
}


# A date as the contract writes it (crates/raw/src/raw/mod.rs, strict_date).
_DATE = re.compile("[0-9]{4}-[0-9]{2}-[0-9]{2}")


class Refused(Exception):
    """A line's quarantine reason."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class _Object(dict[str, Any]):
    """A JSON object as json.loads builds it (the last of a key given twice), with the keys that
    were given twice: a field read through one is refused, as the lab's reader refuses it."""

    twice: frozenset[str] = frozenset()


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    obj = _Object(pairs)
    if len(obj) < len(pairs):
        keys = [k for k, _ in pairs]
        obj.twice = frozenset(k for k in obj if keys.count(k) > 1)
    return obj


def _at(v: Any, path: str) -> Any:
    for k in path.split("."):
        if not isinstance(v, dict) or k not in v:
            return None
        if k in getattr(v, "twice", ()):
            raise Refused(f"{path} is given twice")
        v = v[k]
    return v


def _text(v: Any, path: str) -> str:
    s = _at(v, path)
    if s is None:
        raise Refused(f"missing required field {path}")
    if not isinstance(s, str):
        raise Refused(f"{path} is not a string")
    if s == "":
        raise Refused(f"empty required field {path}")
    if len(s.encode()) > MAX_ID_BYTES:
        raise Refused(f"{path} of {len(s.encode())} bytes, longer than the {MAX_ID_BYTES} recount keeps")
    return s


def _integer(v: Any, path: str) -> int:
    n = _at(v, path)
    if n is None:
        raise Refused(f"missing required field {path}")
    if isinstance(n, bool) or not isinstance(n, (int, float)):
        raise Refused(f"{path} is not an integer")
    if isinstance(n, float) or not I64_MIN <= n <= I64_MAX:
        raise Refused(f"{path} {n} is not an integer within 64 bits")
    return n


def _measure(v: Any, of: str) -> int:
    if of == "count":
        return 1
    if "[]." not in of:
        return _integer(v, of)
    lst, field = of.split("[].", 1)
    items = _list(v, lst)
    # A sum over an empty list is 0, as a SQL sum over no rows; a model that must refuse an empty
    # list declares the check `LIST[] not empty`.
    total = 0
    for i, item in enumerate(items, 1):
        try:
            n = _integer(item, field)
        except Refused as e:
            raise Refused(f"{lst} {i}: {e}") from None
        total += n
        if not I64_MIN <= total <= I64_MAX:
            raise Refused(f"{lst} {i}: the sum of {field} overflows 64 bits")
    return total


def _rule(rule: str) -> tuple[str, str, str]:
    words = rule.split()
    if len(words) == 3 and words[1] in (">=", "<=") and (words[1] == "<=" or words[2] == "0"):
        return words[0], words[1], words[2]
    if len(words) == 3 and words[0].endswith("[]") and words[1:] == ["not", "empty"]:
        return words[0][:-2], "not empty", ""
    raise ValueError(f"a rule is `FIELD >= 0`, `FIELD <= FIELD` or `LIST[] not empty`, not {rule!r}")


def _list(v: Any, lst: str) -> list[Any]:
    """The list at `lst`, or the reason the line is refused."""
    items = _at(v, lst)
    if items is None:
        raise Refused(f"missing required field {lst}")
    if not isinstance(items, list):
        raise Refused(f"{lst} is not a list")
    return items


def _instant(text: str, name: str) -> tuple[dt.datetime, int]:
    got = instant(text, name)
    if isinstance(got, str):
        raise Refused(got)
    return got


def read_line(model: dict[str, Any], dims: dict[str, tuple[str, list[str]]], line: str,
              upload: dt.date) -> dict[str, Any] | str:
    """One line read with `model`: its record, or the reason it is quarantined."""
    try:
        return _read(model, dims, line, upload)
    except Refused as e:
        return str(e)


def _read(model: dict[str, Any], dims: dict[str, tuple[str, list[str]]], line: str, upload: dt.date) -> dict[str, Any]:
    if len(line.encode()) > MAX_LINE_BYTES:
        raise Refused(f"line of {len(line.encode())} bytes, longer than the {MAX_LINE_BYTES} recount parses")
    try:
        v = json.loads(line, parse_constant=_no_constant, object_pairs_hook=_object)
    except (ValueError, RecursionError) as e:
        raise Refused(f"not one JSON object: {e}") from None
    if not isinstance(v, dict):
        raise Refused("not one JSON object")
    event_id, key = _text(v, model["event_id"]), _text(v, model["key"])
    grain = [_text(v, g) for g in model["grain"]]
    event_time, event_ns = _instant(_text(v, model["event_time"]), model["event_time"])
    arrival, arrival_ns = _instant(_text(v, model["arrival_time"]), model["arrival_time"])
    measures = [_measure(v, m["of"]) for m in model["measures"]]
    for c in model.get("checks", []):
        a, op, b = _rule(c["rule"])
        if op == "not empty":
            broken = not _list(v, a)
        else:
            broken = _integer(v, a) < 0 if op == ">=" else _integer(v, a) > _integer(v, b)
        if broken:
            raise Refused(f"breaks check {c['name']} ({c['rule']})")
    dim = model.get("dimension")
    if dim:
        ident = _text(v, dim["key"])
        if ident not in dims:
            raise Refused(f"unknown {dim['key']} '{printable(ident)}'")
        zone, attributes = dims[ident]
        business_date = event_time.astimezone(zoneinfo.ZoneInfo(zone)).date()
    else:
        field = model["business_date"]
        s = _text(v, field)
        try:
            # Exactly YYYY-MM-DD in ASCII digits (fromisoformat alone also takes 2026-W26-1).
            if not _DATE.fullmatch(s):
                raise ValueError(s)
            business_date = dt.date.fromisoformat(s)
        except ValueError:
            raise Refused(f"{field} '{printable(s)}' is not a date YYYY-MM-DD") from None
        attributes = []
    if arrival.date() != upload:
        stamp = arrival.strftime("%Y-%m-%dT%H:%M:%S.") + f"{arrival.microsecond // 1000:03d}Z"
        raise Refused(f"{model['arrival_time']} {stamp} is not in partition upload_date={upload}")
    return {"key": key, "event_id": event_id, "arrival_ns": arrival_ns, "event_ns": event_ns, "business_date": business_date.isoformat(),
            "grain": grain, "attributes": attributes, "measures": measures}


def dimension(model: dict[str, Any], text: str) -> dict[str, tuple[str, list[str]]]:
    """The dimension CSV by key: (time zone, attributes)."""
    dim = model.get("dimension")
    if not dim:
        return {}
    rows = csv.DictReader(io.StringIO(text))
    return {r[dim["key"]]: (r[dim["timezone"]], [r[a] for a in model.get("attributes", [])]) for r in rows}


def model_of(world: str) -> dict[str, Any]:
    """The model `WORLD/recount.toml` names (a built-in's name, or a [model] table)."""
    with open(os.path.join(world, "recount.toml"), "rb") as f:
        choice = tomllib.load(f).get("model")
    if choice == "manufacturing":
        return MANUFACTURING
    if isinstance(choice, dict):
        return {"event_id": "event_id", "attributes": [], "checks": [], "dimension": None, "business_date": None, **choice}
    raise ValueError(f"model {choice!r} is not one this reader knows")


def recount(world: str, model: dict[str, Any]) -> list[tuple[str, list[str], list[str], list[int]]]:
    """Gold recounted from the world's files: each key's first copy by (arrival, event id, upload
    date, file name, line), summed per (business date, grain, attributes)."""
    dims: dict[str, tuple[str, list[str]]] = {}
    if model.get("dimension"):
        with open(os.path.join(world, model["dimension"]["file"]), encoding="utf-8") as f:
            dims = dimension(model, f.read())
    root = os.path.join(world, model["events_root"])
    best: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
    for part in sorted(os.listdir(root)):
        upload = dt.date.fromisoformat(part.removeprefix("upload_date="))
        files = []
        for here, _, names in os.walk(os.path.join(root, part)):
            files += [os.path.relpath(os.path.join(here, n), os.path.join(root, part)) for n in names if n.endswith(".jsonl.gz")]
        for name in sorted(files, key=lambda n: n.encode()):
            with open(os.path.join(root, part, name), "rb") as f:
                lines = split_lines(gunzip(f.read()))
            for i, line in enumerate(lines.text, 1):
                if i - 1 in lines.not_utf8 or is_blank(line):
                    continue
                r = read_line(model, dims, line, upload)
                if isinstance(r, str):
                    continue
                order = (r["arrival_ns"], r["event_id"].encode(), upload, name.encode(), i)
                if r["key"] not in best or order < best[r["key"]][0]:
                    best[r["key"]] = (order, r)
    sums: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[int]] = {}
    for _, r in best.values():
        k = (r["business_date"], tuple(r["grain"]), tuple(r["attributes"]))
        acc = sums.setdefault(k, [0] * len(r["measures"]))
        for j, m in enumerate(r["measures"]):
            acc[j] += m
            if not I64_MIN <= acc[j] <= I64_MAX:
                raise ValueError(f"{model['gold']} on {k[0]}: the sum of {model['measures'][j]['name']} overflows 64 bits")
    return [(d, list(g), list(a), m) for (d, g, a), m in sorted(sums.items(), key=lambda kv: (kv[0][0], kv[0][1]))]


def fingerprint(model: dict[str, Any], rows: list[tuple[str, list[str], list[str], list[int]]]) -> str:
    """The contract's fingerprint in the model's columns."""
    text = "\n".join("|".join([d, *g, *a, *(str(x) for x in m)]) for d, g, a, m in rows)
    return fingerprint_line(model["gold"], len(rows), hashlib.md5(text.encode()).hexdigest())


def fingerprint_line(gold: str, rows: int, md5: str) -> str:
    """The fingerprint as the contract prints it: "gold.TABLE: N rows, md5 HEX" (tests/corpus/words.jsonl)."""
    return f"gold.{gold}: {rows:,} rows, md5 {md5}"


def main(argv: list[str]) -> None:
    world = argv[0]
    model = model_of(world)
    print(fingerprint(model, recount(world, model)))


if __name__ == "__main__":
    main(sys.argv[1:])
