"""The driver's memory must not grow with the corpus: `raychunk price` and `raychunk run --no-embed`
on generated corpora of increasing size, each command in its own process, side by side.

    python benchmarks/scale.py [--docs 20000,200000] [--work DIR] [--num-cpus N] [--keep]

    (default: 20,000 and 200,000 documents, in out/scale; all CPUs)

The corpus: small documents of four kinds in a fixed rotation (markdown with headings, a list and a
pipe table; HTML with a heading and a table; plain text paragraphs; a markdown FAQ), every file's
words drawn from a seeded generator, so each size is a deterministic superset of the smaller ones
(document i is the same file at every size) and no two documents are byte-identical.

Each command runs in a child process that reports its own peak resident memory
(``getrusage(RUSAGE_SELF).ru_maxrss``: the driver's, not Ray's workers'), and the wall time from
launch to exit. ``price`` runs the 3 x 3 grid (sizes 128,256,512 x overlaps 0,0.1,0.2, structure)
plus the per-type profile, with ``--no-measure`` (no embedder load: the driver's memory is the
point). ``run --no-embed`` writes chunks and documents. The last table gives the ratio of the
largest corpus's figures to the smallest's: peak RSS should stay near 1.0x while documents grow.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

WORDS = [
    "index",
    "chunk",
    "vector",
    "token",
    "table",
    "heading",
    "section",
    "cluster",
    "driver",
    "worker",
    "shard",
    "parquet",
    "embed",
    "model",
    "latency",
    "budget",
    "storage",
    "query",
    "passage",
    "corpus",
    "document",
    "retrieval",
    "overlap",
    "profile",
    "setting",
    "replica",
    "memory",
    "node",
    "region",
    "bucket",
    "prefix",
    "partition",
    "schedule",
    "batch",
    "stream",
    "operator",
    "actor",
    "task",
    "object",
]

# The child: run the CLI in-process, then report this process's own peak RSS (KiB on Linux).
_CHILD = (
    "import json, resource, sys; from raychunk.cli import main; rc = main(sys.argv[2:]); "
    "open(sys.argv[1], 'w').write(json.dumps({'rc': rc, "
    "'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})); sys.exit(rc or 0)"
)


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def document(i: int) -> tuple[str, str]:
    """Document ``i`` of the synthetic corpus: (file name, text). Deterministic in ``i`` alone."""
    rng = random.Random(i)
    kind = i % 4
    title = f"Topic {i}: {_sentence(rng, 4)[:-1]}"
    paras = [" ".join(_sentence(rng, rng.randint(8, 20)) for _ in range(rng.randint(2, 5))) for _ in range(4)]
    if kind == 0:
        rows = "\n".join(
            f"| {rng.choice(WORDS)} | {rng.randint(1, 999)} | {rng.choice(WORDS)} |" for _ in range(4)
        )
        text = (
            f"# {title}\n\n{paras[0]}\n\n## Setup {i}\n\n{paras[1]}\n\n- {_sentence(rng, 6)}\n- {_sentence(rng, 7)}\n\n"
            f"## Options\n\n| name | value | note |\n|---|---|---|\n{rows}\n\n## Notes\n\n{paras[2]}\n"
        )
        return f"d{i:07d}.md", text
    if kind == 1:
        cells = "".join(
            f"<tr><td>{rng.choice(WORDS)}</td><td>{rng.randint(1, 99)}</td></tr>" for _ in range(3)
        )
        text = (
            f"<html><head><title>{title}</title></head><body><h1>{title}</h1><p>{paras[0]}</p>"
            f"<h2>Details</h2><p>{paras[1]}</p><table><tr><th>key</th><th>n</th></tr>{cells}</table>"
            f"<p>{paras[2]}</p></body></html>\n"
        )
        return f"d{i:07d}.html", text
    if kind == 2:
        return f"d{i:07d}.txt", f"{title}\n\n" + "\n\n".join(paras) + "\n"
    qa = "\n\n".join(f"### {_sentence(rng, 6)[:-1]}?\n\n{p}" for p in paras[:3])
    return f"d{i:07d}.md", f"# FAQ {i}\n\n{qa}\n"


def generate(folder: Path, n: int) -> int:
    """Write documents 0..n-1 into ``folder`` (in subfolders of 10,000), skipping those already there."""
    written = 0
    for i in range(n):
        name, text = document(i)
        sub = folder / f"{i // 10_000:03d}"
        path = sub / name
        if not path.exists():
            sub.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            written += 1
    return written


def run_cli(args: list[str], work: Path) -> dict:
    stats = work / f"stats-{time.monotonic_ns()}.json"
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    t = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, str(stats), *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - t
    if proc.returncode != 0 or not stats.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        raise SystemExit(f"raychunk {' '.join(args[:1])} failed ({proc.returncode}):\n" + "\n".join(tail))
    out = json.loads(stats.read_text())
    stats.unlink()
    return {"wall_s": wall, "peak_rss_mb": out["peak_rss_mb"]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", default="20000,200000", help="corpus sizes, comma-separated")
    ap.add_argument("--work", default=str(ROOT / "out" / "scale"))
    ap.add_argument("--num-cpus", type=int, default=None)
    ap.add_argument("--only", choices=("price", "run"), help="run one command")
    ap.add_argument("--keep", action="store_true", help="keep the generated corpora and outputs")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)

    sizes = sorted(int(s) for s in args.docs.split(","))
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    cpus = ["--num-cpus", str(args.num_cpus)] if args.num_cpus else []
    results = []
    for n in sizes:
        corpus = work / f"corpus-{n}"
        t = time.perf_counter()
        made = generate(corpus, n)
        mb = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file()) / 1e6
        print(
            f"{n:,} documents ({mb:,.1f} MB): generated {made:,} in {time.perf_counter() - t:.1f} s",
            flush=True,
        )
        row = {"documents": n, "mb": round(mb, 1)}
        if args.only in (None, "price"):
            row["price"] = run_cli(
                ["price", "--input", str(corpus), "--output", str(work / f"price-{n}"), "--sizes", "128,256,512",
                 "--overlaps", "0,0.1,0.2", "--strategies", "structure", "--no-measure", "--no-chart", *cpus],
                work,
            )  # fmt: skip
            print(f"  price (3 x 3 grid + profile): {row['price']}", flush=True)
        if args.only in (None, "run"):
            row["run"] = run_cli(
                ["run", "--input", str(corpus), "--output", str(work / f"run-{n}"), "--overwrite", "--no-embed", *cpus],
                work,
            )  # fmt: skip
            print(f"  run --no-embed: {row['run']}", flush=True)
        results.append(row)
        if not args.keep:
            shutil.rmtree(work / f"run-{n}", ignore_errors=True)

    print(
        f"\n{'documents':>10} {'MB':>8} {'command':<16} {'wall s':>8} {'docs/s':>8} {'driver peak RSS MB':>19}"
    )
    for row in results:
        for cmd in ("price", "run"):
            if cmd in row:
                r = row[cmd]
                print(
                    f"{row['documents']:>10,} {row['mb']:>8,.1f} {cmd:<16} {r['wall_s']:>8.1f} "
                    f"{row['documents'] / r['wall_s']:>8.0f} {r['peak_rss_mb']:>19.0f}"
                )
    if len(results) > 1:
        small, big = results[0], results[-1]
        print(f"\n{big['documents'] / small['documents']:.0f}x the documents:")
        for cmd in ("price", "run"):
            if cmd in small and cmd in big:
                ratio = big[cmd]["peak_rss_mb"] / small[cmd]["peak_rss_mb"]
                print(
                    f"  {cmd}: driver peak RSS {ratio:.2f}x, wall {big[cmd]['wall_s'] / small[cmd]['wall_s']:.1f}x"
                )
                try:
                    from summary import record

                    record(f"scale: {cmd} driver peak RSS, {big['documents']:,} vs {small['documents']:,} docs",
                           ratio, target="<= 1.1", met=ratio <= 1.1)  # fmt: skip
                except ImportError:
                    pass
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    if not args.keep:
        for n in sizes:
            shutil.rmtree(work / f"price-{n}", ignore_errors=True)


if __name__ == "__main__":
    main()
