"""Markdown through a real CommonMark parser, with pipe tables and front matter: markdown-it.rs
(``markdown_rs``) where it is installed and the document allows, else markdown-it-py, the same
block parse either way.

Spans come from markdown-it's line maps, so a ``#`` line inside a code fence is code, never a
heading, and every block points at its own lines of the decoded file.

List items carry their marker as a reader sees it: a bullet is ``-``, an ordered item its number
counted from the list's start with the delimiter written (``7.``, ``2)``); a task box stays in the
item's text (``[x] done``). A definition list (``Term`` then ``:   definition``, as MkDocs'
def_list and pandoc write it) becomes ``Term: definition``, one block. Inline HTML (in paragraphs,
headings, items and table cells) is read as text with its structure: a ``<br>`` a line break (in a
cell ``; ``), ``<details>`` its summary and body, a table inside a cell its rows; code spans and
autolinks stay as written. An HTML block is parsed as HTML into blocks of its own (a ``<table>``
gives a table).

A file with no markdown heading whose top-level paragraphs hold two or more wiki heading lines
(``== Title ==``, ``= = Title = =``: a WikiText dump saved as .md) gets those lines as headings.
"""

from __future__ import annotations

import functools
import gc
import logging
import re
import types

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import (
    BlockStream,
    bold_label,
    cell_text,
    clean_text,
    finish,
    line_offsets,
    wiki_heading,
)
from raychunk.parse.compressed import inner_name
from raychunk.parse.html import html_blocks, html_lines
from raychunk.parse.markdown_rs import block_tokens
from raychunk.render import render_table, squash

__all__ = ["parse_markdown"]

_MD = None


def _parser():
    global _MD
    if _MD is None:
        try:
            from markdown_it import MarkdownIt
            from mdit_py_plugins.deflist import deflist_plugin
            from mdit_py_plugins.front_matter import front_matter_plugin
        except ImportError as e:
            raise ImportError(
                "markdown needs markdown-it-py: pip install markdown-it-py mdit-py-plugins"
            ) from e
        md = MarkdownIt("commonmark").enable("table").use(front_matter_plugin).use(deflist_plugin)
        # Block structure only: blocks are built from each inline token's raw ``content`` and the
        # line maps, so the inline parse (links, emphasis, entities: most of the time) and the
        # joining of its text tokens are never used.
        md.core.ruler.disable(["inline", "text_join"])
        _lean_block_rules(md)
        _MD = md
    return _MD


def _lean_block_rules(md) -> None:
    """This parser's block rules run as copies of themselves that skip two costs of the library's
    pure-Python block parse, output unchanged: the debug log call on entering each rule at each line
    (the arguments are formatted for nothing: the log is off), and the character loop that splits a
    table line without a backslash at its pipes (``str.split`` gives the same cells). Only this
    parser's rules change; a rule whose module lacks those names is left as it is."""
    for rule in list(getattr(md.block.ruler, "__rules__", ())):
        fn = rule.fn
        names = getattr(fn, "__globals__", {})
        changes = {}
        if isinstance(names.get("LOGGER"), logging.Logger):
            changes["LOGGER"] = _Silent(names["LOGGER"])
        if callable(split := names.get("escapedSplit")):
            changes["escapedSplit"] = functools.partial(_split_cells, split)
        if changes:
            lean = types.FunctionType(
                fn.__code__, {**names, **changes}, fn.__name__, fn.__defaults__, fn.__closure__
            )
            lean.__kwdefaults__ = fn.__kwdefaults__
            md.block.ruler.at(rule.name, lean, {"alt": list(rule.alt)})


class _Silent:
    """A logger whose debug calls do nothing (anything else goes to the logger)."""

    def __init__(self, logger: logging.Logger):
        self._logger = logger

    # A C-level call that takes any arguments and does nothing with them (str.format ignores
    # arguments its template does not name).
    debug = "".format

    def __getattr__(self, name: str):
        return getattr(self._logger, name)


def _split_cells(split, line: str) -> list[str]:
    """markdown-it's ``escapedSplit``: the same cells, at C speed where no pipe can be escaped."""
    return line.split("|") if "\\" not in line else split(line)


# Container markers (``>``, a bullet) at the start of a line past this depth are dropped before the
# parse: markdown-it stops at 20 levels of nesting (a list is two: list and item) and drops what is
# deeper, text and all.
MAX_DEPTH = 8
_MARK = r"[ \t]*(?:>|(?:[-*+]|\d{1,9}[.)])(?=[ \t]))"
_DEEP = re.compile(rf"^((?:{_MARK}){{{MAX_DEPTH}}})(?:{_MARK})+", re.M)


