"""The formats raychunk reads through pandoc: RTF and Org as HTML, read by raychunk's HTML parser
(headings, numbered lists with their numbers, tables with their header rows); reStructuredText
(``parse/rst.py``) and OpenDocument text (``parse/word.py``, as a Word document) use ``convert``.

pandoc runs as a process of its own, in its sandbox (a document reads no other file: an RTF
``\\field`` or an Org ``#+INCLUDE`` pulls nothing into the index), with a time limit of its own, so a
file that sends pandoc's reader into a loop costs 30 s (and 10 s a MB) and a ``failed`` row saying so,
not the document process. As for the other formats read through a converter, ``doc.text`` is the
blocks' texts joined by blank lines, so every block satisfies
``doc.text[b.char_start:b.char_end] == b.text``.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from typing import TYPE_CHECKING

from raychunk.parse._common import (
    ConversionFailed,
    TextAssembler,
    finish,
    no_blocks,
    pandoc_error,
    with_reason,
)
from raychunk.render import LIST_NUMBER, render_table, squash

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["PandocFailed", "convert", "plain_text_instead", "read_html_of", "read_org", "read_rtf"]

_TABLE_WORD = re.compile(r"\\(trowd|pard|row|intbl)(?![A-Za-z])")
_UNICODE_OR_UC = re.compile(r"\\uc(?P<uc>\d+) ?|\\u(?P<u>-?\d+) ?")
_ENDS_IN_WORD = re.compile(r"\\[A-Za-z]+-?\d*$")
_FALLBACK = re.compile(r"\\'[0-9A-Fa-f]{2}|\\[A-Za-z]+-?\d* ?|\\.")
_STYLESHEET = re.compile(r"\{\\stylesheet(?![A-Za-z])")
_STYLE_ENTRY = re.compile(r"\{(?:\\\*)?\\s(?P<n>\d+)(?![0-9])(?P<body>[^{}]*)")
_OUTLINE = re.compile(r"\\outlinelevel(\d)(?![0-9])")
_HEADING_NAME = re.compile(r"(?:^|[\s;}])heading ?(\d)\s*;", re.I)
_PARAGRAPH_STYLE = re.compile(r"\\s(\d+)(?![0-9])")
_BRACE = re.compile(r"\\[{}\\]|[{}]")
_TITLE = re.compile(r"\{\\title(?![A-Za-z]) ?((?:[^{}\\]|\\[^{}])*)\}")
_CODEPAGE = re.compile(r"\\'([0-9A-Fa-f]{2})")
_ORG_TITLE = re.compile(r"^[ \t]*#\+title:[ \t]*(.*?)[ \t]*$", re.I | re.M)
_LISTTEXT = re.compile(r"\{\\listtext(?![A-Za-z])((?:[^{}\\]|\\[^{}])*)\}")
# A private-use character: where a WordPad list label stood, through pandoc and out of every block.
ITEM_MARK = "\ue000"
_PNTEXT = re.compile(r"\{\\pntext(?![A-Za-z])((?:[^{}\\]|\\[^{}])*)\}")
# a label's group, and a control word right before it, which takes a space as its end: pandoc would
# take the mark after it for the word's own end
_WORD_PNTEXT = re.compile(r"(\\[A-Za-z]+-?\d*)?(" + _PNTEXT.pattern + ")")
_NUMBER_LABEL = re.compile(LIST_NUMBER)
_ORG_BLOCK = re.compile(r"[ \t]*#\+(?:begin|end)_\w+", re.I)
_ORG_ITEM = re.compile(r"(?:[ \t]*\d{1,9}(?P<delimiter>[.)])|[ \t]*[-+]|[ \t]+\*)(?:[ \t]+|$)")
_CONTROL = re.compile(r"\\[A-Za-z]+-?\d* ?|\\.")
# Control words and spaces (between a row's \pard and its \intbl): a run reads one way only, so one
# that does not match fails in linear time
_CONTROL_WORDS = re.compile(r"(?:\\[A-Za-z]+-?\d*|\s)*")
# pandoc's own time limit, by the size of its input (a 1 KB Org file that loops its reader costs 30 s,
# not the document's whole limit, limits.doc_timeout_s, which is enforced outside on the process).
_TIMEOUT_S = 30.0
_TIMEOUT_S_PER_MB = 10.0
_HEAP_MB = 1024


class PandocFailed(ConversionFailed):
    """pandoc could not convert the file; the message says where it stopped."""


def convert(
    data: bytes, source: str, target: str = "html", *, extension: str, args: tuple[str, ...] = ()
) -> bytes:
    """``data`` in pandoc's format ``source`` converted to ``target``, by pandoc in its sandbox.
    Raises PandocFailed with where pandoc stopped, ImportError when pandoc is not installed."""
    try:
        import pypandoc

        pandoc = pypandoc.get_pandoc_path()
    except (ImportError, OSError) as e:
        raise ImportError(f"reading .{extension} files needs pandoc: pip install pypandoc-binary") from e
    # no syntax highlighting: the HTML parser reads a code block's language from its class, never its colours
    command = [
        pandoc,
        "--sandbox",
        f"--from={source}",
        f"--to={target}",
        "--wrap=none",
        "--no-highlight",
        *args,
        # its heap capped as pandoc's manual advises for untrusted input: a 10 KB RTF whose numbers were
        # mangled had it take 15 GB
        "+RTS",
        f"-M{_HEAP_MB}m",
        "-RTS",
    ]
    if target in ("docx", "odt", "epub"):
        command += ["--output=-"]
    limit = round(_TIMEOUT_S + _TIMEOUT_S_PER_MB * len(data) / 1e6, 1)
    try:
        done = subprocess.run(command, input=data, capture_output=True, timeout=limit, check=False)
        if done.returncode != 0 and b"RTS options are disabled" in done.stderr:
            # a pandoc built without -rtsopts (another than pypandoc-binary's, found first on PATH)
            # takes no heap limit: run it without one, under the time limit and the document's own
            command = [c for c in command if c not in ("+RTS", f"-M{_HEAP_MB}m", "-RTS")]
            done = subprocess.run(command, input=data, capture_output=True, timeout=limit, check=False)
    except subprocess.TimeoutExpired:
        raise PandocFailed(f"pandoc did not convert this .{extension} file in {limit:g} s") from None
    if done.returncode != 0:
        message = "\n".join(
            line
            for line in done.stderr.decode("utf-8", errors="replace").splitlines()
            if not line.startswith("[WARNING]")
        )
        if "Heap exhausted" in message:
            raise PandocFailed(
                f"pandoc could not convert this .{extension} file within its {_HEAP_MB:,} MB heap limit "
                "(a file built to exhaust the converter, or one too large for it)"
            )
        where = pandoc_error(message) or (f" ({squash(message)[:120]})" if message.strip() else "")
        raise PandocFailed(f"pandoc could not convert this .{extension} file{where}")
    return done.stdout


def read_rtf(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    # RTF is 7-bit text; bytes above it, which some writers leave unescaped, are the ANSI code page's.
    text = data.decode("utf-8") if _utf8(data) else data.decode("cp1252", errors="replace")
    text = heading_styles(unicode_escapes(rows_defined(text)))
    # each WordPad label marked where it stands, so its paragraph is known in pandoc's output
    marked = _WORD_PNTEXT.sub(
        lambda m: (m[1] + " " if m[1] else "") + ITEM_MARK + m[2], text.replace(ITEM_MARK, "")
    )
    html = convert(marked.encode("utf-8"), "rtf", extension="rtf").decode("utf-8", errors="replace")
    title = _rtf_title(text)
    # WordPad's (and Word 95's) lists: each item's label as text (``{\\pntext 1)\\tab}``), which pandoc
    # leaves at the start of a paragraph; and pandoc marks no header row in RTF, where a word
    # processor's table starts with one, as in a Word document
    labels = [_plain(m[1]) for m in _PNTEXT.finditer(text)]
    parsed = read_html_of(html, base, header_rows=1, items=labels, **({"title": title} if title else {}))
    # The labels the writer put before the items (``{\\listtext a)\\tab}``: what Word shows, counted as
    # Word counts): pandoc's HTML keeps neither a ``)`` nor a count that runs on past a nested list.
    labels = [_marker(_plain(m[1])) for m in _LISTTEXT.finditer(text)]
    return _remarked(parsed, labels, lambda marker, label: label or marker)


def _remarked(parsed: ParsedDocument, marks: list[str], mark) -> ParsedDocument:
    """List items' markers mended by what the source says of each (``mark(marker, what) -> marker``),
    item by item, where the HTML holds as many list items as the source."""
    items = [i for i, b in enumerate(parsed.blocks) if b.kind == "list_item"]
    if not items or len(items) != len(marks):
        return parsed
    blocks = list(parsed.blocks)
    for i, what in zip(items, marks):
        marker = mark(blocks[i].marker, what)
        if marker != blocks[i].marker:
            blocks[i] = dataclasses.replace(blocks[i], marker=marker)
    return dataclasses.replace(parsed, blocks=tuple(blocks))


def _marker(label: str) -> str:
    """A list label as a marker: a number as written (``a)``, ``2.``), ``-`` for a bullet glyph,
    '' for another shape (``Step 3:``), which leaves pandoc's marker."""
    if _NUMBER_LABEL.fullmatch(label):
        return label
    return "-" if label and not any(ch.isalnum() for ch in label) else ""


