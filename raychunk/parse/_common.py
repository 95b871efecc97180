"""Shared by the parsers: heading-path bookkeeping, extracted-text assembly, text cleanup."""

from __future__ import annotations

import dataclasses
import re

from raychunk.document import Block, BlockKind, Document, ParsedDocument
from raychunk.render import TERMINAL_ESCAPE, squash

_OVERSTRIKE = re.compile(r".\x08")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_CONTROL_OR_BREAK = re.compile(r"[\x00-\x1f\x7f]")
# "== Title ==" or WikiText's spaced "= = Title = =": a title that neither starts nor ends with "=".
# A typewriter face by its name, where a document marks code by its face (PDF, Word, slides): Courier,
# Consolas, Menlo, ... and TeX's CMTT, SFTT and txfonts' t1xtt, whose PDFs often do not flag them
# monospaced (a subset's ``ABCDEF+`` prefix allowed).
TYPEWRITER_FACE = re.compile(
    r"(?i)courier|consol|mono(?!type)|nimbusmon|menlo|inconsolata|lucida ?console|source ?code|fira ?code"
    r"|andale|typewriter|^(?:[A-Z]{6}\+)?(?:cm|cmsl|sf|lm|ec|t1x|tx)tt"
)
_WIKI_HEADING = re.compile(r"[ \t]*(=(?:[ \t]*=)*)[ \t]*([^=\s](?:.*?[^=\s])?)[ \t]*(=(?:[ \t]*=)*)[ \t\r]*")


class ConversionFailed(Exception):
    """A reader, or a converter it goes through (pandoc, msdoc2docx, ppt2pptx), refused the file; the
    message is the row's one-line reason and ``status`` its status."""

    def __init__(self, reason: str, status: str = "failed"):
        super().__init__(reason)
        self.status = status


def one_line(x: object, limit: int = 160) -> str:
    return " ".join(str(x).split())[:limit]


def clean_text(s: str) -> str:
    """Drop nroff overstrikes (``_\\bI`` -> ``I``), terminal escape sequences and control characters;
    keep layout whitespace."""
    if "\x08" in s:
        s = _OVERSTRIKE.sub("", s)
    if "\x1b" in s:
        s = TERMINAL_ESCAPE.sub("", s)
    return _CONTROL.sub("", s)


# A bold line that labels what follows, not a sentence: no closing period, colon, comma or semicolon
# (``**Parameters:**`` introduces a list, ``**Do not run this as root.**`` is emphasis), no sentence
# inside it, a dozen words at most (a CJK character a third of one), no option or path (a command
# set in bold: ``**xslt-config --libs**``), not a note's lead (``**Note: back up first**``).
_LABEL_WORDS = 12
_LABEL_END = frozenset(".:;,!。：；，！、")
_CLOSERS = "\"')]}»”’）】」』"
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# "Note: ...", "Warning: ...": a note's lead set in bold, not a heading over what follows
_ADMONITION = re.compile(
    r"(?:note|nb|n\.b\.|warning|caution|tip|hint|important|attention|danger|notice|remember)\s*:", re.I
)
_COMMAND = re.compile(r"(?:^|\s)(?:--?[A-Za-z]|\.{0,2}/\w)")  # an option or a path: a command to type


def bold_label(text: str) -> bool:
    """Whether ``text``, a paragraph set wholly in bold, reads as a heading (``**To create a user
    pool**``, ``**Module mode**``, ``**Q: Do I need all of it?**``)."""
    text = text.strip()
    end = text.rstrip(_CLOSERS)
    return (
        bool(end)
        and "\n" not in text
        and len(text) <= 120
        and len(text.split()) + len(_CJK.findall(text)) // 3 <= _LABEL_WORDS
        and end[-1] not in _LABEL_END
        and ". " not in text
        and "。" not in text
        and _COMMAND.search(text) is None
        and _ADMONITION.match(text) is None
        and any(c.isalpha() for c in text)
    )


def wiki_heading(line: str) -> tuple[int, int, int] | None:
    """``(level, start, end)`` of the title in a wiki heading line, level being the count of ``=`` on
    each side (``= = = Early life = = =`` is level 3); None when the line is not one."""
    if len(line) > 300 or "=" not in line[:8]:
        return None
    m = _WIKI_HEADING.fullmatch(line)
    if m is None or m.group(1).count("=") != m.group(3).count("="):
        return None
    return m.group(1).count("="), m.start(2), m.end(2)


