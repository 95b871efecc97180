"""Baselines the structure-first chunker is measured against.

``unstructured_by_title`` (``UnstructuredByTitle``) is unstructured's ``chunk_by_title`` run over our
parsed blocks, as a user of unstructured would run it: a new chunk at every Title, small sections
left alone (``combine_text_under_n_chars=0``), overlap only inside a split element
(``overlap_all=False``), and no header line, which is the point of the comparison. Its chunk texts
are exactly unstructured's.

Invariants: every chunk's span is the smallest span of the document text holding what its text was
made from (a piece of a split element spans its own part of the element); ids are unique within a
document; the same document and profile give the same chunks and ids; a document without text
gives [].
"""

from __future__ import annotations

import hashlib
import html
import re

from raychunk.chunking.align import Alignment, align
from raychunk.chunking.model import Chunk, Profile, Strategy, chunk_ids, parent_ids, table_ids
from raychunk.document import Block, ParsedDocument
from raychunk.tokens import TokenCounter

__all__ = ["UnstructuredByTitle", "run_unstructured_by_title"]

# lxml refuses control characters, which would make unstructured drop a table's html.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_FALLBACK_CHARS_PER_TOKEN = 4.0


def _import_unstructured():
    try:
        from raychunk._unstructured import prepare_unstructured

        prepare_unstructured()  # before the first import: no telemetry ping, no model download
        from unstructured.chunking.title import chunk_by_title
        from unstructured.documents import elements
    except ImportError as e:
        raise ImportError(
            f"the unstructured_by_title baseline needs {e.name or e}: pip install unstructured"
        ) from e
    return chunk_by_title, elements


def _table_html(rows: tuple[tuple[str, ...], ...], header_rows: int) -> str:
    def row(cells: tuple[str, ...], tag: str) -> str:
        return (
            "<tr>" + "".join(f"<{tag}>{html.escape(_NOT_XML.sub(' ', c))}</{tag}>" for c in cells) + "</tr>"
        )

    head = "".join(row(r, "th") for r in rows[:header_rows])
    body = "".join(row(r, "td") for r in rows[header_rows:])
    return (
        "<table>"
        + (f"<thead>{head}</thead>" if head else "")
        + (f"<tbody>{body}</tbody>" if body else "")
        + "</table>"
    )


def _element(el, b: Block, element_id: str):
    """The unstructured element a block would have been partitioned into."""
    meta = el.ElementMetadata(page_number=b.pages[0] if b.pages else None)
    if b.kind == "heading":
        meta.category_depth = max(0, b.level - 1)
        return el.Title(text=b.text, element_id=element_id, metadata=meta)
    if b.kind == "list_item":
        meta.category_depth = b.level
        return el.ListItem(text=b.text, element_id=element_id, metadata=meta)
    if b.kind == "code":
        return el.CodeSnippet(text=b.text, element_id=element_id, metadata=meta)
    if b.kind == "table":
        cells = [c for r in b.rows for c in r if c.strip()]
        if cells:
            # unstructured's partitioners give a table the text of its cells joined by spaces.
            meta.text_as_html = _table_html(b.rows, b.header_rows)
            return el.Table(text=" ".join(cells), element_id=element_id, metadata=meta)
        return el.Table(text=b.text, element_id=element_id, metadata=meta)
    return el.NarrativeText(text=b.text, element_id=element_id, metadata=meta)


def _chars_per_token(blocks: list[Block], counter: TokenCounter) -> float:
    """This document's characters per token, so that token budgets become chunk_by_title's
    character budgets."""
    tokens = sum(counter.count_batch([b.text for b in blocks]))
    chars = sum(len(b.text) for b in blocks)
    return chars / tokens if tokens and chars else _FALLBACK_CHARS_PER_TOKEN


def _overlap_prefix(previous: str, text: str, limit: int) -> str:
    """The start of ``text`` that repeats the end of ``previous``, at most ``limit`` characters.

    unstructured's splitter starts the next piece with the previous piece's last ``limit - 1``
    characters and a space (or, at a cut with no whitespace, its last ``limit`` characters), so
    the repeated part is followed by whitespace or is exactly ``limit`` long.
    """
    for k in range(min(limit, len(text), len(previous)), 0, -1):
        if (k == limit or text[k : k + 1].isspace()) and previous.endswith(text[:k]):
            return text[:k]
    return ""


