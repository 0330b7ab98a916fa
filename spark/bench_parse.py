"""The landing's parse in one process, the careful parser against the fast path, over a world's
first files (docs/performance.md, "2026-12-03, night"). CPU time a line, and the two batches
compared for equality. Run with the setup's Python (it has pyarrow):

    ~/.local/share/recount/spark/venv/bin/python spark/bench_parse.py WORLD [FILES]
"""

from __future__ import annotations

import datetime as dt
import glob
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from recount_spark.parse import PARSED_FIELDS, arrow_schema
from recount_spark.source import file_batch, load, parse_file, read_stores


def main() -> int:
    import pyarrow as pa

    world = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    src = load(world)
    stores = {s["store_id"]: s for s in read_stores(src, world)}
    paths = sorted(glob.glob(os.path.join(world, "pos", "events", "upload_date=*", "*.jsonl.gz")))[:count]
    cols = [c for c, _ in PARSED_FIELDS]
    careful = fast = 0.0
    lines = 0
    for _ in range(2):  # the first round imports and warms; the second is the figure
        careful = fast = 0.0
        lines = 0
        for path in paths:
            upload = dt.date.fromisoformat(path.split("upload_date=")[1][:10])
            name = os.path.basename(path)
            with open(path, "rb") as f:
                data = f.read()
            t0 = time.process_time()
            rows = list(parse_file(src, upload, name, 1, data, stores))
            old = pa.RecordBatch.from_pydict({c: [r.get(c) for r in rows] for c in cols}, schema=arrow_schema())
            t1 = time.process_time()
            new = file_batch(src, upload, name, 1, data, stores)
            t2 = time.process_time()
            if not old.equals(new):
                print(f"{path}: the two batches differ", file=sys.stderr)
                return 1
            careful += t1 - t0
            fast += t2 - t1
            lines += len(rows)
    print(f"{len(paths)} files, {lines:,} lines, equal batches")
    print(f"careful parser and batch: {careful / lines * 1e6:.1f} us a line")
    print(f"fast path:                {fast / lines * 1e6:.1f} us a line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
