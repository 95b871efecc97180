"""``make bench``: every benchmark with a target, one after another, then one table of the figures.

    python benchmarks/bench_all.py [--quick] [--skip NAME ...]

Each benchmark measures its own ratios side by side in one run (see its docstring) and records the
headline ones through ``benchmarks/summary.py``; this prints them together with the machine they
came from. ``--quick`` uses fewer repetitions and inputs (a smoke run: the figures are noisier).
A peer that is not installed (``pip install -e .[bench]``) is skipped by the benchmark that needs it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# label, script, arguments (full run), arguments (--quick)
BENCHMARKS = [
    ("cpu_stage", "cpu_stage", [], ["--reps", "1"]),
    ("peer_pipelines", "peer_pipelines", [], ["--corpora", "tiny,shared", "--tiny-files", "5000"]),
    ("small_run", "small_run", [], ["--repeats", "1"]),
    ("pdf_parse", "pdf_parse", ["--skip-old", "--repeat", "3"], ["--skip-old", "--repeat", "1"]),
    ("chunk_speed", "chunk_speed", ["--reps", "5"], ["--reps", "1"]),
    ("embed_cpu", "embed_cpu", ["--reps", "3"], ["--reps", "1", "--texts", "256"]),
    ("end_to_end", "end_to_end", [], ["--limit", "8"]),
    ("end_to_end_onnx_int8", "end_to_end", ["--backend", "onnx-int8"], None),
    ("gpu_embed", "gpu_embed", [], ["--quick"]),
    ("incremental", "incremental", [], ["--input", str(HERE.parent / "samples"), "--change", "0.05"]),
]


def machine() -> str:
    cores = len(os.sched_getaffinity(0))
    with open("/proc/meminfo") as f:
        mem_gb = int(f.readline().split()[1]) / 2**20
    try:
        import torch

        gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    except ImportError:
        gpu = "torch missing"
    return f"{platform.processor() or platform.machine()}, {cores} cores, {mem_gb:.0f} GiB, {gpu}; Python {platform.python_version()}"


def has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except ImportError:
        return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip", nargs="*", default=[], help="benchmark names to leave out")
    args = ap.parse_args()
    summary = Path(tempfile.mkstemp(prefix="raychunk-bench-", suffix=".jsonl")[1])
    env = dict(os.environ, RAYCHUNK_BENCH_SUMMARY=str(summary))
    ran: list[tuple[str, int, float]] = []
    for name, script, full, quick in BENCHMARKS:
        why = (
            "--skip"
            if name in args.skip
            else "no CUDA device"
            if name == "gpu_embed" and not has_cuda()
            else "not in --quick"
            if args.quick and quick is None
            else ""
        )
        if why:
            print(f"\n=== {name}: skipped ({why})", flush=True)
            continue
        cmd = [sys.executable, str(HERE / f"{script}.py"), *(quick if args.quick else full)]
        print(f"\n=== {name}: {' '.join(cmd[1:])}", flush=True)
        t = time.perf_counter()
        rc = subprocess.call(cmd, env=env)
        ran.append((name, rc, time.perf_counter() - t))
    rows = [json.loads(line) for line in summary.read_text().splitlines() if line.strip()]
    summary.unlink()
    print(f"\n=== summary on {machine()}" + (" (--quick: noisy)" if args.quick else ""))
    width = max([len(r["figure"]) for r in rows] + [6])
    print(f"{'figure':{width}}  {'value':>8}  {'target':>9}  {'met':>4}  before")
    for r in rows:
        met = "" if r["met"] is None else ("yes" if r["met"] else "NO")
        print(f"{r['figure']:{width}}  {r['value']:8.2f}  {r['target']:>9}  {met:>4}  {r['before']}")
    for name, rc, seconds in ran:
        print(f"{name}: {'ok' if rc == 0 else f'exit {rc}'} in {seconds:.0f} s")
    return max((rc for _, rc, _ in ran), default=0)


if __name__ == "__main__":
    raise SystemExit(main())
