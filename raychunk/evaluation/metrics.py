"""Retrieval metrics per question, over the top ``k`` chunks of one setting's pooled index (spans are
chunk *body* spans in the document text):

- ``hit``: some retrieved chunk of the labelled document covers at least 90% of a passage, or its
  text contains the passage's quote (whitespace-normalised);
- ``rr``: 1 / rank of the first such chunk (0 when none): its mean is the MRR;
- ``recall``: the share of passage characters covered by the union of the top-k spans;
- ``precision``: relevant characters over retrieved characters (the union of all top-k spans, other
  documents included); ``iou``: relevant over the union of retrieved and relevant;
- ``chroma_precision`` and ``chroma_iou``: the same as Chroma's chunking evaluation computes them
  (chroma-core ``chunking_evaluation``, ``BaseEvaluation._scores_from_dataset_and_retrievals``), so
  figures compare with its published tables. Retrieved characters are summed over the top k, not
  merged: two chunks sharing characters count them twice. With ``relevant`` = the characters of the
  union of the intersections of the top-k spans with the passages, ``summed`` = the sum of the top-k
  span lengths (other documents included) and ``passages`` = the passages' characters:
  ``chroma_precision = relevant / summed`` and ``chroma_iou = relevant / (summed + passages - relevant)``.
  Without overlapping retrieved spans they equal ``precision`` and ``iou``;
- ``tokens``: the summed ``n_tokens`` of the top-k chunks, what a model would have to read;
- ``budget_hit``, ``budget_recall``, ``budget_tokens``: the same, reading the ranked results in order
  while the tokens read stay within a reading budget (``READ_BUDGET``), past the top k when the
  retrieved depth allows; ``budget_short`` is 1 when every retrieved result fit (the depth, not the
  budget, stopped the reader: the figures are then a lower bound).

Small-to-big scores each hit expanded to its parent section (the chunks sharing its ``parent_id``),
capped at a token budget.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from raychunk.evaluation.labels import ResolvedQuery
from raychunk.render import squash

__all__ = [
    "BUDGET_METRICS",
    "HIT_SHARE",
    "METRICS",
    "READ_BUDGET",
    "S2B_METRICS",
    "Hit",
    "IndexedChunk",
    "Unit",
    "as_indexed",
    "expand_to_parent",
    "grow_within",
    "score_corpus",
    "score_hits",
    "score_units",
    "scores",
    "tokens_read",
    "top_k",
]

HIT_SHARE = 0.9  # a chunk "holds" a passage when it covers this share of its characters
METRICS = ("hit", "recall", "precision", "iou", "chroma_precision", "chroma_iou", "rr", "tokens")
S2B_METRICS = ("hit", "recall", "tokens")
BUDGET_METRICS = ("budget_hit", "budget_recall", "budget_tokens")
READ_BUDGET = 1000  # tokens a reader takes from the ranked results, by default


def _union(spans) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def _length(spans: list[tuple[int, int]]) -> int:
    return sum(e - s for s, e in spans)


def _overlap(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Characters shared by two merged, sorted span lists."""
    i = j = total = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


@dataclass(frozen=True, slots=True)
class IndexedChunk:
    """What scoring needs of a chunk: its document, body span, embedded text and token counts."""

    source: str
    start: int
    end: int
    n_tokens: int
    text: str = ""
    parent_id: str = ""
    chunk_index: int = 0
    header_tokens: int = 0
    overlap_tokens: int = 0


def as_indexed(c: Mapping) -> IndexedChunk:
    """A chunk dict (chunk record columns) as scoring needs it."""
    return IndexedChunk(
        c["source"],
        int(c["char_start"]),
        int(c["char_end"]),
        int(c["n_tokens"]),
        c.get("text") or "",
        c.get("parent_id") or "",
        int(c.get("chunk_index") or 0),
        int(c.get("header_tokens") or 0),
        int(c.get("overlap_tokens") or 0),
    )


@dataclass(frozen=True, slots=True)
class Unit:
    """One retrieved result as the reader gets it: a chunk, or a chunk expanded to its parent.
    ``quoted``: its texts are known to hold one of the question's quotes (checked where the texts
    were, so the texts need not travel)."""

    source: str
    spans: tuple[tuple[int, int], ...]
    texts: tuple[str, ...] = field(default=())
    quoted: bool = False


