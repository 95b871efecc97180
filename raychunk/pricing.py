"""The cost model: what an index costs under each chunking setting, before anyone builds it.

Pure Python: per-document measurements (``measure_document``), their mergeable partials
(``partial_from_rows``, merged with ``+``) and the report from a merged partial (``summarize_partial``).
Ray measures and builds a partial per block on the workers; only the partials reach the driver.

Storage model, stated in every report's notes:
- vector bytes = vectors × ceil(dim × bits per dimension / 8) (float32 32, float16 16, int8 8, binary 1);
- index bytes: ``flat`` stores the vectors; ``hnsw:M=m`` adds graph links: 2m neighbour ids of 4 bytes
  on layer 0 per vector, and about m per vector on the upper layers, which hold a 1/(m-1) share:
  links = vectors × 4 × (2m + m/(m-1));
- text bytes = UTF-8 bytes of the chunk text that is stored beside each vector.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from operator import add

from raychunk.chunking import Profile, chunk_stats
from raychunk.document import ParsedDocument
from raychunk.stats import percentile_interval
from raychunk.tokens import CachedCounter, TokenCounter

__all__ = [
    "BOOTSTRAP_ROUNDS",
    "DTYPE_BITS",
    "IndexSpec",
    "PricePartial",
    "Rates",
    "Setting",
    "Totals",
    "price_partial",
    "price_partials",
    "grid",
    "in_sample",
    "index_bytes",
    "measure_document",
    "partial_from_rows",
    "poisson_weights",
    "summarize",
    "summarize_partial",
    "vector_bytes",
]

DTYPE_BITS = {"float32": 32, "float16": 16, "int8": 8, "binary": 1}


@dataclass(frozen=True, slots=True)
class Setting:
    """One row of the price table: a uniform profile, or (``profile=None``) each type's own."""

    label: str
    profile: Profile | None = None


def grid(
    sizes: list[int], overlaps: list[float], strategies: list[str], *, table_max_tokens: int | None = None
) -> list[Setting]:
    """Every strategy × size × overlap. ``table_max_tokens`` caps tables in the settings that keep
    tables whole (``structure``; labelled ``t128``); fixed windows and the other baselines ignore it.

    >>> [s.label for s in grid([250], [0], ["structure", "fixed"], table_max_tokens=128)]
    ['structure 250 o0 t128', 'fixed 250 o0']
    """
    out = []
    for strategy in strategies:
        for size in sizes:
            for overlap in overlaps:
                cap = table_max_tokens if strategy == "structure" else None
                p = Profile(strategy=strategy, max_tokens=size, overlap=overlap, table_max_tokens=cap)
                label = f"{strategy} {size} o{_fmt_overlap(overlap)}" + (f" t{cap}" if cap else "")
                out.append(Setting(label, p))
    return out


def _fmt_overlap(o: float) -> str:
    return f"{o:g}" if o < 1 else f"{int(o)}t"


@dataclass(frozen=True, slots=True)
class IndexSpec:
    kind: str = "flat"
    m: int = 16

    @classmethod
    def parse(cls, spec: str) -> IndexSpec:
        """``flat`` or ``hnsw`` / ``hnsw:M=32``."""
        kind, _, params = spec.partition(":")
        if kind == "flat" and not params:
            return cls("flat")
        if kind == "hnsw":
            m = 16
            for part in filter(None, params.split(",")):
                key, _, value = part.partition("=")
                if key.strip().upper() != "M" or not value.strip().isdigit() or int(value) < 2:
                    raise ValueError(f"--index {spec!r}: hnsw takes M=<integer >= 2>, e.g. hnsw:M=16")
                m = int(value)
            return cls("hnsw", m)
        raise ValueError(f"--index {spec!r}: accepted values are flat, hnsw, hnsw:M=<n>")

    @property
    def label(self) -> str:
        return "flat" if self.kind == "flat" else f"hnsw:M={self.m}"


def vector_bytes(vectors: float, dim: int, dtype: str) -> float:
    return vectors * math.ceil(dim * DTYPE_BITS[dtype] / 8)


