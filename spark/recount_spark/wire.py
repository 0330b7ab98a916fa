"""The driver's answers on stdout (JSON lines) and its timings on stderr."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import IO, Any

# Where the answers go: stdout, or a served call's connection.
OUT: IO[str] | None = None


def emit(event: str, **fields: Any) -> None:
    print(json.dumps({"event": event, **fields}, default=str), file=OUT or sys.stdout, flush=True)


def progress(message: str, done: int | None = None, total: int | None = None) -> None:
    emit("progress", message=message, done=done, total=total)


class timed:
    """With RECOUNT_PROFILE set, how long a step took, on stderr (the log)."""

    on = bool(os.environ.get("RECOUNT_PROFILE"))

    def __init__(self, step: str) -> None:
        self.step = step
        self.t = 0.0

    def __enter__(self) -> None:
        self.t = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        if self.on:
            print(f"recount-profile {self.step}: {(time.perf_counter() - self.t) * 1000:.0f} ms", file=sys.stderr, flush=True)
