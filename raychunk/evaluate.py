"""Retrieval evaluation with labelled passages: does the passage that answers a question come back?

Labels name a document and a passage (a quote and/or a character span ``[start, end)`` into the
document's parsed text), never a chunk id, so they survive a re-chunk. Every chunking setting is
scored on the same questions, against the same embedder, with all documents pooled into one index.

Metrics per question, over the top ``k`` chunks (spans are chunk *body* spans in the document text):

- ``hit``: some retrieved chunk of the labelled document covers at least 90% of a passage, or its
  text contains the passage's quote (whitespace-normalised);
- ``rr``: 1 / rank of the first such chunk (0 when none): its mean is the MRR;
- ``recall``: the share of passage characters covered by the union of the top-k spans;
- ``precision``: relevant characters over retrieved characters (the union of all top-k spans, other
  documents included); ``iou``: relevant over the union of retrieved and relevant;
- ``tokens``: the summed ``n_tokens`` of the top-k chunks, what a model would have to read.

Small-to-big scores each hit expanded to its parent section (the chunks sharing its ``parent_id``),
capped at a token budget. Every mean carries a 95% bootstrap interval over questions, and the
recommendation compares settings by a paired bootstrap on the same resampled questions.

Everything here is pure Python and numpy; the Ray job is ``raychunk.jobs.eval``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from raychunk.render import signed

__all__ = [
    "HIT_SHARE",
    "IndexedChunk",
    "LabelledQuery",
    "Passage",
    "ResolvedQuery",
    "Unit",
    "bootstrap_interval",
    "evaluate",
    "expand_to_parent",
    "load_queries",
    "locate_quote",
    "match_source",
    "paired_difference",
    "recommend",
    "resolve_queries",
    "score_corpus",
    "score_units",
    "tokens_read",
    "top_k",
]

HIT_SHARE = 0.9  # a chunk "holds" a passage when it covers this share of its characters
METRICS = ("hit", "recall", "precision", "iou", "rr", "tokens")
S2B_METRICS = ("hit", "recall", "tokens")


# -- labelled queries ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    """One line of the labelled-query file, as written: passages are ``{"quote": ...}`` and/or
    ``{"span": [start, end]}`` dicts, not yet located in any document."""

    qid: str
    query: str
    source: str
    passages: tuple[dict, ...]


@dataclass(frozen=True, slots=True)
class Passage:
    """A located answer passage: ``text[start:end]`` of the document; ``quote`` when one was given."""

    start: int
    end: int
    quote: str | None = None


@dataclass(frozen=True, slots=True)
class ResolvedQuery:
    qid: str
    query: str
    source: str  # the corpus document's full source, as the chunks carry it
    passages: tuple[Passage, ...]


def load_queries(path: str | Path) -> list[LabelledQuery]:
    """Read a JSONL file of labelled queries; a malformed line fails naming the line and the fix.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "q.jsonl")
    >>> _ = open(p, "w").write('{"query": "Refund window?", "source": "guide.md", "passages": [{"quote": "30 days"}]}\\n')
    >>> load_queries(p)[0].qid
    'q1'
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"labelled queries not found: {path}")
    out, seen = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{n}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{where}: not a JSON object ({e})") from e
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(row).__name__}")
        unknown = sorted(set(row) - {"id", "query", "source", "passages", "note"})
        if unknown:
            raise ValueError(
                f"{where}: unknown key {unknown[0]!r}: accepted keys are id, query, source, passages"
            )
        for key in ("query", "source"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise ValueError(f"{where}: {key!r} must be a non-empty string")
        passages = row.get("passages")
        if not isinstance(passages, list) or not passages:
            raise ValueError(f"{where}: 'passages' must be a non-empty list of {{quote}} / {{span}} objects")
        for p in passages:
            if not isinstance(p, dict) or not p or set(p) - {"quote", "span"}:
                raise ValueError(
                    f'{where}: a passage is {{"quote": TEXT}} and/or {{"span": [START, END]}}, got {p!r}'
                )
            if "quote" in p and (not isinstance(p["quote"], str) or not p["quote"].strip()):
                raise ValueError(f"{where}: a passage quote must be non-empty text")
            if "span" in p and not (
                isinstance(p["span"], list)
                and len(p["span"]) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) for x in p["span"])
                and 0 <= p["span"][0] < p["span"][1]
            ):
                raise ValueError(
                    f"{where}: a passage span is [START, END] with 0 <= START < END, got {p['span']!r}"
                )
        qid = str(row.get("id") or f"q{n}")
        if qid in seen:
            raise ValueError(f"{where}: duplicate query id {qid!r}")
        seen.add(qid)
        out.append(LabelledQuery(qid, row["query"].strip(), row["source"].strip(), tuple(passages)))
    if not out:
        raise ValueError(f"{path}: no labelled queries in the file")
    return out


