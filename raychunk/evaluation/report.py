"""The eval report as data: each setting's spans checked, the setting priced, scored in both modes,
its metric means with 95% bootstrap intervals over questions, and the recommendation among the
settings whose spans hold.

``evaluate_partials`` builds it from what the eval job's blocks send (``partials``), ``evaluate``
from every text, chunk and vector in memory; both give the same report on the same embeddings.
``report.eval.build_eval_report`` types it (``EvalReport``) and ``raychunk.report`` renders it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from raychunk.evaluation.labels import ResolvedQuery, passages_by_source
from raychunk.evaluation.metrics import (
    BUDGET_METRICS,
    HIT_SHARE,
    METRICS,
    READ_BUDGET,
    S2B_METRICS,
    as_indexed,
    score_corpus,
    score_hits,
)
from raychunk.evaluation.partials import PRICE_SUMS, Partials, inside_one_chunk
from raychunk.evaluation.recommendation import recommend
from raychunk.evaluation.spans import SpanCheck, check_spans
from raychunk.pricing import IndexSpec, Rates, summarize
from raychunk.stats import bootstrap_interval, paired_difference

__all__ = ["default_pairs", "evaluate", "evaluate_partials"]


def _price_rows(
    documents: dict[str, dict], chunks: dict[str, list[dict]], settings, sizes: dict[str, int]
) -> list[dict]:
    """Per-document, per-setting statistics in the shape ``pricing.summarize`` takes, from the
    chunks that were evaluated (so the cost columns price exactly the index that was scored)."""
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
                    "token_hist": sorted(Counter(c["n_tokens"] for c in cs).items()),
                    "chunk_ids": None,
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
    read_budget: int = READ_BUDGET,
    depth: int = 0,
    compare: list[tuple[str, str]] | None = None,
    dim: int,
    dtype: str = "float32",
    index=None,
    file_sizes: dict[str, int] | None = None,
    labels: dict | None = None,
    rounds: int = 2000,
    seed: int = 0,
) -> dict:
    """The eval report from collected rows. ``documents``: source → document facts (``text``,
    ``doc_type``, ``status``); ``chunks``: setting label → chunk dicts (chunk record columns) in a
    stable order; ``vectors``: label → array aligned with those chunks.

    A setting whose spans do not hold their bodies (``spans.check_spans``) is still scored, but its
    row says so and it is left out of the recommendation: its span figures are not comparable."""

    index = index or IndexSpec()
    checks = check_spans(
        {source: d.get("text", "") for source, d in documents.items()},
        {s.label: chunks.get(s.label, []) for s in settings},
    )
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
    scored = {
        s.label: score_corpus(
            queries,
            query_vectors,
            [as_indexed(c) for c in chunks.get(s.label, [])],
            vectors.get(s.label),
            k=k,
            parent_budget=parent_budget,
            depth=depth,
            read_budget=read_budget,
        )
        for s in settings
    }
    for s in settings:
        by_source: dict[str, list[dict]] = {}
        for c in chunks.get(s.label, []):
            by_source.setdefault(c["source"], []).append(c)
        inside = {
            i
            for source, mine in passages_by_source(queries).items()
            for i in inside_one_chunk(by_source.get(source, []), mine)
        }
        for i, row in enumerate(scored[s.label]["chunks"]):
            row["inside"] = float(i in inside)
    opts = _Options(k, parent_budget, read_budget, index, rounds, seed, compare, labels)
    return _report(queries, documents, settings, checks, price, scored, opts)


def evaluate_partials(
    queries: list[ResolvedQuery],
    partials: Partials,
    settings,
    *,
    k: int = 5,
    parent_budget: int = 512,
    read_budget: int = READ_BUDGET,
    compare: list[tuple[str, str]] | None = None,
    dim: int,
    dtype: str = "float32",
    index=None,
    file_sizes: dict[str, int] | None = None,
    labels: dict | None = None,
    rounds: int = 2000,
    seed: int = 0,
) -> dict:
    """The eval report from what the blocks sent (``partials.collect_partials``): the same report
    as ``evaluate`` on all the rows, from each setting's merged top k, span counts and pricing sums."""
    index = index or IndexSpec()
    documents = partials.documents
    checks = {s.label: partials.checks.get(s.label, SpanCheck(s.label, 0, 0)) for s in settings}
    sizes = file_sizes or {}
    price = summarize(
        _summed_price_rows(documents, partials.price, settings, sizes),
        settings,
        dim=dim,
        dtype=dtype,
        index=index,
        corpus_files=len(documents),
        corpus_bytes=sum(sizes.get(s, d.get("bytes", 0)) for s, d in documents.items()),
        sample=1.0,
        rates=Rates(),
    )
    # summarize counts one document per row, and each row here sums a document type's documents.
    counts = Counter(_type_key(d) for d in documents.values())
    for row in price["settings"]:
        row["documents"] = len(documents)
        for t, x in row["by_type"].items():
            x["documents"] = counts[t]
    empty = [[] for _ in queries]
    scored = {
        s.label: score_hits(queries, partials.hits.get(s.label, empty), k=k, read_budget=read_budget)
        for s in settings
    }
    for s in settings:
        inside = partials.inside.get(s.label, set())
        for i, row in enumerate(scored[s.label]["chunks"]):
            row["inside"] = float(i in inside)
    opts = _Options(k, parent_budget, read_budget, index, rounds, seed, compare, labels)
    report = _report(queries, documents, settings, checks, price, scored, opts)
    if partials.embedding:
        report["embedding"] = dict(partials.embedding)
    return report


