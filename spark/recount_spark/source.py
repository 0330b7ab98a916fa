"""A world's source description (`recount.toml`), read as the lab reads it (crates/raw/src/raw/source.rs,
crates/raw/src/raw/mapped.rs): where the partitions are and how their names give the upload date, which
files hold events in what format, which path gives each contract field, and the stores file.
Each mapped line goes through the same checks as a contract line (parse.check), so both engines
keep one set of rules; tests/sources.rs and tests/spark.rs hold the two to the same fingerprint.
No Spark here: the driver plans with it, the executors parse with it."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import fnmatch
import io
import json
import os
import re
import tomllib
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from recount_spark.parse import (
    MAX_INFLATED_BYTES,
    MAX_LINE_BYTES,
    Lines,
    Parsed,
    Stores,
    _Invalid,
    _lone_surrogate,
    _no_constant,
    _object,
    _too_deep,
    check,
    gunzip,
    is_blank,
    parse_line,
    printable,
    split_lines,
)

SOURCE_FILE = "recount.toml"
PLACEHOLDER = re.compile(r"\{(date|yyyy|mm|dd)\}")


@dataclass
class Source:
    """A checked description; the contract's layout when the world has none."""

    root: str = "pos/events"
    template: str = "upload_date={date}"
    glob: str = "*.jsonl.gz"
    format: str = "jsonl"
    compression: str | None = None
    fields: dict[str, Any] | None = None
    stores: dict[str, str] = field(default_factory=lambda: {
        "file": "stores.csv", "store_id": "store_id", "country": "country", "timezone": "timezone", "currency": "currency"})

    def levels(self) -> tuple[list[str], list[str]]:
        """The template's levels that name the upload date, and those below the day (`hour={hh}`,
        `*`), as the lab splits them (crates/raw/src/raw/source.rs)."""
        segs = self.template.split("/")
        dated = next((i for i, seg in enumerate(segs) if seg == "*" or "{hh}" in seg), len(segs))
        return segs[:dated], segs[dated:]

    def partition_dir(self, world: str, d: dt.date) -> str:
        values = {"date": d.isoformat(), "yyyy": f"{d.year:04d}", "mm": f"{d.month:02d}", "dd": f"{d.day:02d}"}
        rel = PLACEHOLDER.sub(lambda m: values[m.group(1)], "/".join(self.levels()[0]))
        return os.path.join(world, self.root, *rel.split("/"))

    def files(self, world: str, d: dt.date) -> list[str]:
        """The data files' names of upload `d`: each its path below the partition (levels joined
        by `/`, as the lab names a file of an hourly folder), writer markers left out."""
        part = self.partition_dir(world, d)
        if not os.path.isdir(part):
            return []
        out: list[str] = []

        def walk(folder: str, prefix: str, below: list[str]) -> None:
            for n in os.listdir(folder):
                path = os.path.join(folder, n)
                if is_marker(n):
                    continue
                if not below:
                    if os.path.isfile(path) and fnmatch.fnmatchcase(n, self.glob):
                        out.append(prefix + n)
                elif os.path.isdir(path) and level_takes(below[0], n):
                    walk(path, f"{prefix}{n}/", below[1:])

        walk(part, "", self.levels()[1])
        return sorted(out)

    @property
    def is_contract(self) -> bool:
        """The contract's own JSON Lines: no field mapping, each line read as the contract's."""
        return self.fields is None and self.format == "jsonl"

    def compression_of(self, name: str) -> str:
        if self.compression is not None:
            return self.compression
        return "gzip" if name.endswith(".gz") else "zstd" if name.endswith(".zst") else "none"


def level_takes(level: str, name: str) -> bool:
    """Whether a folder's name matches a level below the day: `*` any, `{hh}` an hour 00-23 in
    the level's own text, else the text itself."""
    if level == "*":
        return True
    if "{hh}" in level:
        prefix, suffix = level.split("{hh}", 1)
        hour = name[len(prefix):len(name) - len(suffix)] if name.startswith(prefix) and name.endswith(suffix) else ""
        return len(hour) == 2 and hour.isdigit() and int(hour) < 24
    return name == level


def is_marker(name: str) -> bool:
    return name.startswith((".", "_")) or name.endswith(".crc")


def load(world: str) -> Source:
    path = os.path.join(world, SOURCE_FILE)
    if not os.path.exists(path):
        return Source()
    with open(path, "rb") as f:
        d = tomllib.load(f)
    src = Source()
    parts, files, stores = d.get("partitions", {}), d.get("files", {}), d.get("stores", {})
    src.root = parts.get("root", src.root)
    src.template = parts.get("template", src.template)
    src.glob = files.get("glob", src.glob)
    src.format = files.get("format", src.format)
    src.compression = files.get("compression")
    src.fields = files.get("fields")
    src.stores = {**src.stores, **stores}
    return src


