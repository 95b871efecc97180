"""The eval report's typed record: ``EvalReport`` and its parts, built once by ``build_eval_report``
from what ``evaluation.report`` computed; ``as_json()`` is ``report.json``, key for key and in order.
``report.eval`` renders it."""

from __future__ import annotations

from dataclasses import dataclass, field

from raychunk.evaluation.spans import BadSpan, SpanCheck
from raychunk.report.record import OMIT_NONE, as_json

__all__ = ["EvalReport", "build_eval_report"]


@dataclass(frozen=True)
class Metric:
    """A mean over questions with its 95% bootstrap interval ``(low, high)``."""

    mean: float
    interval: tuple[float, float]


# metric name → figure: hit, inside (where the chunk stage marked it), recall, precision, iou, ...
Metrics = dict[str, Metric]


@dataclass(frozen=True)
class Short:
    """Questions whose retrieved results all fit the reading budget."""

    chunks: int
    small_to_big: int


@dataclass(frozen=True)
class ReadingBudget:
    tokens: int
    chunks: Metrics
    small_to_big: Metrics
    short: Short


@dataclass(frozen=True)
class Scores:
    """Metric summaries over some questions: the plain top k, small-to-big, the reading budget."""

    metrics: Metrics
    small_to_big: Metrics
    reading_budget: ReadingBudget


@dataclass(frozen=True)
class TypeCost:
    documents: int
    chunks: int
    tokens: int
    total_bytes: int


@dataclass(frozen=True)
class SettingRow:
    """One setting: the cost of the index that was scored, its span check, its scores over all
    questions (``Scores``' fields), and its cost per document type."""

    setting: str
    documents: int
    vectors: int
    tokens: int
    tokens_mean: float
    over_limit: int
    text_bytes: int
    index_bytes: int
    total_bytes: int
    span_check: SpanCheck
    metrics: Metrics
    small_to_big: Metrics
    reading_budget: ReadingBudget
    by_type: dict[str, TypeCost]  # document type → its documents' cost


@dataclass(frozen=True)
class Comparison:
    """A setting against the best, as ``recommendation.recommend`` compares them on recall."""

    setting: str
    vectors: int
    total_bytes: int
    recall: float
    difference: float
    interval: tuple[float, float]
    gap_questions: float
    tokens: float | None
    budget_recall: float | None
    within_noise: bool


@dataclass(frozen=True)
class Recommendation:
    setting: str | None  # None when no setting's spans hold
    best: str | None
    metric: str  # always "recall": the comparisons' figure
    questions: int
    reason: str
    comparisons: tuple[Comparison, ...]
    excluded: tuple[str, ...] | None = field(default=None, metadata=OMIT_NONE)  # spans fail


@dataclass(frozen=True)
class TagScores:
    questions: int
    settings: dict[str, Scores]  # setting label → its scores over the tag's questions


@dataclass(frozen=True)
class PairDiff:
    """``a`` minus ``b`` over ``questions``: both means, the difference and its paired interval."""

    questions: int
    a: float
    b: float
    difference: float
    interval: tuple[float, float]


@dataclass(frozen=True)
class PairedMetric:
    overall: PairDiff
    by_tag: dict[str, PairDiff]  # tag → the difference over its questions


@dataclass(frozen=True)
class PairedMetrics:
    hit: PairedMetric
    recall: PairedMetric


@dataclass(frozen=True)
class Paired:
    a: str
    b: str
    metrics: PairedMetrics


@dataclass(frozen=True)
class Ambiguous:
    """A quote found more than once: the first occurrence (``scored``) is scored."""

    id: str
    source: str
    quote: str
    occurrences: int
    scored: tuple[int, int]


@dataclass(frozen=True)
class NoiseSkipped:
    """A quote found with words skipped between its words (running headers, page numbers)."""

    id: str
    source: str
    quote: str
    how: str
    span: tuple[int, int]


@dataclass(frozen=True)
class Labels:
    """How the labelled passages were found (``labels.apply_locations``), and how long it took."""

    questions: int
    scored: int
    passages_found: dict[str, int]  # how (exact, whitespace, words, span) → passages
    ambiguous: tuple[Ambiguous, ...]
    noise_skipped: tuple[NoiseSkipped, ...]
    unlocated: tuple[dict, ...]  # id, query, source and what locate_passages said (quote, why)
    skipped_questions: tuple[str, ...]
    seconds: float | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class QueryResult:
    """A question under one setting: the rank of its first hit (None: none), recall, small-to-big
    recall, and the top k as ``(file name, start, end)``."""

    rank: int | None
    recall: float
    s2b_recall: float
    top: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class Question:
    id: str
    query: str
    tags: tuple[str, ...]
    source: str
    doc_type: str
    passages: tuple[tuple[int, int], ...]
    results: dict[str, QueryResult]  # setting label → its result


@dataclass(frozen=True)
class Embedding:
    """Chunk texts the eval embedded and vectors it reused, and how long chunking and embedding took."""

    embedded: int | None = field(default=None, metadata=OMIT_NONE)
    reused: int | None = field(default=None, metadata=OMIT_NONE)
    seconds: float | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class Bootstrap:
    rounds: int
    seed: int
    confidence: float