def parse_markdown(text: str, base: Document) -> ParsedDocument:
    """Pauses the cycle collector while one document is parsed: the parse makes tens of thousands of
    small acyclic objects (tokens, spans, blocks) that reference counting frees, and each 700 of them
    would start a collection that walks the process's whole heap (7-10% of a corpus page's parse).
    Collection resumes as it was."""
    if not gc.isenabled():
        return _parse_markdown(text, base)
    gc.disable()
    try:
        return _parse_markdown(text, base)
    finally:
        gc.enable()


def _parse_markdown(text: str, base: Document, depth: int = 0) -> ParsedDocument:
    # Spans come from the line maps and from finding each block's content in ``text``: a line that
    # lost markers keeps its number and its content, so they still point into ``text``.
    source = _DEEP.sub(r"\1", text)
    tokens = block_tokens(source)  # markdown-it.rs' tree as markdown-it-py's tokens, where it can
    if tokens is None:
        tokens = _parser().parse(source)
    off = line_offsets(text)
    off.append(len(text))
    out = BlockStream()
    metadata: dict[str, str] = {}
    list_depth = -1
    lists: list[list] = []  # open lists, innermost last: [next number or None for bullets, delimiter]
    items: list[dict] = []  # open list items, innermost last: their own paragraphs so far
    table: dict | None = None
    cell: list[str] | None = None
    term: tuple[str, int, int] | None = None  # a definition term waiting for its definition
    definition = False  # the next paragraph is the first of a definition

    def line_span(l0: int, l1: int) -> tuple[int, int]:
        start, end = off[min(l0, len(off) - 1)], off[min(l1, len(off) - 1)]
        while end > start and text[end - 1] in "\r\n":
            end -= 1
        return start, end

    def content_span(l0: int, l1: int, content: str) -> tuple[int, int]:
        """Locate ``content`` (container markers stripped) inside its source lines."""
        lines = content.split("\n")
        lo, hi = line_span(l0, l1)
        first, last = lines[0].strip(), lines[-1].strip()
        s = text.find(first, lo, hi) if first else -1
        start = s if s >= 0 else lo
        e = text.rfind(last, start, hi) if last else -1
        end = e + len(last) if e >= 0 else hi
        return start, max(start, end)

    def add_term() -> None:
        nonlocal term
        if term is not None:
            out.add("paragraph", *term)
            term = None

    def flush_item():
        item = items[-1]
        if item["parts"]:
            out.add(
                "list_item",
                "\n".join(item["parts"]),
                item["start"],
                item["end"],
                level=list_depth,
                marker=item["marker"],
            )
            item["parts"], item["start"], item["marker"] = [], None, ""

    wiki = _has_wiki_headings(tokens)
    mdx = inner_name(base.source).lower().endswith(".mdx")

    def add_wiki_paragraph(l0: int, content: str) -> None:
        """A top-level paragraph split at its wiki heading lines (one content line per source line)."""
        lines = content.split("\n")
        run = 0  # first line of the pending body run
        for k, line in enumerate(lines + [None]):
            found = wiki_heading(line) if line is not None else None
            if found is None and line is not None:
                continue
            if run < k:
                body = "\n".join(lines[run:k])
                out.add("paragraph", clean_text(body), *content_span(l0 + run, l0 + k, body))
            if found is not None:
                level, ts, te = found
                title = line[ts:te]
                out.heading(clean_text(title), level, *content_span(l0 + k, l0 + k + 1, title))
            run = k + 1

    i = 0
    while i < len(tokens):
        tok = tokens[i]
        kind = tok.type
        if term is not None and kind not in ("dt_close", "dd_open", "paragraph_open"):
            add_term()
        if kind == "front_matter":
            metadata = _front_matter(tok.content)
        elif kind == "heading_open":
            inline = tokens[i + 1]
            start, end = content_span(tok.map[0], tok.map[1], inline.content)
            attributes = _ATTRIBUTES.search(text, start, end)
            if attributes and attributes.end() == end and attributes.start() > start:
                end = attributes.start()  # the title without its attribute list, spans included
            title = text[start:end] if attributes else inline.content
            out.heading(clean_text(_inline_text(title)), int(tok.tag[1]), start, end)
            i += 2
        elif kind in ("bullet_list_open", "ordered_list_open"):
            if items:
                flush_item()
            list_depth += 1
            start_at = _start_number(tok) if kind == "ordered_list_open" else None
            lists.append([start_at, tok.markup or "."])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
            if lists:
                lists.pop()
        elif kind == "list_item_open":
            marker = "-"
            if lists and lists[-1][0] is not None:
                marker = f"{lists[-1][0]}{lists[-1][1]}"
                lists[-1][0] += 1
            items.append({"parts": [], "start": None, "end": None, "level": tok.level, "marker": marker})
        elif kind == "list_item_close":
            flush_item()
            items.pop()
        elif kind == "dt_open":
            inline = tokens[i + 1]
            start, end = content_span(tok.map[0], tok.map[0] + 1, inline.content)
            term = (clean_text(_inline_text(inline.content)), start, end)
            i += 2
        elif kind == "dd_open":
            definition = True
        elif kind == "paragraph_open":
            inline = tokens[i + 1]
            start, end = content_span(tok.map[0], tok.map[1], inline.content)
            body = clean_text(_inline_text(inline.content))
            if term is not None and definition:
                words, start = term[0], term[1]
                body = f"{words}{'' if words.endswith(':') else ':'} {body}"
                term = None
                out.add("paragraph", body, start, end)
            elif wiki and tok.level == 0:
                add_term()
                add_wiki_paragraph(tok.map[0], inline.content)
            elif items and items[-1]["level"] == tok.level - 1:
                item = items[-1]
                item["parts"].append(body)
                item["start"] = start if item["start"] is None else item["start"]
                item["end"] = end
            elif not _MYST_TARGET.fullmatch(body) and not (
                mdx and tok.level == 0 and _ESM.match(inline.content)
            ):
                add_term()
                if items:  # a quote or other container inside the item: the item's text so far comes first
                    flush_item()
                bold = _BOLD_LINE.fullmatch(inline.content) if tok.level == 0 and not items else None
                if bold is not None and bold_label(label := clean_text(_inline_text(bold[2]))):
                    out.bold_heading(label, start + bold.start(2), start + bold.end(2))
                else:
                    out.add("paragraph", body, start, end)
            definition = False
            i += 2
        elif kind in ("fence", "code_block"):
            if items:
                flush_item()
            directive = _DIRECTIVE.fullmatch(tok.info.strip()) if kind == "fence" else None
            if directive is not None and directive.group(1).lower() in _MYST_SKIPPED:
                pass
            elif (
                directive is not None
                and directive.group(1).lower() in _MYST_CONTAINERS
                and depth < MYST_DEPTH
            ):
                _add_directive(out, tok, directive, text, off, base, line_span, depth + 1)
            else:
                start, end = _code_span(tok, text, off, line_span)
                language = (tok.info.split() or [None])[0] if kind == "fence" else None
                content = tok.content
                if directive is not None and directive.group(1).lower() in _MYST_CODE:
                    language = (directive.group(2).split() or [None])[0]
                    start, content = _after_options(text, start, end)
                out.add("code", clean_text(content.rstrip("\n")), start, end, language=language)
        elif kind == "html_block":
            _add_html_block(out, tok, text, off, line_span, flush_item if items else None)
        elif kind == "table_open":
            if items:
                flush_item()
            table = {"rows": [], "header_rows": 0, "map": tok.map}
        elif kind == "tr_open" and table is not None:
            table["rows"].append([])
        elif kind in ("th_open", "td_open") and table is not None:
            cell = []
        elif kind == "inline" and cell is not None:
            cell.append(clean_text(_cell_text(tok.content)))
        elif kind in ("th_close", "td_close") and table is not None and cell is not None:
            table["rows"][-1].append(squash(" ".join(cell)))
            cell = None
        elif kind == "thead_close" and table is not None:
            table["header_rows"] = len(table["rows"])
        elif kind == "table_close" and table is not None:
            rows = tuple(tuple(r) for r in table["rows"])
            start, end = line_span(*table["map"])
            out.add(
                "table",
                render_table(rows, table["header_rows"]),
                start,
                end,
                rows=rows,
                header_rows=table["header_rows"],
            )
            table = None
        i += 1
    add_term()

    meta = tuple(sorted(metadata.items()))
    changes = {"metadata": meta}
    if metadata.get("title"):
        changes["title"] = metadata["title"][:200]
    return finish(base, text, out.blocks, **changes)