def unicode_escapes(rtf: str) -> str:
    """RTF with its ``\\uN`` escapes of characters past ASCII written as the characters, their
    fallbacks (``\\ucN`` of them, 1 by default: ``?`` or ``\\'3f``) left out. pandoc drops the
    character after an escape where a ``\\uc0`` was set before a ``\\pard`` (``İ\\u304?zmir``
    read ``İmir``); read here, an escape cannot take a character with it."""
    out, at, skip = [], 0, 1
    pending: list[int] = []  # UTF-16 code units of escapes in a row (a surrogate pair is two)
    for m in _UNICODE_OR_UC.finditer(rtf):
        if m["uc"] is not None:
            skip = int(m["uc"])
            continue
        if m.start() < at:
            continue  # inside the fallback of the escape before
        unit = int(m["u"]) % 65536
        if unit < 128:
            continue  # an ASCII escape could spell a control symbol: left to pandoc
        if m.start() != at:
            out.append(_units(pending))
            pending = []
            out.append(rtf[at : m.start()])
            if _ENDS_IN_WORD.search(out[-1]):
                out.append(" ")  # the word's delimiter: pandoc takes the character after it for one
        pending.append(unit)
        at = _past_fallback(rtf, m.end(), skip)
    out.append(_units(pending))
    out.append(rtf[at:])
    return "".join(out)


