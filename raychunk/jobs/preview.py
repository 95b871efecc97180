"""The preview commands, in this process and without Ray: ``raychunk parse`` prints the block stream a
document parses into, ``raychunk chunk`` the chunks exactly as the retriever sees them."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from typing import TextIO

from raychunk.chunking import check_profiles, chunk_document
from raychunk.classify import DOC_TYPES, classify
from raychunk.config import ConfigError, DocTypeConfig
from raychunk.document import Document, ParsedDocument, content_hash
from raychunk.io import list_inputs, open_input
from raychunk.isolate import Limits, Sandbox
from raychunk.parse import ParseOptions, parse_document
from raychunk.parse.detect import format_from_name
from raychunk.tokens import TokenCounter

__all__ = ["preview_chunks", "preview_parse"]

DEFAULT_LIMITS = Limits()


def parsed_inputs(
    inputs: list[str], options: ParseOptions, limits: Limits = DEFAULT_LIMITS
) -> Iterator[tuple[ParsedDocument, float]]:
    """Each input file parsed, with the seconds it took, in listing order: in a child process under
    ``limits``, as the job does it."""
    fs, scheme, files = list_inputs(
        inputs, follow_symlinks=limits.follow_symlinks, max_file_mb=limits.max_file_mb
    )
    sandbox = Sandbox(limits)
    steps = [("parse", _ParseBytes(options))]
    try:
        for f in files:
            t = time.perf_counter()
            source = scheme + f.path if scheme else _shown(f.path)
            if f.refused:
                parsed = _failed(source, b"", f.refused[1], f.size, status=f.refused[0])
            else:
                try:
                    with open_input(fs, f.path, f.raw) as stream:
                        data = stream.read()
                except OSError as e:
                    parsed = _failed(source, source.encode(), f"cannot read file: {e}", 0)
                else:
                    parsed, failure, _ = sandbox.run(steps, (data, source), key="parse")
                    if failure is not None:
                        parsed = _failed(source, data, failure.reason, len(data))
            yield parsed, time.perf_counter() - t
    finally:
        sandbox.close()


class _ParseBytes:
    def __init__(self, options: ParseOptions):
        self.options = options

    def __call__(self, value: tuple[bytes, str]) -> ParsedDocument:
        return parse_document(value[0], value[1], options=self.options)


def _failed(source: str, data: bytes, reason: str, size: int, status: str = "failed") -> ParsedDocument:
    fmt = format_from_name(source) or "unknown"
    return ParsedDocument(Document(content_hash(data), source, fmt, status, reason, bytes=size))


def preview_parse(
    inputs: list[str],
    options: ParseOptions,
    limits: Limits = DEFAULT_LIMITS,
    *,
    as_json: bool = False,
    width: int = 60,
    out: TextIO = sys.stdout,
) -> None:
    statuses: Counter[str] = Counter()
    n_blocks = 0
    t0 = time.perf_counter()
    for parsed, elapsed in parsed_inputs(inputs, options, limits):
        doc = parsed.document
        statuses[doc.status] += 1
        n_blocks += len(parsed.blocks)
        if as_json:
            record = {
                "type": "document",
                **doc.to_dict(),
                "blocks": len(parsed.blocks),
                "seconds": round(elapsed, 3),
                "text": parsed.text,
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            for i, b in enumerate(parsed.blocks):
                block = {"type": "block", "doc_id": doc.doc_id, "index": i, **b.to_dict()}
                out.write(json.dumps(block, ensure_ascii=False) + "\n")
            continue
        _print_document(out, parsed, elapsed, width)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    print(
        f"parsed {sum(statuses.values())} files into {n_blocks} blocks in {time.perf_counter() - t0:.1f} s: "
        f"{summary}",
        file=sys.stderr,
    )


def preview_chunks(
    inputs: list[str],
    options: ParseOptions,
    types: DocTypeConfig,
    counter: TokenCounter,
    limits: Limits = DEFAULT_LIMITS,
    *,
    changes: dict,
    doc_type: str | None = None,
    as_json: bool = False,
    out: TextIO = sys.stdout,
) -> None:
    """``changes`` override fields of every type's profile (strategy, max_tokens, overlap, ...)."""
    if doc_type and doc_type not in DOC_TYPES:
        raise ConfigError(f"--doc-type {doc_type!r}: accepted values are {', '.join(DOC_TYPES)}")
    check_profiles(types.profiles, counter)  # every doc type's caps within the embedder's input limit
    totals: Counter[str] = Counter()
    for parsed, _ in parsed_inputs(inputs, options, limits):
        doc = parsed.document
        if doc_type:
            kind, why = doc_type, "forced by --doc-type"
        else:
            cls = classify(parsed, types.thresholds, types.overrides)
            kind, why = cls.doc_type, cls.reason
        try:
            profile = dataclasses.replace(types.profiles[kind], **changes)
        except ValueError as e:
            raise ConfigError(str(e)) from e
        chunks = chunk_document(parsed, profile, counter, doc_type=kind)
        totals["documents"] += 1
        totals["chunks"] += len(chunks)
        totals["over_limit"] += sum(c.over_limit for c in chunks)
        if as_json:
            for ch in chunks:
                out.write(json.dumps(ch.to_dict(), ensure_ascii=False) + "\n")
            continue
        out.write(
            f"\n=== {doc.source}  [{doc.status}] type={kind} ({why})  {profile.label}  {len(chunks)} chunks\n"
        )
        if doc.status != "ok":
            out.write(f"    {doc.reason}\n")
        for ch in chunks:
            out.write(f"--- {' · '.join(_chunk_facts(ch, counter))} ---\n{ch.text}\n")
    print(
        f"chunked {totals['documents']} files into {totals['chunks']} chunks "
        f"({totals['over_limit']} over the embedder's input limit) with {counter.name}",
        file=sys.stderr,
    )


