"""The parse stage's records: a document, and the ordered stream of typed blocks it parses into.

Invariant (text formats: markdown, plain text, html, code, records): ``doc.text`` is the decoded
file, and every block's source is ``doc.text[block.char_start:block.char_end]``. For markdown,
plain text and code, ``block.text`` is that slice itself (control characters and nroff overstrikes
removed). For formats whose text must be extracted (pdf, office), ``doc.text`` is the extracted
text and the blocks' spans point into it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "BLOCK_KINDS",
    "STATUSES",
    "Block",
    "BlockKind",
    "Document",
    "ParsedDocument",
    "Status",
    "content_hash",
]

BlockKind = Literal["heading", "paragraph", "list_item", "table", "code", "record", "page_break"]
BLOCK_KINDS: tuple[str, ...] = BlockKind.__args__  # type: ignore[attr-defined]

Status = Literal["ok", "empty", "no_text", "unsupported", "failed", "duplicate"]
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]


def content_hash(data: bytes) -> str:
    """Stable id of a document's bytes: the first 32 hex digits of its SHA-256."""
    return hashlib.sha256(data).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Block:
    """One structural unit of a document.

    ``level`` is the heading level (1 = top) for headings and the nesting depth (0 = top) for list
    items; 0 otherwise. ``rows`` holds a table's cells row by row, its first ``header_rows`` rows
    being header rows; a ``record`` (CSV row, JSONL line, FAQ pair) keeps the header it was read
    under as ``rows[0]`` when it has one. ``marker`` is a list item's marker as the reader sees it
    (``7.``, ``b)``, ``- [x]``; empty for a plain bullet), rendered before its text as context that
    spans no source. ``copies`` are the ``(row, column)`` cells of ``rows`` that repeat a cell
    spanning rows or columns (HTML ``rowspan``/``colspan``): the source writes them once, so they
    are context too. ``pages`` are 1-based page numbers, empty for formats
    without pages. ``heading_path`` is the titles of the headings the block sits under, outermost
    first (a heading's own path does not include itself).
    """

    kind: BlockKind
    text: str
    char_start: int
    char_end: int
    heading_path: tuple[str, ...] = ()
    pages: tuple[int, ...] = ()
    level: int = 0
    language: str | None = None
    rows: tuple[tuple[str, ...], ...] = ()
    header_rows: int = 0
    marker: str = ""
    copies: tuple[tuple[int, int], ...] = ()

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "text": self.text,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "heading_path": list(self.heading_path),
            "pages": list(self.pages),
            "level": self.level,
            "language": self.language,
            "rows": [list(r) for r in self.rows],
            "header_rows": self.header_rows,
            "marker": self.marker,
            "copies": [list(c) for c in self.copies],
        }


@dataclass(frozen=True, slots=True)
class Document:
    """What the job knows about one input file, whether or not it parsed.

    ``status`` is one of ok | empty | no_text | unsupported | failed, and ``reason`` is one line
    saying why (for ``ok`` it may carry a warning, e.g. pages that need OCR). ``ocr_pages`` are
    the pages whose text was read by OCR, with ``ocr_engine`` (name and version) in
    ``ocr_seconds`` of CPU time.
    """

    doc_id: str
    source: str
    format: str
    status: Status
    reason: str = ""
    title: str = ""
    bytes: int = 0
    pages: int = 0
    encoding: str | None = None
    metadata: tuple[tuple[str, str], ...] = ()
    no_text_pages: tuple[int, ...] = ()
    ocr_pages: tuple[int, ...] = ()
    ocr_engine: str = ""
    ocr_seconds: float = 0.0
    identity: str = ""  # the source relative to its input root: what chunk ids name; "" → source

    @property
    def key(self) -> str:
        """What chunk ids name the document by: ``identity``, else its source."""
        return self.identity or self.source

    def to_dict(self) -> dict:
        return {
            "doc_id": self.doc_id,
            "source": self.source,
            "format": self.format,
            "status": self.status,
            "reason": self.reason,
            "title": self.title,
            "bytes": self.bytes,
            "pages": self.pages,
            "encoding": self.encoding,
            "metadata": dict(self.metadata),
            "no_text_pages": list(self.no_text_pages),
            "ocr_pages": list(self.ocr_pages),
            "ocr_engine": self.ocr_engine,
            "ocr_seconds": self.ocr_seconds,
        }


@dataclass(frozen=True, slots=True)
class ParsedDocument:
    """A document record, its text, and the blocks that point into that text."""

    document: Document
    text: str = ""
    blocks: tuple[Block, ...] = field(default_factory=tuple)
