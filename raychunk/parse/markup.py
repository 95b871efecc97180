"""Text markups pandoc reads and raychunk has no reader of its own for: Typst (``.typ``), Textile
(``.textile``: Redmine's and Textpattern's), Perl's POD (``.pod``), FictionBook (``.fb2``: e-books),
OPML outlines (``.opml``), txt2tags (``.t2t``), Creole (``.creole``), Emacs Muse (``.muse``) and
Djot (``.dj``, ``.djot``). Each is read by pandoc's reader in its sandbox, then the HTML parser's
rules (headings, lists with their numbers, tables with their header rows, code), the document's
title and front matter by ``front_matter.lua``. A file pandoc cannot read is plain text, the reason
saying why.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from raychunk.parse._common import no_blocks
from raychunk.parse.man import name_line_title
from raychunk.parse.pandoc import PandocFailed, convert, plain_text_instead, read_html_of
from raychunk.parse.xmldoc import utf8_declared

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["MARKUPS", "parse_markup"]

# raychunk's format name -> (pandoc's reader, what a reason calls a file of it, its extensions)
MARKUPS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "typst": ("typst", "a Typst document", (".typ",)),
    "textile": ("textile", "a Textile document", (".textile",)),
    "pod": ("pod", "a POD document", (".pod",)),
    "fb2": ("fb2", "a FictionBook e-book", (".fb2",)),
    "opml": ("opml", "an OPML outline", (".opml",)),
    "t2t": ("t2t", "a txt2tags document", (".t2t",)),
    "creole": ("creole", "a Creole page", (".creole",)),
    "muse": ("muse", "an Emacs Muse document", (".muse",)),
    "djot": ("djot", "a Djot document", (".dj", ".djot")),
}
_XML = {"fb2", "opml"}
_FILTER = f"--lua-filter={Path(__file__).with_name('front_matter.lua')}"


def parse_markup(text: str, base: Document) -> ParsedDocument:
    if not text.strip():
        return no_blocks(base, "empty", "only whitespace")
    reader, _, extensions = MARKUPS[base.format]
    source = utf8_declared(text) if base.format in _XML else text
    try:
        html = convert(
            source.encode("utf-8", errors="replace"), reader, extension=extensions[0][1:], args=(_FILTER,)
        )
    except PandocFailed as e:
        return plain_text_instead(text, base, e)
    page = read_html_of(html.decode("utf-8", errors="replace"), base)
    if base.format == "pod" and (title := name_line_title(page)):  # a module's NAME line, as perldoc shows
        return dataclasses.replace(page, document=dataclasses.replace(page.document, title=title))
    return page
