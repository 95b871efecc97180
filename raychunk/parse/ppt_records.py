"""What a PowerPoint 97-2003 deck's own records say that its conversion to a .pptx (ppt2pptx) does
not carry: each slide's title, and its tables.

- A title is the text of type Title or Center Title: in the slide list after the slide's persist
  atom (where PowerPoint keeps a slide's placeholder texts), or else in a text box of the slide's
  shapes with a text header of its own (where LibreOffice keeps them).
- A table is a group of rectangles that tile a grid of at least two rows and two columns, as both
  PowerPoint and LibreOffice write one (the conversion keeps only its cells' texts, as text boxes);
  a rectangle spanning several rows or columns is a merged cell, its text repeated in the cells it
  covers.

The deck is read with olefile, record by record (MS-PPT: a record is its header, a version and
instance, a type and a length, then its payload; a container's payload is records). A deck whose
records cannot be read so gives nothing here, and its conversion is read without these facts.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from raychunk.parse._common import clean_text
from raychunk.render import squash

__all__ = ["LegacySlide", "LegacyTable", "read_slides"]

_DOCUMENT, _SLIDE_LIST, _SLIDE_PERSIST = 0x03E8, 0x0FF0, 0x03F3
_TEXT_HEADER, _TEXT_CHARS, _TEXT_BYTES = 0x0F9F, 0x0FA0, 0x0FA8
_USER_EDIT, _PERSIST_DIRECTORY = 0x0FF5, 0x1772
_GROUP, _SHAPE, _GROUP_RECT, _SHAPE_ATOM = 0xF003, 0xF004, 0xF009, 0xF00A
_CHILD_ANCHOR, _CLIENT_ANCHOR, _CLIENT_TEXTBOX = 0xF00F, 0xF010, 0xF00D
_RECTANGLE = 1  # the shape atom's instance: msosptRectangle
_TITLE_TYPES = {0, 6}  # Tx_TYPE_TITLE, Tx_TYPE_CENTERTITLE
_UNENCRYPTED = 0xE391C05F
_EMU = 1587.5  # EMUs (914,400 an inch) in a master unit (576 an inch)
_MAX_RECORDS = 1_000_000  # a deck's shape records walked at most, however its slides point at them


@dataclass(frozen=True, slots=True)
class LegacyTable:
    rows: tuple[tuple[str, ...], ...]
    copies: tuple[tuple[int, int], ...]  # the cells a merged cell covers beyond its first
    box: tuple[int, int, int, int]  # left, top, right, bottom on the slide, in EMUs


@dataclass(frozen=True, slots=True)
class LegacySlide:
    title: str
    tables: tuple[LegacyTable, ...]


def read_slides(data: bytes) -> list[LegacySlide] | None:
    """Each slide's title ("" where it has none) and tables, in the deck's order, from the document
    the last save wrote; None where the deck cannot be read so (an encrypted one among them)."""
    import olefile

    try:
        with olefile.OleFileIO(data) as ole:
            user = ole.openstream("Current User").read()
            stream = ole.openstream("PowerPoint Document").read()
        if len(user) < 20 or struct.unpack_from("<I", user, 12)[0] != _UNENCRYPTED:
            return None
        persist, document = _persist_directory(stream, struct.unpack_from("<I", user, 16)[0])
        offset = persist.get(document) if document is not None else None
        if offset is None or offset + 8 > len(stream) or _header(stream, offset)[1] != _DOCUMENT:
            return None
        for instance, kind, start, end in _children(
            stream, offset + 8, offset + 8 + _header(stream, offset)[2]
        ):
            if kind == _SLIDE_LIST and instance == 0:
                return _slides(stream, start, end, persist)
        return []
    except (OSError, struct.error, ValueError, IndexError, RecursionError):  # a damaged container or record
        return None


def _header(stream: bytes, at: int) -> tuple[int, int, int]:
    """``(instance, type, length)`` of the record at ``at``."""
    ver_instance, kind, length = struct.unpack_from("<HHI", stream, at)
    return ver_instance >> 4, kind, length


def _children(stream: bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """``(instance, type, payload start, payload end)`` of each record from ``start`` to ``end``."""
    end = min(end, len(stream))
    while start + 8 <= end:
        instance, kind, length = _header(stream, start)
        yield instance, kind, start + 8, min(start + 8 + length, end)
        start += 8 + length


def _is_container(stream: bytes, payload_start: int) -> bool:
    return stream[payload_start - 8] & 0x0F == 0x0F


def _persist_directory(stream: bytes, edit: int) -> tuple[dict[int, int], int | None]:
    """Offsets by persist id, from the last save's user edit back through the earlier ones (an id a
    later save gave keeps its offset), and the document's persist id."""
    persist: dict[int, int] = {}
    document, seen = None, set()
    while edit and edit not in seen and edit + 28 <= len(stream):
        seen.add(edit)
        if _header(stream, edit)[1] != _USER_EDIT:
            break
        last, directory, ref = struct.unpack_from("<III", stream, edit + 16)
        document = ref if document is None else document
        if directory + 8 <= len(stream) and _header(stream, directory)[1] == _PERSIST_DIRECTORY:
            pos, end = directory + 8, min(directory + 8 + _header(stream, directory)[2], len(stream))
            while pos + 4 <= end:
                word = struct.unpack_from("<I", stream, pos)[0]
                pos += 4
                for k in range(word >> 20):
                    if pos + 4 > end:
                        break
                    persist.setdefault((word & 0xFFFFF) + k, struct.unpack_from("<I", stream, pos)[0])
                    pos += 4
        edit = last
    return persist, document


