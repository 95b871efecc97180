"""One chunking lever at a time on a labelled set: hit@5 and "passage inside one chunk" per subset,
with paired 95% intervals against a reference setting and against an earlier run (a code change).

    python scripts/levers.py --setting profile --setting langchain_markdown:200 --save out/levers/base.json
    # ... change a chunking rule, then:
    python scripts/levers.py --setting profile --against out/levers/base.json
    python scripts/levers.py --count --setting profile --setting fixed:200   # vectors only, no embedding

In this process, over ``raychunk.jobs.tune``'s corpus loading and scoring (the scoring of ``raychunk
eval``: every question against the pooled index), with the embedding cache ``--cache`` (the ``eval
--cache`` format), so a run after a change embeds only the chunks it changed. A setting is
``profile`` (each type's profile from ``--doc-types``), ``profile@FILE`` (another doc-types file), or
``STRATEGY:MAX[:key=value,...]`` for every document (peers too: ``langchain_markdown:200``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's raychunk

SUBSETS = ("all", "structured", "weak")


def subset_index(corpus, subset: str) -> list[int]:
    return [i for i, q in enumerate(corpus.queries) if subset == "all" or subset in (q.tags or ())]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=Path, default=ROOT / "evals" / "corpus.jsonl")
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--doc-types", type=Path, default=ROOT / "configs" / "doc_types.yaml")
    ap.add_argument("--cache", type=Path, default=ROOT / "out" / "eval-cache")
    ap.add_argument("--setting", action="append", default=[])
    ap.add_argument("--reference", default="profile", help="the setting each other is paired against")
    ap.add_argument("--against", type=Path, help="an earlier --save: pair each setting with its own")
    ap.add_argument("--save", type=Path)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--count", action="store_true", help="only chunk: vectors per setting and subset")
    args = ap.parse_args(argv)

    from raychunk.config import build_run_config, load_config
    from raychunk.jobs.tune import Embedder, chunk_corpus, load_tune_corpus, profiles_for, score
    from raychunk.plan import resolve_plan
    from raychunk.stats import bootstrap_interval, paired_difference

    job = resolve_plan(build_run_config(load_config(), {"chunk.doc_types": str(args.doc_types)}))
    types = job.doc_types
    corpus = load_tune_corpus(args.corpus, args.queries, types, counter=job.counter(), cache=args.cache)
    subset_docs = {
        s: {q.source for q in corpus.queries if s == "all" or s in (q.tags or ())} for s in SUBSETS
    }
    if args.count:
        for spec in args.setting or ["profile"]:
            per_doc = chunk_corpus(corpus, profiles_for(spec, types))
            by = {
                s: sum(len(c) for d, c in zip(corpus.docs, per_doc) if d.source in subset_docs[s])
                for s in SUBSETS
            }
            print(f"{spec:<44} " + "  ".join(f"{s} {n:,}" for s, n in by.items()))
        return 0
    embed = Embedder(job.model.name, args.cache)
    qvecs = embed([q.query for q in corpus.queries])
    results = {}
    for spec in args.setting or ["profile"]:
        r = score(corpus, profiles_for(spec, types), qvecs, embed, k=args.k)
        results[spec] = {"hit": r.hit, "inside": r.inside, "vectors": sum(r.vectors.values())}
        print(
            f"{spec}: {results[spec]['vectors']:,} vectors ({embed.embedded:,} texts embedded so far)",
            file=sys.stderr,
        )
    ids = [q.qid for q in corpus.queries]
    for subset in SUBSETS:
        idx = subset_index(corpus, subset)
        if not idx:
            continue
        print(f"\n== {subset} ({len(idx)} questions, {len(subset_docs[subset])} documents)")
        for spec, res in results.items():
            hit = [res["hit"][i] for i in idx]
            inside = [res["inside"][i] for i in idx]
            lo, hi = bootstrap_interval(hit)
            line = f"  {spec:<44} hit@{args.k} {sum(hit) / len(hit):.3f} [{lo:.3f}-{hi:.3f}]  inside {sum(inside) / len(inside):.3f}"
            ref = results.get(args.reference)
            if ref is not None and spec != args.reference:
                d = paired_difference(hit, [ref["hit"][i] for i in idx])
                line += f"  vs {args.reference} {d['mean']:+.3f} [{d['interval'][0]:+.3f}, {d['interval'][1]:+.3f}]"
            print(line)
    print("\nvectors: " + ", ".join(f"{s} {r['vectors']:,}" for s, r in results.items()))
    if args.against:
        before = json.loads(args.against.read_text())
        if before["ids"] != ids:
            raise SystemExit(f"{args.against}: a different question set, cannot pair")
        for spec, res in results.items():
            if spec not in before["results"]:
                continue
            b = before["results"][spec]
            print(
                f"\n-- {spec}: now minus {args.against.name} (vectors {b['vectors']:,} -> {res['vectors']:,})"
            )
            for subset in SUBSETS:
                idx = subset_index(corpus, subset)
                if not idx:
                    continue
                d = paired_difference([res["hit"][i] for i in idx], [b["hit"][i] for i in idx])
                di = sum(res["inside"][i] - b["inside"][i] for i in idx) / len(idx)
                changed = [ids[i] for i in idx if res["hit"][i] != b["hit"][i]]
                print(
                    f"  {subset:<11} hit {d['mean']:+.3f} [{d['interval'][0]:+.3f}, {d['interval'][1]:+.3f}]"
                    f"  inside {di:+.3f}  changed: {' '.join(changed[:12])}{' ...' if len(changed) > 12 else ''}"
                )
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps({"ids": ids, "results": results}))
    print(f"\n{embed.embedded:,} texts embedded, {len(embed.reused):,} reused", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