@dataclass(frozen=True)
class EvalReport:
    k: int
    parent_budget: int
    read_budget: int
    questions: int
    documents: int
    dim: int
    dtype: str
    index: str
    bootstrap: Bootstrap
    settings: tuple[SettingRow, ...]
    span_failures: tuple[str, ...]
    recommendation: Recommendation
    by_tag: dict[str, TagScores]  # tag → its questions' scores per setting
    paired: tuple[Paired, ...]
    labels: Labels | None
    per_query: tuple[Question, ...]
    notes: tuple[str, ...]
    embedding: Embedding | None = field(default=None, metadata=OMIT_NONE)  # the job's, not evaluate()'s
    embedder: str | None = field(default=None, metadata=OMIT_NONE)
    written: tuple[str, ...] | None = field(default=None, metadata=OMIT_NONE)  # set once written

    def as_json(self) -> dict:
        """The report as ``report.json`` holds it (with ``written`` once the files are written)."""
        return as_json(self)


def build_eval_report(computed: dict, *, embedder: str | None = None) -> EvalReport:
    """The typed report, once, from ``evaluation.report``'s ``evaluate`` or ``evaluate_partials``; a
    key it does not know fails here, not in a renderer."""
    r = computed
    rec = r["recommendation"]
    if rec["metric"] != "recall":
        raise ValueError(f"recommendation by {rec['metric']!r}: the report's comparisons hold recall")
    return EvalReport(
        **{key: r[key] for key in ("k", "parent_budget", "read_budget", "questions", "documents")},
        dim=r["dim"],
        dtype=r["dtype"],
        index=r["index"],
        bootstrap=Bootstrap(**r["bootstrap"]),
        settings=tuple(_setting_row(x) for x in r["settings"]),
        span_failures=tuple(r["span_failures"]),
        recommendation=Recommendation(
            **{**rec, "comparisons": tuple(_comparison(c) for c in rec["comparisons"])}
            | ({"excluded": tuple(rec["excluded"])} if "excluded" in rec else {})
        ),
        by_tag={
            t: TagScores(x["questions"], {label: _scores(s) for label, s in x["settings"].items()})
            for t, x in r["by_tag"].items()
        },
        paired=tuple(_paired(p) for p in r["paired"]),
        labels=_labels(r["labels"]) if r["labels"] is not None else None,
        per_query=tuple(_question(q) for q in r["per_query"]),
        notes=tuple(r["notes"]),
        embedding=Embedding(**r["embedding"]) if "embedding" in r else None,
        embedder=embedder,
    )


def _metrics(m: dict) -> Metrics:
    return {name: Metric(x["mean"], tuple(x["interval"])) for name, x in m.items()}


def _scores(s: dict) -> Scores:
    return Scores(**_score_fields(s))


def _score_fields(s: dict) -> dict:
    rb = s["reading_budget"]
    budget = ReadingBudget(
        rb["tokens"], _metrics(rb["chunks"]), _metrics(rb["small_to_big"]), Short(**rb["short"])
    )
    return {
        "metrics": _metrics(s["metrics"]),
        "small_to_big": _metrics(s["small_to_big"]),
        "reading_budget": budget,
    }


def _setting_row(x: dict) -> SettingRow:
    check = x["span_check"]
    examples = tuple(BadSpan(b["source"], b["chunk_index"], *b["span"], b["why"]) for b in check["examples"])
    return SettingRow(
        **{key: value for key, value in x.items() if key not in _ROW_PARTS},
        span_check=SpanCheck(x["setting"], check["chunks"], check["bad"], examples),
        **_score_fields(x),
        by_type={t: TypeCost(**c) for t, c in x["by_type"].items()},
    )


_ROW_PARTS = ("span_check", "metrics", "small_to_big", "reading_budget", "by_type")


def _comparison(c: dict) -> Comparison:
    return Comparison(**{**c, "interval": tuple(c["interval"])})


def _pair_diff(x: dict) -> PairDiff:
    return PairDiff(**{**x, "interval": tuple(x["interval"])})


def _paired_metric(m: dict) -> PairedMetric:
    return PairedMetric(_pair_diff(m["overall"]), {t: _pair_diff(x) for t, x in m["by_tag"].items()})


def _paired(p: dict) -> Paired:
    m = p["metrics"]
    return Paired(p["a"], p["b"], PairedMetrics(**{name: _paired_metric(x) for name, x in m.items()}))


def _labels(lab: dict) -> Labels:
    return Labels(
        **{
            **lab,
            "ambiguous": tuple(Ambiguous(**{**a, "scored": tuple(a["scored"])}) for a in lab["ambiguous"]),
            "noise_skipped": tuple(
                NoiseSkipped(**{**a, "span": tuple(a["span"])}) for a in lab["noise_skipped"]
            ),
            "unlocated": tuple(lab["unlocated"]),
            "skipped_questions": tuple(lab["skipped_questions"]),
        }
    )


def _question(q: dict) -> Question:
    return Question(
        **{
            **q,
            "tags": tuple(q["tags"]),
            "passages": tuple(tuple(p) for p in q["passages"]),
            "results": {
                label: QueryResult(**{**x, "top": tuple(tuple(t) for t in x["top"])})
                for label, x in q["results"].items()
            },
        }
    )