def read_stores(src: Source, world: str) -> list[dict[str, str]]:
    """The world's stores as the contract's rows (the lab checked them before Spark starts)."""
    s = src.stores
    path = os.path.join(world, s["file"])
    cols = [s["store_id"], s["country"], s["timezone"], s["currency"]]
    fmt = s.get("format") or ("parquet" if path.endswith(".parquet") else "csv")
    if fmt == "parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    else:
        with open(path, encoding="utf-8-sig", newline="") as f:
            rows = [{k.strip(): v for k, v in r.items()} for r in csv.DictReader(f)]
    keys = ["store_id", "country", "timezone", "currency"]
    return [{k: str(r[c]) for k, c in zip(keys, cols, strict=True)} for r in rows]


class _Num(str):
    """A JSON number's own text: an amount or an epoch count is read exactly, never as a float."""


# A described source's JSON reader, made once (as parse.CONTRACT_JSON): numbers kept as their text.
MAPPED_JSON = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_no_constant, parse_float=_Num, parse_int=_Num)


def _json(text: str) -> Any:
    if _too_deep(text):
        raise _Invalid("too deep")
    raw = MAPPED_JSON.decode(text)
    if "\\u" in text and _lone_surrogate(raw):
        raise _Invalid("lone surrogate")
    return raw


class _Mapped:
    """A description's fields, split into paths once per file (crates/raw/src/raw/mapped.rs `Map`)."""

    def __init__(self, fields: dict[str, Any]) -> None:
        def stamp(v: Any) -> tuple[str, str]:
            return (v, "iso") if isinstance(v, str) else (v["path"], v.get("format", "iso"))

        amount = fields["amount"]
        self.paths: dict[str, list[str]] = {n: fields[n].split(".") for n in ("event_id", "basket_id", "store_id", "currency")}
        self.till = fields.get("till_id")
        if self.till is not None:
            self.paths["till_id"] = self.till.split(".")
        (ev, self.ev_form), (up, self.up_form) = stamp(fields["event_ts"]), stamp(fields["uploaded_at"])
        self.paths["event_ts"], self.paths["uploaded_at"] = ev.split("."), up.split(".")
        self.paths["amount"] = amount["path"].split(".")
        self.tenders = amount.get("tenders")
        self.unit = amount.get("unit", "minor")
        shown = f"{self.tenders}[].{amount['path']}" if self.tenders else amount["path"]
        self.labels: dict[str, str | None] = {
            **{n: f"{n} ({fields[n]})" for n in ("event_id", "basket_id", "store_id", "currency")},
            "till_id": f"till_id ({self.till})" if self.till is not None else None,
            "event_ts": f"event_ts ({ev})", "uploaded_at": f"uploaded_at ({up})", "amount": f"amount ({shown})",
        }

    def _lookup(self, obj: Any, path: list[str], label: str) -> Any:
        for k, key in enumerate(path):
            if obj is None:
                return None
            if not isinstance(obj, dict):
                raise _Why(f"{label}: {'.'.join(path[:k])} is not an object")
            if key in getattr(obj, "dups", []):
                raise _Why(f"malformed JSON: duplicate field `{printable(key)}`")
            obj = obj.get(key)
        return obj

    def _scalar(self, obj: Any, name: str) -> str | None:
        label = self.labels[name] or name
        v = self._lookup(obj, self.paths[name], label)
        if v is None:
            return None
        if isinstance(v, bool):
            raise _Why(f"{label} is a boolean")
        if isinstance(v, (dict, list)):
            raise _Why(f"{label} is a list or an object, not a value")
        return v if isinstance(v, str) else str(v)

    def _stamp(self, obj: Any, name: str, form: str) -> tuple[str, str | None]:
        v = self._scalar(obj, name)
        if v is not None and form == "iso" and isinstance(v, _Num):
            raise _Why(f"{self.labels[name]} is a number, not an ISO-8601 text")
        return form, v

    def parse_object(self, obj: Any, stores: Stores, upload_date: dt.date) -> Parsed:
        try:
            fields = {n: self._scalar(obj, n) for n in ("event_id", "basket_id", "store_id")}
            fields["till_id"] = self._scalar(obj, "till_id") if self.till is not None else None
            fields["currency"] = self._scalar(obj, "currency")
            stamps = {"event_ts": self._stamp(obj, "event_ts", self.ev_form), "uploaded_at": self._stamp(obj, "uploaded_at", self.up_form)}
            amount = self._amount(obj)
        except _Why as w:
            return str(w)
        return check(fields, stamps, amount, self.labels, stores, upload_date)

    def _amount(self, obj: Any) -> tuple[str, Any, str] | None:
        label = self.labels["amount"] or "amount"
        if self.tenders is None:
            v = self._scalar(obj, "amount")
            return None if v is None or v == "" else ("totals", [v], self.unit)
        items = self._lookup(obj, self.tenders.split("."), label)
        if items is None:
            return None
        if not isinstance(items, list):
            raise _Why(f"{label}: {self.tenders} is not a list")
        texts = []
        for n, t in enumerate(items, 1):
            if not isinstance(t, dict):
                raise _Why(f"{label}: tender {n} is not an object")
            v = self._lookup(t, self.paths["amount"], label)
            if isinstance(v, bool) or isinstance(v, (dict, list)):
                raise _Why(f"{label} is a boolean" if isinstance(v, bool) else f"{label} is a list or an object, not a value")
            if v is None:
                raise _Why(f"{label}: tender {n} has no amount")
            texts.append(str(v))
        return "totals", texts, self.unit

    def parse_json(self, line: str, stores: Stores, upload_date: dt.date) -> Parsed:
        size = len(line.encode("utf-8", "surrogatepass"))
        if size > MAX_LINE_BYTES:
            return f"line of {size} bytes, longer than the {MAX_LINE_BYTES} recount parses"
        try:
            obj = _json(line)
        except (ValueError, RecursionError):
            return "malformed JSON: not one valid JSON value"
        if not isinstance(obj, dict):
            return "malformed JSON: not an object"
        return self.parse_object(obj, stores, upload_date)


