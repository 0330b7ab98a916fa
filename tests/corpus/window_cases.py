"""Writes tests/corpus/window.jsonl: the lateness window's verdicts, decided here from the
contract's words (docs/data-contract.md, "Rules"), not by running either engine.

- Business date d is built from the uploads d-1 .. d+LATE_DAYS: `in_window`.
- A run of upload u rebuilds every date d of its rows with d >= u - LATE_DAYS: `affected`.
  Older rows are `beyond_window`; rows dated after u + 1 are `future_dated`.

The lab (crates/core/src/rules.rs, and the SQL macro `in_window` in queries/schema.sql, in
tests/models.rs) and the Spark driver (spark/recount_spark/model_warehouse.py, in
spark/tests/test_window.py) each give every verdict.

    python3 tests/corpus/window_cases.py > tests/corpus/window.jsonl
"""

import datetime as dt
import json

uploads = [dt.date(2026, 10, 19), dt.date(2026, 3, 1), dt.date(2027, 1, 1), dt.date(2028, 2, 29)]
for upload in uploads:
    for late in (0, 1, 2, 5):
        for offset in range(-8, 4):
            d = upload + dt.timedelta(days=offset)
            in_window = d - dt.timedelta(days=1) <= upload <= d + dt.timedelta(days=late)
            if d > upload + dt.timedelta(days=1):
                fate = "future_dated"
            elif d < upload - dt.timedelta(days=late):
                fate = "beyond_window"
            else:
                fate = "affected"
            print(json.dumps({"upload": str(upload), "business_date": str(d), "late_days": late, "in_window": in_window, "fate": fate}))
