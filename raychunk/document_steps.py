"""The document steps: each input file parsed, classified and chunked, in a sandbox.

``parse_file`` → ``classify_document`` → a last step (``chunk_rows`` for the run, ``measure_settings``
for the price job, ``chunk_settings`` for the eval) turn one input file into rows; ``isolated`` runs
them per document in a child process (``isolate.Sandbox``), and ``documents`` is the job step that
does so. They are plain functions that don't know they run on Ray. The rows of the run's last step
are built into blocks of one explicit schema (``schema.RUN_ROWS``): ``row_type`` tells them apart, a
document's facts travel as the documents/ columns, and the writer splits them into chunks/ and
documents/.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from raychunk.chunking import chunk_document
from raychunk.classify import classify
from raychunk.dedupe import duplicate_reason
from raychunk.document import Document, ParsedDocument, content_hash
from raychunk.faults import inject
from raychunk.incremental import DocIndex, doc_key
from raychunk.io import identity_of
from raychunk.isolate import Limits, Sandbox, peak_rss_mb
from raychunk.parse import ParseOptions, parse_document
from raychunk.parse.detect import format_from_name
from raychunk.plan import JobPlan
from raychunk.step import Step

if TYPE_CHECKING:  # schema (pyarrow) is imported where a step is planned: the document process never loads it
    import pyarrow as pa

__all__ = [
    "chunk",
    "chunk_rows",
    "chunk_settings",
    "classify_document",
    "documents",
    "failed_file",
    "for_eval",
    "isolated",
    "LastStep",
    "locate",
    "measure",
    "measure_settings",
    "parse",
    "parse_file",
    "per_document",
]

log = logging.getLogger(__name__)


# -- the job step and what it runs per document -----------------------------------------------------


@dataclass(frozen=True)
class LastStep:
    """A job's last document step: its row function (a parsed, classified document row → the rows
    it passes on) and the Arrow schema of those rows (``pipeline`` builds each block in it)."""

    fn: Callable
    schema: pa.Schema


def documents(
    job: JobPlan,
    *,
    scheme: str,
    last: LastStep,
    duplicates: dict[str, str] | None = None,
    unchanged: DocIndex | None = None,
) -> Step:
    """The step that turns each input file into rows: ``per_document`` in the worker's sandbox,
    under the plan's limits (``isolated``)."""
    return Step(
        "documents",
        isolated,
        each="rows",
        kwargs={
            "steps": per_document(job, scheme=scheme, last=last, duplicates=duplicates),
            "limits": job.limits,
            "scheme": scheme,
            "unchanged": unchanged,
            "duplicates": duplicates,
            "root": job.root,
        },
        runs_as="document",
        schema=last.schema,
    )


def locate(job: JobPlan, *, scheme: str, labelled: dict) -> Step:
    """The eval's check before any chunking or embedding: the labelled documents parsed and their
    questions' passages located where the text is (``labelled``: source → ``[(index, query)]``,
    ``evaluation.partials.locate_labelled``); one small row per document comes back."""
    from raychunk.evaluation.partials import locate_labelled
    from raychunk.schema import LOCATED_ROWS

    steps = [("parse", parse(job, scheme=scheme)), ("locate", partial(locate_labelled, labelled=labelled))]
    return Step(
        "locate",
        isolated,
        each="rows",
        kwargs={"steps": steps, "limits": job.limits, "scheme": scheme},
        runs_as="document",
        schema=LOCATED_ROWS,
    )


def per_document(
    job: JobPlan, *, scheme: str, last: LastStep | None, duplicates: dict[str, str] | None = None
) -> list[tuple[str, Callable]]:
    """What runs per document, ``(name, row function)``: parse → classify → ``last``."""
    types = job.doc_types
    return [
        ("parse", parse(job, scheme=scheme, duplicates=duplicates or {})),
        ("classify", partial(classify_document, thresholds=types.thresholds, overrides=types.overrides)),
        ("chunk", last.fn if last is not None else None),
    ]


