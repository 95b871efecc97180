"""How far chunking alone can move hit@k with this embedder on the labelled set: two upper bounds.

    python scripts/ceiling.py                    # the default grid below, all-MiniLM-L6-v2, top 5
    python scripts/ceiling.py --setting structure:250:table_max_tokens=128 --setting fixed:194 ...

- **Best of N settings, per question.** A question counts as found if *any* of the settings finds it
  in its top k. No single chunker can do better than picking, for every question, the setting that
  happened to suit it, so this bounds every chunking in the grid and every mix of them.
- **Passage oracle.** Each question's chunks that hold its passage are replaced by one ideal chunk:
  the header line of the first of them (the heading path) and exactly the labelled passage, as if the
  chunker had known the question. It is ranked against every other chunk of the best single setting.
  ``either`` counts a question found by the oracle or by the best single setting.

Both reuse ``raychunk.jobs.tune`` (the parse, chunking, embedding cache and hit@k of ``raychunk tune``
and ``raychunk eval``).
The oracle's "holds" is the metric's span rule (the chunk covers 90% of the passage's characters).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's raychunk

GRID = (
    ["profile"]
    + [f"structure:{n}:table_max_tokens=128" for n in (128, 160, 194, 224, 250)]
    + [f"fixed:{n}" for n in (128, 160, 176, 184, 194, 200, 208, 224, 240, 250)]
)
SUBSETS = ("all", "structured", "weak")


def holds(chunk, source: str, start: int, end: int, share: float | None = None) -> bool:
    """The metric's span rule: the chunk covers ``HIT_SHARE`` of the passage's characters."""
    from raychunk.evaluation.metrics import HIT_SHARE

    share = HIT_SHARE if share is None else share
    covered = max(0, min(chunk.char_end, end) - max(chunk.char_start, start))
    return chunk.source == source and covered >= share * (end - start)


def main(argv: list[str] | None = None) -> int:
    import numpy as np

    from raychunk.config import build_run_config, load_config
    from raychunk.jobs.tune import Embedder, chunk_corpus, load_tune_corpus, profiles_for, score
    from raychunk.plan import resolve_plan

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=Path, default=ROOT / "evals" / "corpus.jsonl")
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--doc-types", type=Path, default=ROOT / "configs" / "doc_types.yaml")
    ap.add_argument("--cache", type=Path, default=ROOT / "out" / "eval-cache")
    ap.add_argument("--setting", action="append", default=[], help="as levers.py; default: a 16-setting grid")
    ap.add_argument("--k", type=int, default=5)
    args = ap.parse_args(argv)

    job = resolve_plan(build_run_config(load_config(), {"chunk.doc_types": str(args.doc_types)}))
    corpus = load_tune_corpus(
        args.corpus, args.queries, job.doc_types, counter=job.counter(), cache=args.cache
    )
    queries = corpus.queries
    tags = [set(q.tags or ()) for q in queries]
    embed = Embedder(job.model.name, args.cache)
    qvecs = embed([q.query for q in queries])
    subsets = {s: [i for i, t in enumerate(tags) if s == "all" or s in t] for s in SUBSETS}
    subsets = {s: idx for s, idx in subsets.items() if idx}

    hits, chunked = {}, {}
    print(f"{'setting':<40} {'vectors':>7}  " + "  ".join(f"{s:>10}" for s in subsets))
    for spec in args.setting or GRID:
        profiles = profiles_for(spec, job.doc_types)
        chunks = [c for mine in chunk_corpus(corpus, profiles) for c in mine]
        hits[spec] = np.array(score(corpus, profiles, qvecs, embed, k=args.k).hit, dtype=bool)
        chunked[spec] = chunks
        cells = "  ".join(f"{hits[spec][idx].mean():>10.3f}" for idx in subsets.values())
        print(f"{spec:<40} {len(chunks):>7}  {cells}", flush=True)

    grid = np.array(list(hits.values()))
    structure = [i for i, s in enumerate(hits) if s.startswith(("structure", "profile"))]
    print(f"\nhit@{args.k} upper bounds")
    for s, idx in subsets.items():
        best = max(hits, key=lambda spec: hits[spec][idx].mean())
        line = f"  {s:<10} best single setting {hits[best][idx].mean():.3f} ({best});"
        line += f" best of {len(hits)} per question {grid[:, idx].any(axis=0).mean():.3f}"
        if structure:
            line += f"; of the {len(structure)} structure settings {grid[structure][:, idx].any(axis=0).mean():.3f}"
        print(line)

    ranked_on = subsets.get("structured", subsets["all"])
    best = max(hits, key=lambda spec: hits[spec][ranked_on].mean())
    chunks = chunked[best]
    vecs = embed([c.text for c in chunks])
    sims = qvecs @ vecs.T
    texts = {d.source: d.parsed.text for d in corpus.docs}
    ideal, others = [], []
    for q in queries:
        p = q.passages[0]
        held = [i for i, c in enumerate(chunks) if holds(c, q.source, p.start, p.end)]
        header = chunks[held[0]].header if held else ""
        ideal.append(
            f"{header}\n\n{texts[q.source][p.start : p.end]}" if header else texts[q.source][p.start : p.end]
        )
        mask = np.ones(len(chunks), dtype=bool)
        mask[held] = False
        others.append(mask)
    ivecs = embed(ideal)
    found = np.array(
        [
            1 + int((sims[i][others[i]] > float(qvecs[i] @ ivecs[i])).sum()) <= args.k
            for i in range(len(queries))
        ]
    )
    print(f"\npassage oracle (heading path + exactly the passage), against {best}")
    for s, idx in subsets.items():
        print(
            f"  {s:<10} oracle {found[idx].mean():.3f}; {best} {hits[best][idx].mean():.3f};"
            f" either {(found | hits[best])[idx].mean():.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
