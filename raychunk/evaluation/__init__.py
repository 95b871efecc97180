"""Retrieval evaluation with labelled passages: does the passage that answers a question come back?

Every chunking setting is scored on the same questions, against the same embedder, with all
documents pooled into one index.

- ``labels``: the labelled queries (with their tags), and their passages located in the documents'
  parsed text, every unlocatable one listed at once;
- ``locate``: a quote as a viewer shows it found in the parsed text (whitespace, hyphenation, table
  pipes, markup, unicode, running headers between pages), with its whole matched span;
- ``spans``: the span check: each chunk's span holds its body, tightly, or its setting is not ranked;
- ``metrics``: hit, MRR, recall, precision, IoU (merged, and summed as Chroma's evaluation does) and
  tokens read per question, plain and small-to-big;
- ``recommendation``: the cheapest setting within noise of the best, by a paired bootstrap over questions;
- ``partials``: the same work where the corpus lies: the labelled documents' passages located right
  after parsing, span checks and small-to-big groups in the chunk stage, each embedded block's top
  k, and the driver's exact merge;
- ``report``: the eval report, from the merged partials (the job) or from every row in memory,
  every mean with a 95% bootstrap interval, overall and per tag, recall within a reading budget,
  and paired differences between named settings.

Pure Python and numpy (the bootstrap is ``raychunk.stats``); the Ray job is ``raychunk.jobs.eval``.
"""

from raychunk.evaluation.labels import (
    LabelledQuery,
    Passage,
    ResolvedQuery,
    UnlocatedQuotes,
    apply_locations,
    load_queries,
    locate_passages,
    locate_quote,
    match_source,
    resolve_queries,
)
from raychunk.evaluation.metrics import (
    HIT_SHARE,
    Hit,
    IndexedChunk,
    Unit,
    expand_to_parent,
    score_corpus,
    score_hits,
    score_units,
    tokens_read,
    top_k,
)
from raychunk.evaluation.recommendation import recommend
from raychunk.evaluation.report import evaluate, evaluate_partials
from raychunk.evaluation.spans import BadSpan, SpanCheck, check_chunk, check_spans
from raychunk.stats import bootstrap_interval, paired_difference

__all__ = [
    "HIT_SHARE",
    "BadSpan",
    "Hit",
    "IndexedChunk",
    "LabelledQuery",
    "Passage",
    "ResolvedQuery",
    "SpanCheck",
    "UnlocatedQuotes",
    "apply_locations",
    "Unit",
    "bootstrap_interval",
    "check_chunk",
    "check_spans",
    "evaluate",
    "evaluate_partials",
    "expand_to_parent",
    "load_queries",
    "locate_passages",
    "locate_quote",
    "match_source",
    "paired_difference",
    "recommend",
    "resolve_queries",
    "score_corpus",
    "score_hits",
    "score_units",
    "tokens_read",
    "top_k",
]
