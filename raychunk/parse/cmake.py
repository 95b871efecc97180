"""CMake files (``.cmake``, ``CMakeLists.txt``) that keep their documentation as CMake's own modules
do: reStructuredText in a bracket comment marked ``.rst:`` (``#[=======[.rst:`` ... ``#]=======]``),
from which CMake builds its manual's module pages. That text is read as an ``.rst`` file is
(``parse.rst``: sections, paragraphs, definition lists, literal blocks), and the code between kept
where it stands, as ``cmake`` code blocks under the section it follows. The title is the first
heading (the module's name). A file with no such comment is code (``parse.code``).
"""

from __future__ import annotations

import dataclasses
import re

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import with_reason
from raychunk.parse.pandoc import PandocFailed, code_put_back

__all__ = ["has_rst_docs", "parse_cmake_docs"]

_DOC = re.compile(r"^[ \t]*#\[(=*)\[\.rst:[^\n]*\n(.*?)^[ \t]*#?\](\1)\][^\n]*(?:\n|\Z)", re.M | re.S)
_MARK = "RAYCHUNKCMAKECODE{:06d}"
_MARKED = re.compile(r"RAYCHUNKCMAKECODE(\d{6})")


def has_rst_docs(text: str) -> bool:
    return "[.rst:" in text and _DOC.search(text) is not None


def parse_cmake_docs(text: str, base: Document, *, as_code) -> ParsedDocument:
    """The documentation and the code of a CMake file with ``.rst:`` comments; ``as_code(text, base)``
    reads one without them, or one pandoc refuses (the reason saying so)."""
    from raychunk.parse.rst import rst_html

    rst, code, pos = [], [], 0
    for m in _DOC.finditer(text):
        _code_between(text[pos : m.start()], rst, code)
        rst.append(m.group(2))
        pos = m.end()
    _code_between(text[pos:], rst, code)
    if not any(not _MARKED.fullmatch(part.strip()) for part in rst):
        return as_code(text, base)
    try:
        html = rst_html("\n\n".join(rst))
    except PandocFailed as e:
        return with_reason(as_code(text, base), f"{e}: its documentation read as code")
    parsed = code_put_back(html, base, code, _MARKED, "cmake")
    title = next((b.text for b in parsed.blocks if b.kind == "heading"), "")
    return dataclasses.replace(parsed, document=dataclasses.replace(parsed.document, title=title[:200]))


def _code_between(part: str, rst: list[str], code: list[str]) -> None:
    if part.strip():
        rst.append(_MARK.format(len(code)))
        code.append(part.strip("\n"))
