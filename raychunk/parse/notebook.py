"""Jupyter notebooks (``.ipynb``, nbformat 3 and 4): the cells as a reader sees them, parsed as one
Markdown document whose text every span points into.

A markdown cell is its source; a code cell a fenced block in the notebook's language; a raw cell a
plain fence; an nbformat 3 heading cell a heading. Of a code cell's outputs, what a reader sees as
text follows it in a fence of its own (``output``): streams as a terminal leaves them (a progress
bar's ``\\r`` redraws end as their last state), a result's ``text/markdown`` or ``text/plain``, an
error's name and message (not its traceback); images (and the repr beside one), HTML and widget
state are left out, and so are
``data:`` URIs written into markdown cells. A notebook saved without outputs reads the same minus
them. A file that is JSON but holds no cells is read as JSON records; one that is not JSON fails, the
reason saying where the JSON breaks.
"""

from __future__ import annotations

import dataclasses
import json
import re

from raychunk.document import Document, ParsedDocument

__all__ = ["notebook_markdown", "parse_notebook"]

OUTPUT_LIMIT = 4000  # characters of one output kept; the rest is cut at a line end and counted
_DATA_URI = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=\s]{16,}")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.M)
_TICKS = re.compile(r"`{3,}")


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
        return dataclasses.replace(parsed, document=dataclasses.replace(parsed.document, reason=why))
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
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        kind = cell.get("cell_type")
        source = _joined(cell.get("input") if "input" in cell and kind == "code" else cell.get("source"))
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
        if kind == "code":
            for out in cell.get("outputs") or ():
                shown = _output_text(out)
                if shown.strip():
                    parts.append(_fenced(shown, "output"))
    return "\n\n".join(parts) + ("\n" if parts else "")


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


def _output_text(out) -> str:
    if not isinstance(out, dict):
        return ""
    kind = out.get("output_type")
    if kind == "stream":
        return _terminal(_joined(out.get("text")))
    if kind == "error":
        return f"{out.get('ename', '')}: {out.get('evalue', '')}".strip(": ")
    if kind in ("execute_result", "display_data", "pyout", "display"):
        data = out.get("data") if isinstance(out.get("data"), dict) else out  # nbformat 3: flat
        if any(str(k).startswith("image/") or k in ("png", "jpeg", "svg") for k in data):
            return ""  # a chart: its text/plain is the object's repr (<Figure size 640x480 ...>)
        for mime in ("text/markdown", "text/plain", "text"):
            if mime in data:
                return _joined(data[mime])
    return ""


def _terminal(text: str) -> str:
    """What a terminal shows of a stream: each line's text after its last carriage return."""
    if "\r" not in text:
        return text
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n"))


def _fenced(body: str, info: str) -> str:
    body = body.strip("\n")
    if len(body) > OUTPUT_LIMIT and info == "output":
        cut = body.rfind("\n", 0, OUTPUT_LIMIT)
        cut = cut if cut > 0 else OUTPUT_LIMIT
        more = body.count("\n", cut) or 1
        body = body[:cut] + f"\n… ({more} more line{'s' if more != 1 else ''})"
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