def _type_key(doc: dict) -> str:
    return doc.get("doc_type") or doc.get("status", "ok")


def _summed_price_rows(
    documents: dict[str, dict], sums: dict[tuple[str, str], dict], settings, sizes: dict[str, int]
) -> list[dict]:
    """One row per (setting, document type) in the shape ``pricing.summarize`` takes: the type's
    chunk sums from the blocks and its documents' bytes. Its sums and token histogram are those of
    the per-document rows (``_price_rows``); only the document count is per row."""
    types: dict[str, dict] = {}
    for source, d in documents.items():
        t = types.setdefault(
            _type_key(d), {"doc_type": d.get("doc_type", ""), "status": d.get("status", "ok"), "bytes": 0}
        )
        t["bytes"] += sizes.get(source, d.get("bytes", 0))
    out = []
    for s in settings:
        for key, t in sorted(types.items()):
            a = sums.get((s.label, key), {})
            out.append(
                {
                    "setting": s.label,
                    "doc_id": key,
                    "source": key,
                    **t,
                    **{name: a.get(name, 0) for name in PRICE_SUMS},
                    "token_hist": sorted(a.get("hist", Counter()).items()),
                    "chunk_ids": None,
                }
            )
    return out


@dataclass(frozen=True, slots=True)
class _Options:
    k: int
    parent_budget: int
    read_budget: int
    index: object
    rounds: int
    seed: int
    compare: list[tuple[str, str]] | None
    labels: dict | None


def _scores(scored: dict, rounds: int, seed: int, budget: int, rows=None) -> dict:
    """A setting's metric summaries over its questions (``rows``: their indices; all by default)."""
    plain, big = scored["chunks"], scored["small_to_big"]
    if rows is not None:
        plain, big = [plain[i] for i in rows], [big[i] for i in rows]
    # ``inside``: the passage lies inside one chunk (known where the chunk stage marked it).
    names = METRICS + ("inside",) if plain and "inside" in plain[0] else METRICS
    return {
        "metrics": _summary(plain, names, rounds, seed),
        "small_to_big": _summary(big, S2B_METRICS, rounds, seed),
        "reading_budget": {
            "tokens": budget,
            "chunks": _summary(plain, BUDGET_METRICS, rounds, seed),
            "small_to_big": _summary(big, BUDGET_METRICS, rounds, seed),
            "short": {
                "chunks": sum(r["budget_short"] for r in plain),
                "small_to_big": sum(r["budget_short"] for r in big),
            },
        },
    }


