"""Jupyter notebooks (``.ipynb``, nbformat 3 and 4): the cells as a reader sees them, parsed as one
Markdown document whose text every span points into.

A markdown cell is its source (``data:`` URIs written into it left out, a fence it leaves open
closed); a code cell a fenced block in the notebook's language; a raw cell a plain fence; an
nbformat 3 heading cell a heading. Jupyter Book's ``remove-cell``, ``remove-input`` and
``remove-output`` tags are honoured. A code cell's outputs follow it, what a reader is left with,
each in a fence of its own (``output``): a stream as a terminal leaves it (one stream flushed in
pieces is one output, ``\r`` redraws end as their last state, escapes and progress-bar frames go),
a result's ``text/markdown`` or ``text/plain``, a table shown only as HTML as that table, an error's
name and message without its traceback; past ``OUTPUT_LIMIT`` its head and last lines. Images (and
the repr beside one), bare object reprs, other HTML, widget state and an output shown again are left
out. A notebook saved without outputs reads the same less them. A file that is JSON but holds no
cells is read as JSON records; one that is not JSON fails, the reason saying where it breaks.
"""

from __future__ import annotations

import dataclasses
import json
import re

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import with_reason
from raychunk.render import TERMINAL_ESCAPE

__all__ = ["notebook_markdown", "parse_notebook"]

OUTPUT_LIMIT = 4000  # characters of one output kept: its head and last lines, the count between
_DATA_URI = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=\s]{16,}")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.M)
_TICKS = re.compile(r"`{3,}")
# A tqdm-style bar's timing ("[00:01<00:03, 2.51it/s]", "[03:21<00:00, 100.61s/it]"): the line is
# a progress bar's frame, which says nothing once the run is over.
_PROGRESS = re.compile(r"\[\d+:\d\d(?::\d\d)?<[^\]]*(?:it/s|s/it|\?)[^\]]*\]")
_REPR = re.compile(r"<[\w.]+ (?:object|at 0x[0-9a-fA-F]+)[^<>\n]*>")  # <IPython.core.display.HTML object>
_BLANK_LINES = re.compile(r"\n\s*\n")
_SCRIPT_OR_STYLE = re.compile(r"<(script|style)\b.*?</\1\s*>", re.I | re.S)
_HEADING_TAG = re.compile(r"<(/?)h[1-6]\b[^>]*>", re.I)


def parse_notebook(text: str, base: Document) -> ParsedDocument:
    from raychunk.parse.markdown import parse_markdown

    try:
        nb = json.loads(text)
    except ValueError as e:
        why = f"not valid JSON ({e.msg}: line {e.lineno} column {e.colno}): the notebook cannot be read"
        return ParsedDocument(dataclasses.replace(base, status="failed", reason=why))
    cells = _cells(nb)
    if cells is None:
        from raychunk.parse.records import parse_json

        parsed = parse_json(text, dataclasses.replace(base, format="json"))
        why = "JSON without notebook cells: read as JSON records"
        return with_reason(parsed, why)
    markdown = notebook_markdown(cells, _language(nb))
    if not markdown.strip():
        return ParsedDocument(
            dataclasses.replace(base, status="empty", reason="a notebook with no cell text")
        )
    return parse_markdown(markdown, base)


def notebook_markdown(cells: list, language: str) -> str:
    """The cells as one Markdown text, blank lines between them.

    >>> print(notebook_markdown([{"cell_type": "markdown", "source": ["# Fit\\n", "A model."]},
    ...     {"cell_type": "code", "source": "fit()", "outputs": [{"output_type": "stream", "text": "ok\\n"}]}],
    ...     "python"))
    # Fit
    A model.
    <BLANKLINE>
    ```python
    fit()
    ```
    <BLANKLINE>
    ```output
    ok
    ```
    <BLANKLINE>
    """
    parts: list[str] = []
    seen: set[str] = set()  # outputs already written: the same result shown again adds nothing
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        kind = cell.get("cell_type")
        tags = _tags(cell)
        if "remove-cell" in tags:
            continue
        source = _joined(cell.get("input") if "input" in cell and kind == "code" else cell.get("source"))
        if "remove-input" in tags:
            source = ""
        if kind == "markdown":
            source = _closed(_DATA_URI.sub("data:…", source))
        elif kind == "heading":  # nbformat 3
            level = cell.get("level") if isinstance(cell.get("level"), int) else 1
            source = "#" * min(max(level, 1), 6) + " " + " ".join(source.split())
        elif kind == "code":
            source = _fenced(source, cell.get("language") or language) if source.strip() else ""
        else:  # raw, or a kind this reader does not know: its text, as written
            source = _fenced(source, "") if source.strip() else ""
        if source.strip():
            parts.append(source.strip("\n"))
        if kind == "code" and "remove-output" not in tags:
            for shown, html in _outputs(cell.get("outputs")):
                if shown not in seen:
                    seen.add(shown)
                    parts.append(shown if html else _fenced(shown, "output"))
    return "\n\n".join(parts) + ("\n" if parts else "")


