"""Does the CPU stage use every core, and what does Ray cost over a plain loop?

    python benchmarks/cpu_stage.py [INPUT ...] [--reps R] [--against CHECKOUT]
    (default: ../shared/corpus/{md,html,txt}, else samples/)

Side by side, interleaved, median of R repetitions, on the same files and the same steps
(parse → classify → chunk, the job's per-type profiles, no embedding):

- plain loop: the stage functions called in one process (1 core), or in a 2-process pool (2 cores),
  no Ray, no document isolation;
- raychunk: ``raychunk run --no-embed --num-cpus N`` in a fresh process, its CPU stage's wall time
  from Ray Data's stats, with Ray's start-up reported apart, and the driver process's own CPU time
  (what it takes from the tasks once every core runs one).

``--against DIR`` (another checkout of raychunk, e.g. a worktree of ``main``): its ``raychunk run``
too, from that tree's code (``PYTHONPATH``), in the same rounds; the order of the two trees
alternates from round to round, and each round's scaling is printed for both, so a change's effect on
the scaling is read against the noise between rounds.

Targets (issue 12): 2 CPUs at least 1.7x 1 CPU; the stage within 15% of the plain loop at equal cores.
Issue 28: the stage's own scaling (1 CPU over 2) at least 0.95x the plain loop's, and a projection
to 16 cores: Amdahl's law fitted to each one's 1- and 2-CPU times (``amdahl``), a serial part
that does not shrink with cores (start-up, the longest file, the driver) and the rest that does.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from summary import record

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

_STEPS = None
PROJECT_CORES = 16


def _init(inputs: list[str]) -> None:
    global _STEPS
    from raychunk.config import build_run_config, load_config
    from raychunk.document_steps import chunk, per_document
    from raychunk.plan import resolve_plan

    cfg = build_run_config(load_config(), {"input": inputs, "embedder.enabled": False})
    _STEPS = per_document(resolve_plan(cfg), scheme="", last=chunk(resolve_plan(cfg)))


def _one(path: str) -> int:
    value = {"path": path, "bytes": Path(path).read_bytes()}
    for _, fn in _STEPS:
        value = fn(value)
    return len(value)


def plain_loop(inputs: list[str], paths: list[str], processes: int) -> float:
    t = time.perf_counter()
    if processes == 1:
        _init(inputs)
        rows = sum(map(_one, paths))
    else:
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(processes, initializer=_init, initargs=(inputs,)) as pool:
            rows = sum(pool.imap_unordered(_one, paths))
    assert rows > len(paths)
    return time.perf_counter() - t


def amdahl(one: float, two: float, cores: int) -> tuple[float, float]:
    """``(serial seconds, projected seconds on cores)`` from the times on 1 and 2 CPUs:
    t(n) = serial + parallel / n, so serial = 2 * two - one (at least 0) and parallel = one - serial."""
    serial = min(max(0.0, 2 * two - one), one)
    return serial, serial + (one - serial) / cores


# `raychunk run` in this interpreter, then the process's own CPU seconds on stderr (children apart)
_DRIVER = """
import resource, sys
sys.argv = ["raychunk", *sys.argv[1:]]
try:
    from raychunk.cli import main
    main()
finally:
    r = resource.getrusage(resource.RUSAGE_SELF)
    print("driver-cpu-s", r.ru_utime + r.ru_stime, file=sys.stderr)
