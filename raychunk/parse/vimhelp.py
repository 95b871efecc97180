"""Vim help files (``:help`` documents: Vim's and Neovim's ``doc/*.txt``, and every plugin's), read as
the sections Vim shows, without its navigation.

A help file opens with its own tag and a line of description (``*matchit.txt*  Extended "%"
matching``), often a banner (``VIM REFERENCE MANUAL  by ...``) and the page's title, and ends with a
modeline (``vim:tw=78:ts=8:ft=help:norl:``). A line of ``=`` opens a section, whose title is the line
after it; a line of ``-`` a subsection; a line in capitals (``INTRODUCTION  *fugitive-intro*``), or
one ending in `` ~`` at the left margin, is a heading too. A line ending in ``>`` (``>vim``, ``>lua``
in Neovim's) opens an example, its indented lines up to a line starting with ``<`` or at the margin:
a code block. Tags (``*E764*``), which ``:help`` jumps to, are kept as words, without their stars,
beside what they name; links (``|set-option|``) read as the word. Left out: the banner, the modeline,
tables of contents (lines that are a title and a link) and the user manual's chapter links. Spans
point into the file's text.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from pathlib import PurePosixPath

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import BlockStream, clean_text, finish
from raychunk.render import render_table

__all__ = ["looks_like_vim_help", "parse_vim_help", "tags_file_entries"]

_MODELINE = re.compile(r"(?:^|\s)(?:vim?|ex):.*?\b(?:ft|filetype)=help\b")
_FILE_TAG = re.compile(r"\*([^*\s|]+)\*[ \t]*(.*)")
_TAG = re.compile(r"(?<![^\s(\[,])\*([^*\s|\"]+)\*(?=[\s.,)\]]|$)")
_LINK = re.compile(r"\|([^|\s\"*]+)\|")
_TAGS_ONLY = re.compile(r"[ \t]*(?:\*[^*\s|\"]+\*[ \t]*)+")
_SECTION = re.compile(r"={20,}[ \t]*")
_SUBSECTION = re.compile(r"-{20,}[ \t]*")
_BANNER = re.compile(r"[ \t]*N?VIM (?:REFERENCE|USER) MANUAL\b.*")
_TRAILING_TAGS = re.compile(r"(?:[ \t]+\*[^*\s|\"]+\*)+[ \t]*$")
# helpHeadline: capitals (and digits, spaces, ``-._()``), then tags or the line's end
_HEADLINE = re.compile(r"([A-Z][-A-Z0-9 .()_]*[A-Z0-9)])(?:[ \t]+\*[^*\s]+\*)*[ \t]*")
_LABEL = re.compile(r"([A-Z][\w ,'/()-]{0,50}?:?)(?:[ \t]+\*[^*\s|\"]+\*)+[ \t]*")
_EXAMPLE = re.compile(r"(?:^|[ \t])>([a-z]\w*)?[ \t]*$")
_CONTENTS = re.compile(  # ``1. Setting options  |set-option|``; ``|05.1|  The vimrc file``, in columns
    r"[ \t]*(?:\d+(?:\.\d+)*\.?[ \t]+)?[^|\t]*?\S[ \t]+\|[^|\s]+\|[ \t]*"
    r"|(?:\|[^|\s]+\|[ \t]+[^|\t]*[^|\s][ \t]*)+"
)
_CHAPTER_LINK = re.compile(r"(?:Next|Previous) chapter:|Table of contents:|Copyright: see \|")
_ALTERNATIVE = re.compile(r"(\S[^\t]{0,39}?)(?:\t+|  +)or")  # a term, then a column's ``or``
_DEFINITION = re.compile(r"(\S[^\t]{0,39}?)\t+(\S.*)")  # ``:se[t][!]<tab>Show all options ...``
_BOX = re.compile(r"[ \t]*\+-{5,}")
_HEADER_MARK = re.compile(r"[ \t]+~[ \t]*$")
_CELLS = re.compile(r"[ \t]*\t[\t ]*")
_NOT_WORDS = ("For Vim version", "For Nvim", "Nvim")


def looks_like_vim_help(text: str) -> bool:
    """A help file: ``ft=help`` in a modeline among its last lines, or its own tag on its first line
    (``*name.txt*``) and tags or links through it."""
    if _MODELINE.search(text[-600:]):
        return True
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    m = _FILE_TAG.match(first)
    if m is None or not m[1].endswith(".txt"):
        return False
    head = text[:20000]
    return len(_TAG.findall(head)) + len(_LINK.findall(head)) >= 5 and _SECTION.search(head) is not None


_TAGS_LINE = re.compile(r"[^\t\n]+\t[^\t\n]+\t(?:[/?][^\n]*|\d+(?:;\"[^\n]*)?)")  # /pattern[/;"...], a line
_PATTERN_LINE = re.compile(r"[^\t\n]+\t[^\t\n]+\t[/?][^\n]*")


def tags_file_entries(text: str, name: str = "") -> int:
    """The entries of a tags file (Vim's ``doc/tags``, ctags' ``tags``: ``name<TAB>file<TAB>/pattern/``
    lines, each pointing into another file), else 0: its lines are an index, not text. A line number
    in place of the pattern counts only in a file ctags marks (``!_TAG_`` lines) or names ``tags``:
    three columns of data with a number last are a table."""
    head = text[:2000]
    if "\t" not in head:
        return 0
    marked = head.startswith("!_TAG_") or PurePosixPath(name).name.lower() in ("tags", ".tags")
    lines = [ln for ln in text.split("\n", 200_000) if ln.strip() and not ln.startswith("!_TAG_")]
    shape = _TAGS_LINE if marked else _PATTERN_LINE
    fit = sum(1 for ln in lines if shape.fullmatch(ln.rstrip("\r")))
    return len(lines) if len(lines) >= 3 and fit >= 0.95 * len(lines) else 0


def parse_vim_help(text: str, base: Document) -> ParsedDocument:
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    out = BlockStream()
    i, title = _header(lines)
    para: list[int] = []  # the open paragraph's line numbers

    def flush() -> None:
        if para:
            _paragraph(out, text, lines, starts, para)
            para.clear()

    level_after = 0  # a section or subsection rule was the last line: the next is its title
    n = len(lines)
    while i < n:
        line = lines[i].rstrip("\r")
        stripped = line.strip()
        if not stripped:
            flush()
            i += 1
            continue
        if _MODELINE.search(line) or _CHAPTER_LINK.match(stripped) or _BANNER.fullmatch(line):
            flush()
            i += 1
            continue
        if _SECTION.fullmatch(line) or _SUBSECTION.fullmatch(line):
            flush()
            level_after = 1 if line[0] == "=" else 2
            i += 1
            continue
        if level_after and not _TAGS_ONLY.fullmatch(line):
            heading = _heading_text(line)
            level, level_after = level_after, 0
            if heading and len(heading) <= 100 and not heading.endswith((".", ":", ",")):
                _heading(out, line, heading, level, starts[i])
                i += 1
                continue
        level_after = 0
        if (
            not line[:1].isspace()
            and not para
            and (heading := _headline(line))
            and not _table_header(lines, i)
        ):
            flush()
            _heading(out, line, heading, 3 if line.endswith("~") else 2, starts[i])
            i += 1
            continue
        para.append(i)
        if _EXAMPLE.search(line):
            flush()
            i = _example(out, text, lines, starts, i + 1, _EXAMPLE.search(line)[1])
            continue
        i += 1
    flush()
    return finish(base, text, out.blocks, title=title)


def _header(lines: list[str]) -> tuple[int, str]:
    """Where the body starts, and the title: the page's title line under the banner (``Options``,
    ``Set your settings``), else the first line's description (``matchit: Extended "%" matching``)."""
    m = _FILE_TAG.match(lines[0].lstrip("\ufeff")) if lines else None
    if m is None:
        return 0, ""
    name = m[1].removesuffix(".txt")
    described = m[2].strip()
    title = f"{name}: {described}" if described and not described.startswith(_NOT_WORDS) else name
    i = 1
    for j in range(1, min(len(lines), 12)):
        if _BANNER.fullmatch(lines[j].rstrip("\r")):
            i = j + 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            line = lines[i].rstrip("\r") if i < len(lines) else ""
            if line and not _SECTION.fullmatch(line) and not _TAGS_ONLY.fullmatch(line):
                page = _heading_text(line)
                tagged = _TRAILING_TAGS.search(line) is not None
                if page and len(page) <= 80 and (tagged or not page.endswith(".")):
                    return i + 1, page.removesuffix(".")
            return i, title
    return 1, title


