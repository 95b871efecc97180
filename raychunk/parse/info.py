"""GNU Info manuals (``coreutils.info``, a split manual's ``find.info-1``): makeinfo's nodes read as
the sections they print, without what an Info reader navigates by.

A file is a preamble (which makeinfo wrote it from, the directory entry), then nodes, each opened by
a ``^_`` line and a header line (``File: coreutils.info,  Node: tac invocation,  Next: ...``), then
the tag table. A section's title is underlined by the character of its level (``*`` chapter, ``=``
section, ``-`` subsection, ``.`` subsubsection). A node ends with its menu (``* Menu:`` and the
nodes below it), as do the index nodes, which are nothing but menu. Kept: the headings and the
text under them, its paragraphs and lists read by the plain-text rules, a table's entry (terms over
their indented definition) as ``term: definition``, as a manual page's options read; an example
(``@example``, which makeinfo prints five columns in from the text around it: from the margin, or
from a list item's or a table entry's text) a code block, its lines as printed less that margin;
left out: the preamble, node headers, menus and tables. Spans point into the file's text.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import BlockStream, clean_text, finish, no_blocks
from raychunk.render import trimmed

__all__ = ["looks_like_info", "parse_info"]

_SEPARATOR = re.compile(r"\x1f\r?\n")
_NODE_HEADER = re.compile(r"File: [^,\t\n]+[,\t]\s*Node: ")  # the directory's: "File: dir<TAB>Node: Top"
_OPENS = re.compile(r"\x1f\r?\n(?:File: [^,\t\n]+[,\t]\s*Node: |Indirect:|Tag Table:)")
_UNDERLINE_LEVEL = {"*": 1, "=": 2, "-": 3, ".": 4}
_MENU = re.compile(r"(?m)^\* Menu:")
# a table's term as makeinfo prints it: quoted (``@code``, ``@samp``, ``@option``) or starred (``@strong``)
_TERM = re.compile(r"(?:[‘'`\"“][^\n]{1,80}?[’'\"”]|\*[^*\n]{1,80}\*)(?:[ ,][^\n]{0,40})?")
_MARKER = re.compile(r"(?:\x00\x08\[[^\x00]*\x00\x08\]\s*)+")  # an index node's [index], an image
_EXAMPLE_INDENT = 5  # makeinfo's @example, past the text it is in
_DEEP_LINE = "\n" + " " * 2 * _EXAMPLE_INDENT
# a word of prose: letters, maybe in quotes or brackets, maybe before a punctuation mark
_WORD = re.compile(r"[(\"'‘“]?[A-Za-z][A-Za-z'’-]*[)\"'’”]?[.,;:!?]?")
# a definition's header line (``@deffn``, ``@deftypefun``): `` -- Function: int asn1_parser2tree (...)``;
# its description is indented five, as an example is from the margin
_DEF_LINE = re.compile(r" -- [A-Z][\w -]*: ")


def looks_like_info(text: str) -> bool:
    """Info nodes or an Info manual's tables: ``^_`` lines, each followed by a node header or a table."""
    return "\x1f" in text and _OPENS.search(text) is not None


def parse_info(text: str, base: Document) -> ParsedDocument:
    if not looks_like_info(text):
        from raychunk.parse.text import parse_text  # an .info file of another kind: plain text

        return parse_text(text, dataclasses.replace(base, format="text"))
    out = BlockStream()
    separators = list(_SEPARATOR.finditer(text))
    parts = [(m.end(), n.start() if n else len(text)) for m, n in zip(separators, separators[1:] + [None])]
    parts_elsewhere = []
    for s, e in parts:  # the preamble, before the first separator, describes the file: left out
        line_end = text.find("\n", s, e)
        first = text[s : e if line_end == -1 else line_end]
        if first.startswith("Indirect:"):  # a split manual's first file: its nodes are in the others
            parts_elsewhere = [
                line.split(":")[0] for line in text[line_end + 1 : e].split("\n") if ":" in line
            ]
            continue
        if not _NODE_HEADER.match(first):
            continue  # the tag table, local variables
        menu = _MENU.search(text, line_end, e)
        _node(out, text, line_end + 1, menu.start() if menu else e)
    if not out.blocks:
        if parts_elsewhere:
            reason = f"an Info manual split into files: its text is in {', '.join(parts_elsewhere)}"
        else:
            reason = "only Info navigation (node headers and menus), no text of its own"
        return no_blocks(base, "empty", reason)
    return finish(base, text, out.blocks)


