"""markdown-it-pyrs (markdown-it.rs, compiled) as the block parse of ``raychunk.parse.markdown``.

markdown-it.rs gives a tree whose nodes carry byte spans, not markdown-it-py's token stream with
line maps; ``block_tokens`` turns the tree into that stream, the fields the markdown walker reads
(type, map, level, content, tag, markup, info, attrs) as markdown-it-py sets them, so one walker
builds the blocks from either. Only block rules run: a paragraph's text is its raw inline content,
as markdown-it-py's with its inline rule off.

A document the tree cannot stand for exactly returns None, and the walker parses it with
markdown-it-py. Where the two parsers read the same lines apart: a tab in the indentation of a line
inside a container (expanded to different columns); a fence or a comment-like HTML block left open
inside a container, or at the end of a file without a final newline; lazy lines (a paragraph's
lines without their container's markers: in a quote, one indented or one that could start a
block; an empty list item or a ``:`` line in a list or definition); an empty list item under a
line of text; a table whose row could start a
block, a one-column table over ``---``; a setext underline running on from a definition list;
front matter not at the first column; a link label alone on its line; containers nested near
markdown-it-py's limit of 20 levels; text the Rust side cannot take, a panic of it, a node this
module does not know. (Where both read the same, the tree's inline text is stripped as
markdown-it-py strips it: Unicode whitespace too.) ``tests/test_parse_markdown_rs.py`` holds both
parses equal on the corpus, generated files, the edge cases and random mixes of the constructs.
"""

from __future__ import annotations

import bisect
import re

__all__ = ["SKIPPED", "available", "block_tokens"]

_RULES = [
    "blockquote",
    "code",
    "fence",
    "heading",
    "hr",
    "lheading",
    "list",
    "paragraph",
    "reference",
    "html_block",
    "table",
    "front_matter",
    "deflist",
]
_MD = None
_MISSING = False


def available() -> bool:
    """Whether markdown-it-pyrs imports (a core dependency where it has wheels: Python < 3.13);
    without it every document goes to markdown-it-py."""
    return _parser() is not None


def _parser():
    global _MD, _MISSING
    if _MD is None and not _MISSING:
        try:
            from markdown_it_pyrs import MarkdownIt
        except ImportError:
            _MISSING = True
            return None
        _MD = MarkdownIt("zero").enable_many(_RULES)
    return _MD


class Token:
    """The fields of a markdown-it-py token that the markdown walker reads."""

    __slots__ = ("type", "map", "level", "content", "tag", "markup", "info", "attrs")

    def __init__(self, type, map=None, level=0, content="", tag="", markup="", info="", attrs=None):
        self.type = type
        self.map = map
        self.level = level
        self.content = content
        self.tag = tag
        self.markup = markup
        self.info = info
        self.attrs = attrs or {}

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.map!r}, {self.level}, {self.content!r})"


_NEWLINES = re.compile(r"\r\n?|\n")


class _Unsupported(Exception):
    pass


def block_tokens(text: str) -> list[Token] | None:
    """``text``'s block token stream as markdown-it-py's block parse gives it, or None where the tree
    cannot stand for it (or markdown-it-pyrs is not installed)."""
    md = _parser()
    if md is None:
        return None
    src = _NEWLINES.sub("\n", text) if "\r" in text else text  # as markdown-it-py normalizes
    if "\0" in src:
        src = src.replace("\0", "\ufffd")
    for m in _EMPTY_ITEM_LINE.finditer(src):
        if m.start() and src[src.rfind("\n", 0, m.start() - 1) + 1 : m.start()].strip():
            return None  # a lazy line of the paragraph above to markdown-it-py, an item to the tree
    if "]:" in src and _BARE_LABEL.search(src):
        return None
    try:
        data = src if src.isascii() else src.encode()  # the tree's spans count UTF-8 bytes
        tree = md.tree(src)
    except Exception:  # text the Rust side cannot take (a lone surrogate): markdown-it-py's to parse
        return None
    except BaseException as e:  # a panic in the Rust parser (pyo3's PanicException is a BaseException)
        if type(e).__name__ != "PanicException":
            raise
        return None
    nl = "\n" if data is src else b"\n"
    starts = [0]
    at = data.find(nl)
    while at >= 0:
        starts.append(at + 1)
        at = data.find(nl, at + 1)
    tabs = "\t" in src
    walk = _Walk(data, starts, len(starts) - 1 if src.endswith("\n") else len(starts), tabs)
    try:
        walk.nodes(tree.children, 0)
    except _Unsupported:
        return None
    if tabs and _tabbed(src, walk.out):
        return None
    return walk.out