def parse(job: JobPlan, *, scheme: str, duplicates: dict[str, str] | None = None) -> Callable:
    return partial(parse_file, options=job.config.parse, scheme=scheme, duplicates=duplicates, root=job.root)


def _tokens(job: JobPlan) -> dict:
    return {
        "profiles": job.doc_types.profiles,
        "tokenizer": job.tokenizer,
        "tokenizer_dir": job.tokenizer_dir,
    }


def chunk(job: JobPlan) -> LastStep:
    """The run's last step: a document row and its chunk rows, under its doc type's profile."""
    from raychunk.schema import RUN_ROWS

    return LastStep(partial(chunk_rows, **_tokens(job)), RUN_ROWS)


def measure(job: JobPlan, settings: list, *, keep_ids: bool = False) -> LastStep:
    """The price job's last step: every setting's numbers (and with ``keep_ids`` its chunk ids)."""
    from raychunk.schema import MEASURE_ROWS

    return LastStep(
        partial(measure_settings, **_tokens(job), settings=settings, keep_ids=keep_ids), MEASURE_ROWS
    )


def for_eval(job: JobPlan, settings: list, retrieval=None) -> LastStep:
    """The eval job's last step: every setting's chunks, marked against ``retrieval``'s located
    passages (``evaluation.partials.Retrieval``)."""
    from raychunk.schema import EVAL_ROWS

    last = partial(chunk_settings, **_tokens(job), settings=settings)
    if retrieval is not None:
        last = partial(last, labelled=retrieval.labelled, parent_budget=retrieval.parent_budget)
    return LastStep(last, EVAL_ROWS)


# -- the row functions --------------------------------------------------------------------------------


_SANDBOX: Sandbox | None = None


def isolated(
    rows: list[dict],
    *,
    steps: list[tuple[str, Callable]],
    limits: Limits,
    scheme: str = "",
    unchanged: DocIndex | None = None,
    duplicates: dict[str, str] | None = None,
    root: str = "",
):
    """A block's input files (rows of ``blocks.SCHEMA``) through ``steps``
    (parse → classify → chunk) in this worker's sandbox, a child process under ``limits``, in one
    round trip: each document keeps its own limits. A document that goes over a limit, crashes its
    worker or raises becomes a ``failed`` document (the steps after parse then run here, on a
    document with no text); the others of the block still end as chunks. A file whose bytes, format
    and identity (its source relative to ``root``) are in ``unchanged`` (and that is not a
    byte-identical copy, in ``duplicates``) is not parsed: it becomes one ``reuse`` row, replaced by
    the previous output's rows in ``merge_previous``. The rows come back in the files' order."""
    global _SANDBOX
    out: list[list[dict] | None] = [None] * len(rows)
    todo = []
    for i, row in enumerate(rows):
        if row.get("read_error"):
            out[i] = _failed(row, row["read_error"], None, 0.0, steps, scheme)
        elif unchanged is not None and (reused := _reused(row, scheme, unchanged, duplicates, root)):
            out[i] = [reused]
        else:
            todo.append(i)
    if todo:
        if _SANDBOX is None or _SANDBOX.limits != limits:
            _SANDBOX = Sandbox(limits)
        done = _SANDBOX.run_many(steps, [rows[i] for i in todo], key=id(steps))
        for i, (value, failure, peak) in zip(todo, done, strict=True):
            if failure is None:
                out[i] = value
            else:
                out[i] = _failed(rows[i], failure.reason, peak, failure.seconds, steps, scheme)
    return [r for rs in out for r in rs]


def _reused(row: dict, scheme: str, unchanged: DocIndex, duplicates: dict | None, root: str) -> dict | None:
    source = scheme + row["path"]
    doc_id = content_hash(bytes(row["bytes"]))
    if source in (duplicates or {}) or (
        doc_key(doc_id, format_from_name(source) or "unknown", identity_of(source, root)) not in unchanged
    ):
        return None
    return {"row_type": "reuse", "doc_id": doc_id, "source": source, "source_bytes": row.get("raw") or None}