def _slides(stream: bytes, start: int, end: int, persist: dict[int, int]) -> list[LegacySlide]:
    titles: list[str] = []
    offsets: list[int | None] = []
    text_type = None
    for _, kind, a, b in _children(stream, start, end):
        if kind == _SLIDE_PERSIST and b - a >= 4:
            titles.append("")
            offsets.append(persist.get(struct.unpack_from("<I", stream, a)[0]))
            text_type = None
        elif kind == _TEXT_HEADER and b - a >= 4:
            text_type = struct.unpack_from("<I", stream, a)[0]
        elif kind in (_TEXT_CHARS, _TEXT_BYTES) and titles and text_type in _TITLE_TYPES and not titles[-1]:
            titles[-1] = _text(stream, kind, a, b)
    out = []
    walk = _SlideWalk(stream)  # one budget of records for the whole deck
    for title, offset in zip(titles, offsets):
        walk.title, walk.tables = "", []
        if offset is not None and offset + 8 <= len(stream):
            walk.container(offset + 8, offset + 8 + _header(stream, offset)[2], None)
        out.append(LegacySlide(title or walk.title, tuple(walk.tables)))
    return out


def _text(stream: bytes, kind: int, a: int, b: int) -> str:
    raw = stream[a:b]
    text = raw.decode("utf-16-le", "replace") if kind == _TEXT_CHARS else raw.decode("latin-1")
    return squash(" ".join(clean_text(x) for x in re.split(r"[\r\v\x0b]", text)))


# A map from a group's coordinates to the slide's master units: (group rect, slide rect), each
# (left, top, right, bottom); None on the slide itself.
_Space = tuple[tuple[int, int, int, int], tuple[float, float, float, float]] | None


def _to_slide(rect: tuple[int, int, int, int], space: _Space) -> tuple[float, float, float, float]:
    if space is None:
        return rect
    (gl, gt, gr, gb), (sl, st, sr, sb) = space
    sx = (sr - sl) / (gr - gl) if gr != gl else 1.0
    sy = (sb - st) / (gb - gt) if gb != gt else 1.0
    left, top, right, bottom = rect
    return sl + (left - gl) * sx, st + (top - gt) * sy, sl + (right - gl) * sx, st + (bottom - gt) * sy