# A line whose indentation or container markers hold a tab: markdown-it.rs and markdown-it-py
# expand such a tab to different columns inside a container.
_TABBED = re.compile(r"^[ >*+\-0-9.):]*\t", re.MULTILINE)


def _tabbed(src: str, tokens: list[Token]) -> bool:
    """Whether a line with a tab in its indentation sits in a token other than a top-level fence or
    HTML block (whose lines both parsers keep as written)."""
    lines, n, at = set(), 0, 0
    for m in _TABBED.finditer(src):
        n += src.count("\n", at, m.start())
        at = m.start()
        lines.add(n)
    if not lines:
        return False
    for tok in tokens:
        if tok.map is None or tok.level == 0 and tok.type in ("fence", "html_block"):
            continue
        first, end = tok.map
        if any(first <= n < max(end, first + 1) for n in lines):
            return True
    return False


def _text(node) -> str:
    """A node's inline content, stripped as markdown-it-py strips it (``str.strip``: Unicode
    whitespace, a no-break space or a form feed too, where markdown-it.rs strips spaces and tabs)."""
    children = node.children
    if not children:
        return ""
    if len(children) != 1 or children[0].name != "text":
        raise _Unsupported
    return children[0].meta["content"].strip()


# The tokens the markdown walker reads nothing of, left out of the stream. A paragraph's, a
# heading's and a term's closing token stay: the walker steps over open, inline and close.
SKIPPED = frozenset(
    {
        "blockquote_close",
        "dl_close",
        "dd_close",
        "thead_open",
        "tbody_open",
        "tbody_close",
        "tr_close",
    }
)


