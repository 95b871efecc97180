"""MediaWiki markup (``.mediawiki``; a ``.wiki`` page that reads as MediaWiki: a wiki's export, a
Gollum wiki's pages): read by pandoc's MediaWiki reader in its sandbox, then the HTML parser's rules,
as reStructuredText is. Headings (``== Steps ==``) are headings, ``#``/``*`` lists keep their depth
and numbers, ``{| ... |}`` tables their header cells, ``'''bold'''`` and ``[[links|text]]`` their
text. pandoc leaves templates (``{{Note|text=call ops}}``) out, words and all: each is replaced first
by the words of its arguments (``call ops``), as a reader sees most templates render, the innermost
first. A page pandoc cannot read is plain text, the reason saying why.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from raychunk.parse._common import no_blocks
from raychunk.parse.pandoc import PandocFailed, convert, plain_text_instead, read_html_of

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["looks_like_mediawiki", "parse_mediawiki"]

_TEMPLATE = re.compile(r"\{\{([^{}]*)\}\}")
_SHOWN = {"text", "content", "quote", "title", "caption", "label", "value", "name", "1", "2", "3"}
_MARKS = re.compile(r"^(=+)[^=\n].*?\1[ \t]*$|\[\[[^\]\n]+\]\]|^\{\||'''[^'\n]+'''", re.M)


def looks_like_mediawiki(text: str) -> bool:
    """Whether a ``.wiki`` page is MediaWiki markup: at least two of its marks (a ``== heading ==``
    line, a ``[[link]]``, a ``{|`` table, ``'''bold'''``) in its first 64 KB."""
    return len(_MARKS.findall(text[:65536], 0)) >= 2


def parse_mediawiki(text: str, base: Document) -> ParsedDocument:
    if not text.strip():
        return no_blocks(base, "empty", "only whitespace")
    if base.source.lower().endswith(".wiki") and not looks_like_mediawiki(text):
        from raychunk.parse.text import parse_text  # another wiki's page: plain text, as before

        return parse_text(text, dataclasses.replace(base, format="text"))
    try:
        html = convert(
            _templates_as_words(text).encode("utf-8", errors="replace"), "mediawiki", extension="wiki"
        )
    except PandocFailed as e:
        return plain_text_instead(text, base, e)
    return read_html_of(html.decode("utf-8", errors="replace"), base)


def _templates_as_words(text: str) -> str:
    """Each template the words of its positional arguments and of the named ones that hold shown
    text (``text=``, ``quote=``, ``title=``: not ``date=`` or ``color=``), innermost first; a
    template without them (``{{TOC}}``, ``{{citation needed|date=...}}``) gives none."""

    def words(m: re.Match) -> str:
        kept = []
        for part in m[1].split("|")[1:]:
            name, eq, value = part.partition("=")
            if not eq or "[[" in name:
                kept.append(part)  # a positional argument: what the template shows
            elif name.strip().lower() in _SHOWN:
                kept.append(value)
        return " ".join(kept).strip()

    for _ in range(16):  # nesting depth; each pass replaces the innermost
        text, n = _TEMPLATE.subn(words, text)
        if not n:
            break
    return text
