"""markdown-it-pyrs (markdown-it.rs, compiled) as the block parse of ``raychunk.parse.markdown``.

markdown-it.rs gives a tree whose nodes carry byte spans, not markdown-it-py's token stream with
line maps; ``block_tokens`` turns the tree into that stream, the fields the markdown walker reads
(type, map, level, content, tag, markup, info, attrs) as markdown-it-py sets them, so one walker
builds the blocks from either. Only block rules run: a paragraph's text is its raw inline content,
as markdown-it-py's with its inline rule off.

A document the tree cannot stand for exactly returns None, and the walker parses it with
markdown-it-py: a node this module does not know, a tab in the indentation of a line inside a
container (the two parsers expand it to different columns), a fence left open inside a container
(markdown-it-py's runs over the container's trailing blank lines). ``tests/test_parse_markdown_rs.py``
holds both streams equal on the corpus, on generated files and on the edge cases.
"""

from __future__ import annotations

import bisect
import re

__all__ = ["available", "block_tokens"]

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
    """Whether markdown-it-pyrs imports (the ``fast`` extra); the walker falls back without it."""
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
    src = _NEWLINES.sub("\n", text).replace("\0", "\ufffd")  # as markdown-it-py normalizes
    data = src if src.isascii() else src.encode()  # the tree's spans count UTF-8 bytes
    nl = "\n" if data is src else b"\n"
    starts = [0]
    at = data.find(nl)
    while at >= 0:
        starts.append(at + 1)
        at = data.find(nl, at + 1)
    walk = _Walk(data, starts, len(starts) - 1 if src.endswith("\n") else len(starts))
    try:
        walk.nodes(md.tree(src).children, 0)
    except _Unsupported:
        return None
    if "\t" in src and _tabbed(src, walk.out):
        return None
    return walk.out


# A line whose indentation or container markers hold a tab: markdown-it.rs and markdown-it-py
# expand such a tab to different columns inside a container.
_TABBED = re.compile(r"^[ >*+\-0-9.)]*\t", re.MULTILINE)


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
    children = node.children
    if not children:
        return ""
    if len(children) != 1 or children[0].name != "text":
        raise _Unsupported
    return children[0].meta["content"]


class _Walk:
    """The tree's nodes appended to ``out`` as markdown-it-py's tokens, line maps from byte spans."""

    def __init__(self, data, starts: list[int], lines: int):
        self.out: list[Token] = []
        self._data = data
        self._starts = starts
        self._lines = lines  # the document's line count as markdown-it-py counts them

    def line(self, span) -> list[int]:
        s, e = span
        first = bisect.bisect_right(self._starts, s) - 1
        return [first, bisect.bisect_right(self._starts, e - 1) if e > s else first + 1]

    def inline(self, name: str, node, level: int, tag: str = "", mapped: bool = True) -> None:
        out = self.out
        out.append(Token(f"{name}_open", self.line(node.srcmap) if mapped else None, level, tag=tag))
        out.append(Token("inline", None, level + 1, _text(node)))
        out.append(Token(f"{name}_close", None, level, tag=tag))

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
            # Unclosed: markdown-it-py's fence runs to its container's last line, blank lines included.
            if level:
                raise _Unsupported
            span[1] = self._lines
        self.out.append(Token("fence", span, level, meta["content"], markup=markup, info=meta["info"]))

    def nodes(self, nodes, level: int) -> None:
        out = self.out
        for node in nodes:
            name = node.name
            if name == "paragraph":
                self.inline("paragraph", node, level)
            elif name == "text":  # a tight list item's (or definition's) paragraph, hidden in the tree
                out.append(Token("paragraph_open", self.line(node.srcmap), level))
                out.append(Token("inline", None, level + 1, node.meta["content"]))
                out.append(Token("paragraph_close", None, level))
            elif name in ("heading", "lheading"):
                self.inline("heading", node, level, tag=f"h{node.meta['level']}")
            elif name in ("bullet_list", "ordered_list"):
                meta = node.meta
                attrs = {"start": meta["start"]} if name == "ordered_list" else None
                out.append(
                    Token(f"{name}_open", self.line(node.srcmap), level, markup=meta["marker"], attrs=attrs)
                )
                self.nodes(node.children, level + 1)
                out.append(Token(f"{name}_close", None, level))
            elif name in _CONTAINERS:
                kind = _CONTAINERS[name]
                out.append(Token(f"{kind}_open", self.line(node.srcmap), level))
                self.nodes(node.children, level + 1)
                out.append(Token(f"{kind}_close", None, level))
            elif name == "fence":
                self.fence(node, level)
            elif name in ("code_block", "html_block", "front_matter"):
                content = node.meta["content"]
                if (
                    name == "html_block"
                    and node.srcmap[1] == len(self._data)
                    and content.endswith("\n")
                    and self._data[-1:] not in ("\n", b"\n")
                ):
                    content = content[:-1]  # the last line of a file without a final newline
                out.append(Token(name, self.line(node.srcmap), level, content))
            elif name == "hr":
                out.append(Token("hr", self.line(node.srcmap), level))
            elif name == "table":
                self.table(node, level)
            elif name == "definition_list":
                out.append(Token("dl_open", self.line(node.srcmap), level))
                for part in node.children:
                    if part.name == "definition_term":
                        self.inline("dt", part, level + 1)
                        first = out[-3].map[0]
                        out[-3].map = [first, first]  # as markdown-it-py's deflist maps a term
                    elif part.name == "definition_description":
                        self.nodes((part,), level + 1)
                    else:
                        raise _Unsupported
                out.append(Token("dl_close", None, level))
            elif (
                name == "definition"
            ):  # a link reference definition: markdown-it-py keeps it out of the stream
                continue
            else:
                raise _Unsupported

    def table(self, node, level: int) -> None:
        out = self.out
        out.append(Token("table_open", self.line(node.srcmap), level))
        for part in node.children:
            if part.name not in ("thead", "tbody"):
                raise _Unsupported
            cell = "th" if part.name == "thead" else "td"
            out.append(Token(f"{part.name}_open", None, level + 1))
            for row in part.children:
                out.append(Token("tr_open", None, level + 2))
                for c in row.children:
                    self.inline(cell, c, level + 3, mapped=False)
                out.append(Token("tr_close", None, level + 2))
            out.append(Token(f"{part.name}_close", None, level + 1))
        out.append(Token("table_close", None, level))


# A closing fence line, after its container's markers.
_CLOSE = re.compile(r"([ >]*)(`{3,}|~{3,})[ ]*")
_CONTAINERS = {"list_item": "list_item", "blockquote": "blockquote", "definition_description": "dd"}
