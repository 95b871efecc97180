"""The cost model: what an index costs under each chunking setting, before anyone builds it.

Pure Python: per-document measurements (``measure_document``) and their aggregation
(``summarize``). Ray only distributes ``measure_document`` over the corpus.

Storage model, stated in every report's notes:
- vector bytes = vectors × ceil(dim × bits per dimension / 8) (float32 32, float16 16, int8 8, binary 1);
- index bytes: ``flat`` stores the vectors; ``hnsw:M=m`` adds graph links: 2m neighbour ids of 4 bytes
  on layer 0 per vector, and about m per vector on the upper layers, which hold a 1/(m-1) share:
  links = vectors × 4 × (2m + m/(m-1));
- text bytes = UTF-8 bytes of the chunk text that is stored beside each vector.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass, field

from raychunk.chunking import Profile, chunk_stats
from raychunk.document import ParsedDocument
from raychunk.stats import percentile_interval, resample_indices
from raychunk.tokens import CachedCounter, TokenCounter

__all__ = [
    "DTYPE_BITS",
    "IndexSpec",
    "Rates",
    "Setting",
    "grid",
    "in_sample",
    "index_bytes",
    "measure_document",
    "summarize",
    "vector_bytes",
]

DTYPE_BITS = {"float32": 32, "float16": 16, "int8": 8, "binary": 1}


@dataclass(frozen=True, slots=True)
class Setting:
    """One row of the price table: a uniform profile, or (``profile=None``) each type's own."""

    label: str
    profile: Profile | None = None


def grid(sizes: list[int], overlaps: list[float], strategies: list[str]) -> list[Setting]:
    out = []
    for strategy in strategies:
        for size in sizes:
            for overlap in overlaps:
                p = Profile(strategy=strategy, max_tokens=size, overlap=overlap)
                out.append(Setting(f"{strategy} {size} o{_fmt_overlap(overlap)}", p))
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
) -> list[dict]:
    """One row per setting with this document's chunk statistics. Blocks are tokenized once for
    all settings (a per-document cache), which is what makes a grid cheap."""
    cached = CachedCounter(counter)
    doc = parsed.document
    rows = []
    for s in settings:
        profile = s.profile or profiles.get(doc_type)
        ok = doc.status == "ok" and profile is not None
        chunks = chunk_stats(parsed, profile, cached, doc_type=doc_type, with_ids=keep_ids) if ok else []
        hist = Counter(c.n_tokens for c in chunks)
        rows.append(
            {
                "setting": s.label,
                "doc_id": doc.doc_id,
                "source": doc.source,
                "doc_type": doc_type,
                "status": doc.status,
                "bytes": doc.bytes,
                "chunks": len(chunks),
                "tokens": sum(c.n_tokens for c in chunks),
                "header_tokens": sum(c.header_tokens for c in chunks),
                "overlap_tokens": sum(c.overlap_tokens for c in chunks),
                "over_limit": sum(c.over_limit for c in chunks),
                "text_bytes": sum(c.text_bytes for c in chunks),
                "token_hist": json.dumps(sorted(hist.items())),
                "chunk_ids": json.dumps([[c.chunk_id, c.n_tokens] for c in chunks]) if keep_ids else "",
            }
        )
    return rows


@dataclass
class _Acc:
    docs: int = 0
    chunks: int = 0
    tokens: int = 0
    header_tokens: int = 0
    overlap_tokens: int = 0
    over_limit: int = 0
    text_bytes: int = 0
    bytes: int = 0
    hist: Counter = field(default_factory=Counter)

    def add(self, r: dict) -> None:
        self.docs += 1
        for k in ("chunks", "tokens", "header_tokens", "overlap_tokens", "over_limit", "text_bytes", "bytes"):
            setattr(self, k, getattr(self, k) + r[k])
        self.hist.update(dict(tuple(x) for x in json.loads(r["token_hist"])))


