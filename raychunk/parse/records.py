"""Records: CSV/TSV rows and JSONL lines, one ``record`` block each, carrying the header."""

from __future__ import annotations

import csv
import dataclasses
import json
import re

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import BlockStream, clean_text, finish, listing, with_reason
from raychunk.render import squash

__all__ = ["parse_csv", "parse_json", "parse_jsonl"]


def _lines(text: str):
    """Lines ending at \\n only (CSV fields may hold \\r or other separators), with offsets."""
    pos = 0
    for line in text.split("\n"):
        yield pos, line
        pos += len(line) + 1


FIELD_LIMIT = 131072  # characters of one field kept (the csv module's default limit); the rest is cut


def parse_csv(text: str, base: Document) -> ParsedDocument:
    """One ``record`` block per row, named by the header. A field over ``FIELD_LIMIT`` characters
    (a huge cell, or an unclosed quote that swallows the rest of the file) is cut there, and the
    reason names its line: that row is kept short and the other rows whole."""
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text) + 1))  # the reader never stops at a long field
    try:
        return _parse_csv(text, base)
    finally:
        csv.field_size_limit(limit)


def _parse_csv(text: str, base: Document) -> ParsedDocument:
    if base.format == "tsv":
        dialect: type[csv.Dialect] | csv.Dialect = csv.excel_tab
    else:
        try:
            dialect = csv.Sniffer().sniff(text[:8192], delimiters=",;|\t")
        except csv.Error:
            dialect = csv.excel
    lines = list(_lines(text))
    reader = csv.reader((line + "\n" for _, line in lines), dialect)
    out = BlockStream()
    header: tuple[str, ...] | None = None
    consumed = 0
    ragged = 0
    cut: list[int] = []  # lines of the rows with a field cut at FIELD_LIMIT
    try:
        for row in reader:
            first_line, consumed = consumed, reader.line_num
            start = lines[first_line][0]
            last_pos, last_line = lines[consumed - 1]
            end = last_pos + len(last_line.rstrip("\r"))
            if any(len(c) > FIELD_LIMIT for c in row):
                cut.append(first_line + 1)
                row = [c[:FIELD_LIMIT] for c in row]
            cells = tuple(squash(clean_text(c)) for c in row)
            if not any(cells):
                continue
            if header is None:
                header = cells
                continue
            if len(cells) != len(header):
                ragged += 1
            names = header + tuple(f"column {i + 1}" for i in range(len(header), len(cells)))
            body = "\n".join(f"{n}: {v}" for n, v in zip(names, cells) if v)
            out.add("record", body, start, end, rows=(names[: len(cells)], cells), header_rows=1)
    except csv.Error as e:
        why = "a field is too long (an unclosed quote?)" if "field limit" in str(e) else str(e)
        return ParsedDocument(
            dataclasses.replace(
                base, status="failed", reason=f"malformed CSV at line {reader.line_num}: {why}"
            )
        )
    notes = [f"{ragged} rows do not have the header's {len(header)} columns"] if ragged and header else []
    if cut:
        notes.append(
            f"a field over {FIELD_LIMIT:,} characters was cut to that length (row at line {listing(cut, 5)})"
        )
    return finish(base, text, out.blocks, reason="; ".join(notes))


def parse_jsonl(text: str, base: Document) -> ParsedDocument:
    out = BlockStream()
    invalid = 0
    for pos, line in _lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        start = pos + line.index(stripped[0])
        end = start + len(stripped)
        try:
            value = json.loads(stripped)
        except ValueError:
            invalid += 1
            out.add("record", clean_text(stripped), start, end)
            continue
        _record(out, value, start, end)
    reason = f"{invalid} lines are not valid JSON and were kept as text" if invalid else ""
    return finish(base, text, out.blocks, reason=reason)


_WS = " \t\r\n"
_DECODER = json.JSONDecoder()