class _Walk:
    """The tree's nodes appended to ``out`` as markdown-it-py's tokens, line maps from byte spans.
    A container's map is only read by the tab check (``_tabbed``), so it is only made for that."""

    def __init__(self, data, starts: list[int], lines: int, tabs: bool):
        self.out: list[Token] = []
        self._data = data
        self._starts = starts
        self._lines = lines  # the document's line count as markdown-it-py counts them
        self._tabs = tabs
        self._quotes = 0  # block quotes open around the node walked
        self._definitions = 0  # definitions open around it

    def line(self, span) -> list[int]:
        s, e = span
        first = bisect.bisect_right(self._starts, s) - 1
        return [first, bisect.bisect_right(self._starts, e - 1) if e > s else first + 1]

    def row(self, n: int) -> str:
        """Line ``n`` of the document, its newline included."""
        data, starts = self._data, self._starts
        row = data[starts[n] : starts[n + 1] if n + 1 < len(starts) else len(data)]
        return row if isinstance(row, str) else row.decode()

    def lazy_lines(self, span: list[int]) -> None:
        """The lines of a paragraph inside a container, and the line after it, where the two parsers
        read lazy lines apart: an empty list item (``-``, ``1.``) is a lazy line to markdown-it.rs (as
        CommonMark has it), the container's end to markdown-it-py; in a quote, a line without ``>``
        that could start a block (a list item numbered from 2, a setext underline, a table) ends the
        quote in markdown-it-py or continues the paragraph past a table, and one indented keeps its
        indentation there (a lazy line of plain text reads the same); in a definition, a ``:`` line
        starts the next definition in markdown-it-py."""
        last = len(self._starts)
        for n in range(span[0] + 1, min(span[1] + 1, last)):
            row = self.row(n)
            if n == span[1]:  # the line after the paragraph: a table's first row without ``>``
                if self._quotes and "|" in row and _QUOTE_MARKS.match(row).group().count(">") < self._quotes:
                    raise _Unsupported
                break
            if _EMPTY_ITEM.fullmatch(row):
                raise _Unsupported
            if (
                self._quotes
                and _QUOTE_MARKS.match(row).group().count(">") < self._quotes
                and (row[:1] in (" ", "\t") or _LAZY_RISK.match(row))
            ):
                raise _Unsupported
            if self._definitions and row.lstrip(" \t").startswith(":"):
                raise _Unsupported

    def underlines(self, span: list[int]) -> None:
        """A setext underline in a definition list or in the lines that run on from it to the next
        blank line: markdown-it-py reads the lines above it as a heading (its heading rule runs
        before the definition list's), markdown-it.rs as the list."""
        for n in range(span[0], len(self._starts)):
            row = self.row(n)
            if _UNDERLINE.fullmatch(row):
                raise _Unsupported
            if n >= span[1] and not row.strip():
                break

    def table_rows(self, span: list[int]) -> None:
        """A table's body line that could start a block (a list item, a quote, a heading, a fence,
        HTML), or that is blank to ``str.strip`` (a no-break space): a row to markdown-it.rs, the
        table's end to markdown-it-py."""
        for n in range(span[0] + 2, min(span[1], len(self._starts))):
            row = self.row(n)
            if _BLOCK_START.match(row) or not row.strip():
                raise _Unsupported

    def html_block(self, node, level: int) -> None:
        content = node.meta["content"]
        span = self.line(node.srcmap)
        if _unclosed_html(content):
            # Unclosed (a comment, <script>, <pre>...): markdown-it-py's runs to its container's last
            # line, blank lines included (and its last line without a newline: the tree's has one).
            if level or self._data[-1:] not in ("\n", b"\n"):
                raise _Unsupported
            span[1] = self._lines
        if (
            node.srcmap[1] == len(self._data)
            and content.endswith("\n")
            and self._data[-1:] not in ("\n", b"\n")
        ):
            content = content[:-1]  # the last line of a file without a final newline
        self.out.append(Token("html_block", span, level, content))

    def fence(self, node, level: int) -> None:
        meta = node.meta
        markup = meta["marker"] * meta["marker_len"]
        span = self.line(node.srcmap)
        last = self._data[self._starts[span[1] - 1] : node.srcmap[1]]
        close = _CLOSE.fullmatch(last if isinstance(last, str) else last.decode())
        if (
            span[1] - span[0] < 2
            or close is None
            or not close.group(2).startswith(markup)
            or (level == 0 and ">" in close.group(1))
        ):
            # Unclosed: markdown-it-py's fence runs to its container's last line, blank lines included
            # (and its last line without a newline: the tree's content has one).
            if level or self._data[-1:] not in ("\n", b"\n"):
                raise _Unsupported
            span[1] = self._lines
        self.out.append(Token("fence", span, level, meta["content"], markup=markup, info=meta["info"]))

    def nodes(self, nodes, level: int) -> None:
        out = self.out
        append = out.append
        line = self.line
        tabs = self._tabs
        if level >= _DEEPEST:
            raise _Unsupported
        for node in nodes:
            name = node.name
            if name == "paragraph" or name == "text":  # text: a tight item's paragraph, hidden in the tree
                span = line(node.srcmap)
                if level and (self._quotes or span[1] - span[0] > 1):
                    self.lazy_lines(span)
                append(Token("paragraph_open", span, level))
                append(
                    Token(
                        "inline",
                        None,
                        level + 1,
                        node.meta["content"].strip() if name == "text" else _text(node),
                    )
                )
                append(_PARAGRAPH_CLOSE)
            elif name == "heading" or name == "lheading":
                span = line(node.srcmap)
                if name == "lheading" and node.meta.get("marker") == "-" and "|" in _text(node):
                    raise _Unsupported  # a one-column table to markdown-it-py
                if level and span[1] - span[0] > 1:
                    self.lazy_lines(span)
                append(Token("heading_open", span, level, tag=_TAGS[node.meta["level"]]))
                append(Token("inline", None, level + 1, _text(node)))
                append(_HEADING_CLOSE)
            elif name == "list_item":
                append(Token("list_item_open", line(node.srcmap) if tabs else None, level))
                self.nodes(node.children, level + 1)
                append(Token("list_item_close", None, level))
            elif name == "bullet_list" or name == "ordered_list":
                meta = node.meta
                attrs = {"start": meta["start"]} if name == "ordered_list" else None
                append(Token(f"{name}_open", None, level, markup=meta["marker"], attrs=attrs))
                self.nodes(node.children, level + 1)
                append(Token(f"{name}_close", None, level))
            elif name == "fence":
                self.fence(node, level)
            elif name == "code_block" or name == "front_matter":
                if name == "front_matter" and self._data[:3] not in ("---", b"---"):
                    raise _Unsupported  # markdown-it-py's front matter opens at the first column
                append(Token(name, line(node.srcmap), level, node.meta["content"]))
            elif name == "html_block":
                self.html_block(node, level)
            elif name == "blockquote" or name == "definition_description":
                quote = name == "blockquote"
                append(
                    Token(
                        "blockquote_open" if quote else "dd_open", line(node.srcmap) if tabs else None, level
                    )
                )
                self._quotes += quote
                self._definitions += not quote
                self.nodes(node.children, level + 1)
                self._quotes -= quote
                self._definitions -= not quote
            elif name == "hr":
                append(Token("hr", line(node.srcmap) if tabs else None, level))
            elif name == "table":
                self.table(node, level)
            elif name == "definition_list":
                self.underlines(line(node.srcmap))
                append(Token("dl_open", line(node.srcmap) if tabs else None, level))
                for part in node.children:
                    if part.name == "definition_term":
                        first = line(part.srcmap)[0]
                        append(Token("dt_open", [first, first], level + 1))  # as markdown-it-py maps a term
                        append(Token("inline", None, level + 2, _text(part)))
                        append(_DT_CLOSE)
                    elif part.name == "definition_description":
                        self.nodes((part,), level + 1)
                    else:
                        raise _Unsupported
            elif (
                name == "definition"
            ):  # a link reference definition: markdown-it-py keeps it out of the stream
                continue
            else:
                raise _Unsupported

    def table(self, node, level: int) -> None:
        append = self.out.append
        span = self.line(node.srcmap)
        self.table_rows(span)
        append(Token("table_open", span, level))
        for part in node.children:
            if part.name not in ("thead", "tbody"):
                raise _Unsupported
            head = part.name == "thead"
            cell_open, cell_close = ("th_open", "th_close") if head else ("td_open", "td_close")
            for row in part.children:
                append(Token("tr_open", None, level + 2))
                for c in row.children:
                    append(Token(cell_open, None, level + 3))
                    append(Token("inline", None, level + 4, _text(c)))
                    append(Token(cell_close, None, level + 3))
            if head:
                append(Token("thead_close", None, level + 1))
        append(Token("table_close", None, level))


