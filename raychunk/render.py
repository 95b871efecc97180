"""Text helpers below the parsers, chunkers and reports: whitespace, span trimming, pipe tables, signs.

A block's text and a chunk's text are rendered the same way, so both sides import from here.
"""

from __future__ import annotations

import re

__all__ = [
    "LIST_NUMBER",
    "OWN_BULLET",
    "OWN_NUMBER",
    "TERMINAL_ESCAPE",
    "item_line",
    "render_table",
    "signed",
    "squash",
    "trimmed",
]

# A terminal's escape sequences, as a captured log holds them (colours, cursor moves, titles): CSI
# (``ESC [ 31 m``), OSC (``ESC ] ... BEL``), character-set ones (``ESC ( B``, from ``tput sgr0``) and
# two-character ones, whole, not only their ESC.
TERMINAL_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[ -/]+[0-~]|[0-~])")
# A list item's number as a marker shows it: digits, a letter or a roman numeral with ``.`` or ``)``
# (``(iv)`` in parentheses), or a number of several levels as Word numbers (``2.1.``).
LIST_NUMBER = r"\(?(?:\d{1,9}|[A-Za-z]|[ivxlcdm]{2,7}|[IVXLCDM]{2,7})[.)]|\d{1,9}(?:\.\d{1,9})+\.?"
# A list item's own number at the start of its text, as a PDF's or a scan's item keeps it (``1.``,
# ``a)``, ``(iv)``, then a space): such an item is shown as written, with no bullet before its number.
OWN_NUMBER = re.compile(r"^(?:\(?\d{1,3}[.)]|\(?[a-z][)]|\([a-z]\)|\(?[ivx]{1,4}\))\s+(?=\S)", re.IGNORECASE)
# ... and its own bullet, typed into a bulleted item's text (Project Gutenberg's ``<li>• You pay``)
OWN_BULLET = re.compile(r"^[•◦▪▫●○■□►▶▸➢➤‣⁃∙]\s+(?=\S)")
_SPACES = re.compile(r"\s+")


def item_line(marker: str, text: str, level: int = 0) -> str:
    """A list item as a chunk (and a peer) shows it: its marker, ``-`` for a plain bullet, before
    its text, indented two spaces a level; none where the text opens with its own number or bullet
    (a PDF's ``1. Strip the cable``, a typed ``• You pay``)."""
    if (not marker and OWN_NUMBER.match(text)) or (marker in ("", "-") and OWN_BULLET.match(text)):
        return "  " * level + text
    return "  " * level + (marker or "-") + " " + text


def squash(s: str) -> str:
    """Collapse runs of whitespace to one space and strip the ends."""
    return _SPACES.sub(" ", s).strip()


def trimmed(text: str, s: int, e: int) -> list[tuple[int, int]]:
    """``[(s, e)]`` narrowed past whitespace at both ends, or ``[]`` when only whitespace is left."""
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return [(s, e)] if e > s else []


def render_table(
    rows: tuple[tuple[str, ...], ...] | list, header_rows: int, *, blank: frozenset | set = frozenset()
) -> str:
    """A table as pipe-table text, header rows first, one line per row. The cells at ``blank``
    ((row, column) pairs) are spaces of their own length: the same offsets without their text."""
    lines = []
    for i, row in enumerate(rows):
        cells = [squash(c).replace("|", "\\|") for c in row]
        if blank:
            cells = [" " * len(c) if (i, j) in blank else c for j, c in enumerate(cells)]
        lines.append("| " + " | ".join(cells) + " |")
        if header_rows and i == header_rows - 1:
            lines.append("|" + "---|" * max(1, len(row)))
    return "\n".join(lines)


def signed(x: float) -> str:
    """A difference as reports print it: ``+0.05``, ``-0.12``."""
    return f"{x:+.2f}"
