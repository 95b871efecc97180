"""LaTeX (``.tex``): read by pandoc's LaTeX reader in its sandbox, as HTML read by raychunk's HTML
parser, as reStructuredText is (``parse/rst.py``).

The title block opens the document (``\\title`` a level-1 heading, then authors, date and abstract),
its sections below it; ``\\section`` and below are headings, ``\\paragraph`` too; lists keep their
numbers, ``tabular`` is a table with its header row where a rule sets it off, ``verbatim`` and ``lstlisting`` are code, footnotes come at the
end, ``\\ref`` reads as its number and math as TeX (or as the Unicode pandoc writes for simple
formulas). The document's own ``\\newcommand`` macros are expanded; a command pandoc does not know
reads as the text of its arguments and a citation as its keys (``latex.lua``; the title block and the
notes placed by ``front_matter.lua``). A file it pulls in
(``\\input``, ``\\include``, ``\\subfile``) is not read from here: the sandbox reads no other file,
and the reason names them, each read on its own where it is in the corpus. A file pandoc cannot read
(a brace left open, as LaTeX itself would stop on) is read as plain text, the reason saying why.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from raychunk.parse._common import listing, no_blocks, with_reason
from raychunk.parse.pandoc import PandocFailed, convert, plain_text_instead, read_html_of

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["parse_latex"]

_FILTERS = tuple(
    f"--lua-filter={Path(__file__).with_name(name)}" for name in ("latex.lua", "front_matter.lua")
)
_COMMENT = re.compile(r"(?<!\\)%[^\n]*")
_PULLS = re.compile(r"\\(?:input|include|subfile|subimport\s*\{[^{}]*\}|import\s*\{[^{}]*\})\s*\{([^{}]+)\}")


def parse_latex(text: str, base: Document) -> ParsedDocument:
    if not text.strip():
        return no_blocks(base, "empty", "only whitespace")
    try:
        html = convert(
            text.encode("utf-8", errors="replace"),
            "latex+raw_tex",
            extension="tex",
            args=_FILTERS,
        )
    except PandocFailed as e:
        return plain_text_instead(text, base, e)
    page = read_html_of(html.decode("utf-8", errors="replace"), base)
    pulled = sorted({squash_path(m[1]) for m in _PULLS.finditer(_COMMENT.sub("", text))} - {""})
    if not pulled:
        return page
    if not page.blocks:
        return with_reason(
            page,
            f"no text of its own: it only pulls in other files ({listing(pulled)}), which are not read from here",
        )
    note = f"included files not inlined ({listing(pulled)}): each is read on its own"
    return with_reason(page, "; ".join(x for x in (page.document.reason, note) if x))


def squash_path(name: str) -> str:
    return " ".join(name.split())