@dataclass(frozen=True, slots=True)
class Hit:
    """One of a question's top-k chunks, with its small-to-big ``group`` (``expand_to_parent``) and
    whether the chunk, or its group, holds one of the question's quotes."""

    chunk: IndexedChunk
    group: tuple[IndexedChunk, ...]
    quoted: bool = False
    group_quoted: bool = False


def tokens_read(chunks) -> int:
    """Tokens of a set of chunks read together: each chunk once, and a chunk that follows its
    predecessor in the same section drops its repeated header line and overlap (they are read once).

    >>> a = IndexedChunk("d", 0, 10, 30, parent_id="p", chunk_index=0, header_tokens=5)
    >>> b = IndexedChunk("d", 10, 20, 32, parent_id="p", chunk_index=1, header_tokens=5, overlap_tokens=2)
    >>> tokens_read([a, b]), tokens_read([b]), tokens_read([a, a])
    (55, 32, 30)
    """
    unique = list(dict.fromkeys(chunks))
    keys = {(c.source, c.parent_id, c.chunk_index) for c in unique}
    total = 0
    for c in unique:
        total += c.n_tokens
        if (c.source, c.parent_id, c.chunk_index - 1) in keys:
            total -= c.header_tokens + c.overlap_tokens
    return total


def expand_to_parent(hit: IndexedChunk, family: list[IndexedChunk], budget: int) -> list[IndexedChunk]:
    """Small-to-big: the hit's whole parent section (``family``: the chunks sharing its parent, in
    order) when it fits ``budget`` tokens, else the hit grown by neighbours, next then previous,
    while they fit. The hit itself is always returned, even over budget."""
    if tokens_read(family) <= budget:
        return list(family)
    return grow_within(family, family.index(hit), budget)


def grow_within(family: list[IndexedChunk], i: int, budget: int) -> list[IndexedChunk]:
    """``family[i]`` grown by neighbours, next then previous, while they fit ``budget`` tokens: what
    ``expand_to_parent`` returns when the whole family does not fit."""
    lo = hi = i
    grown = True
    while grown:
        grown = False
        for j in (hi + 1, lo - 1):
            if 0 <= j < len(family) and tokens_read(family[min(lo, j) : max(hi, j) + 1]) <= budget:
                lo, hi = min(lo, j), max(hi, j)
                grown = True
    return family[lo : hi + 1]


def score_units(
    query: ResolvedQuery, units: list[Unit], tokens: int, *, hit_share: float = HIT_SHARE
) -> dict:
    """The metrics of one question for one ranked list of retrieved units (see the module docstring).

    >>> from raychunk.evaluation.labels import Passage
    >>> q = ResolvedQuery("q1", "?", "d", (Passage(10, 20),))
    >>> r = score_units(q, [Unit("e", ((0, 50),)), Unit("d", ((15, 40),))], tokens=60)
    >>> r["hit"], r["recall"], round(r["precision"], 4), round(r["iou"], 4)
    (0, 0.5, 0.0667, 0.0625)
    """
    relevant = _union((p.start, p.end) for p in query.passages)
    rank = None
    for r, u in enumerate(units, 1):
        if u.source != query.source:
            continue
        spans = _union(u.spans)
        texts = [squash(t) for t in u.texts]
        for p in query.passages:
            covered = _overlap(spans, [(p.start, p.end)])
            quoted = u.quoted or (p.quote is not None and any(squash(p.quote) in t for t in texts))
            if covered >= hit_share * (p.end - p.start) or quoted:
                rank = r
                break
        if rank is not None:
            break
    by_source: dict[str, list] = {}
    for u in units:
        by_source.setdefault(u.source, []).extend(u.spans)
    retrieved = {s: _union(spans) for s, spans in by_source.items()}
    n_retrieved = sum(_length(v) for v in retrieved.values())
    n_summed = sum(e - s for u in units for s, e in u.spans if e > s)
    both = _overlap(retrieved.get(query.source, []), relevant)
    n_relevant = _length(relevant)
    return {
        "hit": int(rank is not None),
        "rank": rank,
        "rr": 1.0 / rank if rank else 0.0,
        "recall": both / n_relevant if n_relevant else 0.0,
        "precision": both / n_retrieved if n_retrieved else 0.0,
        "iou": both / (n_retrieved + n_relevant - both) if n_retrieved + n_relevant else 0.0,
        "chroma_precision": both / n_summed if n_summed else 0.0,
        "chroma_iou": both / (n_summed + n_relevant - both) if n_summed + n_relevant else 0.0,
        "tokens": tokens,
    }


