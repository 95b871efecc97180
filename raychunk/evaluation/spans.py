"""The span check: does each chunk's ``[char_start, char_end)`` hold its body, tightly?

Scores are computed on spans, so a loose span (a piece of a split element given the whole element's
span) buys coverage it did not retrieve. Before anything is scored, every chunk of every setting is
checked against the document text:

- its body (``text`` less the ``header`` line and the blank line after it) is found in the span as
  its words in order (words are ``\\w+`` runs, case-folded; markup such as ``- `` list markers, table
  pipes, HTML tags, comments and boilerplate elements is no word). Markup is dropped before entities
  are decoded, and a tag from the body only where the span holds a tag of that name: an HTML
  document's ``&lt;newline&gt;`` is the word ``newline`` in its span and in its parsed text alike;
- the span is tight: it opens on the body's first word and closes on its last;
- the span holds at most a few words the body lacks (what the parser's cleanup drops: a link target,
  an edit link): at most ``max(SKIP_FLOOR, SKIP_SHARE * body words)``. Without this bound a whole-
  element span would pass whenever a piece happened to start and end on the element's first and last
  words.

Rendering context is not the body's own and may span nothing: the repeated header rows of a split
pipe table (or the header cells opening a table piece, ``table_part`` set), the copies of a cell
spanning columns or rows, the keys of a record and the markers of list items (``7.``, ``b)``, ``- [x]``: numbered by the format, not written in
the source) are dropped from the body when the whole body does not match; a record's values are
also sought in an XML span's attribute values, which tags otherwise hide. Overlap needs no exception: it repeats the source just before the new text, and the span
starts there. The cost is linear in the body and the span, and a span far longer than its body fails
without being read.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from raychunk.parse.html import BOILERPLATE_CLASSES
from raychunk.parse.xmldata import shown_attribute
from raychunk.render import LIST_NUMBER, TERMINAL_ESCAPE, squash

__all__ = ["SKIP_FLOOR", "SKIP_SHARE", "BadSpan", "SpanCheck", "check_chunk", "check_spans", "words"]

SKIP_FLOOR = 4
SKIP_SHARE = 0.25
_MAX_SPAN_RATIO, _MAX_SPAN_SLACK = 200, 65_536  # a span past this is not its body's, whatever the markup

_HEAD_WORDS, _HEAD_TRIES = 256, 4  # where a table piece's repeated header cells may end, and tries
_WORD = re.compile(r"\w+")
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_DROPPED = re.compile(
    r"<(script|style|noscript|template|svg|nav|aside|button|select|iframe|textarea|object)\b[^>]*>.*?</\1\s*>",
    re.S | re.I,
)
# what the HTML parser drops by class (edit links, screen-reader text, permalinks, skip links)
_DROPPED_CLASS = re.compile(
    r"<(\w+)\b[^<>]*\bclass\s*=\s*[\"'][^\"']*\b(?:"
    + "|".join(map(re.escape, sorted(BOILERPLATE_CLASSES)))
    + r")\b[^<>]*>.*?</\1\s*>",
    re.S | re.I,
)
_TAG = re.compile(r"</?([A-Za-z!?][\w-]*)[^<>]*>")
_INLINE = frozenset(
    [
        "a",
        "abbr",
        "b",
        "bdi",
        "bdo",
        "cite",
        "code",
        "data",
        "dfn",
        "em",
        "font",
        "i",
        "kbd",
        "mark",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "time",
        "tt",
        "u",
        "var",
        "wbr",
    ]
)
# what the parsers' clean_text drops (raychunk.parse._common): terminal escapes, overstrikes, controls
_CONTROL = re.compile(rf"{TERMINAL_ESCAPE.pattern}|.\x08|[\x00-\x08\x0b\x0e-\x1f\x7f]")
_JOIN = 6  # a body word may be this many span words run together (a tag or control byte inside it)
_PIPE_RULE = re.compile(r"\|(?:\s*:?-{3,}:?\s*\|)+")
_RECORD_KEY = re.compile(r"^[^\n:]{1,100}: ?", re.M)
_INLINE_KEY = re.compile(r"(?<!\S)[\w.\-]{1,100}: ")
# A list item's marker at the start of a line, as the chunker renders it: a bullet or a number
# (digits, a letter, a roman numeral) with its delimiter or in parentheses, or a number of several
# levels (``2.1.``, as Word numbers), then an optional task box.
_LIST_MARKER = re.compile(rf"^[ \t]*(?:-|{LIST_NUMBER})(?: \[[ xX]\])?(?= |$)", re.M)


@dataclass(frozen=True, slots=True)
class BadSpan:
    """A chunk whose span does not hold its body, and why."""

    source: str
    chunk_index: int
    start: int
    end: int
    why: str

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.end

    def to_dict(self) -> dict:
        return {
            "source": self.source,
            "chunk_index": self.chunk_index,
            "span": [self.start, self.end],
            "why": self.why,
        }


@dataclass(frozen=True, slots=True)
class SpanCheck:
    """One setting's result: ``bad`` of its ``chunks`` failed; ``examples``: the first few of them."""

    setting: str
    chunks: int
    bad: int
    examples: tuple[BadSpan, ...] = ()

    @property
    def ok(self) -> bool:
        return self.bad == 0

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "chunks": self.chunks,
            "bad": self.bad,
            "examples": [b.to_dict() for b in self.examples],
        }