class BlockStream:
    """Collects blocks in order and tracks the heading path each one sits under.

    A heading of level L closes every open heading of level >= L, then opens itself.
    """

    def __init__(self, *, root: tuple[str, ...] = ()):
        self.blocks: list[Block] = []
        self._open: list[tuple[int, str, bool]] = []  # level, title, set in bold (``bold_heading``)
        self._root = root

    @property
    def path(self) -> tuple[str, ...]:
        return self._root + tuple(title for _, title, _ in self._open)

    def heading(self, text: str, level: int, start: int, end: int, **kw) -> Block | None:
        text = squash(text)
        if not text:
            return None
        level = max(1, int(level))
        while self._open and self._open[-1][0] >= level:
            self._open.pop()
        return self._push(text, level, start, end, False, kw)

    def bold_heading(self, text: str, start: int, end: int, **kw) -> Block | None:
        """A line set wholly in bold that stands as a paragraph (``bold_label``): a heading one level
        under the section it is in, beside the bold heading before it, closed by the next real
        heading of its section's level or above."""
        text = squash(text)
        if not text:
            return None
        while self._open and self._open[-1][2]:
            self._open.pop()
        level = self._open[-1][0] + 1 if self._open else 1
        return self._push(text, level, start, end, True, kw)

    def _push(self, text: str, level: int, start: int, end: int, bold: bool, kw: dict) -> Block:
        block = Block("heading", text, start, end, heading_path=self.path, level=level, **kw)
        self.blocks.append(block)
        self._open.append((level, text, bold))
        return block

    def leave(self, level: int = 1) -> None:
        """Close every open heading of ``level`` or deeper: what follows sits above them."""
        while self._open and self._open[-1][0] >= level:
            self._open.pop()

    def add(self, kind: BlockKind, text: str, start: int, end: int, **kw) -> Block | None:
        if kind != "page_break" and not text.strip() and not kw.get("rows"):
            return None
        block = Block(kind, text, start, end, heading_path=self.path, **kw)
        self.blocks.append(block)
        return block


class TextAssembler:
    """Builds a document text out of extracted pieces, returning each piece's span.

    Pieces are joined by a blank line, so ``text[start:end]`` is exactly the piece appended.
    """

    def __init__(self, sep: str = "\n\n"):
        self._parts: list[str] = []
        self._len = 0
        self._sep = sep

    def append(self, piece: str) -> tuple[int, int]:
        if self._parts:
            self._parts.append(self._sep)
            self._len += len(self._sep)
        start = self._len
        self._parts.append(piece)
        self._len += len(piece)
        return start, self._len

    @property
    def text(self) -> str:
        return "".join(self._parts)


_PANDOC_AT = re.compile(r"\(line (\d+), column (\d+)\):\s*\n?([^\n]*)")


def pandoc_error(message: str) -> str:
    """Where pandoc stopped, from its error message: ``' (line 7, column 265: unexpected '`')'``, or ''."""
    m = _PANDOC_AT.search(message)
    if not m:
        return ""
    what = squash(m.group(3))[:80]
    return f" (line {m.group(1)}, column {m.group(2)}" + (f": {what})" if what else ")")


def listing(names, limit: int = 3) -> str:
    """``a, b, c and 2 more``: names for a one-line reason, each on one line (a control character a
    damaged file put in a name is a ``?``), 'nothing' for none."""
    names = [_CONTROL_OR_BREAK.sub("?", str(n)) for n in names]
    if not names:
        return "nothing"
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown} and {len(names) - limit} more"


def no_blocks(base: Document, status: str, reason: str) -> ParsedDocument:
    """A parse that gave no blocks: the document with its status and one-line reason."""
    return ParsedDocument(dataclasses.replace(base, status=status, reason=reason), "")


def with_reason(parsed: ParsedDocument, reason: str) -> ParsedDocument:
    """``parsed`` with its document's reason set: a file read another way than its name says (JSON
    that is not JSON, as text; a notebook that holds no cells, as records), saying so."""
    return dataclasses.replace(parsed, document=dataclasses.replace(parsed.document, reason=reason))


def add_reason(parsed: ParsedDocument, note: str, *, first: bool = False) -> ParsedDocument:
    """``parsed`` with ``note`` joined to its reason (before it with ``first``); a parse that is not
    ``ok`` keeps its own reason."""
    if not note or parsed.document.status != "ok":
        return parsed
    parts = (note, parsed.document.reason) if first else (parsed.document.reason, note)
    return with_reason(parsed, "; ".join(x for x in parts if x))