class _Why(Exception):
    pass


def _inflate(data: bytes, compression: str) -> bytes:
    """A file's bytes inflated by its compression, not decoded: its lines are decoded one by one
    (split_lines). ValueError when the file cannot be read whole."""
    if compression == "gzip":
        try:
            return gunzip(data)
        except (ValueError, zlib.error) as e:
            raise ValueError(f"truncated or corrupt .gz file ({e})") from None
    elif compression == "zstd":
        import pyarrow as pa

        try:
            with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
                out: bytes = stream.read(MAX_INFLATED_BYTES + 1)
        except (OSError, pa.ArrowException) as e:
            raise ValueError(f"truncated or corrupt .zst file ({e})") from None
        if len(out) > MAX_INFLATED_BYTES:
            raise ValueError(f"inflates to more than {MAX_INFLATED_BYTES >> 20} MiB, the most one raw file may hold")
        return out
    if len(data) > MAX_INFLATED_BYTES:
        raise ValueError(f"larger than {MAX_INFLATED_BYTES >> 20} MiB, the most one raw file may hold")
    return data


def _parquet_rows(data: bytes) -> list[dict[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(pa.BufferReader(data))
    for f in table.schema:
        if pa.types.is_floating(f.type):
            raise ValueError(f"column '{printable(f.name)}' holds floating-point numbers, which cannot carry money or times exactly "
                             "(write DECIMAL, integers or text)")

    def value(v: Any) -> Any:
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, int):
            return _Num(str(v))
        if isinstance(v, decimal.Decimal):
            return _Num(format(v, "f"))
        if isinstance(v, dict):
            out = _object(list((k, value(x)) for k, x in v.items()))
            return out
        if isinstance(v, list):
            return [value(x) for x in v]
        return str(v)

    return [value(r) for r in table.to_pylist()]


def parse_file(src: Source, upload_date: dt.date, file_name: str, version: int, data: bytes, stores: Stores) -> Iterator[dict[str, Any]]:
    """Every line (row, record) of one file through the description, as parse.parse_file does
    for the contract's: an event, or a quarantined line with its reason."""
    base = {"upload_date": upload_date, "file_name": file_name, "file_version": version}
    if src.is_contract:
        m = None
    else:
        assert src.fields is not None
        m = _Mapped(src.fields)
    try:
        if src.format == "parquet":
            assert m is not None
            for i, row in enumerate(_parquet_rows(data), 1):
                yield _row(base, i, m.parse_object(row, stores, upload_date))
            return
        data = _inflate(data, src.compression_of(file_name))
    except (ValueError, OSError, zlib.error) as e:
        raise ValueError(f"{upload_date}/{file_name}: {e}") from None
    if src.format == "csv":
        assert m is not None
        yield from _csv(m, data, base, stores, upload_date)
        return
    lines = split_lines(data)
    for i, line in enumerate(lines.text, 1):
        if i - 1 in lines.not_utf8:
            parsed: Parsed = lines.not_utf8[i - 1]
        elif m is None:
            parsed = contract_line(line, stores, upload_date)
        else:
            parsed = "blank line" if is_blank(line) else m.parse_json(line, stores, upload_date)
        yield _row(base, i, parsed)


def file_batch(src: Source, upload_date: dt.date, file_name: str, version: int, data: bytes, stores: Stores) -> Any:
    """One file's rows as one Arrow batch of PARSED_FIELDS, as parse_file gives them: a file of
    the contract's JSON Lines through the fast path (recount_spark.fast), any other shape row by
    row. ValueError when the file cannot be read whole."""
    import pyarrow as pa

    from recount_spark.fast import file_batch as contract_batch
    from recount_spark.parse import arrow_schema

    if src.is_contract:
        base = {"upload_date": upload_date, "file_name": file_name, "file_version": version}
        lines = file_lines(src, upload_date, file_name, data)

        def careful(i: int, line: str) -> dict[str, Any]:
            return _row(base, i + 1, lines.not_utf8.get(i) or contract_line(line, stores, upload_date))

        return contract_batch(lines.text, base, stores, upload_date, careful)
    return pa.RecordBatch.from_pylist(list(parse_file(src, upload_date, file_name, version, data, stores)), schema=arrow_schema())


def file_lines(src: Source, upload_date: dt.date, file_name: str, data: bytes) -> Lines:
    """The lines of a file of JSON Lines, or ValueError when it cannot be read whole."""
    try:
        inflated = _inflate(data, src.compression_of(file_name))
    except (ValueError, OSError, zlib.error) as e:
        raise ValueError(f"{upload_date}/{file_name}: {e}") from None
    return split_lines(inflated)


def contract_line(line: str, stores: Stores, upload_date: dt.date) -> Parsed:
    """One line of the contract's shape: its fields, or its reason."""
    return "blank line" if is_blank(line) else parse_line(line, stores, upload_date)


# A byte that was not UTF-8, as surrogateescape decodes it: one surrogate of this range each.
_ESCAPED = re.compile("[\udc80-\udcff]")


def _not_utf8(text: str) -> int | None:
    """Where the first byte that was not UTF-8 stands in text decoded with surrogateescape, in
    bytes from its start; None when every byte was."""
    found = _ESCAPED.search(text)
    return None if found is None else len(text[:found.start()].encode("utf-8", "surrogateescape"))


def _row(base: dict[str, Any], line: int, parsed: Parsed) -> dict[str, Any]:
    if isinstance(parsed, str):
        return {**base, "line": line, "reason": parsed}
    return {**base, "line": line, **parsed, "reason": None}


def _csv(m: _Mapped, data: bytes, base: dict[str, Any], stores: Stores, upload_date: dt.date) -> Iterator[dict[str, Any]]:
    """A CSV file's rows. The header must be UTF-8; a row that is not is quarantined alone, with
    its first such byte counted from the row's first byte (crates/raw/src/raw/mapped/mod.rs)."""
    text = data.removeprefix("\ufeff".encode()).decode("utf-8", "surrogateescape")
    physical = io.StringIO(text, newline="").readlines()
    if physical and _not_utf8(physical[0]) is not None:
        raise ValueError(f"{upload_date}/{base['file_name']}: the CSV header cannot be read (not UTF-8)")
    r = csv.reader(iter(physical))
    header = [h.strip() for h in next(r, [])]
    cols = {n: (header.index(".".join(p)) if ".".join(p) in header else None) for n, p in m.paths.items()}
    # Each mapped column by its whole name, as one key: a CSV column is never nested.
    flat = _Mapped.__new__(_Mapped)
    flat.__dict__.update(m.__dict__)
    flat.paths = {n: [".".join(p)] for n, p in m.paths.items()}
    line = r.line_num + 1
    for rec in r:
        start, line = line, r.line_num + 1
        if not rec:
            continue
        at = _not_utf8("".join(physical[start - 1:line - 1]))
        if at is not None:
            yield _row(base, start, f"not UTF-8 at byte {at}")
            continue
        if len(rec) != len(header):
            yield _row(base, start, f"CSV row has {len(rec)} fields, the header has {len(header)}")
            continue
        obj = {".".join(m.paths[n]): rec[c] for n, c in cols.items() if c is not None}
        yield _row(base, start, flat.parse_object(obj, stores, upload_date))