def index_bytes(vectors: float, dim: int, dtype: str, index: IndexSpec) -> float:
    base = vector_bytes(vectors, dim, dtype)
    if index.kind == "flat":
        return base
    return base + vectors * 4 * (2 * index.m + index.m / (index.m - 1))


@dataclass(frozen=True, slots=True)
class Rates:
    """Prices the user configured; None means 'not given' and no money is shown for it."""

    gpu_hour_usd: float | None = None
    storage_gb_month_usd: float | None = None
    api_usd_per_1m_tokens: float | None = None
    tokens_per_second: float | None = None  # embedding throughput: measured or given


def in_sample(source: str, fraction: float) -> bool:
    """Deterministic, hash-based document sample: the same documents for the same fraction."""
    if fraction >= 1:
        return True
    h = int.from_bytes(hashlib.sha256(source.encode()).digest()[:8], "big")
    return h / 2**64 < fraction


def measure_document(
    parsed: ParsedDocument,
    doc_type: str,
    settings: list[Setting],
    profiles: dict,
    counter: TokenCounter,
    *,
    keep_ids: bool = False,
    stats=chunk_stats,
) -> list[dict]:
    """One row per setting with this document's chunk statistics. Blocks are tokenized once for
    all settings (a per-document cache), which is what makes a grid cheap. ``stats``: the chunk
    statistics of one document and profile (``chunking.chunk_stats``, or ``peers.chunk_stats_any``
    for a grid that names peer libraries)."""
    cached = CachedCounter(counter)
    doc = parsed.document
    rows = []
    for s in settings:
        profile = s.profile or profiles.get(doc_type)
        ok = doc.status == "ok" and profile is not None
        chunks = stats(parsed, profile, cached, doc_type=doc_type, with_ids=keep_ids) if ok else []
        hist = Counter(c.n_tokens for c in chunks)
        rows.append(
            {
                "setting": s.label,
                "doc_id": doc.doc_id,
                "source": doc.source,
                "doc_type": doc_type,
                "status": doc.status,
                "bytes": doc.bytes,
                "pages": doc.pages,
                "ocr_pages": len(doc.ocr_pages),
                "ocr_seconds": doc.ocr_seconds,
                "chunks": len(chunks),
                "tokens": sum(c.n_tokens for c in chunks),
                "header_tokens": sum(c.header_tokens for c in chunks),
                "overlap_tokens": sum(c.overlap_tokens for c in chunks),
                "over_limit": sum(c.over_limit for c in chunks),
                "text_bytes": sum(c.text_bytes for c in chunks),
                "token_hist": sorted(hist.items()),
                "chunk_ids": [{"chunk_id": c.chunk_id, "n_tokens": c.n_tokens} for c in chunks]
                if keep_ids
                else None,
            }
        )
    return rows


_SUMS = (
    "chunks",
    "tokens",
    "header_tokens",
    "overlap_tokens",
    "over_limit",
    "text_bytes",
    "bytes",
    "pages",
    "ocr_pages",
    "ocr_seconds",
)
_BOOT = ("bytes", "chunks", "tokens", "text_bytes")  # what a bootstrap round sums, in this order
BOOTSTRAP_ROUNDS = 1000


@dataclass(frozen=True, slots=True)
class Totals:
    """Sums over some documents under one setting, and how many chunks have each token count (the
    histogram p50/p95 are read from: bounded by the largest chunk, not by the corpus)."""

    docs: int = 0
    chunks: int = 0
    tokens: int = 0
    header_tokens: int = 0
    overlap_tokens: int = 0
    over_limit: int = 0
    text_bytes: int = 0
    bytes: int = 0
    pages: int = 0
    ocr_pages: int = 0  # pages whose text OCR read, and the CPU seconds OCR took
    ocr_seconds: float = 0.0
    hist: dict[int, int] = field(default_factory=dict)

    def __add__(self, other: Totals) -> Totals:
        hist = Counter(self.hist)
        hist.update(other.hist)
        sums = (getattr(self, k) + getattr(other, k) for k in _SUMS)
        return Totals(self.docs + other.docs, *sums, hist=dict(hist))


