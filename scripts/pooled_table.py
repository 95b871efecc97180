"""Several labelled sets' ``scripts/levers.py --save`` runs pooled into one peer table: hit@5 per
setting over all their questions (or those with a tag), each paired with the reference setting by a
bootstrap over the pooled questions; the vectors of each set summed.

    python scripts/pooled_table.py out/levers/aside.json:evals/aside.jsonl \\
        out/levers/nodejs.json:evals/nodejs.jsonl out/levers/cmake.json:evals/cmake.jsonl --tag structured

Each argument is ``SAVED:QUERIES``: a ``--save`` file and the questions it was run on (for their
tags). Every run must hold the same settings.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's raychunk


def pooled(runs: list[tuple[dict, dict[str, list[str]]]], tag: str | None) -> dict[str, dict]:
    """setting -> {"hit": pooled per-question hits, "vectors": summed}, over questions with ``tag``."""
    settings = list(runs[0][0]["results"])
    out = {s: {"hit": [], "vectors": 0} for s in settings}
    for saved, tags in runs:
        if list(saved["results"]) != settings:
            raise SystemExit(f"the runs hold different settings: {settings} and {list(saved['results'])}")
        keep = [i for i, q in enumerate(saved["ids"]) if tag is None or tag in tags.get(q, ())]
        for s in settings:
            res = saved["results"][s]
            out[s]["hit"] += [res["hit"][i] for i in keep]
            out[s]["vectors"] += res["vectors"]
    return out


def main(argv: list[str] | None = None) -> int:
    from raychunk.stats import bootstrap_interval, paired_difference

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="SAVED:QUERIES")
    ap.add_argument("--tag", help="only the questions with this tag (structured, weak, heading ...)")
    ap.add_argument("--reference", default="profile")
    args = ap.parse_args(argv)
    runs = []
    for spec in args.runs:
        saved, _, queries = spec.partition(":")
        if not queries:
            raise SystemExit(f"{spec}: give SAVED:QUERIES")
        rows = [json.loads(x) for x in Path(queries).read_text(encoding="utf-8").splitlines() if x.strip()]
        runs.append((json.loads(Path(saved).read_text()), {r["id"]: r.get("tags", []) for r in rows}))
    table = pooled(runs, args.tag)
    ref = table[args.reference]["hit"]
    print(f"{len(ref)} questions{f' tagged {args.tag}' if args.tag else ''} over {len(runs)} sets")
    print("| setting | vectors | hit@5 | vs the reference (paired 95%) | only this / only the reference |")
    print("|---|---:|---|---|---|")
    for name, row in table.items():
        hit = row["hit"]
        lo, hi = bootstrap_interval(hit)
        mean = sum(hit) / len(hit) if hit else 0.0
        if name == args.reference:
            vs, only = "-", "-"
        else:
            d = paired_difference(hit, ref)
            vs = f"{d['mean']:+.3f} [{d['interval'][0]:+.3f}, {d['interval'][1]:+.3f}]"
            only = f"{sum(a > b for a, b in zip(hit, ref))} / {sum(b > a for a, b in zip(hit, ref))}"
        print(f"| {name} | {row['vectors']:,} | {mean:.3f} [{lo:.3f}-{hi:.3f}] | {vs} | {only} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