def match_source(name: str, sources: list[str]) -> str:
    """The corpus source a label names: the same path, or a path ending in ``/name`` (a basename or
    any longer suffix). No match or several is an error that says which.

    >>> match_source("faq.txt", ["/data/a/faq.txt", "/data/b/guide.md"])
    '/data/a/faq.txt'
    """
    want = name[2:] if name.startswith("./") else name
    found = [s for s in sources if s == name or s.endswith("/" + want)]
    if len(found) == 1:
        return found[0]
    if not found:
        names = sorted({s.rsplit("/", 1)[-1] for s in sources})
        shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
        raise ValueError(f"source {name!r} names no document of the corpus (documents: {shown})")
    raise ValueError(
        f"source {name!r} names {len(found)} documents ({', '.join(found[:4])}): give a longer path"
    )


def _normalise(text: str) -> tuple[str, list[int]]:
    """Whitespace runs collapsed to one space, with each output character's index in ``text``."""
    out: list[str] = []
    pos: list[int] = []
    space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if space:
                continue
            out.append(" ")
            space = True
        else:
            out.append(ch)
            space = False
        pos.append(i)
    return "".join(out), pos


def _squash(text: str) -> str:
    return " ".join(text.split())


def locate_quote(text: str, quote: str) -> tuple[int, int] | None:
    """The span of ``quote`` in ``text``: the first exact occurrence, else the first occurrence with
    whitespace runs treated as equal (a quote copied across a line break). None when absent.
    Invariant: ``_squash(text[start:end]) == _squash(quote)``.

    >>> locate_quote("Refunds are paid\\n  within 10 days.", "paid within 10 days")
    (12, 33)
    """
    i = text.find(quote)
    if i >= 0:
        return i, i + len(quote)
    q = _squash(quote)
    if not q:
        return None
    norm, pos = _normalise(text)
    j = norm.find(q)
    if j < 0:
        return None
    return pos[j], pos[j + len(q) - 1] + 1


def resolve_queries(queries: list[LabelledQuery], documents: dict[str, str]) -> list[ResolvedQuery]:
    """Locate every passage in its document's text (``documents``: source → text). A source that
    names no document, a quote not in the text, or a span outside it fails naming the query."""
    sources = sorted(documents)
    out = []
    for q in queries:
        try:
            source = match_source(q.source, sources)
        except ValueError as e:
            raise ValueError(f"query {q.qid} ({q.query!r}): {e}") from e
        text = documents[source]
        passages = []
        for p in q.passages:
            quote = p.get("quote")
            if "span" in p:
                start, end = p["span"]
                if end > len(text):
                    raise ValueError(
                        f"query {q.qid} ({q.query!r}): span {p['span']} runs past the end of {source} "
                        f"({len(text)} characters)"
                    )
                if quote is not None and _squash(text[start:end]) != _squash(quote):
                    raise ValueError(
                        f"query {q.qid} ({q.query!r}): span {p['span']} of {source} reads "
                        f"{text[start:end][:60]!r}, not the quote {quote[:60]!r}; fix one of them"
                    )
            else:
                span = locate_quote(text, quote)
                if span is None:
                    raise ValueError(
                        f"query {q.qid} ({q.query!r}): quote {quote[:80]!r} is not in the text of {source}. "
                        "Copy it from the document's parsed text (what `raychunk chunk FILE` shows, or the "
                        "raw source for HTML), or give a span [start, end] instead."
                    )
                start, end = span
            passages.append(Passage(start, end, quote))
        out.append(ResolvedQuery(q.qid, q.query, source, tuple(passages)))
    return out