@dataclass(frozen=True, slots=True)
class PricePartial:
    """What some measure rows (a block of them, on a worker) contribute to the price report. Partials
    merge with ``+`` in any order and grouping to the same result, and their size grows with settings,
    doc types and duplicates, never with documents:

    - ``totals[setting]``, ``by_type[(setting, doc_type or status)]``: ``Totals``;
    - ``copies[(setting, doc_id)]``: how many duplicate copies of that document were skipped;
    - ``kept[(setting, doc_id)]``: the kept copy's tokens, only for a document that has copies (a
      copy shares the kept one's doc_id, the hash of its bytes). One copy is kept per doc_id, so
      this merges by taking the value present, not by adding;
    - ``boot[setting]``: sampled runs only, a ``(4, rounds)`` array: per bootstrap round, the sums of
      bytes, chunks, tokens and text bytes with each document weighted by ``poisson_weights``."""

    totals: dict[str, Totals] = field(default_factory=dict)
    by_type: dict[tuple[str, str], Totals] = field(default_factory=dict)
    copies: dict[tuple[str, str], int] = field(default_factory=dict)
    kept: dict[tuple[str, str], int] = field(default_factory=dict)
    boot: dict[str, object] = field(default_factory=dict)

    def __add__(self, other: PricePartial) -> PricePartial:
        return PricePartial(
            _merged(self.totals, other.totals, add),
            _merged(self.by_type, other.by_type, add),
            _merged(self.copies, other.copies, add),
            _merged(self.kept, other.kept, max),
            _merged(self.boot, other.boot, add),
        )


def _merged(a: dict, b: dict, combine) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = combine(out[k], v) if k in out else v
    return out


def poisson_weights(key: str, rounds: int, seed: int):
    """A document's weight in each of ``rounds`` bootstrap rounds: Poisson(1) draws from a generator
    seeded by (seed, hash of ``key``). They depend on nothing else, so every block layout and merge
    order gives the same rounds, and every setting sees the same resample (paired)."""
    import numpy as np

    h = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    return np.random.default_rng([seed, h]).poisson(1.0, rounds)


def partial_from_rows(
    rows, *, kept_sources: Collection[str] | None = None, rounds: int = 0, seed: int = 0
) -> PricePartial:
    """The partial of some ``measure_document`` rows. ``kept_sources``: the sources of kept copies
    that have duplicates (the values of ``find_duplicates``' map), so a block can record a kept
    copy's tokens without seeing its duplicates; None when ``rows`` are all the rows (then the kept
    copies are read off them). ``rounds``: bootstrap rounds, 0 when nothing is sampled."""
    if kept_sources is None:
        rows = list(rows)
        copied = {r["doc_id"] for r in rows if r["status"] == "duplicate"}
        has_copies = lambda r: r["doc_id"] in copied  # noqa: E731
    else:
        has_copies = lambda r: r["source"] in kept_sources  # noqa: E731
    totals: dict[str, _Acc] = {}
    by_type: dict[tuple[str, str], _Acc] = {}
    copies: Counter = Counter()
    kept: dict[tuple[str, str], int] = {}
    boot: dict = {}
    weights: dict = {}
    if rounds:
        import numpy as np
    for r in rows:
        s = r["setting"]
        totals.setdefault(s, _Acc()).add(r)
        by_type.setdefault((s, r["doc_type"] or r["status"]), _Acc()).add(r)
        if r["status"] == "duplicate":
            copies[(s, r["doc_id"])] += 1
        elif has_copies(r):
            kept[(s, r["doc_id"])] = r["tokens"]
        if rounds:
            if r["source"] not in weights:
                weights[r["source"]] = poisson_weights(r["source"], rounds, seed)
            draw = np.outer([float(r[k]) for k in _BOOT], weights[r["source"]])
            boot[s] = boot[s] + draw if s in boot else draw
    return PricePartial(
        {k: a.totals() for k, a in totals.items()},
        {k: a.totals() for k, a in by_type.items()},
        dict(copies),
        kept,
        boot,
    )