# A heading's attribute list (``Install { #install }``, ``Usage {: .x }``: Python-Markdown's
# attr_list, used by MkDocs sites) names an anchor, not a topic.
_ATTRIBUTES = re.compile(r"[ \t]*\{:?[ \t]*[#.][^{}\n]*\}[ \t]*$", re.MULTILINE)


# MyST (Jupyter Book, Sphinx's myst-parser): a fence whose info is ``{name} argument`` is a
# directive. Admonitions, tabs, cards and the like hold Markdown, read as the document's own blocks
# (their argument, a title, first); code directives hold code in the argument's language; a table of
# contents is navigation. Their ``:option: value`` lines are settings, not text. Any other
# directive stays a code block as written. A ``(label)=`` line is a cross-reference target.
_DIRECTIVE = re.compile(r"\{([A-Za-z][\w:.-]*)\}[ \t]*(.*)")
_MYST_CONTAINERS = frozenset(
    "admonition attention caution danger error hint important note seealso tip warning todo "  # noqa: SIM905
    "versionadded versionchanged deprecated dropdown tab-set tab-item tabbed card grid grid-item "
    "grid-item-card div container sidebar topic margin epigraph pull-quote highlights figure table "
    "glossary rubric".split()
)
_MYST_UNTITLED = frozenset({"figure", "grid", "grid-item", "tab-set", "div", "container"})  # paths, sizes
_MYST_CODE = frozenset({"code-block", "code", "code-cell", "sourcecode", "ipython"})
_MYST_SKIPPED = frozenset({"toctree", "contents", "tableofcontents", "image", "include", "literalinclude"})
MYST_DEPTH = 8  # directives inside directives read as Markdown this deep; deeper ones stay code
_MYST_OPTION = re.compile(r"[ \t]*:[\w-]+:.*")
_MYST_TARGET = re.compile(r"\([\w.:/-]+\)=")
# A paragraph wholly in bold (``**To create a pool**``): one emphasis, no link or image in it.
_BOLD_LINE = re.compile(r"(\*\*|__)(?=\S)((?:(?!\1)[^\n\[\]<])+?)(?<=\S)\1[ \t]*")
# MDX: a top-level paragraph of ES module statements (``import Tabs from '@theme/Tabs';``, ``export
# const meta = {...}``) is the page's code, not its text.
_ESM = re.compile(
    r"(?:import\s+(?:[\w*{}\s,]+\s+from\s+)?[\'\"]|export\s+(?:const|let|var|default|function|class|async|\{))"
)