class _SlideWalk:
    """A slide's records walked: the first title text found, and the tables of its groups."""

    def __init__(self, stream: bytes):
        self.stream = stream
        self.title = ""
        self.tables: list[LegacyTable] = []
        self.budget = _MAX_RECORDS
        self.group_rect: tuple[int, int, int, int] | None = None  # the last shape's, where it has one

    def container(self, start: int, end: int, space: _Space) -> None:
        for _, kind, a, b in _children(self.stream, start, end):
            self.budget -= 1
            if self.budget < 0:
                return
            if kind == _GROUP:
                self.group(a, b, space)
            elif kind == _SHAPE:
                self.shape(a, b)
            elif _is_container(self.stream, a):
                self.container(a, b, space)

    def shape(self, start: int, end: int) -> tuple[int, tuple[int, int, int, int] | None, str | None]:
        """The shape's type, its anchor (child or client) and its text (None without a text box);
        a title's text is kept as the slide's title."""
        stream, kind_of, anchor, text, group_rect = self.stream, 0, None, None, None
        for instance, kind, a, b in _children(stream, start, end):
            if kind == _SHAPE_ATOM:
                kind_of = instance
            elif kind == _CHILD_ANCHOR and b - a >= 16:
                anchor = struct.unpack_from("<iiii", stream, a)
            elif kind == _CLIENT_ANCHOR and b - a >= 16:
                t, left, r, bottom = struct.unpack_from("<iiii", stream, a)
                anchor = (left, t, r, bottom)
            elif kind == _CLIENT_ANCHOR and b - a >= 8:
                t, left, r, bottom = struct.unpack_from("<hhhh", stream, a)
                anchor = (left, t, r, bottom)
            elif kind == _GROUP_RECT and b - a >= 16:
                group_rect = struct.unpack_from("<iiii", stream, a)
            elif kind == _CLIENT_TEXTBOX:
                text = self.textbox(a, b)
        self.group_rect = group_rect
        return kind_of, anchor, text

    def textbox(self, start: int, end: int) -> str:
        texts, text_type = [], None
        for _, kind, a, b in _children(self.stream, start, end):
            if kind == _TEXT_HEADER and b - a >= 4:
                text_type = struct.unpack_from("<I", self.stream, a)[0]
            elif kind in (_TEXT_CHARS, _TEXT_BYTES):
                text = _text(self.stream, kind, a, b)
                if text_type in _TITLE_TYPES and text and not self.title:
                    self.title = text
                texts.append(text)
        return " ".join(t for t in texts if t)

    def group(self, start: int, end: int, space: _Space) -> None:
        """A group: its first shape says its coordinates and where it sits; its rectangles may be a
        table's cells; a group inside it is walked in its own coordinates."""
        cells: list[tuple[tuple[int, int, int, int], str]] = []
        inner: _Space = space
        first, others = True, 0
        for _, kind, a, b in _children(self.stream, start, end):
            self.budget -= 1
            if self.budget < 0:
                return
            if kind == _SHAPE and first:
                first = False
                _, anchor, _ = self.shape(a, b)
                if self.group_rect is not None and anchor is not None:
                    inner = (self.group_rect, _to_slide(anchor, space))
            elif kind == _SHAPE:
                kind_of, anchor, text = self.shape(a, b)
                if kind_of == _RECTANGLE and anchor is not None:
                    cells.append((anchor, text or ""))
                elif text:
                    others += 1
            elif kind == _GROUP:
                self.group(a, b, inner)
        table = _grid(cells) if others == 0 else None
        if table is not None:
            rows, copies = table
            left = min(c[0][0] for c in cells)
            top = min(c[0][1] for c in cells)
            right = max(c[0][2] for c in cells)
            bottom = max(c[0][3] for c in cells)
            box = _to_slide((left, top, right, bottom), inner)
            self.tables.append(LegacyTable(rows, copies, tuple(round(v * _EMU) for v in box)))


def _grid(
    cells: list[tuple[tuple[int, int, int, int], str]],
) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[int, int], ...]] | None:
    """The rows of rectangles that tile a grid of at least two rows and two columns, each slot
    covered once, some text in one; None for any other arrangement."""
    if len(cells) < 4 or not any(text for _, text in cells):
        return None
    xs = sorted({v for (left, _, right, _), _ in cells for v in (left, right)})
    ys = sorted({v for (_, top, _, bottom), _ in cells for v in (top, bottom)})
    if len(xs) < 3 or len(ys) < 3 or len(xs) * len(ys) > 40_000:
        return None
    col, row = {x: i for i, x in enumerate(xs)}, {y: i for i, y in enumerate(ys)}
    grid: list[list[str | None]] = [[None] * (len(xs) - 1) for _ in range(len(ys) - 1)]
    copies = []
    for (left, top, right, bottom), text in sorted(cells, key=lambda c: (c[0][1], c[0][0])):
        if right <= left or bottom <= top:
            return None
        for i in range(row[top], row[bottom]):
            for j in range(col[left], col[right]):
                if grid[i][j] is not None:
                    return None  # two rectangles over one slot: not a grid
                grid[i][j] = text
                if (i, j) != (row[top], col[left]):
                    copies.append((i, j))
    if any(slot is None for r in grid for slot in r):
        return None
    return tuple(tuple(str(slot) for slot in r) for r in grid), tuple(sorted(copies))