def default_pairs(labels: list[str], vectors: dict[str, int] | None = None) -> list[tuple[str, str]]:
    """Each ``structure X`` setting (``X`` less its table cap ``tN``) against ``fixed X``, and, given
    the settings' ``vectors``, against the fixed setting with the fewest vectors at or above its own:
    the comparison at an equal index cost.

    >>> labels = ["per-type profile", "structure 256 o0 t128", "fixed 128 o0", "fixed 256 o0"]
    >>> default_pairs(labels)
    [('structure 256 o0 t128', 'fixed 256 o0')]
    >>> default_pairs(labels, {"structure 256 o0 t128": 900, "fixed 128 o0": 1500, "fixed 256 o0": 800})
    [('structure 256 o0 t128', 'fixed 256 o0'), ('structure 256 o0 t128', 'fixed 128 o0')]
    """
    out = []
    fixed = sorted((n, lab) for lab, n in (vectors or {}).items() if lab.startswith("fixed "))
    for a in labels:
        if not a.startswith("structure "):
            continue
        same = "fixed" + re.sub(r" t\d+$", "", a[len("structure") :])
        if same in labels:
            out.append((a, same))
        if vectors and a in vectors:
            matched = next((lab for n, lab in fixed if n >= vectors[a]), None)
            if matched and (a, matched) not in out:
                out.append((a, matched))
    return out


def _pair(va: list, vb: list, idx, rounds: int, seed: int) -> dict:
    xa, xb = [va[i] for i in idx], [vb[i] for i in idx]
    d = paired_difference(xa, xb, rounds=rounds, seed=seed)
    n = len(xa)
    return {
        "questions": n,
        "a": sum(xa) / n if n else 0.0,
        "b": sum(xb) / n if n else 0.0,
        "difference": d["mean"],
        "interval": d["interval"],
    }


def _paired(
    queries: list[ResolvedQuery], per_setting: dict, pairs, tags: list[str], rounds: int, seed: int
) -> list[dict]:
    """For each pair ``(a, b)``: hit@k and recall@k of ``a`` minus ``b``, question by question, with the
    paired bootstrap interval, over all questions and per tag."""
    by_tag = {t: [i for i, q in enumerate(queries) if t in q.tags] for t in tags}
    out = []
    for a, b in pairs:
        entry = {"a": a, "b": b, "metrics": {}}
        for metric in ("hit", "recall"):
            va = [r[metric] for r in per_setting[a]["chunks"]]
            vb = [r[metric] for r in per_setting[b]["chunks"]]
            entry["metrics"][metric] = {
                "overall": _pair(va, vb, range(len(queries)), rounds, seed),
                "by_tag": {t: _pair(va, vb, idx, rounds, seed) for t, idx in by_tag.items()},
            }
        out.append(entry)
    return out