@dataclass
class _Acc:
    docs: int = 0
    sums: list = field(default_factory=lambda: [0] * len(_SUMS))
    hist: Counter = field(default_factory=Counter)

    def add(self, r: dict) -> None:
        self.docs += 1
        for i, k in enumerate(_SUMS):
            self.sums[i] += r.get(k) or 0  # the eval report's rows carry no pages or OCR figures
        self.hist.update(dict(tuple(x) for x in r["token_hist"]))

    def totals(self) -> Totals:
        return Totals(self.docs, *self.sums, hist=dict(self.hist))


def _percentile(hist: dict[int, int], q: float) -> float:
    n = sum(hist.values())
    if not n:
        return 0.0
    rank = q * (n - 1)
    seen = 0
    for value in sorted(hist):
        seen += hist[value]
        if seen > rank:
            return float(value)
    return float(max(hist))


def summarize(
    rows: list[dict],
    settings: list[Setting],
    *,
    dim: int,
    dtype: str,
    index: IndexSpec,
    corpus_files: int,
    corpus_bytes: int,
    sample: float,
    rates: Rates,
    previous: dict[str, int] | None = None,
    seed: int = 0,
) -> dict:
    """``summarize_partial`` over rows at hand (the eval report's, the tests'): their partial, and
    with ``previous`` (an earlier run's chunk ids) the comparison against it."""
    rows = list(rows)
    partial = partial_from_rows(rows, rounds=BOOTSTRAP_ROUNDS if sample < 1 else 0, seed=seed)
    from raychunk.merge import compare_ids

    delta = None if previous is None else compare_ids(rows, previous, [s.label for s in settings])
    return summarize_partial(
        partial,
        settings,
        dim=dim,
        dtype=dtype,
        index=index,
        corpus_files=corpus_files,
        corpus_bytes=corpus_bytes,
        sample=sample,
        rates=rates,
        delta=delta,
    )


def summarize_partial(
    partial: PricePartial,
    settings: list[Setting],
    *,
    dim: int,
    dtype: str,
    index: IndexSpec,
    corpus_files: int,
    corpus_bytes: int,
    sample: float,
    rates: Rates,
    delta: dict[str, dict] | None = None,
) -> dict:
    """One result per setting from the merged partial, scaled to the corpus when sampled, with a 95%
    Poisson-bootstrap interval over documents. ``delta``: per setting, the counts against an
    earlier run (``compare_ids``), to which the cost of embedding the new chunks is added."""
    out = []
    for s in settings:
        acc = partial.totals.get(s.label, Totals())
        scale = corpus_bytes / acc.bytes if sample < 1 and acc.bytes else 1.0
        row = _cost_row(s.label, acc, scale, dim, dtype, index, rates)
        row.update(_duplicates_saved(partial, s.label, scale))
        if sample < 1:
            row["documents"] = corpus_files
            row["interval_95"] = _bootstrap(
                partial.boot.get(s.label), acc.docs, corpus_bytes, dim, dtype, index
            )
        if delta is not None:
            row["delta"] = {**delta[s.label], **_embedding_cost(delta[s.label]["tokens_to_embed"], rates)}
        row["by_type"] = {
            t: _cost_row(t, a, scale, dim, dtype, index, rates)
            for (label, t), a in sorted(partial.by_type.items())
            if label == s.label
        }
        out.append(row)
    first = settings[0].label if settings else None
    return {
        "settings": out,
        "sampled_documents": partial.totals.get(first, Totals()).docs,
        "duplicates": sum(n for (label, _), n in partial.copies.items() if label == first),
        "corpus_files": corpus_files,
        "corpus_bytes": corpus_bytes,
        "sample": sample,
        "estimate": sample < 1,
        "dim": dim,
        "dtype": dtype,
        "index": index.label,
    }


def _duplicates_saved(partial: PricePartial, label: str, scale: float) -> dict:
    """Byte-identical copies skipped and, per copy, the kept copy's tokens under this setting."""
    copies = {doc_id: n for (s, doc_id), n in partial.copies.items() if s == label}
    saved = sum(n * partial.kept.get((label, doc_id), 0) for doc_id, n in copies.items())
    return {"duplicates": round(sum(copies.values()) * scale), "tokens_saved": round(saved * scale)}


