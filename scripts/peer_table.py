"""The peer table: raychunk's default profile and structure 250 (tables capped at 128) against the
peer libraries at 256 / 200 / 160 cl100k tokens, in one ``raychunk eval`` run over the labelled
corpus set, per subset (structured, weak): vectors, hit@5 with its 95% interval, the paired
difference against the default profile, and the passage inside one chunk.

    python scripts/peer_table.py                       # evals/corpus.jsonl over ../shared/corpus
    python scripts/peer_table.py --queries evals/samples.jsonl --corpus samples --sizes 256

Needs the peers extra (pip install -e '.[peers]'). The full report goes to --output.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from labelled_files import labelled_files  # noqa: E402

from raychunk.config import build_run_config, load_config  # noqa: E402
from raychunk.evaluation import load_queries  # noqa: E402
from raychunk.jobs.eval import run_eval  # noqa: E402
from raychunk.pricing import Setting, grid  # noqa: E402

DEFAULT = "per-type profile"


def settings(sizes: list[int], peers: list[str]) -> list[Setting]:
    return [
        Setting(DEFAULT),
        *grid([250], [0], ["structure"], table_max_tokens=128),
        *grid(sizes, [0], peers),
    ]


def table(report: dict, subset: str | None) -> list[str]:
    k = report["k"]
    per_tag = report["by_tag"].get(subset) if subset else None
    n = per_tag["questions"] if per_tag else report["questions"]
    pairs = {p["a"]: p for p in report["paired"] if p["b"] == DEFAULT}
    out = [
        f"### {subset or 'all'} ({n} questions)",
        "",
        f"| setting | vectors | hit@{k} | vs default (paired 95%) | passage inside one chunk |",
        "|---|---:|---|---|---:|",
    ]
    for row in report["settings"]:
        label = row["setting"]
        m = per_tag["settings"][label]["metrics"] if per_tag else row["metrics"]
        hit, inside = m["hit"], m.get("inside")
        diff = "-"
        if label in pairs:
            h = pairs[label]["metrics"]["hit"]
            x = h["by_tag"].get(subset) if subset else h["overall"]
            if x:
                lo, hi = x["interval"]
                diff = f"{x['difference']:+.3f} [{lo:+.3f}, {hi:+.3f}]"
        out.append(
            f"| {label} | {row['vectors']:,} | {hit['mean']:.3f} [{hit['interval'][0]:.3f}-{hit['interval'][1]:.3f}]"
            f" | {diff} | {inside['mean']:.3f} |"
            if inside
            else f"| {label} | {row['vectors']:,} | {hit['mean']:.3f} | {diff} | - |"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", default=str(ROOT / "evals" / "corpus.jsonl"))
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    ap.add_argument("--sizes", default="256,200,160")
    ap.add_argument("--peers", default="langchain_markdown,chonkie_recursive")
    ap.add_argument("--output", default="out/peer-table")
    ap.add_argument("--cache", help="embedding cache folder (reused across runs)")
    args = ap.parse_args(argv)
    files = labelled_files(args.queries, args.corpus)
    cfg = build_run_config(load_config(), {"input": files})
    chosen = settings([int(x) for x in args.sizes.split(",")], args.peers.split(","))
    compare = [(s.label, DEFAULT) for s in chosen[1:]]
    report = run_eval(
        cfg,
        chosen,
        load_queries(args.queries),
        compare=compare,
        output=args.output,
        plot=False,
        cache=args.cache,
    )
    lines = []
    for subset in ("structured", "weak", None):
        if subset is None or subset in report["by_tag"]:
            lines += table(report, subset) + [""]
    if "embedding" in report:
        lines.append(f"embedding: {json.dumps(report['embedding'])}")
    text = "\n".join(lines)
    print(text)
    Path(args.output, "peer_table.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