def _after_options(text: str, start: int, end: int) -> tuple[int, str]:
    """A directive body's start past its ``:option: value`` lines (and the blank line after them),
    and the body from there."""
    at = start
    while at < end:
        line_end = text.find("\n", at, end)
        line_end = end if line_end < 0 else line_end + 1
        if not _MYST_OPTION.fullmatch(text[at:line_end].rstrip("\r\n")):
            break
        at = line_end
    if at > start:
        while at < end and text[at] in " \t\r\n":
            at += 1
    return at, text[at:end]


def _add_directive(
    out: BlockStream, tok, directive: re.Match, text: str, off: list[int], base, line_span, depth: int
) -> None:
    """A MyST container directive: its title, then its body's Markdown as blocks of this document."""
    name, argument = directive.group(1).lower(), directive.group(2).strip()
    open_start, open_end = line_span(tok.map[0], tok.map[0] + 1)
    if argument and name not in _MYST_UNTITLED:
        at = text.find(argument, open_start, open_end)
        if at >= 0:
            out.add("paragraph", clean_text(argument), at, at + len(argument))
    start, end = _code_span(tok, text, off, line_span)
    if text[start:end].replace("\r\n", "\n").rstrip("\n") != tok.content.rstrip("\n"):
        # indented under a list item or a quote: the source lines are not the body as written
        out.add("code", clean_text(tok.content.rstrip("\n")), start, end, language=tok.info.split()[0])
        return
    start, body = _after_options(text, start, end)
    if not body.strip():
        return
    for b in _parse_markdown(body, base, depth).blocks:
        if b.kind == "heading":
            out.heading(b.text, b.level, start + b.char_start, start + b.char_end)
            continue
        kw = {
            f: getattr(b, f)
            for f in ("level", "language", "rows", "header_rows", "marker", "copies")
            if getattr(b, f)
        }
        out.add(b.kind, b.text, start + b.char_start, start + b.char_end, **kw)


def _has_wiki_headings(tokens) -> bool:
    """No markdown heading, and two or more lines of top-level paragraphs are wiki headings."""
    if any(t.type == "heading_open" for t in tokens):
        return False
    found = 0
    for t, inline in zip(tokens, tokens[1:]):
        if t.type == "paragraph_open" and t.level == 0:
            found += sum(wiki_heading(line) is not None for line in inline.content.split("\n"))
            if found >= 2:
                return True
    return False