def _heading_text(line: str) -> str:
    """A heading line's words: trailing tags dropped, a leading tag (``*05.1*``) kept as its name."""
    line = _TRAILING_TAGS.sub("", line.rstrip("\r"))
    return " ".join(_render(line).split())


def _headline(line: str) -> str:
    """A heading at the margin: a line in capitals, a header ending in `` ~`` or a short label
    with tags; its words, else ''."""
    line = line.rstrip("\r")
    if line.endswith(" ~") and not line.startswith("<") and len(line) <= 80 and "\t\t" not in line.strip():
        return _heading_text(line)
    if (m := _HEADLINE.fullmatch(line)) and sum(c.isalpha() for c in m[1]) >= 4 and "CTRL-" not in m[1]:
        return _heading_text(line)
    if (m := _LABEL.fullmatch(line)) and len(m[1].split()) <= 6 and not m[1].endswith("."):
        return m[1].rstrip(":").strip()
    return ""


def _table_header(lines: list[str], i: int) -> bool:
    """Whether line ``i``, a header ending in `` ~`` whose words a tab parts, heads the table its
    paragraph is (``Name<tab>Value<tab>Meaning ~`` over rows of as many cells), not a section."""
    line = lines[i].rstrip("\r")
    if not line.endswith("~") or "\t" not in _TRAILING_TAGS.sub("", line).strip():
        return False
    j = i
    while j < len(lines) and lines[j].strip():
        j += 1
    return _table([x.rstrip("\r") for x in lines[i:j]]) is not None