def scores(query_vectors, chunk_vectors):
    """Cosine of each query with each chunk, ``(queries, chunks)`` float32."""
    import numpy as np

    q = np.asarray(query_vectors, dtype=np.float32)
    c = np.asarray(chunk_vectors, dtype=np.float32)
    q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    c = c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-12)
    return q @ c.T


def top_k(query_vectors, chunk_vectors, k: int):
    """Indices of the ``k`` chunks nearest each query by cosine, best first; ties go to the lower
    index so the ranking does not depend on sort internals."""
    import numpy as np

    s = scores(query_vectors, chunk_vectors)
    return np.argsort(-s, axis=1, kind="stable")[:, : min(k, s.shape[1])]


def score_corpus(
    queries: list[ResolvedQuery],
    query_vectors,
    chunks: list[IndexedChunk],
    chunk_vectors,
    *,
    k: int,
    parent_budget: int,
    depth: int = 0,
    read_budget: int = READ_BUDGET,
) -> dict[str, list[dict]]:
    """Score every question against one setting's pooled index, in both modes:
    ``{"chunks": [per-question metrics], "small_to_big": [...]}``; the reading budget over the top
    ``max(k, depth)``."""
    families: dict[tuple[str, str], list[IndexedChunk]] = {}
    for c in chunks:
        families.setdefault((c.source, c.parent_id), []).append(c)
    for fam in families.values():
        fam.sort(key=lambda c: c.chunk_index)
    ranked = top_k(query_vectors, chunk_vectors, max(k, depth)) if chunks else [[] for _ in queries]

    def hit(c: IndexedChunk) -> Hit:
        return Hit(c, tuple(expand_to_parent(c, families[(c.source, c.parent_id)], parent_budget)))

    return score_hits(
        queries, [[hit(chunks[i]) for i in idx] for idx in ranked], k=k, read_budget=read_budget
    )


def _plain(h: Hit) -> Unit:
    return Unit(h.chunk.source, ((h.chunk.start, h.chunk.end),), (h.chunk.text,), h.quoted)


def _big(h: Hit) -> Unit:
    return Unit(
        h.chunk.source,
        tuple((g.start, g.end) for g in h.group),
        tuple(g.text for g in h.group),
        h.group_quoted,
    )


def _within(q: ResolvedQuery, hits: list[Hit], budget: int, *, big: bool) -> dict:
    """The ranked hits read in order while the tokens read (``tokens_read``, small-to-big groups
    when ``big``) stay within ``budget``; a result that would pass it stops the reader."""
    read: list[IndexedChunk] = []
    taken: list[Hit] = []
    for h in hits:
        more = read + list(h.group if big else (h.chunk,))
        if tokens_read(more) > budget:
            break
        read, taken = more, [*taken, h]
    r = score_units(q, [(_big if big else _plain)(h) for h in taken], tokens_read(read))
    return {
        "budget_hit": r["hit"],
        "budget_recall": r["recall"],
        "budget_tokens": r["tokens"],
        "budget_short": int(len(taken) == len(hits)),
    }


def score_hits(
    queries: list[ResolvedQuery],
    ranked: list[list[Hit]],
    *,
    k: int | None = None,
    read_budget: int = READ_BUDGET,
) -> dict[str, list[dict]]:
    """Every question scored on its ranked hits (``ranked[i]`` for ``queries[i]``; the first ``k``,
    or all), in both modes: ``{"chunks": [per-question metrics], "small_to_big": [...]}``; the
    reading-budget figures read on past ``k`` through every hit given."""
    plain, s2b = [], []
    for q, hits in zip(queries, ranked):
        top = hits if k is None else hits[:k]
        row = score_units(q, [_plain(h) for h in top], sum(h.chunk.n_tokens for h in top))
        row["top"] = [[h.chunk.source.rsplit("/", 1)[-1], h.chunk.start, h.chunk.end] for h in top]
        plain.append({**row, **_within(q, hits, read_budget, big=False)})
        read = [g for h in top for g in h.group]
        big = score_units(q, [_big(h) for h in top], tokens_read(read))
        s2b.append({**big, **_within(q, hits, read_budget, big=True)})
    return {"chunks": plain, "small_to_big": s2b}
