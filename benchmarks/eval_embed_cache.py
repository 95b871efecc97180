"""What the eval's embedding costs with its cache and without: a one-setting eval against a
six-setting one, embedding every chunk row (as the eval did before), each distinct text once (what
the eval does now), and again with a warm ``--cache`` folder (a later run of the tuning loop).

    python benchmarks/eval_embed_cache.py                       # the sample corpus
    python benchmarks/eval_embed_cache.py --input ../shared/corpus/md --repeat 1

The chunk rows come from the eval's own stages (parse, classify, and the chunk stage over every
setting), run here without Ray; the embedder is the eval's ``EmbedChunks`` on CPU, loaded before the
clock starts. Each figure is the best of ``--repeat`` runs, side by side in one process.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from raychunk.config import build_run_config, load_config  # noqa: E402
from raychunk.document_steps import for_eval, per_document  # noqa: E402
from raychunk.evaluation.partials import Retrieval  # noqa: E402
from raychunk.io import list_inputs, readable  # noqa: E402
from raychunk.plan import resolve_plan  # noqa: E402
from raychunk.pricing import Setting, grid  # noqa: E402

SIX = [
    Setting("per-type profile"),
    *grid([250, 200, 160], [0], ["structure"], table_max_tokens=128),
    *grid([250], [0], ["fixed"]),
    *grid([256], [0], ["structure"]),
]


def chunk_rows(cfg, settings) -> list[dict]:
    """The eval's chunk stage over every document, in this process."""
    import pyarrow as pa

    _, _, files = list_inputs(cfg.input)
    steps = per_document(
        resolve_plan(cfg), scheme="", last=for_eval(resolve_plan(cfg), settings, Retrieval({}, None, 5, 512))
    )
    rows = []
    for f in readable(files):
        value = {"path": f.path, "bytes": Path(f.path).read_bytes()}
        for _, fn in steps[:-1]:
            value = fn(value)
        rows.extend(steps[-1][1](value))
    return pa.Table.from_pylist(rows)


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", default=str(ROOT / "samples"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    from raychunk.embed import EmbedChunks, VectorCache

    cfg = build_run_config(load_config(), {"input": [args.input]})
    one, six = chunk_rows(cfg, SIX[:1]), chunk_rows(cfg, SIX)
    n_one = sum(r == "chunk" for r in one.column("row_type").to_pylist())
    texts = [
        t for r, t in zip(six.column("row_type").to_pylist(), six.column("text").to_pylist()) if r == "chunk"
    ]
    plain = EmbedChunks(cfg.embedder.model, device="cpu")
    figures = {}
    figures["1 setting, every row"], _ = best(lambda: plain(one), args.repeat)
    figures["6 settings, every row"], _ = best(lambda: plain(six), args.repeat)
    deduped = EmbedChunks(cfg.embedder.model, device="cpu", dedupe=True)

    def once():
        deduped.cache.vectors.clear()  # a fresh eval: nothing embedded yet
        return deduped(six)

    figures["6 settings, each text once"], out = best(once, args.repeat)
    embedded = sum(out.column("embedded").to_pylist())
    with tempfile.TemporaryDirectory() as folder:
        cached = EmbedChunks(cfg.embedder.model, device="cpu", cache=folder)
        cached(six)  # a first run fills the folder
        key = cached.cache.folder.name

        def warm_run():
            cached.cache = VectorCache(folder, key, cached.dim)  # a later run: the folder read back
            return cached(six)

        figures["6 settings, warm --cache"], warm = best(warm_run, args.repeat)
    print(f"input {args.input}: 1 setting {n_one:,} chunks; 6 settings {len(texts):,} chunk rows, ")
    print(
        f"{len(set(texts)):,} distinct texts ({embedded:,} embedded with the cache, warm: "
        f"{sum(warm.column('embedded').to_pylist()):,})"
    )
    base = figures["1 setting, every row"]
    print(f"{'embedding':<30} {'seconds':>8} {'x 1 setting':>12}")
    for name, s in figures.items():
        print(f"{name:<30} {s:>8.2f} {s / base:>12.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