def _past_fallback(rtf: str, i: int, n: int) -> int:
    """Where the ``n`` fallback characters after an escape end: ``\\'hh`` is one, a control word
    one, any other character one; a group's brace ends them."""
    for _ in range(n):
        if i >= len(rtf) or rtf[i] in "{}":
            break
        m = _FALLBACK.match(rtf, i)
        i = m.end() if m else i + 1
    return i


def _units(units: list[int]) -> str:
    return b"".join(u.to_bytes(2, "little") for u in units).decode("utf-16-le", errors="replace")


def heading_styles(rtf: str) -> str:
    """RTF whose paragraphs in a style named ``heading N`` (or given an outline level in the
    stylesheet) say their outline level, as Word and LibreOffice show them; pandoc reads a heading
    only from a paragraph's own ``\\outlinelevel``."""
    sheet = _STYLESHEET.search(rtf)
    if sheet is None:
        return rtf
    end = _group_end(rtf, sheet.start())
    levels = {}
    for entry in _STYLE_ENTRY.finditer(rtf, sheet.end(), end):
        outline = _OUTLINE.search(entry["body"])
        named = _HEADING_NAME.search(entry["body"])
        if outline is not None:
            if int(outline[1]) < 9:  # level 9 is Word's body text
                levels[entry["n"]] = int(outline[1])
        elif named is not None and 1 <= int(named[1]) <= 9:
            levels[entry["n"]] = int(named[1]) - 1
    if not levels:
        return rtf
    tail = _PARAGRAPH_STYLE.sub(
        lambda m: f"\\outlinelevel{levels[m[1]]}{m[0]}" if m[1] in levels else m[0], rtf[end:]
    )
    return rtf[:end] + tail