def converted_in_folder(data: bytes, source: str, target: str, convert):
    """``(convert(source_path, target_path), the target's bytes)``: ``data`` written as ``source`` in
    a private temporary folder for a converter that reads and writes files (msdoc2docx, ppt2pptx)."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="raychunk-convert-") as tmp:
        src, dst = Path(tmp, source), Path(tmp, target)
        src.write_bytes(data)
        result = convert(src, dst)
        return result, dst.read_bytes()


def finish(base: Document, text: str, blocks: list[Block], **changes) -> ParsedDocument:
    """Seal a parse: ``empty`` when nothing came out, a title from the first heading if none."""
    if "title" not in changes and not base.title:
        title = _title_heading(blocks)
        if title:
            changes["title"] = title[:200]
    if blocks and all(b.kind == "heading" for b in blocks):
        blocks = _sentences_as_text(blocks)
    doc = dataclasses.replace(base, **changes)
    if doc.status == "ok" and not blocks:
        doc = dataclasses.replace(doc, status="empty", reason=doc.reason or "no text found")
    return ParsedDocument(doc, text, tuple(blocks))


def _sentences_as_text(blocks: list[Block]) -> list[Block]:
    """A page that is only headings, some of them sentences with nothing under them (rustdoc's
    error-code pages: ``#### Note: this error code is no longer emitted by the compiler.``): those
    are its text, paragraphs under the headings above them, where the page would have none."""
    out = list(blocks)
    for i, b in enumerate(blocks):
        leaf = i + 1 == len(blocks) or blocks[i + 1].level <= b.level
        if leaf and b.level > 1 and len(b.text.split()) >= 5 and b.text.rstrip().endswith((".", "!", "?")):
            out[i] = dataclasses.replace(b, kind="paragraph", level=0)
    return out


# "1. Introduction", "2 Tokenizer", "IV. Results": a numbered section.
_NUMBERED = re.compile(r"(?:\d{1,2}(?:\.\d{1,3})*\.?|[IVXLC]+\.)\s")
_SECOND = re.compile(r"(?:2|II)[.\s]")


def _title_heading(blocks: list[Block]) -> str:
    """The first heading's text as the document's title, unless it is the first of numbered
    sections: numbered itself ("1. Introduction"), or followed at its level by a second
    ("INTRODUCTION", then "2 TOKENIZER"). Every chunk's header line starts with the title, so a
    first section taken for it ("1. Introduction > 3. Basic features") names the wrong parent."""
    headings = [b for b in blocks if b.kind == "heading"]
    if not headings:
        return ""
    first = headings[0]
    sibling = next((h for h in headings[1:] if h.level <= first.level), None)
    if _NUMBERED.match(first.text) or (sibling is not None and _SECOND.match(sibling.text)):
        return ""
    return first.text


_ROMAN = ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"), (40, "xl"),
          (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"))  # fmt: skip


def roman(n: int) -> str:
    """``n`` in lower-case roman numerals, a list item's number (1 to 3999); in digits outside.

    >>> roman(14), roman(1999), roman(0)
    ('xiv', 'mcmxcix', '0')
    """
    if not 0 < n < 4000:
        return str(n)
    out = ""
    for value, letters in _ROMAN:
        count, n = divmod(n, value)
        out += letters * count
    return out


_LINE_END = re.compile(r"\r\n?|\n")


def line_offsets(text: str) -> list[int]:
    """Start offset of every line, as markdown-it counts lines (\\r\\n, \\r and \\n all end one)."""
    return [0, *(m.end() for m in _LINE_END.finditer(text))]


def cell_text(lines) -> str:
    """The lines of a table cell (its paragraphs, items, a nested table's rows) as the one line a
    pipe table holds: joined by ``; `` (by a space after a line that ends in punctuation),
    whitespace collapsed.

    >>> cell_text(["30 s", "per request", "Retries: 3."])
    '30 s; per request; Retries: 3.'
    >>> cell_text(["The contact fields.", "name, str"])
    'The contact fields. name, str'
    """
    out = ""
    for line in lines:
        line = squash(line)
        if not line:
            continue
        out = f"{out}{' ' if out[-1] in '.:;,!?' else '; '}{line}" if out else line
    return out