def _heading(out: BlockStream, line: str, heading: str, level: int, start: int) -> None:
    words = _TRAILING_TAGS.sub("", line.rstrip("\r")).rstrip(" ~")
    lead = len(words) - len(words.lstrip())
    out.heading(heading, level, start + lead, start + len(words))


def _render(s: str) -> str:
    s = _LINK.sub(r"\1", _TAG.sub(r"\1", s))
    return _HEADER_MARK.sub("", s)  # a header's mark


def _paragraph(out: BlockStream, text: str, lines: list[str], starts: list[int], para: list[int]) -> None:
    from raychunk.parse.text import add_body

    body = [lines[j].rstrip("\r") for j in para]
    if _is_contents(body):
        return  # a table of contents: each line a title and the link to it
    s = starts[para[0]] + len(body[0]) - len(body[0].lstrip())
    last = body[-1]
    if (m := _EXAMPLE.search(last)) is not None:
        last = last[: m.start()]
    e = starts[para[-1]] + len(last.rstrip())
    if e <= s:
        return
    rendered = [_render(b).strip() for b in body[:-1]] + [_render(last).strip()]
    k = next((k for k, b in enumerate(body) if not _TAGS_ONLY.fullmatch(b)), len(body))
    # alternatives first, each set apart by ``or`` (``["x]<Del>	or`` over ``["x]x	Delete ...``)
    terms, tags, j = [], [], k
    while j + 1 < len(body) and not body[j + 1][:1].isspace():
        if (alt := _ALTERNATIVE.fullmatch(_TAG.sub("", body[j]).rstrip())) is None:
            break
        terms.append(_render(alt[1]).strip())
        tags += _TAG.findall(body[j])
        j += 1
    d = _DEFINITION.fullmatch(rendered[j]) if j < len(body) and not body[j][:1].isspace() else None
    if d and not d[1].endswith((".", ":")):  # a term, its description after a tab: as a man page's
        joined = " or ".join([*terms, d[1].rstrip()]) + f": {d[2]}"
        rendered[k : j + 1] = [*tags, joined]  # the tags first, as a tags line above a term reads
    if _BOX.match(body[0]) and sum(1 for b in body if _BOX.match(b)) >= 2:  # a drawing: boxes of - and |
        s0 = starts[para[0]]
        drawing = textwrap.dedent(clean_text(text[s0:e]).expandtabs(8)).strip("\n")
        out.add("code", drawing, s, e)
        return
    if (table := _table(body)) is not None:
        rows, header_rows = table
        out.add("table", render_table(rows, header_rows), s, e, rows=rows, header_rows=header_rows)
        return
    before = len(out.blocks)
    add_body(out, text, s, e, cleaned=clean_text(" ".join(" ".join(rendered).split())))
    for k in range(before, len(out.blocks)):  # list items are cut from the source: render their words
        block = out.blocks[k]
        if block.kind == "list_item":
            out.blocks[k] = dataclasses.replace(block, text=" ".join(_render(block.text).split()))