def _group_end(rtf: str, start: int) -> int:
    """The index past the ``}`` that closes the group opened at ``start``."""
    depth = 0
    for m in _BRACE.finditer(rtf, start):
        depth += 1 if m[0] == "{" else -1 if m[0] == "}" else 0
        if depth == 0:
            return m.end()
    return len(rtf)


def _rtf_title(rtf: str) -> str:
    """The document's title in its information group (``{\\info{\\title ...}}``), '' if none."""
    m = _TITLE.search(rtf)
    if m is None:
        return ""
    return _plain(m[1])[:200]


def _plain(rtf: str) -> str:
    """A short run of RTF as one line of text: code-page escapes read, control words dropped."""
    text = _CODEPAGE.sub(lambda c: bytes([int(c[1], 16)]).decode("cp1252", errors="replace"), rtf)
    return squash(_CONTROL.sub(" ", text))


def rows_defined(rtf: str) -> str:
    """RTF with each table row opened by its own ``\\trowd``: a row may reuse the one before's
    definition (Word and LibreOffice read it so), but pandoc starts a row only at ``\\trowd`` and
    would run such rows into one. One pass over the control words that matter."""
    words = [(m[1], m.start(), m.end()) for m in _TABLE_WORD.finditer(rtf)]
    out, at, definition, opened = [], 0, "", -1
    for k, (word, start, end) in enumerate(words):
        if word == "trowd":
            opened = start
        elif word == "pard" and opened >= 0:
            definition, opened = rtf[opened:start], -1
        elif word == "row" and definition and k + 2 < len(words):
            (pard, p0, p1), (intbl, i0, _) = words[k + 1], words[k + 2]
            if (
                pard == "pard"
                and intbl == "intbl"
                and not rtf[end:p0].strip()
                and _CONTROL_WORDS.fullmatch(rtf, p1, i0)
            ):
                out.append(rtf[at:end] + "\n" + definition)
                at = end
    return "".join(out) + rtf[at:] if out else rtf


