"""The markdown parse stage per document, its block parse by markdown-it.rs against markdown-it-py,
side by side in one process (passes alternate), CPU time.

    python benchmarks/markdown_parse.py                       # corpus md + 500 generated tiny files
    python benchmarks/markdown_parse.py --tiny 2000 --rounds 5

Each document is parsed whole as the parse stage does it (``parse_document``: decode, dispatch, block
parse, blocks); the ``pure`` pass has ``markdown_rs.block_tokens`` answer None, which is the path a
Python without markdown-it-pyrs takes. Both passes must give equal documents: the script says so
or fails.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.peer_pipelines import tiny_corpus  # noqa: E402
from raychunk.parse import markdown as md_parse  # noqa: E402
from raychunk.parse import parse_document  # noqa: E402
from raychunk.parse.markdown_rs import available  # noqa: E402


def _docs(datas, tokens) -> list:
    md_parse.block_tokens = tokens
    return [parse_document(d, s) for d, s in datas]


def _pass(datas, tokens) -> float:
    """One pass's CPU seconds, from a collected heap (no pass pays for another's garbage)."""
    md_parse.block_tokens = tokens
    gc.collect()
    t = time.process_time()
    for d, s in datas:
        parse_document(d, s)
    return time.process_time() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(Path(__file__).resolve().parent.parent.parent / "shared/corpus"))
    ap.add_argument("--tiny", type=int, default=500, help="generated tiny markdown files")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    if not available():
        print("markdown-it-pyrs is not installed: nothing to compare")
        return 1
    fast = md_parse.block_tokens
    with tempfile.TemporaryDirectory() as tmp:
        tiny_corpus(Path(tmp), args.tiny)
        sets = {
            f"{args.tiny} tiny": [(p.read_bytes(), str(p)) for p in sorted(Path(tmp).rglob("*.md"))],
            "corpus md": [(p.read_bytes(), str(p)) for p in sorted(Path(args.corpus, "md").rglob("*.md"))],
        }
    try:
        for name, datas in sets.items():
            if _docs(datas, lambda text: None) != _docs(datas, fast):
                print(f"{name}: the two parses differ", file=sys.stderr)
                return 1
            best = {"markdown-it-py": float("inf"), "markdown-it.rs": float("inf")}
            for _ in range(args.rounds):
                best["markdown-it-py"] = min(best["markdown-it-py"], _pass(datas, lambda text: None))
                best["markdown-it.rs"] = min(best["markdown-it.rs"], _pass(datas, fast))
            size = sum(len(d) for d, _ in datas)
            per = {k: v / len(datas) * 1000 for k, v in best.items()}
            print(
                f"{name}: {len(datas)} documents, {size / 1e6:.2f} MB, identical documents; parse ms a document "
                f"(best of {args.rounds}, CPU): markdown-it-py {per['markdown-it-py']:.3f}, "
                f"markdown-it.rs {per['markdown-it.rs']:.3f} "
                f"({best['markdown-it-py'] / best['markdown-it.rs']:.2f}x)"
            )
    finally:
        md_parse.block_tokens = fast
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
