"""Pricing a 9-setting grid costs at most 1.5x pricing one setting: parse and tokenize once.

    python benchmarks/price_grid.py [INPUT ...]      (default: ../shared/corpus/{md,html,txt}, else samples/)

Runs, in one Ray session on this machine: a warm-up pass (page cache, worker imports), then the
9-setting grid (sizes 128/256/512 x overlaps 0/0.1/0.2), then one setting (256, overlap 0.1), and
prints both times and their ratio.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")


def main(argv: list[str]) -> int:
    import ray

    from raychunk.config import build_run_config, load_config
    from raychunk.jobs.price import measure_corpus
    from raychunk.plan import resolve_plan
    from raychunk.pricing import grid

    shared = ROOT.parent / "shared" / "corpus"
    inputs = argv or (
        [str(shared / d) for d in ("md", "html", "txt")] if shared.exists() else [str(ROOT / "samples")]
    )
    cfg = build_run_config(load_config(), {"input": inputs, "embedder.enabled": False})
    one = grid([256], [0.1], ["structure"])
    nine = grid([128, 256, 512], [0, 0.1, 0.2], ["structure"])

    t = time.perf_counter()
    listing = measure_corpus(resolve_plan(cfg), one).listing
    warm = time.perf_counter() - t
    print(f"corpus: {listing['files']} files, {listing['bytes'] / 1e6:.1f} MB ({', '.join(inputs)})")
    print(f"warm-up, 1 setting: {warm:.1f} s (includes Ray start)")

    t = time.perf_counter()
    nine_totals = measure_corpus(resolve_plan(cfg), nine).partial.totals
    t9 = time.perf_counter() - t
    t = time.perf_counter()
    one_totals = measure_corpus(resolve_plan(cfg), one).partial.totals
    t1 = time.perf_counter() - t
    chunks1 = sum(t.chunks for t in one_totals.values())
    chunks9 = sum(t.chunks for t in nine_totals.values())
    print(f"1 setting : {t1:7.1f} s  ({chunks1:,} chunks)")
    print(f"9 settings: {t9:7.1f} s  ({chunks9:,} chunks over all settings)")
    print(f"ratio 9/1 : {t9 / t1:7.2f}  (goal <= 1.5)")
    ray.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