_TAGS = {n: f"h{n}" for n in range(1, 7)}
# markdown-it-py stops nesting at 20 levels of tokens (a list and its item are two) and drops what
# is deeper; markdown-it.rs goes on. A document nested this deep is markdown-it-py's to parse.
_DEEPEST = 18
# Closing tokens the walker steps over, whose fields it never reads: one object each.
_PARAGRAPH_CLOSE = Token("paragraph_close")
_HEADING_CLOSE = Token("heading_close")
_DT_CLOSE = Token("dt_close")
# The HTML blocks CommonMark ends at a string, not a blank line: their opening, their end.
_HTML_ENDS = (
    ("<!--", "-->"),
    ("<![cdata[", "]]>"),
    ("<!", ">"),
    ("<?", "?>"),
    *((f"<{tag}", "</script>|</pre>|</style>|</textarea>") for tag in ("script", "pre", "style", "textarea")),
)


def _unclosed_html(content: str) -> bool:
    """Whether an HTML block that ends at a string (a comment, ``<script>``, ``<pre>``...) lacks it:
    then it ran to the end of its container."""
    head = content[:12].lower()
    for start, ends in _HTML_ENDS:
        if head.startswith(start):
            low = content.lower()
            return all(low.find(end, len(start)) < 0 for end in ends.split("|"))
    return False


# A setext heading's underline.
_UNDERLINE = re.compile(r"[ \t]*(?:=+|-+)[ \t]*\n?")
# A line that starts a list item, a quote, a heading, a fence or HTML.
_BLOCK_START = re.compile(r"[ \t]*(?:(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)|>|#|```|~~~|<)", re.MULTILINE)
# An empty list item (not ``-``: a setext underline there) alone on its line: under a line of text,
# a lazy line of that paragraph to markdown-it-py, where markdown-it.rs may end the paragraph.
_EMPTY_ITEM_LINE = re.compile(r"^[ \t]*(?:[*+]|\d{1,9}[.)])[ \t]*$", re.MULTILINE)
# A link reference's label with nothing after it on its line: the two parsers read on apart.
_BARE_LABEL = re.compile(r"^[ ]{0,3}\[[^\]\n]*\]:[ \t]*$", re.MULTILINE)
# A lazy line (without its quote's markers) that could start a block or end one: a list item, a
# quote, a heading, a fence, HTML, a rule or setext underline, a table's row.
_LAZY_RISK = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)|[>#<|=_*-]|```|~~~|.*\|")
# A line's quote markers (and the spaces around them).
_QUOTE_MARKS = re.compile(r"[ \t>]*")
# A line that is an empty list item and nothing else.
_EMPTY_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]*\n?")
# A closing fence line, after its container's markers.
_CLOSE = re.compile(r"([ >]*)(`{3,}|~{3,})[ ]*")