"""


def raychunk_run(inputs: list[str], cpus: int, tree: Path = ROOT) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-c", _DRIVER, "run", "--input", *inputs, "--output", out]
        cmd += ["--overwrite", "--no-embed", "--num-cpus", str(cpus)]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=tree, env=env)
        report = json.loads((Path(out) / "report.json").read_text())
    (stage,) = [s for s in report["stages"] if "(isolated)" in s["stage"]]
    driver = [float(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("driver-cpu-s ")]
    return {
        "stage": stage["seconds"],
        "task": stage["task_seconds"],
        "tasks": stage.get("tasks"),
        "wall": report["throughput"]["wall_seconds"],
        "ray": report["throughput"]["ray_start_seconds"],
        "chunks": report["chunks"],
        "driver": driver[-1] if driver else float("nan"),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("inputs", nargs="*")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--against", type=Path, help="another checkout of raychunk, run in the same rounds")
    args = ap.parse_args()
    if args.against is not None and not (args.against / "raychunk" / "cli.py").exists():
        ap.error(f"--against {args.against}: not a checkout of raychunk (no raychunk/cli.py)")
    shared = ROOT.parent / "shared" / "corpus"
    inputs = args.inputs or (
        [str(shared / d) for d in ("md", "html", "txt")] if shared.exists() else [str(ROOT / "samples")]
    )
    inputs = [str(Path(i).resolve()) for i in inputs]  # the runs' working folder is their tree
    from raychunk.io import list_inputs, readable

    _, _, files = list_inputs(inputs)
    paths = [f.path for f in sorted(readable(files), key=lambda f: -f.size)]
    cores = len(os.sched_getaffinity(0))
    counts = [1, 2] if cores >= 2 else [1]
    loop: dict[int, list[float]] = {n: [] for n in counts}
    ray: dict[int, list[dict]] = {n: [] for n in counts}
    against: dict[int, list[dict]] = {n: [] for n in counts}
    raychunk_run(inputs, 1)  # warm-up: page cache, first imports
    for rep in range(args.reps):
        for n in counts:
            loop[n].append(plain_loop(inputs, paths, n))
        trees = [(ROOT, ray)] + ([(args.against.resolve(), against)] if args.against else [])
        for tree, runs in trees if rep % 2 == 0 else trees[::-1]:
            for n in counts:
                runs[n].append(raychunk_run(inputs, n, tree))

    med = lambda xs: statistics.median(xs)  # noqa: E731
    mb = sum(f.size for f in files) / 1e6
    print(f"{len(paths)} files, {mb:.1f} MB ({', '.join(inputs)}); {cores} cores; median of {args.reps}")
    print(f"{'':34}" + "".join(f"{f'{n} CPU':>12}" for n in counts))
    rows = [
        ("plain loop, s", [med(loop[n]) for n in counts]),
        ("raychunk CPU stage wall, s", [med([r["stage"] for r in ray[n]]) for n in counts]),
        ("raychunk CPU stage task time, s", [med([r["task"] for r in ray[n]]) for n in counts]),
        ("raychunk run wall, s", [med([r["wall"] for r in ray[n]]) for n in counts]),
        ("  of which Ray start-up, s", [med([r["ray"] for r in ray[n]]) for n in counts]),
        ("raychunk driver CPU, s", [med([r["driver"] for r in ray[n]]) for n in counts]),
        (
            "stage / plain loop (target <= 1.15)",
            [med([r["stage"] for r in ray[n]]) / med(loop[n]) for n in counts],
        ),
    ]
    for name, values in rows:
        print(f"{name:34}" + "".join(f"{v:12.2f}" for v in values))
    print(f"{'CPU stage tasks':34}" + "".join(f"{ray[n][0]['tasks']:>12}" for n in counts))
    if len(counts) == 2:
        one, two = (med([r["stage"] for r in ray[n]]) for n in counts)
        print(
            f"2 CPUs vs 1 CPU, CPU stage: {one / two:.2f}x (target >= 1.7); plain loop: "
            f"{med(loop[1]) / med(loop[2]):.2f}x"
        )
        stage_x, loop_x = one / two, med(loop[1]) / med(loop[2])
        print(f"raychunk's scaling / the plain loop's: {stage_x / loop_x:.2f} (target >= 0.95)")
        for name, t1, t2 in (
            ("plain loop", med(loop[1]), med(loop[2])),
            ("raychunk CPU stage", one, two),
        ):
            serial, t16 = amdahl(t1, t2, PROJECT_CORES)
            print(
                f"{name}: {serial:.2f} s serial of {t1:.2f} s; projected on {PROJECT_CORES} cores "
                f"{t16:.2f} s ({t1 / t16:.1f}x 1 CPU)"
            )
    if args.against and len(counts) == 2:
        print(
            f"side by side, {args.reps} rounds, the order of the trees alternating (--against {args.against}):"
        )
        for name, runs in (("this checkout", ray), ("--against", against)):
            one, two = (med([r["stage"] for r in runs[n]]) for n in counts)
            per_round = [
                (runs[1][i]["stage"] / runs[2][i]["stage"]) / (loop[1][i] / loop[2][i])
                for i in range(args.reps)
            ]
            print(
                f"  {name:14} CPU stage {one:.2f} / {two:.2f} s ({one / two:.2f}x), scaling over the loop's "
                f"{(one / two) / (med(loop[1]) / med(loop[2])):.2f} (rounds: "
                f"{', '.join(f'{x:.2f}' for x in per_round)}); driver CPU at 2 CPUs "
                f"{med([r['driver'] for r in runs[2]]):.2f} s; task time at 2 CPUs {med([r['task'] for r in runs[2]]):.2f} s"
            )
    chunks = {r["chunks"] for n in counts for r in ray[n]} | {r["chunks"] for n in counts for r in against[n]}
    print(f"chunks: {sorted(chunks)} (one value: the same output at every core count and tree)")
    for n in counts:
        ratio = med([r["stage"] for r in ray[n]]) / med(loop[n])
        record(
            f"CPU stage / plain loop, {n} CPU",
            ratio,
            target="<= 1.15",
            before="1.8 (whole run)",
            met=ratio <= 1.15,
        )
    if len(counts) == 2:
        record(
            "CPU stage, 2 CPUs vs 1", one / two, target=">= 1.7", before="none (0.90)", met=one / two >= 1.7
        )
        record(
            "CPU stage scaling / plain loop scaling, 2 CPUs",
            stage_x / loop_x,
            target=">= 0.95",
            before="none",
            met=stage_x / loop_x >= 0.95,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