def _is_contents(body: list[str]) -> bool:
    """Lines of titles and links (``1. Setting options  |set-option|``, ``|05.1|  The vimrc file``),
    with the titles' sub-entries, headers and tags among them."""
    links = sum(1 for b in body if _CONTENTS.fullmatch(b))
    others = [b for b in body if not _CONTENTS.fullmatch(b) and not _TAGS_ONLY.fullmatch(b)]
    return (
        links >= 2
        and links >= 2 * len(others)
        and all(len(b.strip()) <= 60 and not b.rstrip().endswith((".", ":")) for b in others)
    )


def _table(body: list[str]) -> tuple[tuple[tuple[str, ...], ...], int] | None:
    """Columns set apart by tabs: three rows or more, four in five with the same number of cells,
    short first cells (a key, a command), a header row ending in `` ~``; a line of one cell indented
    under a row goes on its last cell. None where the lines are not such a table."""
    rows: list[list[str]] = []
    first_indent = None
    for line in body:
        if _TAGS_ONLY.fullmatch(line):
            continue
        indent = len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())
        cells = [c for c in _CELLS.split(_HEADER_MARK.sub("", line.strip())) if c]
        if first_indent is None:
            first_indent = indent
        elif len(cells) == 1 and rows and indent > first_indent:
            rows[-1][-1] = f"{rows[-1][-1]} {cells[0]}"
            continue
        rows.append(cells)
    if len(rows) < 3:
        return None
    widths = [len(r) for r in rows]
    width = max(set(widths), key=widths.count)
    if width < 2 or widths.count(width) * 5 < len(rows) * 4:
        return None
    firsts = sorted(len(r[0]) for r in rows)
    if firsts[len(firsts) // 2] > 25:
        return None
    rows = [
        r[: width - 1] + [" ".join(r[width - 1 :])] if len(r) > width else r + [""] * (width - len(r))
        for r in rows
    ]
    cells = tuple(tuple(" ".join(_render(c).split()) for c in r) for r in rows)
    header = next(b for b in body if not _TAGS_ONLY.fullmatch(b))
    return cells, int(_HEADER_MARK.search(header) is not None)


def _example(
    out: BlockStream, text: str, lines: list[str], starts: list[int], i: int, language: str | None
) -> int:
    """The example from line ``i`` to its end (a line starting with ``<``, or a line at the margin);
    returns the line to go on from."""
    first, n = i, len(lines)
    while i < n:
        line = lines[i].rstrip("\r")
        if line.startswith("<") or (line and not line[0].isspace()):
            break
        i += 1
    last = i - 1
    while last >= first and not lines[last].strip():
        last -= 1
    if last >= first:
        s, e = starts[first], starts[last] + len(lines[last].rstrip("\r").rstrip())
        s += len(lines[first]) - len(lines[first].lstrip())
        body = textwrap.dedent(clean_text(text[starts[first] : e]).expandtabs(8)).strip("\n")
        out.add("code", body, s, e, language=language or "vim")
    if i < n and lines[i].startswith("<"):
        rest = lines[i][1:]
        if rest.strip():  # ``<	64 ~``: what follows the mark is text
            lines[i] = " " + rest
        else:
            i += 1
    return i