# -- spans --------------------------------------------------------------------------------------


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


# -- retrieval units and scoring ----------------------------------------------------------------


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


@dataclass(frozen=True, slots=True)
class Unit:
    """One retrieved result as the reader gets it: a chunk, or a chunk expanded to its parent."""

    source: str
    spans: tuple[tuple[int, int], ...]
    texts: tuple[str, ...] = field(default=())


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
    i = family.index(hit)
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
    """The metrics of one question for one ranked list of retrieved units (see the module notes).

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
        texts = [_squash(t) for t in u.texts]
        for p in query.passages:
            covered = _overlap(spans, [(p.start, p.end)])
            quoted = p.quote is not None and any(_squash(p.quote) in t for t in texts)
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
    both = _overlap(retrieved.get(query.source, []), relevant)
    n_relevant = _length(relevant)
    return {
        "hit": int(rank is not None),
        "rank": rank,
        "rr": 1.0 / rank if rank else 0.0,
        "recall": both / n_relevant if n_relevant else 0.0,
        "precision": both / n_retrieved if n_retrieved else 0.0,
        "iou": both / (n_retrieved + n_relevant - both) if n_retrieved + n_relevant else 0.0,
        "tokens": tokens,
    }


def top_k(query_vectors, chunk_vectors, k: int):
    """Indices of the ``k`` chunks nearest each query by cosine, best first; ties go to the lower
    index so the ranking does not depend on sort internals."""
    import numpy as np

    q = np.asarray(query_vectors, dtype=np.float32)
    c = np.asarray(chunk_vectors, dtype=np.float32)
    q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    c = c / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-12)
    scores = q @ c.T
    return np.argsort(-scores, axis=1, kind="stable")[:, : min(k, c.shape[0])]


def score_corpus(
    queries: list[ResolvedQuery],
    query_vectors,
    chunks: list[IndexedChunk],
    chunk_vectors,
    *,
    k: int,
    parent_budget: int,
) -> dict[str, list[dict]]:
    """Score every question against one setting's pooled index, in both modes:
    ``{"chunks": [per-question metrics], "small_to_big": [...]}``."""
    families: dict[tuple[str, str], list[IndexedChunk]] = {}
    for c in chunks:
        families.setdefault((c.source, c.parent_id), []).append(c)
    for fam in families.values():
        fam.sort(key=lambda c: c.chunk_index)
    ranked = top_k(query_vectors, chunk_vectors, k) if chunks else [[] for _ in queries]
    plain, s2b = [], []
    for q, idx in zip(queries, ranked):
        hits = [chunks[i] for i in idx]
        units = [Unit(c.source, ((c.start, c.end),), (c.text,)) for c in hits]
        row = score_units(q, units, sum(c.n_tokens for c in hits))
        row["top"] = [[c.source.rsplit("/", 1)[-1], c.start, c.end] for c in hits]
        plain.append(row)
        read: list[IndexedChunk] = []
        big = []
        for c in hits:
            group = expand_to_parent(c, families[(c.source, c.parent_id)], parent_budget)
            read.extend(group)
            big.append(Unit(c.source, tuple((g.start, g.end) for g in group), tuple(g.text for g in group)))
        s2b.append(score_units(q, big, tokens_read(read)))
    return {"chunks": plain, "small_to_big": s2b}


# -- the bootstrap ------------------------------------------------------------------------------


def _draws(n: int, rounds: int, seed: int):
    """The resampled question indices: the same for every metric and setting (so differences are paired)."""
    import numpy as np

    return np.random.default_rng(seed).integers(0, n, size=(rounds, n))


def bootstrap_interval(values, *, rounds: int = 2000, seed: int = 0, confidence: float = 0.95) -> list[float]:
    """Percentile interval of the mean over ``rounds`` resamples of the questions (deterministic).

    >>> bootstrap_interval([1, 1, 1, 1])
    [1.0, 1.0]
    """
    import numpy as np

    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        return [0.0, 0.0]
    means = v[_draws(len(v), rounds, seed)].mean(axis=1)
    a = (1 - confidence) / 2
    return [float(np.quantile(means, a)), float(np.quantile(means, 1 - a))]


def paired_difference(a, b, *, rounds: int = 2000, seed: int = 0, confidence: float = 0.95) -> dict:
    """Mean of ``a - b`` per question, with its paired bootstrap interval (both lists resampled on
    the same questions)."""
    import numpy as np

    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    lo, hi = bootstrap_interval(d, rounds=rounds, seed=seed, confidence=confidence)
    return {"mean": float(d.mean()) if len(d) else 0.0, "interval": [lo, hi]}


def _summary(rows: list[dict], names, rounds: int, seed: int) -> dict:
    out = {}
    for name in names:
        values = [r[name] for r in rows]
        out["mrr" if name == "rr" else name] = {
            "mean": sum(values) / len(values) if values else 0.0,
            "interval": bootstrap_interval(values, rounds=rounds, seed=seed),
        }
    return out


# -- the recommendation -------------------------------------------------------------------------


def recommend(settings: list[dict], *, metric: str = "recall", rounds: int = 2000, seed: int = 0) -> dict:
    """The cheapest setting (fewest vectors, then least total storage) whose ``metric`` is not worse
    than the best setting's beyond noise. Each setting is ``{"setting", "vectors", "total_bytes",
    "values": [per-question metric]}``, all on the same questions in the same order.

    Noise, by a paired bootstrap over questions: the 95% interval of (candidate - best) reaches 0,
    or the mean gap is at most one question's worth (1/n).
    """
    if not settings:
        raise ValueError("no settings to recommend from")
    n = len(settings[0]["values"])
    mean = {s["setting"]: sum(s["values"]) / n if n else 0.0 for s in settings}
    best = max(settings, key=lambda s: (mean[s["setting"]], -s["vectors"], -s["total_bytes"]))
    comparisons = []
    for s in sorted(settings, key=lambda s: (s["vectors"], s["total_bytes"])):
        d = paired_difference(s["values"], best["values"], rounds=rounds, seed=seed)
        gap_questions = -d["mean"] * n
        within = s is best or d["interval"][1] >= 0 or gap_questions <= 1 + 1e-9
        comparisons.append(
            {
                "setting": s["setting"],
                "vectors": s["vectors"],
                "total_bytes": s["total_bytes"],
                metric: mean[s["setting"]],
                "difference": d["mean"],
                "interval": d["interval"],
                "gap_questions": gap_questions,
                "tokens": s.get("tokens"),
                "within_noise": within,
            }
        )
    chosen = next(c for c in comparisons if c["within_noise"])
    return {
        "setting": chosen["setting"],
        "best": best["setting"],
        "metric": metric,
        "questions": n,
        "reason": _reason(chosen, best, mean, comparisons, metric, n),
        "comparisons": comparisons,
    }


def _reason(chosen: dict, best_row: dict, mean: dict, comparisons: list[dict], metric: str, n: int) -> str:
    label = f"{metric}@k"
    best = best_row["setting"]
    if chosen["setting"] == best:
        if comparisons[0]["setting"] == best:
            return f"{best} has the best {label} ({mean[best]:.2f}) and is also the cheapest index: nothing to trade."
        text = (
            f"{best} has the best {label} ({mean[best]:.2f}) and no cheaper setting comes within noise of it"
        )
        worse = [c for c in comparisons if not c["within_noise"]]
        if worse:
            w = worse[0]  # comparisons are in cost order: this is the cheapest
            text += (
                f": the cheapest, {w['setting']} ({w['vectors']:,} vectors), trails by {w['gap_questions']:.1f} "
                f"questions in {n} (paired 95% interval of the difference {signed(w['interval'][0])} to "
                f"{signed(w['interval'][1])}, all below 0): more than noise, so the extra vectors pay"
            )
        return text + "."
    iv = chosen["interval"]
    why = (
        "the paired 95% interval of the difference includes 0"
        if iv[1] >= 0
        else "the gap is within one question's worth"
    )
    gap = chosen["gap_questions"]
    gap_words = (
        "no gap" if abs(gap) < 0.05 else f"a gap of {gap:.1f} question{'s' if abs(gap) != 1 else ''} in {n}"
    )
    text = (
        f"{chosen['setting']} ({chosen['vectors']:,} vectors) scores {label} {chosen[metric]:.2f} against the best, "
        f"{best} ({mean[best]:.2f}): {gap_words} (difference {signed(iv[0])} to {signed(iv[1])}; {why}). "
        f"That is noise: take the cheaper index."
    )
    tokens, best_tokens = chosen.get("tokens"), best_row.get("tokens")
    if tokens and best_tokens and tokens > 1.25 * best_tokens:
        text += (
            f" Mind the reading cost, which this rule does not weigh: its top k hand the reader {tokens:.0f} "
            f"tokens per question against {best_tokens:.0f} for {best}."
        )
    return text


# -- the whole evaluation, given rows -----------------------------------------------------------


def _price_rows(
    documents: dict[str, dict], chunks: dict[str, list[dict]], settings, sizes: dict[str, int]
) -> list[dict]:
    """Per-document, per-setting statistics in the shape ``pricing.summarize`` takes, from the
    chunks that were evaluated (so the cost columns price exactly the index that was scored)."""
    from collections import Counter

    out = []
    for s in settings:
        per_doc: dict[str, list[dict]] = {}
        for c in chunks.get(s.label, []):
            per_doc.setdefault(c["source"], []).append(c)
        for source, doc in sorted(documents.items()):
            cs = per_doc.get(source, [])
            out.append(
                {
                    "setting": s.label,
                    "doc_id": doc.get("doc_id", source),
                    "source": source,
                    "doc_type": doc.get("doc_type", ""),
                    "status": doc.get("status", "ok"),
                    "bytes": sizes.get(source, len(doc.get("text", "").encode())),
                    "chunks": len(cs),
                    "tokens": sum(c["n_tokens"] for c in cs),
                    "header_tokens": sum(c["header_tokens"] for c in cs),
                    "overlap_tokens": sum(c["overlap_tokens"] for c in cs),
                    "over_limit": sum(bool(c["over_limit"]) for c in cs),
                    "text_bytes": sum(len(c["text"].encode()) for c in cs),
                    "token_hist": json.dumps(sorted(Counter(c["n_tokens"] for c in cs).items())),
                    "chunk_ids": "",
                }
            )
    return out


def evaluate(
    queries: list[ResolvedQuery],
    query_vectors,
    documents: dict[str, dict],
    chunks: dict[str, list[dict]],
    vectors: dict,
    settings,
    *,
    k: int = 5,
    parent_budget: int = 512,
    dim: int,
    dtype: str = "float32",
    index=None,
    file_sizes: dict[str, int] | None = None,
    rounds: int = 2000,
    seed: int = 0,
) -> dict:
    """The eval report from collected rows. ``documents``: source → document facts (``text``,
    ``doc_type``, ``status``); ``chunks``: setting label → chunk dicts (chunk record columns) in a
    stable order; ``vectors``: label → array aligned with those chunks."""
    from raychunk.pricing import IndexSpec, Rates, summarize

    index = index or IndexSpec()
    sizes = file_sizes or {}
    price = summarize(
        _price_rows(documents, chunks, settings, sizes),
        settings,
        dim=dim,
        dtype=dtype,
        index=index,
        corpus_files=len(documents),
        corpus_bytes=sum(sizes.get(s, len(d.get("text", "").encode())) for s, d in documents.items()),
        sample=1.0,
        rates=Rates(),
    )
    cost = {r["setting"]: r for r in price["settings"]}
    rows, per_setting = [], {}
    for s in settings:
        cs = [_indexed(c) for c in chunks.get(s.label, [])]
        scored = score_corpus(
            queries, query_vectors, cs, vectors.get(s.label), k=k, parent_budget=parent_budget
        )
        per_setting[s.label] = scored
        c = cost[s.label]
        rows.append(
            {
                **{key: c[key] for key in _COST_KEYS},
                "metrics": _summary(scored["chunks"], METRICS, rounds, seed),
                "small_to_big": _summary(scored["small_to_big"], S2B_METRICS, rounds, seed),
                "by_type": {
                    t: {key: x[key] for key in ("documents", "chunks", "tokens", "total_bytes")}
                    for t, x in c["by_type"].items()
                },
            }
        )
    rec = recommend(
        [
            {
                "setting": r["setting"],
                "vectors": r["vectors"],
                "total_bytes": r["total_bytes"],
                "tokens": r["metrics"]["tokens"]["mean"],
                "values": [x["recall"] for x in per_setting[r["setting"]]["chunks"]],
            }
            for r in rows
        ],
        rounds=rounds,
        seed=seed,
    )
    per_query = [
        {
            "id": q.qid,
            "query": q.query,
            "source": q.source,
            "doc_type": documents[q.source].get("doc_type", ""),
            "passages": [[p.start, p.end] for p in q.passages],
            "results": {
                label: {
                    "rank": scored["chunks"][i]["rank"],
                    "recall": round(scored["chunks"][i]["recall"], 4),
                    "s2b_recall": round(scored["small_to_big"][i]["recall"], 4),
                    "top": scored["chunks"][i]["top"],
                }
                for label, scored in per_setting.items()
            },
        }
        for i, q in enumerate(queries)
    ]
    return {
        "k": k,
        "parent_budget": parent_budget,
        "questions": len(queries),
        "documents": len(documents),
        "dim": dim,
        "dtype": dtype,
        "index": index.label,
        "bootstrap": {"rounds": rounds, "seed": seed, "confidence": 0.95},
        "settings": rows,
        "recommendation": rec,
        "per_query": per_query,
        "notes": _notes(k, parent_budget, len(queries)),
    }


_COST_KEYS = (
    "setting",
    "documents",
    "vectors",
    "tokens",
    "tokens_mean",
    "over_limit",
    "text_bytes",
    "index_bytes",
    "total_bytes",
)


def _indexed(c: dict) -> IndexedChunk:
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


def _notes(k: int, budget: int, n: int) -> list[str]:
    return [
        f"Top {k} by cosine over all documents pooled, one index per setting; the queries are embedded "
        "with the same model as the chunks.",
        f"hit@{k}: a retrieved chunk of the labelled document covers >= {HIT_SHARE:.0%} of a passage or "
        "contains its quote. recall@k: share of passage characters inside the union of the top-k body "
        "spans. precision / IoU: in characters, over the union of retrieved spans (duplicates count once).",
        "tokens: the summed tokens of the top-k chunks (header lines and overlap included, as embedded).",
        f"small-to-big: each hit is expanded to its parent section, or to the neighbours that fit, "
        f"at most {budget} tokens per hit; a parent read twice is counted once.",
        f"Intervals: 95% percentile bootstrap over the {n} questions; the recommendation compares each "
        "setting with the best by a paired bootstrap on the same resampled questions.",
        "A chunk's span is its body's span in the document text. Pieces of a split table (and fixed "
        "windows cut inside a table) carry the whole table's span, so span coverage is generous there.",
        "'per-type profile' is configs/doc_types.yaml (what `raychunk run` builds).",
    ]