def _failed(row: dict, reason: str, peak: int | None, seconds: float, steps, scheme: str) -> list[dict]:
    """A file that could not be processed, through the steps after parse, here."""
    log.warning("%s: %s", scheme + row["path"], reason)
    value = {**failed_file(row, reason, scheme), "parse_seconds": seconds}
    value["peak_rss_mb"] = peak
    for _, fn in steps[1:]:
        value = fn(value)
    return value


def failed_file(row: dict, reason: str, scheme: str = "") -> dict:
    """The parse stage's output for a file that could not be processed at all."""
    source = scheme + row["path"]
    data = row.get("bytes") or b""
    doc = Document(
        doc_id=content_hash(bytes(data)),
        source=source,
        format=format_from_name(source) or "unknown",
        status="failed",
        reason=reason,
        bytes=len(data),
    )
    return {"source": source, "parsed": ParsedDocument(doc), "parse_seconds": 0.0, "raw": row.get("raw")}


def parse_file(
    row: dict,
    *,
    options: ParseOptions,
    scheme: str = "",
    duplicates: dict[str, str] | None = None,
    root: str = "",
) -> dict:
    """``{bytes, path}`` from the reader → ``{source, parsed, parse_seconds}``. A source in
    ``duplicates`` (duplicate → kept source) is not parsed: it becomes a ``duplicate`` document.
    The document's identity (what its chunk ids name) is its source relative to ``root``."""
    t = time.perf_counter()
    source = scheme + row["path"]
    inject(source)  # test-only faults (raychunk.faults); nothing unless RAYCHUNK_TEST_FAULTS is set
    data = bytes(row["bytes"])
    kept = (duplicates or {}).get(source)
    if kept is not None:
        parsed = ParsedDocument(
            Document(
                doc_id=content_hash(data),
                source=source,
                format=format_from_name(source) or "unknown",
                status="duplicate",
                reason=duplicate_reason(kept),
                bytes=len(data),
            )
        )
    else:
        parsed = parse_document(data, source, options=options)
    parsed = dataclasses.replace(
        parsed, document=dataclasses.replace(parsed.document, identity=identity_of(source, root))
    )
    listed = row.get("size")
    if listed is not None and listed != len(data):
        note = f"the file changed size between listing and reading ({listed:,} bytes listed, {len(data):,} read): its bytes as read are used"
        doc = parsed.document
        reason = f"{doc.reason}; {note}" if doc.reason else note
        parsed = dataclasses.replace(parsed, document=dataclasses.replace(doc, reason=reason))
    return {
        "source": source,
        "parsed": parsed,
        "parse_seconds": time.perf_counter() - t,
        "raw": row.get("raw"),
    }


def classify_document(row: dict, *, thresholds: dict, overrides: tuple = ()) -> dict:
    parsed: ParsedDocument = row["parsed"]
    if parsed.document.status != "ok":
        return {**row, "doc_type": "", "type_reason": ""}
    c = classify(parsed, thresholds, overrides)
    return {**row, "doc_type": c.doc_type, "type_reason": c.reason}


