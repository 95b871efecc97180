"""The semantic-breakpoint lever (issue 14), measured on the weakly structured documents of the
labelled set, as a prototype outside the chunker (it needs the embedder while chunking).

    python scripts/semantic_breakpoints.py [--max-tokens 250] [--cut-from 0.75]

Each weak document's blocks are cut into sentences and every sentence is embedded (the eval's
embedder, through the eval's cache, out/eval-cache). A chunk grows sentence by sentence up to the token budget (the
hard rule); then the cut goes at the gap, among the last ``1 - cut-from`` of its gaps, where the
cosine distance between the two sentences either side is largest. Its header line is the document
title, as structure gives it on such text. The other documents keep their ``structure MAX`` chunks
with tables capped at 128, and every question is scored pooled, as ``raychunk tune`` scores it;
printed: the weak questions' hit@5, recall and IoU for both, with 95% intervals, and the paired
differences.

Measured (2026-12-01): --cut-from 0.5 makes 165 weak vectors against structure 250's 114, hit@5
-0.049; --cut-from 0.75 makes 139, hit@5 +0.049 [-0.073, +0.171], recall +0.036, IoU +0.004: the
profile (151 vectors, 0.854) and fixed 200 (145, 0.829) score as well at that vector count without
embedding every sentence once more. Dropped.
"""

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--max-tokens", type=int, default=250)
ap.add_argument("--cut-from", type=float, default=0.75, help="the cut falls in this last share of a chunk")
ARGS = ap.parse_args()

import numpy as np  # noqa: E402

from raychunk.chunking.sentences import sentence_spans  # noqa: E402
from raychunk.config import build_run_config, load_config  # noqa: E402
from raychunk.evaluation.metrics import as_indexed, score_corpus  # noqa: E402
from raychunk.jobs.tune import Embedder, chunk_corpus, load_tune_corpus, profiles_for  # noqa: E402
from raychunk.plan import resolve_plan  # noqa: E402
from raychunk.stats import bootstrap_interval, paired_difference  # noqa: E402

MAX = ARGS.max_tokens
CACHE = ROOT / "out" / "eval-cache"
job = resolve_plan(build_run_config(load_config(), {}))
corpus = load_tune_corpus(
    ROOT.parent / "shared" / "corpus",
    ROOT / "evals/corpus.jsonl",
    job.doc_types,
    counter=job.counter(),
    cache=CACHE,
)
docs, queries = corpus.docs, corpus.queries
tags = [set(q.tags or ()) for q in queries]
weak_sources = {q.source for q, t in zip(queries, tags) if "weak" in t}
embed = Embedder(job.model.name, CACHE)
qv = embed([q.query for q in queries])
base = [
    c
    for mine in chunk_corpus(corpus, profiles_for(f"structure:{MAX}:table_max_tokens=128", job.doc_types))
    for c in mine
]


def semantic_chunks(d, counter):
    text = d.parsed.text
    title = d.parsed.document.title or Path(d.source).name
    header = title
    htok = counter.count(header + "\n\n")
    budget = MAX - htok
    sents = []
    for b in d.parsed.blocks:
        if b.kind in ("heading", "page_break"):
            continue
        seg = text[b.char_start : b.char_end]
        for s, e in sentence_spans(seg):
            if seg[s:e].strip():
                sents.append((b.char_start + s, b.char_start + e))
    stoks = counter.count_batch([text[s:e] for s, e in sents])
    vec = embed([text[s:e] for s, e in sents])
    # distance at gap i (between sentence i-1 and i), two sentences either side
    dist = np.zeros(len(sents))
    for i in range(1, len(sents)):
        a = vec[max(0, i - 2) : i].mean(0)
        b = vec[i : i + 2].mean(0)
        dist[i] = 1 - float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    out, start = [], 0
    while start < len(sents):
        end, size = start, 0
        while end < len(sents) and (end == start or size + stoks[end] + 1 <= budget):
            size += stoks[end] + 1
            end += 1
        if end < len(sents) and end - start > 2:
            lo = start + max(1, int((end - start) * ARGS.cut_from))
            cut = max(range(lo, end + 1), key=lambda i: dist[i] if i < len(sents) else -1)
            end = max(cut, start + 1)
        s0, e0 = sents[start][0], sents[end - 1][1]
        body = text[s0:e0]
        out.append(
            {
                "source": d.source,
                "char_start": s0,
                "char_end": e0,
                "n_tokens": counter.count(header + "\n\n" + body),
                "text": header + "\n\n" + body,
                "parent_id": "",
                "chunk_index": len(out),
            }
        )
        start = end
    return out


def score(chunks_dicts):
    vecs = embed([c["text"] for c in chunks_dicts])
    rows = score_corpus(queries, qv, [as_indexed(c) for c in chunks_dicts], vecs, k=5, parent_budget=512)
    return rows["chunks"]


base_dicts = [c.to_dict() for c in base]
sem = [c for c in base_dicts if c["source"] not in weak_sources]
for d in docs:
    if d.source in weak_sources:
        sem += semantic_chunks(d, d.counter)
a, b = score(sem), score(base_dicts)
idx = [i for i, t in enumerate(tags) if "weak" in t]
nb = sum(c["source"] in weak_sources for c in base_dicts)
ns = sum(c["source"] in weak_sources for c in sem)
for name, rows, n in (("semantic", a, ns), (f"structure {MAX} t128", b, nb)):
    for m in ("hit", "recall", "iou"):
        v = [rows[i][m] for i in idx]
        lo, hi = bootstrap_interval(v)
        print(f"{name:<22} weak vectors {n:>4}  {m:<6} {sum(v) / len(v):.3f} [{lo:.3f}, {hi:.3f}]")
for m in ("hit", "recall", "iou"):
    d = paired_difference([a[i][m] for i in idx], [b[i][m] for i in idx])
    lo, hi = d["interval"]
    print(f"semantic - structure  {m:<6} {d['mean']:+.3f} [{lo:+.3f}, {hi:+.3f}]")
over = [c for c in sem if c["source"] in weak_sources and c["n_tokens"] > 254]
print("semantic chunks over 254 tokens:", len(over))