def words(text: str, *, only: Collection[str] | None = None, found: set[str] | None = None) -> list[str]:
    """The words of ``text`` with markup removed: HTML comments, boilerplate elements and tags
    dropped, then entities decoded (an escaped ``&lt;newline&gt;`` is the word ``newline``, as a
    reader sees it). ``only``: drop just the tags of these names, lower case (a body's tags are
    those its span holds as tags: an HTML document's parsed text is plain text, where ``<newline>``
    is a word); ``found``: collects the names of the tags dropped. Names, not whole tags: a tag-like
    run of text can cover several blocks, which the body joins with other whitespace and markers.
    Comments and boilerplate elements are dropped wherever they are.

    >>> words('<p class="x">Caf&eacute; - <a href="/m">menu</a> | 10 &lt;br&gt;</p>')
    ['café', 'menu', '10', 'br']
    >>> words("a <b>x</b> <word> y", only={"b"})
    ['a', 'x', 'word', 'y']
    """
    if "<" in text:

        def drop(m: re.Match) -> str:
            name = m.group(1).lower()
            if only is not None and name not in only:
                return m.group(0)
            if found is not None:
                found.add(name)
            return "" if name in _INLINE else " "

        text = _COMMENT.sub(" ", text)
        text = _DROPPED.sub(" ", text)
        text = _DROPPED_CLASS.sub(" ", text)
        text = _TAG.sub(drop, text)
    if "&" in text:
        text = html.unescape(text)
    if "\x08" in text or _CONTROL.search(text):
        text = _CONTROL.sub("", text)
    return [w.casefold() for w in _WORD.findall(text)]


_XML_TAG = re.compile(r"</?[A-Za-z_][^<>]*(?:>|\Z)")  # a tag, or the one a span ends inside
_ATTRIBUTE_VALUE = re.compile(r"""([\w:.-]*)\s*=\s*(?:"([^"]*)(?:"|\Z)|'([^']*)(?:'|\Z))""")


_XML_KEY = re.compile(r"^[^\n:(]*?(?: \(([^()\n]*)\))?: ", re.M)


def _xml_values(body: str) -> str:
    """An XML record's body as its values: each line's key dropped but for the attribute values it
    carries (``comment (lang de): Tabelle`` reads ``de Tabelle``), except the first line's, which
    stand before the span (it opens on the first value)."""
    first, _, rest = body.partition("\n")
    carried = _XML_KEY.sub(
        lambda m: " ".join(p.split(" ", 1)[-1] for p in (m[1] or "").split(", ")) + " ", rest
    )
    return _XML_KEY.sub("", first) + "\n" + carried


def _attributes_shown(span: str) -> str:
    """An XML span with each tag replaced by its attributes' values; a span may open inside an
    attribute's value (its first quote before any tag) and end inside one."""
    lt = span.find("<")
    quote = min((q for q in (span.find('"'), span.find("'")) if q >= 0), default=-1)
    if quote >= 0 and (lt < 0 or quote < lt) and ">" not in span[:quote]:
        span = f"<_ _={span[quote]}" + span
    return _XML_TAG.sub(_attribute_values, span)


def _attribute_values(m: re.Match) -> str:
    """The values a record reads of a tag's attributes (``xmldata.shown_attribute``: no xmlns)."""
    shown = (a or b for name, a, b in _ATTRIBUTE_VALUE.findall(m.group(0)) if shown_attribute(name))
    return " " + " ".join(shown) + " "


