"""Peers: the chunkers a user would pick instead of raychunk, run through their real libraries so
``raychunk eval`` and ``raychunk price`` measure them beside raychunk's own strategies.

They are third-party adapters, not part of the chunking core: each module wraps one library (its
import lazy, an ImportError naming ``pip install 'raychunk[peers]'``) and turns one document into
the pieces the library makes; ``peer_chunks`` turns those into ``Chunk`` records. A piece's span is
found in the document text by the eval's tolerant locator (``evaluation.locate``), the way a
labelled quote is, so peers are scored by span exactly like raychunk's chunks.

What a peer reads: a markdown, text, code, records (CSV, JSONL) or XML file as written (what a
user would hand the library); any other format (HTML, PDF, office, reStructuredText and Org, whose
parsed text is their blocks' texts joined, not the file) as raychunk's blocks rendered to markdown
(headings as ``#`` lines, tables as pipe tables, list items as lines under their marker: ``-``, or
their number as raychunk's own chunks show it, ``7.``), as a user who converts documents to
markdown first would. Pieces are sized in tiktoken ``cl100k_base`` tokens (the offline
copy), whatever the embedder; ``n_tokens`` of the chunk records counts the embedder's tokens, as for
raychunk's chunks.

Invariants: a piece located in the text has the smallest span holding its words; a piece that the
locator cannot place gets an empty span where the previous one ended (it can never be a hit) and
is counted in ``PeerChunks.unlocated``; ids are unique within a document and the same document and
profile give the same chunks.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from raychunk.chunking.model import PEERS, Chunk, ChunkStats, Profile, chunk_ids
from raychunk.document import ParsedDocument
from raychunk.evaluation.locate import TextWords, find_quote
from raychunk.render import LIST_NUMBER, item_line, render_table
from raychunk.tokens import TokenCounter

__all__ = [
    "PEERS",
    "Piece",
    "chunk_any",
    "chunk_stats_any",
    "is_peer",
    "peer_chunks",
    "peer_input",
    "require_peers",
]

log = logging.getLogger(__name__)

_ENDS = 8  # words at each end of a piece, when only its ends are found
# What ``peer_input`` writes around blocks that the document text does not hold: code fences, then
# list markers, then heading marks (a code comment starts with ``#`` too). A piece across a code block
# or a list is found without them, each taken away in turn.
# a list item's number and its space: ``7.``, ``b)``, ``(iv)``, Word's ``2.1.``
_NUMBER = rf"(?:{LIST_NUMBER}) "
_MARKER = rf"(?:- (?:\[[ xX]\] )?|{_NUMBER})"
_NUMBER_ADDED = re.compile(rf"^[ \t]*{_NUMBER}(?=\S)", re.M)
_MARKDOWN_ADDED = (
    re.compile(r"^[ \t]*```[^\n]*$", re.M),
    re.compile(rf"^[ \t]*(?:```[^\n]*$|{_MARKER})", re.M),
    re.compile(rf"^[ \t]*(?:```[^\n]*$|{_MARKER}|#{{1,6}} )", re.M),
)
_AS_WRITTEN = frozenset({"markdown", "text", "code", "csv", "tsv", "json", "jsonl", "xml"})


@dataclass(frozen=True, slots=True)
class Piece:
    """One chunk as the peer made it: ``body`` (text from the document) and the ``header`` line the
    peer puts before it in what is embedded (empty for none)."""

    body: str
    header: str = ""
    start: int | None = None  # the body's offset in the peer's input, when the library gives it


def is_peer(strategy: str) -> bool:
    return strategy in PEERS


def _split(strategy: str) -> Callable[[str, int], list[Piece]]:
    if strategy == "langchain_markdown":
        from raychunk.peers.langchain import split_markdown

        return split_markdown
    if strategy == "chonkie_recursive":
        from raychunk.peers.chonkie import split_recursive

        return split_recursive
    raise ValueError(f"strategy={strategy!r}: not a peer ({', '.join(PEERS)})")


def require_peers(settings) -> None:
    """Fail before any work when a setting names a peer whose library is not installed (the chunk
    stage would otherwise fail every document on the cluster): the ImportError names the extra."""
    for strategy in sorted({s.profile.strategy for s in settings if s.profile is not None}):
        if is_peer(strategy):
            _split(strategy)("", 16)


def peer_input(parsed: ParsedDocument) -> str:
    """The text a peer reads (see the module docstring)."""
    if parsed.document.format in _AS_WRITTEN:
        return parsed.text
    lines = []
    for b in parsed.blocks:
        if b.kind == "page_break" or not b.text.strip():
            continue
        if b.kind == "heading":
            lines.append("#" * min(6, max(1, b.level)) + " " + " ".join(b.text.split()))
        elif b.kind == "table" and b.rows:
            lines.append(render_table(b.rows, b.header_rows))
        elif b.kind == "list_item":
            lines.append(item_line(b.marker, " ".join(b.text.split()), b.level))
        elif b.kind == "code":
            lines.append("```\n" + b.text + "\n```")
        else:
            lines.append(b.text)
    return "\n\n".join(lines)


class _Placer:
    """Finds each piece in the document text, in order: exactly from the cursor, else with the
    tolerant locator in a window after the cursor, else anywhere in the text."""

    def __init__(self, text: str, same_input: bool):
        self.text = text
        self.same_input = same_input
        self.cursor = 0
        self._words: TextWords | None = None

    def place(self, piece: Piece) -> tuple[int, int] | None:
        body = piece.body.strip()
        if not body:
            return None
        if self.same_input and piece.start is not None:
            a = piece.start + len(piece.body) - len(piece.body.lstrip())
            if self.text.startswith(body, a):
                return self._at(a, a + len(body))
        i = self.text.find(body, self.cursor)
        if i < 0:
            i = self.text.find(body)
        if i >= 0:
            return self._at(i, i + len(body))
        if not self.same_input:  # a list item's number peer_input wrote: a word the text does not hold
            body = _NUMBER_ADDED.sub("", body).strip() or body
        found = self._near(body)
        for added in () if self.same_input else _MARKDOWN_ADDED:
            if found is not None:
                break
            bare = added.sub("", body).strip()
            if bare and bare != body:
                found, body = self._near(bare), bare
        return found

    def _near(self, body: str) -> tuple[int, int] | None:
        """``body`` by the tolerant locator: after the previous piece, else anywhere, else by its ends."""
        window = max(8 * len(body), 4_000)
        lo = self.cursor
        m = find_quote(self.text[lo : lo + window], body)
        if m is None:  # not after the previous piece: anywhere, the first place it is
            if self._words is None:
                self._words = TextWords(self.text)
            lo, m = 0, find_quote(self.text, body, self._words)
        if m is not None:
            return self._at(lo + m.start, lo + m.end)
        return self._ends(body, window)

    def _ends(self, body: str, window: int) -> tuple[int, int] | None:
        """A piece whose words differ from the text's in more places than the locator skips (a
        table the peer's input renders with cells the source writes once): from where its first
        words are to where its last words are after them."""
        words = body.split()
        if len(words) < 2 * _ENDS:
            return None
        lo, first = self.cursor, " ".join(words[:_ENDS])
        head = find_quote(self.text[lo:], first)
        if head is None:
            lo, head = 0, find_quote(self.text, first, self._words)
        if head is None:
            return None
        a = lo + head.start
        # Markup-heavy HTML (an infobox) may hold a piece's words in far more characters than it has.
        tail = find_quote(self.text[a : a + 64 * len(body) + window], " ".join(words[-_ENDS:]))
        return None if tail is None else self._at(a, a + tail.end)

    def _at(self, a: int, b: int) -> tuple[int, int]:
        self.cursor = a + 1  # the next piece starts after this one's start (overlap may repeat text)
        return a, b


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class PeerChunks:
    chunks: list[Chunk]
    unlocated: int


def peer_chunks(
    parsed: ParsedDocument, profile: Profile, counter: TokenCounter, *, doc_type: str = "unknown"
) -> PeerChunks:
    """One document chunked by the peer ``profile.strategy`` at ``profile.max_tokens`` cl100k tokens,
    as chunk records whose spans the locator found in ``parsed.text``."""
    doc = parsed.document
    if doc.status != "ok" or not parsed.text.strip():
        return PeerChunks([], 0)
    source = peer_input(parsed)
    pieces = [p for p in _split(profile.strategy)(source, profile.max_tokens) if p.body.strip()]
    placer = _Placer(parsed.text, same_input=source is parsed.text)
    spans, unlocated, end = [], 0, 0
    for p in pieces:
        found = placer.place(p)
        if found is None:
            unlocated += 1
            found = (end, end)
        spans.append(found)
        end = found[1]
    if unlocated:
        log.info("%s: %d of %d %s pieces not located", doc.source, unlocated, len(pieces), profile.strategy)
    texts = [f"{p.header}\n\n{p.body.strip()}" if p.header else p.body.strip() for p in pieces]
    counts = counter.count_batch(texts)
    header_counts = dict(
        zip(
            [p.header for p in pieces if p.header],
            counter.count_batch([p.header for p in pieces if p.header]),
        )
    )
    paths = [tuple(x for x in p.header.split(" > ") if x) if p.header else () for p in pieces]
    ids = chunk_ids(doc.key, profile, counter.name, list(zip(paths, texts)))
    limit = counter.max_input
    chunks = []
    for i, (p, text, n, (a, b), path) in enumerate(zip(pieces, texts, counts, spans, paths)):
        chunks.append(
            Chunk(
                chunk_id=ids[i],
                doc_id=doc.doc_id,
                source=doc.source,
                doc_type=doc_type,
                strategy=profile.strategy,
                max_tokens=profile.max_tokens,
                overlap=profile.overlap_tokens,
                chunk_index=i,
                text=text,
                header=p.header,
                heading_path=path,
                char_start=a,
                char_end=b,
                page_start=None,
                page_end=None,
                n_tokens=n,
                header_tokens=header_counts.get(p.header, 0),
                overlap_tokens=0,
                block_kinds=(),
                # Each piece its own family: peers have no small-to-big grouping of their own.
                parent_id=_hash(f"{doc.doc_id}|{profile.strategy}|{i}"),
                over_limit=bool(limit is not None and n > limit),
            )
        )
    return PeerChunks(chunks, unlocated)


def chunk_any(
    parsed: ParsedDocument, profile: Profile, counter: TokenCounter, *, doc_type: str = "unknown"
) -> list[Chunk]:
    """``chunking.chunk_document`` for raychunk's strategies, ``peer_chunks`` for a peer."""
    if is_peer(profile.strategy):
        return peer_chunks(parsed, profile, counter, doc_type=doc_type).chunks
    from raychunk.chunking import chunk_document

    return chunk_document(parsed, profile, counter, doc_type=doc_type)


def chunk_stats_any(
    parsed: ParsedDocument,
    profile: Profile,
    counter: TokenCounter,
    *,
    doc_type: str = "unknown",
    with_ids: bool = False,
) -> list[ChunkStats]:
    """``chunking.chunk_stats`` for raychunk's strategies; a peer's numbers from its chunks."""
    if not is_peer(profile.strategy):
        from raychunk.chunking import chunk_stats

        return chunk_stats(parsed, profile, counter, doc_type=doc_type, with_ids=with_ids)
    return [
        ChunkStats(
            c.chunk_id if with_ids else None,
            c.n_tokens,
            c.header_tokens,
            0,
            c.over_limit,
            len(c.text.encode()),
        )
        for c in peer_chunks(parsed, profile, counter, doc_type=doc_type).chunks
    ]