def _report(
    queries: list[ResolvedQuery],
    documents: dict[str, dict],
    settings,
    checks: dict[str, SpanCheck],
    price: dict,
    per_setting: dict[str, dict],
    opts: _Options,
) -> dict:
    k, parent_budget, index, rounds, seed = opts.k, opts.parent_budget, opts.index, opts.rounds, opts.seed
    cost = {r["setting"]: r for r in price["settings"]}
    rows = []
    for s in settings:
        scored = per_setting[s.label]
        c = cost[s.label]
        rows.append(
            {
                **{key: c[key] for key in _COST_KEYS},
                "span_check": checks[s.label].to_dict(),
                **_scores(scored, rounds, seed, opts.read_budget),
                "by_type": {
                    t: {key: x[key] for key in ("documents", "chunks", "tokens", "total_bytes")}
                    for t, x in c["by_type"].items()
                },
            }
        )
    candidates = [
        {
            "setting": r["setting"],
            "vectors": r["vectors"],
            "total_bytes": r["total_bytes"],
            "tokens": r["metrics"]["tokens"]["mean"],
            "budget_recall": r["reading_budget"]["chunks"]["budget_recall"]["mean"],
            "read_budget": opts.read_budget,
            "values": [x["recall"] for x in per_setting[r["setting"]]["chunks"]],
        }
        for r in rows
        if checks[r["setting"]].ok
    ]
    failed = [r["setting"] for r in rows if not checks[r["setting"]].ok]
    rec = recommend(candidates, rounds=rounds, seed=seed) if candidates else _no_recommendation(len(queries))
    if failed:
        rec["excluded"] = failed
    tags = sorted({t for q in queries for t in q.tags})
    by_tag = {}
    for t in tags:
        idx = [i for i, q in enumerate(queries) if t in q.tags]
        by_tag[t] = {
            "questions": len(idx),
            "settings": {
                label: _scores(scored, rounds, seed, opts.read_budget, idx)
                for label, scored in per_setting.items()
            },
        }
    vectors = {r["setting"]: r["vectors"] for r in rows}
    pairs = default_pairs([s.label for s in settings], vectors) if opts.compare is None else opts.compare
    per_query = [
        {
            "id": q.qid,
            "query": q.query,
            "tags": list(q.tags),
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
        "read_budget": opts.read_budget,
        "questions": len(queries),
        "documents": len(documents),
        "dim": price["dim"],
        "dtype": price["dtype"],
        "index": index.label,
        "bootstrap": {"rounds": rounds, "seed": seed, "confidence": 0.95},
        "settings": rows,
        "span_failures": failed,
        "recommendation": rec,
        "by_tag": by_tag,
        "paired": _paired(queries, per_setting, pairs, tags, rounds, seed),
        "labels": opts.labels,
        "per_query": per_query,
        "notes": _notes(k, parent_budget, len(queries), opts.read_budget),
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


def _no_recommendation(n: int) -> dict:
    return {
        "setting": None,
        "best": None,
        "metric": "recall",
        "questions": n,
        "reason": "No setting's spans hold their chunks' bodies, so no score can be trusted: nothing to "
        "recommend. Fix the chunker's spans (see the span check) and run again.",
        "comparisons": [],
    }


def _notes(k: int, budget: int, n: int, read_budget: int) -> list[str]:
    return [
        f"Top {k} by cosine over all documents pooled, one index per setting; the queries are embedded "
        "with the same model as the chunks.",
        f"hit@{k}: a retrieved chunk of the labelled document covers >= {HIT_SHARE:.0%} of a passage or "
        "contains its quote. recall@k: share of passage characters inside the union of the top-k body "
        "spans. precision / IoU: in characters, over the union of retrieved spans (duplicates count once).",
        "inside one chunk: share of questions each of whose passages lies whole inside the span of one "
        "chunk of the setting, retrieved or not: how often the chunker leaves a passage whole for the "
        "retriever to find (its own ceiling).",
        "Chroma precision / IoU, as chroma-core chunking_evaluation computes them (retrieved characters "
        "summed over the top k, not merged, so shared characters count twice): with R = characters of the "
        "union of the intersections of the top-k spans with the passages, S = the sum of the top-k span "
        "lengths and P = the passages' characters, precision = R / S and IoU = R / (S + P - R).",
        "tokens: the summed tokens of the top-k chunks (header lines and overlap included, as embedded).",
        f"small-to-big: each hit is expanded to its parent section, or to the neighbours that fit, "
        f"at most {budget} tokens per hit; a parent read twice is counted once.",
        f"Intervals: 95% percentile bootstrap over the {n} questions; the recommendation compares each "
        "setting with the best by a paired bootstrap on the same resampled questions.",
        "A chunk's span is its body's span in the document text, checked before scoring: the body (text "
        "less its header line) must read as the span's words in order (markup such as list markers, table "
        "pipes and HTML tags is no word), opening and closing it, with at most a few words the parser's "
        "cleanup drops. A repeated table header and record keys are context and span nothing. A setting "
        "with a chunk that fails is scored but left out of the recommendation: loose spans inflate recall.",
        "'per-type profile' is configs/doc_types.yaml (what `raychunk run` builds).",
        f"Reading budget: the ranked results read in order, past the top {k} when retrieved deeper, while "
        f"the tokens read stay within {read_budget:,} (header lines and overlap of consecutive chunks read "
        "once; small-to-big: each result's group); a result that would pass the budget stops the reader. "
        "'short' counts questions whose retrieved results all fit (a lower bound for those).",
        "Labels: quotes are located in the parsed text before chunking (exact, whitespace, then by words with "
        "markup, table pipes and hyphenation aside, then with running headers skipped); a quote found more "
        "than once is its first occurrence, and only a chunk covering that occurrence hits.",
        "Paired comparisons: a minus b per question, 95% paired bootstrap interval on the same resampled "
        "questions, overall and per tag (a question counts under each of its tags).",
    ]


def _summary(rows: list[dict], names, rounds: int, seed: int) -> dict:
    out = {}
    for name in names:
        values = [r[name] for r in rows]
        out["mrr" if name == "rr" else name] = {
            "mean": sum(values) / len(values) if values else 0.0,
            "interval": bootstrap_interval(values, rounds=rounds, seed=seed),
        }
    return out