def _code_span(tok, text: str, off: list[int], line_span) -> tuple[int, int]:
    l0, l1 = tok.map
    if tok.type == "code_block":
        return line_span(l0, l1)
    # A fence's map includes its opening line and, when present, its closing line.
    last = text[off[l1 - 1] : off[l1]].strip() if l1 - 1 > l0 else ""
    closed = bool(last) and last.startswith(tok.markup[0] * len(tok.markup)) and set(last) <= {tok.markup[0]}
    return line_span(l0 + 1, l1 - 1 if closed else l1)


def _front_matter(content: str) -> dict[str, str]:
    try:
        import yaml

        data = yaml.safe_load(content)
    except Exception:  # malformed front matter is metadata we cannot read, not a failed document
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        str(k): squash(str(v)) for k, v in data.items() if v is not None and not isinstance(v, (dict, list))
    }


def _start_number(tok) -> int:
    try:
        return int((tok.attrs or {}).get("start", 1))
    except (TypeError, ValueError):
        return 1


# Raw HTML as CommonMark reads it inside a paragraph: an open or closing tag, or a comment.
_HTML_TAG = re.compile(
    r"<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*\s*/?>"
    r"|</[A-Za-z][A-Za-z0-9-]*\s*>|<!--.*?-->",
    re.S,
)
# What stays as written: code spans, autolinks (``<https://…>``, ``<a@b.c>``) and backslash escapes.
_LITERAL = re.compile(
    r"(?<!`)(`+)(?!`).+?(?<!`)\1(?!`)|<[A-Za-z][A-Za-z0-9.+-]{1,31}:[^\s<>]*>|<[\w.!#$%&'*+/=?^`{|}~-]+@[\w.-]+>"
    r"|\\[!-/:-@\[-`{-~]",
    re.S,
)
_SLOT = re.compile("\ue000(\\d+)\ue001")


def _inline_lines(content: str, *, breaks: bool = True) -> list[str] | None:
    """The lines of inline content that holds raw HTML, read as HTML (``html_lines``) with its code
    spans, autolinks and escapes as written; None when it holds no raw HTML."""
    if "<" not in content or not _HTML_TAG.search(content):
        return None
    kept: list[str] = []

    def keep(m: re.Match) -> str:
        kept.append(m.group(0))
        return f"\ue000{len(kept) - 1}\ue001"

    masked = (
        _LITERAL.sub(keep, content)
        if ("`" in content or "\\" in content or ":" in content or "@" in content)
        else content
    )
    if not _HTML_TAG.search(masked):
        return None
    lines = html_lines(masked.replace("&", "&amp;"), breaks=breaks)  # markdown's entities stay as written
    return [_SLOT.sub(lambda m: kept[int(m.group(1))], line) for line in lines]


def _inline_text(content: str) -> str:
    """Inline content as text: raw HTML read as HTML (a ``<br>`` a line break), else as written."""
    lines = _inline_lines(content)
    return content if lines is None else "\n".join(lines)


def _cell_text(content: str) -> str:
    """A pipe table cell's text: ``\\|`` is a pipe; raw HTML read as HTML, its blocks one line
    (``cell_text``): a row of a table inside the cell, a ``<details>``' summary read as ``; ``, a
    ``<br>`` (wrapping a line) as a space."""
    if "\\|" in content:
        content = content.replace("\\|", "|")
    lines = _inline_lines(content, breaks=False)
    return content if lines is None else cell_text(lines)


def _add_html_block(out: BlockStream, tok, text: str, off: list[int], line_span, flush_item) -> None:
    """An HTML block's blocks, parsed as HTML, each spanning its own source. Inside a container (a
    list item, a quote), whose markers the block's content lacks, its text is one paragraph over
    its lines."""
    content = tok.content
    at = off[min(tok.map[0], len(off) - 1)]
    if text.startswith(content.rstrip("\r\n"), at):
        blocks = html_blocks(content)
        if blocks and flush_item is not None:
            flush_item()
        for kind, btext, s, e, level, language, rows, header_rows, marker, copies in blocks:
            if kind == "heading":
                if level:
                    out.heading(btext, level, at + s, at + e)
                else:
                    out.bold_heading(btext, at + s, at + e)
                continue
            kw: dict = {"level": level} if level else {}
            if language:
                kw["language"] = language
            if rows:
                kw["rows"], kw["header_rows"] = rows, header_rows
            if copies:
                kw["copies"] = copies
            if marker:
                kw["marker"] = marker
            out.add(kind, btext, at + s, at + e, **kw)
        return
    body = "\n".join(html_lines(content))
    if body and flush_item is not None:
        flush_item()
    if body:
        out.add("paragraph", body, *line_span(tok.map[0], tok.map[1]))