def _cost_row(
    label: str, a: Totals, scale: float, dim: int, dtype: str, index: IndexSpec, rates: Rates
) -> dict:
    vectors = a.chunks * scale
    vec_b = vector_bytes(vectors, dim, dtype)
    idx_b = index_bytes(vectors, dim, dtype, index)
    text_b = a.text_bytes * scale
    tokens = a.tokens * scale
    row = {
        "setting": label,
        "documents": round(a.docs * scale),
        "chunks": round(vectors),
        "vectors": round(vectors),
        "tokens": round(tokens),
        "header_share": a.header_tokens / a.tokens if a.tokens else 0.0,
        "overlap_share": a.overlap_tokens / a.tokens if a.tokens else 0.0,
        "tokens_mean": a.tokens / a.chunks if a.chunks else 0.0,
        "tokens_p50": _percentile(a.hist, 0.5),
        "tokens_p95": _percentile(a.hist, 0.95),
        "over_limit": round(a.over_limit * scale),
        "over_limit_share": a.over_limit / a.chunks if a.chunks else 0.0,
        "pages": round(a.pages * scale),
        "ocr_pages": round(a.ocr_pages * scale),
        "ocr_seconds": a.ocr_seconds * scale,
        "text_bytes": round(text_b),
        "vector_bytes": round(vec_b),
        "index_bytes": round(idx_b),
        "total_bytes": round(text_b + idx_b),
    }
    row.update(_embedding_cost(tokens, rates))
    if rates.storage_gb_month_usd is not None:
        row["storage_usd_month"] = row["total_bytes"] / 1e9 * rates.storage_gb_month_usd
    return row


def _bootstrap(boot, docs: int, corpus_bytes: int, dim: int, dtype: str, index: IndexSpec) -> dict:
    """95% interval of the scaled vectors, tokens and total bytes. Each round is a Poisson bootstrap
    resample of the documents (each weighted by a Poisson(1) draw, ``poisson_weights``), scaled to
    the corpus by its bytes (a ratio estimate)."""
    if boot is None or docs < 2:
        return {}
    import numpy as np

    size, chunks, tokens, text = boot
    scale = corpus_bytes / np.where(size > 0, size, 1)
    vectors = chunks * scale
    draws = {
        "vectors": vectors,
        "tokens": tokens * scale,
        "total_bytes": text * scale + index_bytes(vectors, dim, dtype, index),
    }
    return {key: [round(x) for x in percentile_interval(values)] for key, values in draws.items()}


def price_partials(*, kept_sources: frozenset[str], rounds: int, seed: int = 0):
    """The price job's aggregation, on the workers: each block of measure rows becomes one row
    holding its pickled ``PricePartial`` (``price_partial``). It runs as the document step does, so
    Ray fuses it into those tasks and the per-document rows never leave them."""
    from raychunk.step import Step

    kwargs = {"kept_sources": kept_sources, "rounds": rounds, "seed": seed}
    return Step("price partials", price_partial, kwargs=kwargs, runs_as="document")


def price_partial(batch, *, kept_sources: frozenset[str], rounds: int, seed: int):
    """A block of ``measure_settings`` rows → one row holding the block's pickled ``PricePartial``:
    what leaves the worker is sized by settings and doc types, not by documents."""
    import pickle

    import pyarrow as pa

    partial = partial_from_rows(batch.to_pylist(), kept_sources=kept_sources, rounds=rounds, seed=seed)
    return pa.table({"partial": pa.array([pickle.dumps(partial)], pa.binary())})


def _embedding_cost(tokens: float, rates: Rates) -> dict:
    """Time to embed ``tokens`` at the measured or given throughput, and money only where priced."""
    cost = {}
    if rates.tokens_per_second:
        cost["embed_seconds"] = tokens / rates.tokens_per_second
        if rates.gpu_hour_usd is not None:
            cost["embed_usd"] = cost["embed_seconds"] / 3600 * rates.gpu_hour_usd
    if rates.api_usd_per_1m_tokens is not None:
        cost["api_usd"] = tokens / 1e6 * rates.api_usd_per_1m_tokens
    return cost