def _node(out: BlockStream, text: str, start: int, end: int) -> None:
    from raychunk.parse.text import add_body, iter_paragraphs, opens_item

    context = 0  # the indent of the text this paragraph goes on from: a list item's or an entry's is 5
    for s, e in iter_paragraphs(text, start, end):
        lines = text[s:e].split("\n", 2)
        if len(lines) >= 2 and (level := _underline(lines[0], lines[1])):
            title_end = s + len(lines[0].rstrip())
            out.heading(clean_text(lines[0]), level, s, title_end)
            if len(lines) == 3:
                for rs, re_ in trimmed(text, s + len(lines[0]) + len(lines[1]) + 2, e):
                    add_body(out, text, rs, re_)
            context = 0
            continue
        line_start = text.rfind("\n", 0, s) + 1
        indent = s - line_start
        if (
            indent >= context + _EXAMPLE_INDENT
            and not opens_item(text[s:e])
            and _definition(text, s, e) is None
            and _example(text, line_start, e)
        ):
            out.add("code", textwrap.dedent(clean_text(text[line_start:e])), line_start, e)
            continue  # its lines less makeinfo's margin, which its span keeps
        if indent < _EXAMPLE_INDENT:
            context = 0
        example = _example_after(text, line_start, e)
        body_end = e if example is None else len(text[s:example].rstrip()) + s
        if (definition := _definition(text, s, body_end)) is not None:
            out.add("paragraph", definition, s, body_end)
            context = _EXAMPLE_INDENT
        elif not _MARKER.fullmatch(text, s, e):
            add_body(out, text, s, body_end)
            if indent < _EXAMPLE_INDENT and (
                opens_item(text[line_start:body_end]) or _DEF_LINE.match(text, line_start)
            ):
                context = _EXAMPLE_INDENT
        if example is not None:
            out.add("code", textwrap.dedent(clean_text(text[example:e])), example, e)


def _example(text: str, s: int, e: int) -> bool:
    """Whether the lines of ``text[s:e]`` are an example's, not a quotation's filled prose."""
    lines = [x.split() for x in text[s:e].split("\n") if x.strip()]
    return not (len(lines) >= 2 and sum(map(_filled, lines)) * 2 >= len(lines))


def _filled(words: list[str]) -> bool:
    """A line of filled prose (a quotation's, indented as an example is): eight words or more, four
    in five of them words of letters."""
    return len(words) >= 8 and 5 * sum(_WORD.fullmatch(w) is not None for w in words) >= 4 * len(words)


def _example_after(text: str, s: int, e: int) -> int | None:
    """Where an example starts that follows a list item's or a table entry's text with no blank line
    between (``--debug`` and what it prints, five columns in from the entry's text): the start of its
    first line, every line from which on is as far in; None when there is none."""
    if text.find(_DEEP_LINE, s, e) == -1:
        return None  # past a text's indent (five at least, under its first line) by five: ten columns
    lines = text[s:e].split("\n")
    if len(lines) < 3:
        return None
    indents = [len(x) - len(x.lstrip()) for x in lines]
    # the text's indent: a list item's or a table entry's, past its bullet or under its terms
    body = next((n for n in indents[1:] if n != indents[0]), indents[0])
    at = next((i for i in range(2, len(lines)) if indents[i] >= body + _EXAMPLE_INDENT), None)
    if at is None or body < indents[0] or any(n < body + _EXAMPLE_INDENT for n in indents[at:]):
        return None
    end = s + sum(len(x) + 1 for x in lines[:at]) - 1
    return end + 1 if _example(text, end + 1, e) else None


def _definition(text: str, s: int, e: int) -> str | None:
    """A table entry (``@table``) as ``term: definition``: one to four term lines, each quoted as
    makeinfo prints a term (``‘-a’``, ``‘--text’``, ``‘-D ACTION’``), at the paragraph's indent over
    its definition, indented past them; None for any other paragraph (an example's lines)."""
    from raychunk.parse.text import opens_item

    line_start = text.rfind("\n", 0, s) + 1
    if text[line_start:s].strip():
        return None
    lines = text[line_start:e].split("\n")
    indents = [len(x) - len(x.lstrip()) for x in lines]
    k = next((i for i, n in enumerate(indents) if n != indents[0]), len(lines))
    if not (1 <= k <= 4 and k < len(lines)) or opens_item(lines[0]):
        return None
    if any(n < indents[0] + 4 for n in indents[k:]) or not all(_TERM.fullmatch(x.strip()) for x in lines[:k]):
        return None
    terms = ", ".join(clean_text(x.strip()) for x in lines[:k])
    body = clean_text("\n".join(x.strip() for x in lines[k:]))
    return f"{terms}{'' if terms.endswith(':') else ':'} {body}"


def _underline(title: str, line: str) -> int:
    """The level ``line`` underlines ``title`` at (its characters all one of ``* = - .``, about the
    title's width), else 0."""
    mark = line.rstrip()
    if not mark or not title.strip() or mark[0] not in _UNDERLINE_LEVEL or mark.strip(mark[0]):
        return 0
    if abs(len(mark) - len(title.rstrip())) > 2:
        return 0
    return _UNDERLINE_LEVEL[mark[0]]