def _element_text(b: Block) -> str:
    """The text ``_element`` gives the block's element."""
    if b.kind == "table":
        cells = [c for r in b.rows for c in r if c.strip()]
        if cells:
            return " ".join(cells)
    return b.text


class _Locator:
    """Finds each chunk's text in the elements it came from, and maps it to the document text."""

    def __init__(self, parsed: ParsedDocument, blocks: list[Block]):
        self.parsed = parsed
        self.blocks = blocks
        self._aligned: dict[int, tuple[str, Alignment]] = {}
        self._cursor: dict[int, int] = {}

    def element(self, i: int) -> tuple[str, Alignment]:
        if i not in self._aligned:
            b = self.blocks[i]
            text = _element_text(b)
            source = self.parsed.text[b.char_start : b.char_end]
            markup = {"html": "source", "markdown": "both"}.get(self.parsed.document.format, "")
            self._aligned[i] = (text, align(text, source, b.char_start, markup=markup))
        return self._aligned[i]

    def span(self, text: str, prefix: str, source: tuple[int, ...]) -> tuple[int, int]:
        """Whole elements span their own text; a piece of a split element (after its overlap
        ``prefix``) is found in the element text after the previous piece, and the overlap just
        before it."""
        spans = []
        if len(source) == 1:
            element, where = self.element(source[0])
            if text != element:
                found = self._find(source[0], element, text[len(prefix) :].strip())
                if found is not None:
                    a, b = found
                    if prefix.strip():
                        k = element.rfind(prefix.strip(), 0, a + 1)
                        a = k if k >= 0 else a
                    spans.append(where.span(a, b))
        if not spans:
            for i in source:
                element, where = self.element(i)
                spans.append(where.span(0, len(element)))
        held = [(a, b) for a, b in spans if b > a] or spans
        return min(a for a, _ in held), max(b for _, b in held)

    def _find(self, i: int, element: str, rest: str) -> tuple[int, int] | None:
        cursor = self._cursor.get(i, 0)
        candidates = [rest]
        b = self.blocks[i]
        if b.kind == "table" and b.header_rows:
            # A split table repeats its header cells at the top of every piece.
            head = " ".join(c for r in b.rows[: b.header_rows] for c in r if c.strip())
            if rest.startswith(head):
                candidates.append(rest[len(head) :].strip())
        for c in candidates:
            a = element.find(c, cursor) if c else -1
            if a >= 0:
                self._cursor[i] = a + len(c)
                return a, a + len(c)
        for c in candidates:  # unstructured re-spaces what it splits: "written\nfor" -> "written for"
            m = (
                re.compile(r"\s+".join(map(re.escape, c.split()))).search(element, cursor)
                if c.split()
                else None
            )
            if m:
                self._cursor[i] = m.end()
                return m.start(), m.end()
        return None


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def run_unstructured_by_title(
    parsed: ParsedDocument, profile: Profile, counter: TokenCounter, *, doc_type: str = "unknown"
) -> list[Chunk]:
    """Chunk one parsed document with unstructured's ``chunk_by_title``, as the baseline.

    ``profile.max_tokens`` and ``profile.overlap_tokens`` become character budgets through the
    document's own characters per token. Each chunk's span runs from the first to the last source
    character of what it holds (a piece of a split element: its own part of the element); its
    heading path is that of the section its first block is in.
    """
    doc = parsed.document
    if doc.status != "ok":
        return []
    blocks = [b for b in parsed.blocks if b.kind != "page_break" and b.text.strip()]
    if not blocks:
        return []
    chunk_by_title, el = _import_unstructured()

    # Element ids are set here, so the side table can map a chunk's orig_elements back to blocks.
    ids = {f"raychunk-{i}": i for i in range(len(blocks))}
    elements = [_element(el, b, eid) for eid, b in zip(ids, blocks)]
    ratio = _chars_per_token(blocks, counter)
    max_chars = max(2, round(profile.max_tokens * ratio))
    overlap_chars = min(max_chars - 1, round(profile.overlap_tokens * ratio))
    pieces = [
        p
        for p in chunk_by_title(
            elements,
            max_characters=max_chars,
            new_after_n_chars=max_chars,  # no soft window: fill up to the budget, as our chunker does
            combine_text_under_n_chars=0,
            overlap=overlap_chars,
            overlap_all=False,
            include_orig_elements=True,
        )
        if p.text
    ]

    drafts = []
    cursor = 0  # the next block not yet seen in a chunk
    previous: tuple[int, ...] = ()
    for p in pieces:
        meta = p.metadata
        continuation = bool(meta.is_continuation)
        found = sorted({ids[e.id] for e in meta.orig_elements or () if e.id in ids})
        if found:
            source = tuple(found)
        elif continuation and previous:
            source = previous
        else:
            # unstructured omits orig_elements for pieces of a huge element (over 1M characters);
            # chunks come in element order, so such a piece is the next element.
            source = (min(cursor, len(blocks) - 1),)
        cursor = max(cursor, source[-1] + 1)
        previous = source
        drafts.append((p, source, continuation))

    counts = counter.count_batch([p.text for p, _, _ in drafts])
    prefixes = [""] * len(drafts)
    if overlap_chars > 1:
        for i in range(1, len(drafts)):
            p, source, continuation = drafts[i]
            # Overlap only prefixes a piece of a split element; an html table split adds none.
            if continuation and source == drafts[i - 1][1] and not p.metadata.text_as_html:
                prefixes[i] = _overlap_prefix(drafts[i - 1][0].text, p.text, overlap_chars)
    with_prefix = [i for i, s in enumerate(prefixes) if s]
    overlap_counts = dict(zip(with_prefix, counter.count_batch([prefixes[i] for i in with_prefix])))

    locate = _Locator(parsed, blocks)
    spans = [locate.span(p.text, prefix, s) for (p, s, _), prefix in zip(drafts, prefixes)]
    table_parts: dict[tuple[int, ...], int] = {}
    parts = []
    for p, source, _ in drafts:
        part = None
        if isinstance(p, el.Table):
            part = table_parts.get(source, 0)
            table_parts[source] = part + 1
        parts.append(part)
    paths = []
    for _, source, _ in drafts:
        first = blocks[source[0]]
        paths.append(first.heading_path + (first.text,) if first.kind == "heading" else first.heading_path)
    cids = chunk_ids(
        doc.key, profile, counter.name, [(path, p.text) for path, (p, _, _) in zip(paths, drafts)]
    )
    limit = counter.max_input
    # The same ids as the structure chunker gives these tables, so the two can be compared.
    tables = sorted({source[0] for (_, source, _), part in zip(drafts, parts) if part is not None})
    table_id_of = dict(zip(tables, table_ids(doc.key, [blocks[j].text for j in tables])))
    parent_of = dict(zip(sorted(set(paths)), parent_ids(doc.key, sorted(set(paths)))))
    chunks = []
    for i, ((p, source, continuation), n, (start, end)) in enumerate(zip(drafts, counts, spans)):
        src = [blocks[j] for j in source]
        first = src[0]
        path = first.heading_path + (first.text,) if first.kind == "heading" else first.heading_path
        pages = [pg for b in src for pg in b.pages]
        table_id = table_part = None
        if parts[i] is not None:
            table_id = table_id_of[source[0]]
            table_part = parts[i]
        chunks.append(
            Chunk(
                chunk_id=cids[i],
                doc_id=doc.doc_id,
                source=doc.source,
                doc_type=doc_type,
                strategy=profile.strategy,
                max_tokens=profile.max_tokens,
                overlap=profile.overlap_tokens,
                chunk_index=i,
                text=p.text,
                header="",
                heading_path=path,
                char_start=start,
                char_end=end,
                page_start=min(pages) if pages else None,
                page_end=max(pages) if pages else None,
                n_tokens=n,
                header_tokens=0,
                overlap_tokens=overlap_counts.get(i, 0),
                block_kinds=tuple(dict.fromkeys(b.kind for b in src)),
                parent_id=parent_of[path],
                table_id=table_id,
                table_part=table_part,
                continuation=continuation,
                over_limit=bool(limit is not None and n > limit),
            )
        )
    return chunks


class UnstructuredByTitle(Strategy):
    name = "unstructured_by_title"

    def chunks(
        self, parsed: ParsedDocument, profile: Profile, counter: TokenCounter, doc_type: str
    ) -> list[Chunk]:
        return run_unstructured_by_title(parsed, profile, counter, doc_type=doc_type)