def _chunk_facts(ch, counter: TokenCounter) -> list[str]:
    facts = [f"#{ch.chunk_index}", f"{ch.n_tokens} tokens"]
    if ch.page_start:
        facts.append(f"p{ch.page_start}" + (f"-{ch.page_end}" if ch.page_end != ch.page_start else ""))
    facts.append(",".join(ch.block_kinds))
    if ch.overlap_tokens:
        facts.append(f"overlap {ch.overlap_tokens}")
    if ch.table_part is not None:
        facts.append(f"table part {ch.table_part}")
    if ch.continuation:
        facts.append("continued")
    if ch.over_limit:
        facts.append(f"OVER EMBEDDER LIMIT ({counter.max_input}): would be truncated")
    return facts


def _shown(path: str) -> str:
    """A local path as the user would type it: relative to the working folder when inside it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _print_document(out: TextIO, parsed: ParsedDocument, elapsed: float, width: int) -> None:
    doc = parsed.document
    kinds = Counter(b.kind for b in parsed.blocks)
    facts = [doc.format, doc.status, f"{len(parsed.blocks)} blocks"]
    if doc.pages:
        facts.append(f"{doc.pages} pages")
    facts.append(f"{elapsed:.2f} s")
    out.write(f"\n== {doc.source}  [{' | '.join(facts)}]\n")
    if doc.title:
        out.write(f"   title: {doc.title}\n")
    if doc.reason:
        out.write(f"   reason: {doc.reason}\n")
    if kinds:
        out.write("   kinds: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) + "\n")
    for b in parsed.blocks:
        if b.kind == "heading":
            tag = f"h{b.level}"
        elif b.kind == "list_item":
            tag = f"li{b.level}"
        elif b.kind == "table":
            tag = f"{len(b.rows)}x{max((len(r) for r in b.rows), default=0)} hdr{b.header_rows}"
        elif b.kind == "code":
            tag = b.language or ""
        else:
            tag = ""
        if not b.pages:
            page = ""
        elif b.pages[0] == b.pages[-1]:
            page = f"p{b.pages[0]}"
        else:
            page = f"p{b.pages[0]}-{b.pages[-1]}"
        path = " > ".join(b.heading_path)
        text = " ".join(b.text.split())
        if len(text) > width:
            text = text[: width - 1] + "…"
        indent = "  " * b.level if b.kind == "list_item" else ""
        out.write(
            f"   {b.kind:<10} {tag:<11} {page:<6} {b.char_start:>7}-{b.char_end:<7} "
            f"{_clip(path, 40):<40} {indent}{text}\n"
        )


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else "…" + s[-(n - 1) :]
