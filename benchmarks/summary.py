"""One line per headline figure, gathered by ``benchmarks/bench_all.py`` (``make bench``).

A benchmark calls ``record(...)`` for each figure an issue sets a target on. Outside ``make bench``
(no ``RAYCHUNK_BENCH_SUMMARY`` in the environment) it does nothing, so every benchmark still runs
on its own.
"""

from __future__ import annotations

import json
import os


def record(figure: str, value: float, *, target: str = "", before: str = "", met: bool | None = None) -> None:
    """``figure``: what was measured (a ratio, side by side in one run); ``target``: e.g. ``>= 1.7x``;
    ``before``: the figure before the work, as the issue quoted it; ``met``: whether the target holds."""
    path = os.environ.get("RAYCHUNK_BENCH_SUMMARY")
    if not path:
        return
    row = {"figure": figure, "value": round(float(value), 3), "target": target, "before": before, "met": met}
    with open(path, "a") as f:
        f.write(json.dumps(row) + "\n")