def parse_json(text: str, base: Document) -> ParsedDocument:
    """A JSON file as records, with the spans of their values in the text. An array: one record per
    element (an object's members as ``key: value`` lines, as a JSON Lines row). An object: a record
    per member, except that a member holding an array of objects (the ``{"items": [...]}`` of an API
    export) becomes a heading (its key) over one record per element. A file that is not valid JSON is
    read as plain text, the reason saying so."""
    try:
        value = json.loads(text)
    except ValueError as e:
        from raychunk.parse.text import parse_text

        parsed = parse_text(text, dataclasses.replace(base, format="text"))
        why = f"not valid JSON ({e.msg}: line {e.lineno} column {e.colno}): read as plain text"
        return with_reason(parsed, why)
    out = BlockStream()
    start = _skip(text, 0)
    if isinstance(value, list):
        for element, s, e in zip(value, *_elements(text, start)):
            _record(out, element, s, e)
    elif isinstance(value, dict):
        for member, (key, ks, ke, vs, ve) in zip(value.values(), _members(text, start)):
            if isinstance(member, list) and member and all(isinstance(m, dict) for m in member):
                out.heading(clean_text(key), 1, ks + 1, ke - 1)
                for element, s, e in zip(member, *_elements(text, vs)):
                    _record(out, element, s, e)
                out.leave(1)
            else:
                cell = _scalar(member)
                if cell:
                    out.add("record", f"{key}: {cell}", ks, ve, rows=((str(key),), (cell,)), header_rows=1)
    else:
        out.add("record", _scalar(value), start, start + len(text[start:].rstrip()))
    return finish(base, text, out.blocks, title=base.title)  # a key is no title: the file's name stands


def _record(out: BlockStream, value, start: int, end: int) -> None:
    """One JSON value as a record: an object's members as ``key: value`` lines (named cells), any
    other value as its text; none for a value with no text (``{}``, ``null``, only nulls)."""
    if isinstance(value, dict):
        keys = tuple(str(k) for k in value)
        cells = tuple(_scalar(v) for v in value.values())
        body = "\n".join(f"{k}: {v}" for k, v in zip(keys, cells) if v)
        if body:  # {} or only nulls: nothing to read
            out.add("record", body, start, end, rows=(keys, cells), header_rows=1)
    elif text := _scalar(value):
        out.add("record", text, start, end)


_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _value_end(text: str, i: int) -> int:
    """Where the JSON value starting at ``text[i]`` ends, in a text ``json.loads`` accepted: past
    its closing bracket (strings skipped whole), or a scalar's own end."""
    if text[i] not in "[{":
        return _DECODER.raw_decode(text, i)[1]
    depth = 0
    for m in _STRING_OR_BRACKET.finditer(text, i):
        c = m.group()
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if not depth:
                return m.end()
    raise ValueError("unbalanced JSON")  # json.loads accepted it: not reached


def _skip(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def _elements(text: str, i: int) -> tuple[list[int], list[int]]:
    """Where each element of the array that opens at ``text[i]`` starts, and where it ends: the
    values themselves come from the one ``json.loads``; an element's end is found by scanning it
    (``_value_end``), not by decoding it again."""
    starts, ends = [], []
    i = _skip(text, i + 1)
    while text[i] != "]":
        end = _value_end(text, i)
        starts.append(i)
        ends.append(end)
        i = _skip(text, end)
        if text[i] == ",":
            i = _skip(text, i + 1)
    return starts, ends


def _members(text: str, i: int):
    """``(key, key start, key end, value start, value end)`` of each member of the object at
    ``text[i]`` (the key's span holds its quotes)."""
    i = _skip(text, i + 1)
    while text[i] != "}":
        key, after = _DECODER.raw_decode(text, i)
        vs = _skip(text, _skip(text, after) + 1)  # past the colon
        ve = _value_end(text, vs)
        yield key, i, after, vs, ve
        i = _skip(text, ve)
        if text[i] == ",":
            i = _skip(text, i + 1)


def _scalar(v) -> str:
    if isinstance(v, str):
        return squash(clean_text(v))
    if v is None:
        return ""
    return json.dumps(v, ensure_ascii=False, sort_keys=True)