def _context_free(body: str) -> str | None:
    """The body less its rendering context, or None when it has none: a pipe table's header rows
    (up to the ``|---|`` rule), or the keys of a record (``key: value`` lines, or such pairs run
    together on one line, as the baseline's text has them)."""
    lines = body.split("\n")
    if lines[0].lstrip().startswith("|"):
        for i, line in enumerate(lines):
            if _PIPE_RULE.fullmatch(line.strip()):
                return "\n".join(lines[i + 1 :])
            if not line.lstrip().startswith("|"):
                break
    filled = [line for line in lines if line.strip()]
    if filled and all(_RECORD_KEY.match(line) for line in filled):
        return _INLINE_KEY.sub(" ", _RECORD_KEY.sub("", body))
    return None


def _match(body: list[str], span: list[str]) -> str | None:
    """Why ``body`` is not ``span``'s words in order, opening and closing it, with few others; None
    when it is."""
    if not body:
        return None if not span else f"the body has no words, its span {len(span)}"
    j = 0
    first = -1
    for i, w in enumerate(body):
        width = 0
        while j < len(span) and not (width := _joined(w, span, j)):
            j += 1
        if j == len(span):
            return f"body word {i + 1} of {len(body)} ({w!r}) is not in the span, in order"
        if first < 0:
            first = j
        j += width
    if first > 0:
        return f"the span starts {_n_words(first)} before the body ({' '.join(span[: min(first, 4)])!r}...)"
    last = len(span) - 1
    while last >= j and span[last] != body[-1]:
        last -= 1
    last = max(last, j - 1)
    if last < len(span) - 1:
        trail = len(span) - 1 - last
        return f"the span runs {_n_words(trail)} past the body (...{' '.join(span[last + 1 :][-4:])!r})"
    extra = len(span) - len(body)
    allowed = max(SKIP_FLOOR, math.ceil(SKIP_SHARE * len(body)))
    if extra > allowed:
        return (
            f"the span holds {_n_words(extra)} the body lacks ({len(span)} against {len(body)}; "
            f"cleanup explains at most {allowed})"
        )
    return None


def _joined(word: str, span: list[str], j: int) -> int:
    """How many span words from ``j`` on spell ``word`` (1 when ``span[j]`` is it), else 0."""
    if span[j] == word:
        return 1
    if not word.startswith(span[j]):
        return 0
    text = span[j]
    for k in range(j + 1, min(len(span), j + _JOIN)):
        text += span[k]
        if text == word:
            return k - j + 1
        if not word.startswith(text):
            return 0
    return 0


def _n_words(n: int) -> str:
    return f"{n:,} word" + ("" if n == 1 else "s")


def check_chunk(document: str, chunk: Mapping) -> str | None:
    """Why this chunk's span does not hold its body (see the module docstring); None when it does.

    >>> doc = "Intro.\\n\\nRefunds are paid within 10 days. Credits expire."
    >>> c = {"text": "Guide\\n\\nRefunds are paid within 10 days.", "header": "Guide"}
    >>> check_chunk(doc, {**c, "char_start": 8, "char_end": 40}) is None
    True
    >>> check_chunk(doc, {**c, "char_start": 8, "char_end": len(doc)})
    "the span runs 2 words past the body (...'credits expire')"
    """
    start, end = int(chunk["char_start"]), int(chunk["char_end"])
    if not 0 <= start <= end <= len(document):
        return f"span [{start}, {end}) is not inside the document ({len(document):,} characters)"
    text, header = chunk.get("text") or "", chunk.get("header") or ""
    if header:
        if not text.startswith(header + "\n\n"):
            return "the text does not start with its header line and a blank line"
        text = text[len(header) + 2 :]
    if end - start > _MAX_SPAN_RATIO * len(text) + _MAX_SPAN_SLACK:
        return f"a span of {end - start:,} characters for a body of {len(text):,}"
    markup: set[str] = set()
    span = words(document[start:end], found=markup)
    body = words(text, only=markup)
    why = _match(body, span)
    if why is None:
        return None
    bare = _context_free(text)
    if bare is not None and _match(words(bare, only=markup), span) is None:
        return None
    # an XML record's values may be attributes' (``<entry code="AF"/>``), hidden with the tags; a
    # piece of a record split at a sentence may open on a line without its key
    source = document[start:end]
    if (
        ("<" in source or "=" in source)
        and _RECORD_KEY.search(text)
        and _match(words(_xml_values(text)), words(_attributes_shown(source))) is None
    ):
        return None
    if _LIST_MARKER.search(text):
        # Every line's marker, or all but the first line's: a piece cut from an item may open on
        # words of the source that look like one ("8. Archived" from "Paper No. 8. Archived"); or
        # only the first line's: an item's span starts after its number, while the numbers of the
        # items after it lie inside the chunk's span ("5. a ... 6. b" spans "a ... 6. b").
        first, _, rest = text.partition("\n")
        for unmarked in (
            _LIST_MARKER.sub("", text),
            first + "\n" + _LIST_MARKER.sub("", rest),
            _LIST_MARKER.sub("", first) + "\n" + rest,
        ):
            if _match(words(unmarked, only=markup), span) is None:
                return None
    bodies = [body]
    for t in (text, bare):
        single = _without_copies(t) if t else None
        if single is not None:
            words_left = words(single, only=markup)
            if _match(words_left, span) is None:
                return None
            bodies.append(words_left)
    if chunk.get("table_part") is not None and span:
        # A table piece may open on its header cells, run together (the baseline's text), or on a
        # row label spanning rows from the part before: try the body from each of the first few
        # places where the span's first word occurs.
        for b in bodies:
            starts = [i for i, w in enumerate(b[:_HEAD_WORDS]) if i and w == span[0]]
            if any(_match(b[i:], span) is None for i in starts[:_HEAD_TRIES]):
                return None
    return why


