"""One chunking lever at a time on a labelled set: hit@5 and "passage inside one chunk" per subset,
with paired 95% intervals against a reference setting and against an earlier run (a code change).

    python scripts/levers.py --setting profile --setting langchain_markdown:200 --save out/levers/base.json
    # ... change a chunking rule, then:
    python scripts/levers.py --setting profile --against out/levers/base.json
    python scripts/levers.py --count --setting profile --setting fixed:200   # vectors only, no embedding
    python scripts/levers.py --pieces --setting profile --setting langchain_markdown:256  # what MiniLM reads
    python scripts/levers.py --setting profile --setting langchain_markdown:256 --misses langchain_markdown:256
    python scripts/levers.py --setting profile --crowding   # are the misses crowded out by siblings?

In this process, over ``raychunk.jobs.tune``'s corpus loading and scoring (the scoring of ``raychunk
eval``: every question against the pooled index), with the embedding cache ``--cache`` (the ``eval
--cache`` format), so a run after a change embeds only the chunks it changed. Each subset also gives
the questions only one side of each pair answers and the best of all settings per question (a
ceiling no single setting reaches); ``--misses SETTING`` prints the questions SETTING answers and the
reference misses, with the reference's rank and both chunks that hold the passage (what to read
before building a lever). A setting is
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
    ap.add_argument(
        "--pieces",
        action="store_true",
        help="only chunk: what the embedder reads of each setting's embedded texts (word pieces, cut tails)",
    )
    ap.add_argument("--misses", help="a setting: the questions it answers and --reference misses, shown")
    ap.add_argument(
        "--crowding",
        action="store_true",
        help="of --reference's misses, what holds its top k: chunks of the answer's own section and document",
    )
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
    if args.pieces:
        show_pieces(corpus, types, args.setting or ["profile"], job.model.name)
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
                mine = [ref["hit"][i] for i in idx]
                d = paired_difference(hit, mine)
                line += f"  vs {args.reference} {d['mean']:+.3f} [{d['interval'][0]:+.3f}, {d['interval'][1]:+.3f}]"
                only = sum(h > r for h, r in zip(hit, mine)), sum(r > h for h, r in zip(hit, mine))
                line += f" (only this {only[0]}, only {args.reference} {only[1]})"
            print(line)
        if len(results) > 1:
            best = [max(res["hit"][i] for res in results.values()) for i in idx]
            print(f"  best of the {len(results)} settings per question: {sum(best) / len(best):.3f}")
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
    if args.crowding:
        show_crowding(corpus, types, qvecs, embed, args.reference, args.k)
    if args.misses:
        show_misses(corpus, types, qvecs, embed, args.reference, args.misses, args.k)
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps({"ids": ids, "results": results}))
    print(f"\n{embed.embedded:,} texts embedded, {len(embed.reused):,} reused", file=sys.stderr)
    return 0


def show_pieces(corpus, types, specs: list[str], model: str) -> None:
    """Per setting: the embedded texts' word pieces in the embedder's own tokenizer, how many texts
    pass what it reads (``max_seq_length`` less [CLS] and [SEP]: 254 for MiniLM) and the share of
    word pieces it cuts off their tails, and of those how many hold a labelled passage's end there."""
    from raychunk.jobs.tune import chunk_corpus, profiles_for
    from raychunk.tokens import load_counter

    counter = load_counter(model)
    limit = counter.max_input
    print(f"{model}: reads {limit} word pieces of a text")
    for spec in specs:
        texts = [c.text for chunks in chunk_corpus(corpus, profiles_for(spec, types)) for c in chunks]
        n = sorted(counter.count_batch(texts))
        over = [x for x in n if x > limit]
        cut = sum(x - limit for x in over)
        median, p90, p99 = (n[min(len(n) - 1, int(f * len(n)))] for f in (0.5, 0.9, 0.99))
        print(
            f"  {spec:<44} {len(n):,} texts, word pieces median {median} p90 {p90} p99 {p99} max {n[-1]};"
            f" over {limit}: {len(over):,} ({len(over) / len(n):.1%}), {cut:,} of {sum(n):,} pieces cut ({cut / sum(n):.2%})"
        )