def _percentile(hist: Counter, q: float) -> float:
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
    """Aggregate per-document rows into one result per setting, scaled to the corpus when sampled,
    with a 95% bootstrap interval over documents."""
    by_setting: dict[str, list[dict]] = {}
    for r in rows:
        by_setting.setdefault(r["setting"], []).append(r)
    out = []
    for s in settings:
        docs = sorted(by_setting.get(s.label, []), key=lambda r: r["doc_id"])
        acc = _Acc()
        by_type: dict[str, _Acc] = {}
        for r in docs:
            acc.add(r)
            by_type.setdefault(r["doc_type"] or r["status"], _Acc()).add(r)
        scale = corpus_bytes / acc.bytes if sample < 1 and acc.bytes else 1.0
        row = _cost_row(s.label, acc, scale, dim, dtype, index, rates)
        row.update(_duplicates_saved(docs, scale))
        if sample < 1:
            row["documents"] = corpus_files
        if sample < 1:
            row["interval_95"] = _bootstrap(docs, corpus_bytes, dim, dtype, index, seed)
        if previous is not None:
            row["delta"] = _delta(docs, previous, rates)
        row["by_type"] = {
            t: _cost_row(t, a, scale, dim, dtype, index, rates) for t, a in sorted(by_type.items())
        }
        out.append(row)
    first = by_setting.get(settings[0].label, []) if settings else []
    return {
        "settings": out,
        "sampled_documents": len(first),
        "duplicates": sum(r["status"] == "duplicate" for r in first),
        "corpus_files": corpus_files,
        "corpus_bytes": corpus_bytes,
        "sample": sample,
        "estimate": sample < 1,
        "dim": dim,
        "dtype": dtype,
        "index": index.label,
    }


def _duplicates_saved(docs: list[dict], scale: float) -> dict:
    """Byte-identical copies skipped and, per copy, the kept copy's tokens under this setting (a copy
    shares its doc_id, the hash of its bytes, with the kept one)."""
    kept_tokens = {r["doc_id"]: r["tokens"] for r in docs if r["status"] != "duplicate"}
    copies = [r for r in docs if r["status"] == "duplicate"]
    return {
        "duplicates": round(len(copies) * scale),
        "tokens_saved": round(sum(kept_tokens.get(r["doc_id"], 0) for r in copies) * scale),
    }


def _cost_row(
    label: str, a: _Acc, scale: float, dim: int, dtype: str, index: IndexSpec, rates: Rates
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
        "text_bytes": round(text_b),
        "vector_bytes": round(vec_b),
        "index_bytes": round(idx_b),
        "total_bytes": round(text_b + idx_b),
    }
    row.update(_embedding_cost(tokens, rates))
    if rates.storage_gb_month_usd is not None:
        row["storage_usd_month"] = row["total_bytes"] / 1e9 * rates.storage_gb_month_usd
    return row


def _bootstrap(
    docs: list[dict], corpus_bytes: int, dim: int, dtype: str, index: IndexSpec, seed: int, rounds: int = 1000
) -> dict:
    """95% interval of the scaled vectors, tokens and total bytes: resample documents with replacement
    and scale each resample to the corpus by its bytes (a ratio estimate)."""
    if len(docs) < 2:
        return {}
    import numpy as np

    pick = resample_indices(len(docs), rounds, seed)

    def resampled(key: str):
        return np.array([r[key] for r in docs])[pick].sum(axis=1)

    size = resampled("bytes")
    scale = corpus_bytes / np.where(size > 0, size, 1)
    vectors = resampled("chunks") * scale
    draws = {
        "vectors": vectors,
        "tokens": resampled("tokens") * scale,
        "total_bytes": resampled("text_bytes") * scale + index_bytes(vectors, dim, dtype, index),
    }
    return {key: [round(x) for x in percentile_interval(values)] for key, values in draws.items()}


def _delta(docs: list[dict], previous: dict[str, int], rates: Rates) -> dict:
    """Chunks unchanged, new and removed against an earlier run's chunk ids, and what re-embedding
    just the new ones costs."""
    current: dict[str, int] = {}
    for r in docs:
        current.update({cid: n for cid, n in json.loads(r["chunk_ids"] or "[]")})
    unchanged = current.keys() & previous.keys()
    new = current.keys() - previous.keys()
    tokens = sum(current[c] for c in new)
    delta = {
        "unchanged": len(unchanged),
        "new": len(new),
        "removed": len(previous.keys() - current.keys()),
        "tokens_to_embed": tokens,
    }
    delta.update(_embedding_cost(tokens, rates))
    return delta


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