_CELL_SPLIT = re.compile(r"(?<!\\)\|")


def _without_copies(body: str) -> str | None:
    """A pipe-table body less the copies of spanning cells (``_spanned_copies``: a cell
    repeating the last filled one to its left, or the one above it), which the source writes once;
    None when it holds none. Tried only when the whole body does not match, so a value that repeats
    in the source costs at most the few words the check lets a span hold."""
    if "|" not in body:
        return None
    lines = body.split("\n")
    rows: list[list[str]] = []
    where: list[int] = []  # the line of each row
    header_rows = 0
    for k, line in enumerate(lines):
        row = line.strip()
        if _PIPE_RULE.fullmatch(row):
            header_rows = len(rows)
        elif row.startswith("|") and row.endswith("|") and len(row) > 1:
            rows.append([c.strip() for c in _CELL_SPLIT.split(row[1:-1])])
            where.append(k)
    copies = _spanned_copies(rows, header_rows)
    if not copies:
        return None
    for i, j in copies:
        rows[i][j] = ""
    for i, k in enumerate(where):
        lines[k] = "| " + " | ".join(rows[i]) + " |"
    return "\n".join(lines)


def check_spans(
    documents: Mapping[str, str], chunks: Mapping[str, Iterable[Mapping]], *, examples: int = 5
) -> dict[str, SpanCheck]:
    """Every chunk of every setting checked against its document's text (``documents``: source →
    text; ``chunks``: setting → chunk dicts with ``source``, ``chunk_index``, ``char_start``,
    ``char_end``, ``text`` and ``header``). The first ``examples`` failures of a setting are named."""
    out = {}
    for setting, rows in chunks.items():
        n = bad = 0
        named: list[BadSpan] = []
        for c in rows:
            n += 1
            doc = documents.get(c["source"])
            why = "no document text for its source" if doc is None else check_chunk(doc, c)
            if why is None:
                continue
            bad += 1
            if len(named) < examples:
                named.append(
                    BadSpan(
                        c["source"],
                        int(c.get("chunk_index") or 0),
                        int(c["char_start"]),
                        int(c["char_end"]),
                        why,
                    )
                )
        out[setting] = SpanCheck(setting, n, bad, tuple(named))
    return out


def _spanned_copies(rows: tuple[tuple[str, ...], ...] | list, header_rows: int) -> set[tuple[int, int]]:
    """The cells that read as copies of a spanning cell, written once in the source: a cell that
    repeats the last filled cell to its left, or the cell above it (not across the end of the
    header rows), as HTML's ``rowspan`` and ``colspan`` leave them (``Block.copies``, which the chunk
    text does not carry).

    >>> sorted(_spanned_copies([("Region", "2023", "2023"), ("Region", "Revenue", "Cost")], 2))
    [(0, 2), (1, 0)]
    """
    out = set()
    for i, row in enumerate(rows):
        above = rows[i - 1] if i and i != header_rows else None
        left = ""
        for j, c in enumerate(row):
            c = squash(c)
            if c and (c == left or (above is not None and j < len(above) and c == squash(above[j]))):
                out.add((i, j))
            left = c or left
    return out