def chunk_rows(row: dict, *, profiles: dict, tokenizer: str, tokenizer_dir: str | None = None) -> list[dict]:
    """One ``document`` row and the document's ``chunk`` rows."""
    from raychunk.tokens import CachedCounter, load_counter

    parsed: ParsedDocument = row["parsed"]
    doc = parsed.document
    chunks = []
    if doc.status == "ok":
        # token offsets of this document, counted once
        counter = CachedCounter(load_counter(tokenizer, tokenizer_dir))
        chunks = chunk_document(parsed, profiles[row["doc_type"]], counter, doc_type=row["doc_type"])
    status, reason = doc.status, doc.reason
    if status == "ok" and not chunks:
        # its words are in the documents row's text, but no chunk holds them: said, not lost quietly
        # what the parse said stays (an e-mail's unread attachments, a page's includes not inlined)
        status, reason = "empty", "; ".join(x for x in (_nothing_to_chunk(parsed), reason) if x)
    document = {
        "row_type": "document",
        "doc_id": doc.doc_id,
        "source": doc.source,
        "format": doc.format,
        "doc_type": row["doc_type"],
        "type_reason": row["type_reason"],
        "status": status,
        "reason": reason,
        "title": doc.title,
        "pages": doc.pages,
        "blocks": len(parsed.blocks),
        "chunks": len(chunks),
        "tokens": sum(c.n_tokens for c in chunks),
        "bytes": doc.bytes,
        "encoding": doc.encoding,
        "no_text_pages": list(doc.no_text_pages),
        "ocr": bool(doc.ocr_pages),
        "ocr_engine": doc.ocr_engine or None,
        "ocr_pages": list(doc.ocr_pages),
        "ocr_seconds": doc.ocr_seconds,
        "parse_seconds": round(row["parse_seconds"], 4),
        "peak_rss_mb": row.get("peak_rss_mb") or peak_rss_mb(),
        "text": None if doc.status == "duplicate" else parsed.text,  # a duplicate's is the kept copy's
        "source_bytes": row.get("raw") or None,
    }
    return [document, *({**c.to_dict(), "row_type": "chunk"} for c in chunks)]


def _nothing_to_chunk(parsed: ParsedDocument) -> str:
    kinds = {b.kind for b in parsed.blocks} - {"page_break"}
    if kinds == {"heading"}:
        return "no text to chunk: only headings, nothing under them"
    return "no text to chunk"


def measure_settings(
    row: dict,
    *,
    settings: list,
    profiles: dict,
    tokenizer: str,
    keep_ids: bool,
    tokenizer_dir: str | None = None,
) -> list[dict]:
    """The price job's stage: one statistics row per grid setting for this document."""
    from raychunk.peers import chunk_stats_any
    from raychunk.pricing import measure_document
    from raychunk.tokens import load_counter

    return measure_document(
        row["parsed"],
        row["doc_type"],
        settings,
        profiles,
        load_counter(tokenizer, tokenizer_dir),
        keep_ids=keep_ids,
        stats=chunk_stats_any,
    )


def chunk_settings(
    row: dict,
    *,
    settings: list,
    profiles: dict,
    tokenizer: str,
    tokenizer_dir: str | None = None,
    labelled: dict | None = None,
    parent_budget: int = 512,
) -> list[dict]:
    """The eval job's stage: this document's chunks under every setting, each row labelled with its
    ``setting`` and carrying on ``eval`` what the eval needs of its text (``partials.mark_document``),
    plus a ``document`` row of facts without the text: status, reason, doc_type, bytes
    (``schema.EVAL_ROWS``). ``labelled``:
    source → ``[(index, passages)]``, the questions' passages as located before chunking."""
    from raychunk.evaluation.partials import mark_document
    from raychunk.peers import chunk_any
    from raychunk.tokens import CachedCounter, load_counter

    parsed: ParsedDocument = row["parsed"]
    doc = parsed.document
    mine = (labelled or {}).get(doc.source, [])
    counter = CachedCounter(load_counter(tokenizer, tokenizer_dir))
    document = {
        "row_type": "document",
        "doc_id": doc.doc_id,
        "source": doc.source,
        "doc_type": row["doc_type"],
    }
    out = [{**document, "status": doc.status, "reason": doc.reason, "bytes": doc.bytes}]
    if doc.status != "ok":
        return out
    for s in settings:
        profile = s.profile or profiles[row["doc_type"]]
        chunks = [c.to_dict() for c in chunk_any(parsed, profile, counter, doc_type=row["doc_type"])]
        for c, mark in zip(chunks, mark_document(parsed.text, chunks, mine, parent_budget)):
            out.append({**c, "row_type": "chunk", "setting": s.label, "eval": mark})
    return out