def show_misses(corpus, types, qvecs, embed, reference: str, other: str, k: int) -> None:
    """Each question ``other`` answers in the top ``k`` and ``reference`` does not: the rank of the
    reference's first chunk holding the passage (top 50), and each setting's chunk around it."""
    from raychunk.evaluation.metrics import as_indexed, score_corpus
    from raychunk.jobs.tune import chunk_corpus, profiles_for

    ranked = {}
    for spec in (reference, other):
        chunks = [c for mine in chunk_corpus(corpus, profiles_for(spec, types)) for c in mine]
        rows = score_corpus(
            corpus.queries,
            qvecs,
            [as_indexed(c.to_dict()) for c in chunks],
            embed([c.text for c in chunks]),
            k=50,
            parent_budget=512,
        )["chunks"]
        ranked[spec] = (chunks, [r["rank"] for r in rows])
    for i, q in enumerate(corpus.queries):
        ra, rb = ranked[reference][1][i], ranked[other][1][i]
        if not (rb and rb <= k) or (ra and ra <= k):
            continue
        p = q.passages[0]
        print(f"\n== {q.qid} ({corpus.doc_type[i]}): {reference} rank {ra or '>50'}, {other} rank {rb}")
        print(f"   {q.query}")
        for spec in (reference, other):
            around = [
                c
                for c in ranked[spec][0]
                if c.source == q.source and c.char_start < p.end and c.char_end > p.start
            ]
            for c in around[:1]:
                print(f"-- {spec} ({c.n_tokens} tokens):\n{c.text[:600]}")


def show_crowding(corpus, types, qvecs, embed, spec: str, k: int) -> None:
    """Whether a miss is crowded out by its own siblings: ``crowding`` over ``spec``'s top 50."""
    from raychunk.evaluation.metrics import as_indexed, score_corpus, top_k
    from raychunk.jobs.tune import chunk_corpus, profiles_for

    chunks = [c for mine in chunk_corpus(corpus, profiles_for(spec, types)) for c in mine]
    cvecs = embed([c.text for c in chunks])
    rows = score_corpus(
        corpus.queries, qvecs, [as_indexed(c.to_dict()) for c in chunks], cvecs, k=50, parent_budget=512
    )["chunks"]
    ids = [q.qid for q in corpus.queries]
    per, n, crowded = crowding(chunks, top_k(qvecs, cvecs, 50), [r["rank"] for r in rows], k)
    print(f"\n== crowding, {spec}: the top {k} of a question whose passage a chunk in the top 50 holds")
    for side in ("miss", "hit"):
        print(
            f"  {side:<4} {n[side]:>3} questions, per question in the top {k} (answer left out): "
            + ", ".join(f"{kind} {v / (n[side] or 1):.2f}" for kind, v in per[side].items())
        )
    print(f"  misses with 2+ chunks of the answer's section or header line in the top {k}: {len(crowded)}")
    for i, r, mine in crowded:
        print(f"    {ids[i]} rank {r}: " + ", ".join(f"{kind} {v}" for kind, v in mine.items() if v))


CROWD = ("section", "header", "document", "other")


def crowding(chunks, ranked, ranks, k: int):
    """For each question whose passage a chunk holds at rank ``ranks[i]`` (1-based in ``ranked[i]``,
    chunk indices best first; None: not in the list), what else its top ``k`` holds: chunks of the
    answer chunk's own section (same document and heading path), of its header line elsewhere, of
    its document, of other documents. Summed over the misses (rank over ``k``) and, as the control,
    over the hits; with the misses that 2 or more of the answer's section or header line crowd out.
    ``(sums by side, questions by side, [(question, rank, counts)])``."""
    per = {side: dict.fromkeys(CROWD, 0) for side in ("miss", "hit")}
    n = {"miss": 0, "hit": 0}
    crowded = []
    for i, r in enumerate(ranks):
        if not r:
            continue
        answer = ranked[i][r - 1]
        a = chunks[answer]
        side = "hit" if r <= k else "miss"
        n[side] += 1
        mine = dict.fromkeys(CROWD, 0)
        for j in ranked[i][:k]:
            if j == answer:
                continue
            c = chunks[j]
            same_doc = c.source == a.source
            if same_doc and c.heading_path == a.heading_path:
                mine["section"] += 1
            elif c.header == a.header:
                mine["header"] += 1
            else:
                mine["document" if same_doc else "other"] += 1
        for kind in CROWD:
            per[side][kind] += mine[kind]
        if side == "miss" and mine["section"] + mine["header"] >= 2:
            crowded.append((i, r, mine))
    return per, n, crowded


if __name__ == "__main__":
    sys.exit(main())