def _tags(cell: dict) -> frozenset:
    """Jupyter Book's cell tags: ``remove-cell``, ``remove-input`` and ``remove-output`` say what
    the author keeps from readers."""
    meta = cell.get("metadata")
    tags = meta.get("tags") if isinstance(meta, dict) else None
    return frozenset(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else frozenset()


def _outputs(outputs) -> list[tuple[str, bool]]:
    """The text of a code cell's outputs, each cleaned and cut; a stream written in several
    pieces (one per flush) is one output, as Jupyter shows it. An HTML table is returned as its
    HTML, which the Markdown parse reads as a table."""
    shown: list[tuple[str, bool]] = []
    stream = None  # the name of the stream the last output continued
    for out in outputs if isinstance(outputs, list) else ():
        if not isinstance(out, dict):
            continue
        text, html = _output_text(out)
        name = out.get("name") if out.get("output_type") == "stream" else None
        if name is not None and name == stream and shown:
            shown[-1] = (shown[-1][0] + text, False)
        else:
            shown.append((text, html))
        stream = name
    return [(t, html) for t, html in ((x if html else _cleaned(x), html) for x, html in shown) if t.strip()]


def _cells(nb) -> list | None:
    if not isinstance(nb, dict):
        return None
    if isinstance(nb.get("cells"), list):
        return nb["cells"]
    sheets = nb.get("worksheets")
    if isinstance(sheets, list) and sheets:  # nbformat 3
        return [c for s in sheets if isinstance(s, dict) for c in (s.get("cells") or ())]
    return None


def _language(nb: dict) -> str:
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        value = meta.get(key, {}).get(field) if isinstance(meta.get(key), dict) else None
        if isinstance(value, str) and value.strip():
            return value.strip().split()[0].lower()
    return str(meta.get("language") or "").strip().lower()  # nbformat 3 kept it here


def _joined(source) -> str:
    if isinstance(source, list):
        return "".join(s if isinstance(s, str) else str(s) for s in source)
    return source if isinstance(source, str) else ""


def _output_text(out: dict) -> tuple[str, bool]:
    """An output's text, and whether it is HTML (a table shown only as HTML)."""
    kind = out.get("output_type")
    if kind == "stream":
        return _joined(out.get("text")), False
    if kind == "error":
        return f"{out.get('ename', '')}: {out.get('evalue', '')}".strip(": "), False
    if kind in ("execute_result", "display_data", "pyout", "display"):
        data = out.get("data") if isinstance(out.get("data"), dict) else out  # nbformat 3: flat
        if any(str(k).startswith("image/") or k in ("png", "jpeg", "svg") for k in data):
            return "", False  # a chart: its text/plain is the object's repr (<Figure size 640x480 ...>)
        for mime in ("text/markdown", "text/plain", "text"):
            if mime in data and not _REPR.fullmatch(text := _joined(data[mime]).strip()):
                return text, False
        html = _joined(data.get("text/html", ""))
        if "<table" in html.lower():  # a table shown only as HTML (a status table, a styled frame)
            html = _HEADING_TAG.sub(r"<\1p>", _SCRIPT_OR_STYLE.sub("", html))  # an output heads no section
            return _BLANK_LINES.sub("\n", html).strip(), True
    return "", False


def _cleaned(text: str) -> str:
    """An output as a reader is left with it: terminal escapes gone, each line as its last ``\r``
    redraw left it, progress-bar lines and trailing spaces dropped, blank runs one line, and past
    ``OUTPUT_LIMIT`` its head and its last lines (where a run's summary is) with the count between."""
    if "\x1b" in text:
        text = TERMINAL_ESCAPE.sub("", text)
    lines = []
    for line in text.split("\n"):
        line = line.rstrip("\r").rsplit("\r", 1)[-1].rstrip()
        if _PROGRESS.search(line) or not line and (not lines or not lines[-1]):
            continue
        lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    if sum(len(x) + 1 for x in lines) <= OUTPUT_LIMIT:
        return "\n".join(lines)
    head, tail, size = [], [], 0
    for line in lines:  # two thirds of the limit from the top ...
        if size + len(line) + 1 > OUTPUT_LIMIT * 2 // 3 and head:
            break
        head.append(line[:OUTPUT_LIMIT])
        size += len(line) + 1
    for line in reversed(lines[len(head) :]):  # ... and the last third from the bottom
        if size + len(line) + 1 > OUTPUT_LIMIT and tail:
            break
        tail.append(line[: OUTPUT_LIMIT // 3])
        size += len(line) + 1
    left = len(lines) - len(head) - len(tail)
    gap = [f"… ({left} line{'s' if left != 1 else ''} left out)"] if left else []
    return "\n".join(head + gap + tail[::-1])


def _fenced(body: str, info: str) -> str:
    body = body.strip("\n")
    ticks = max((len(m.group()) for m in _TICKS.finditer(body)), default=2)
    fence = "`" * max(3, ticks + 1)
    return f"{fence}{info}\n{body}\n{fence}"


def _closed(source: str) -> str:
    """A markdown cell whose fence is left open is closed at the cell's end, as Jupyter renders it,
    so it does not swallow the cells after it."""
    opened = None
    for m in _FENCE_LINE.finditer(source):
        mark = m.group(1)
        if opened is None:
            opened = mark
        elif mark[0] == opened[0] and len(mark) >= len(opened) and not m.group(2).strip():
            opened = None
    return source if opened is None else source.rstrip("\n") + "\n" + opened