def read_org(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    from raychunk.parse.detect import decode_text

    text, _ = decode_text(data)
    html = convert(text.encode("utf-8", errors="replace"), "org", extension="org")
    # pandoc writes no #+TITLE without a standalone page; the title is the keyword's, as Org exports it
    title = squash(" ".join(_ORG_TITLE.findall(text)))[:200]
    items, tables = _org_lists_and_tables(text)
    parsed = read_html_of(
        html.decode("utf-8", errors="replace"),
        base,
        header_rows=tables,
        **({"title": title} if title else {}),
    )
    return _remarked(
        parsed, items, lambda marker, d: marker[:-1] + d if d == ")" and marker.endswith(".") else marker
    )


def _org_lists_and_tables(org: str) -> tuple[list[str], list[int]]:
    """Each list item's delimiter as written (``)`` of ``1)``, ``.``; '' for a bullet) and each
    table's rows above its first rule, in order, blocks (``#+BEGIN_SRC`` ... ``#+END_SRC``) left
    out. Org counts its lists itself (a ``[@3]`` cookie, a renumbered buffer), but the ``)`` is the
    author's, and pandoc's HTML has no room for it; Org exports every row above a table's rule as a
    header row, pandoc only one."""
    items, tables = [], []
    block, rows, ruled = False, 0, False
    for line in org.splitlines():
        if _ORG_BLOCK.match(line):
            block = not line.lstrip().lower().startswith("#+end_")
            continue
        if block:
            continue
        if line.lstrip().startswith("|"):
            if line.lstrip().startswith("|-"):
                if not ruled and rows:
                    ruled = True
                    tables.append(rows)
            elif not ruled:
                rows += 1
            continue
        if rows and not ruled:
            tables.append(0)
        rows, ruled = 0, False
        if m := _ORG_ITEM.match(line):
            items.append(m["delimiter"] or "")
    if rows and not ruled:
        tables.append(0)
    return items, tables


def plain_text_instead(text: str, base: Document, refusal: PandocFailed) -> ParsedDocument:
    """A file pandoc refused (a brace left open, as LaTeX itself would stop on; a page cut short)
    still holds its words: they are read as plain text, the reason saying why; ``failed`` with
    pandoc's reason where even that gives no text."""
    from raychunk.parse.text import parse_text

    page = parse_text(text, base)
    if page.document.status != "ok":
        return no_blocks(base, "failed", str(refusal))
    return with_reason(page, f"{refusal}: read as plain text")


def code_put_back(
    html: str, base: Document, code: list[str], marked: re.Pattern, language: str
) -> ParsedDocument | None:
    """The parse of a converter's HTML in which runs of code stood as marks, a paragraph each that
    ``marked`` matches with the run's number (``parse.perl``'s POD, ``parse.cmake``'s documentation):
    each mark is that code again, a ``language`` block in its place among the headings. None when
    the HTML has no block."""
    page = read_html_of(html, base)
    assembler = TextAssembler()
    blocks = []
    for b in page.blocks:
        if b.kind == "paragraph" and (m := marked.fullmatch(b.text.strip())) and int(m[1]) < len(code):
            b = dataclasses.replace(b, kind="code", text=code[int(m[1])], language=language)
        start, end = assembler.append(b.text)
        blocks.append(dataclasses.replace(b, char_start=start, char_end=end))
    return finish(base, assembler.text, blocks, reason=page.document.reason) if blocks else None


def read_html_of(
    html: str,
    base: Document,
    *,
    header_rows: int | list[int] = 0,
    items: list[str] | None = None,
    bold_headings: bool = True,
    preformatted_pages: bool = False,
    **changes,
) -> ParsedDocument:
    """The parse of HTML that a converter wrote: its blocks, their texts joined as the document's
    text; the HTML parser's reason kept where there is text (``changes`` override the rest).
    ``header_rows``: what the source says of a table with no header row marked in the HTML, for
    every table (RTF: 1, a word processor's table starts with one) or table by table (Org: the rows
    above its rule), the latter only where the HTML holds as many tables. ``items``: the labels of
    list items the converter left as paragraphs that begin with them, in order (WordPad's lists).
    ``bold_headings``, ``preformatted_pages``: ``parse_html``'s; the latter off by default: a markup's
    literal block is code however much of the page it holds (an AWS CLI example page is mostly its
    commands and their output), where roff's no-fill text says nothing of what it holds."""
    from raychunk.parse.html import parse_html

    page = parse_html(html, base, bold_headings=bold_headings, preformatted_pages=preformatted_pages)
    found = _as_items(list(page.blocks), items) if items else page.blocks
    tables = sum(b.kind == "table" for b in found)
    if isinstance(header_rows, list) and len(header_rows) != tables:
        header_rows = 0
    assembler = TextAssembler()
    blocks = []
    k = -1
    for b in found:
        if b.kind == "table":
            k += 1
            n = header_rows if isinstance(header_rows, int) else header_rows[k]
            if n and not b.header_rows and len(b.rows) > n:
                b = dataclasses.replace(b, header_rows=n, text=render_table(b.rows, n))
        start, end = assembler.append(b.text)
        blocks.append(dataclasses.replace(b, char_start=start, char_end=end))
    if page.document.reason and blocks and "reason" not in changes:
        changes["reason"] = page.document.reason
    return finish(base, assembler.text, blocks, **changes)


def _as_items(blocks: list, labels: list[str]) -> list:
    """Paragraphs that begin with ``ITEM_MARK`` and then the next label (``1)``, a bullet glyph) as
    list items marked with it, the label off their text; the mark off every block."""
    k = 0
    for i, b in enumerate(blocks):
        if ITEM_MARK not in b.text:
            continue
        text = b.text.replace(ITEM_MARK, "")
        rows = tuple(tuple(c.replace(ITEM_MARK, "") for c in r) for r in b.rows)
        label = labels[k] if k < len(labels) else ""
        if b.kind == "paragraph" and b.text.startswith(ITEM_MARK + label) and _marker(label):
            rest = text[len(label) :]
            if rest[:1].isspace() and rest.strip():
                blocks[i] = dataclasses.replace(
                    b, kind="list_item", text=rest.lstrip(), marker=_marker(label)
                )
                k += 1
                continue
        k += b.text.count(ITEM_MARK)
        blocks[i] = dataclasses.replace(b, text=text, rows=rows)
    return blocks


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
