"""Manual pages (roff: ``bash.1``, ``ls.1.gz``, ``printf.3``, ``.man``; BSD's mdoc too): read by pandoc's
man (or mdoc) reader in its sandbox, as HTML read by raychunk's HTML parser, as reStructuredText is.

A page is recognised by its content, not only its name (``app.log.1`` is a rotated log): roff
requests at the start of its lines and a ``.TH`` title line (``.Dd``/``.Dt`` for mdoc) near its top
(``is_man_page``). Its sections (``.SH``) are level-1 headings and subsections (``.SS``) level 2; a
tagged paragraph (``.TP``, an option and what it does) is a term joined to its definition
(``-c: If the -c option is present ...``), as the HTML parser joins them; ``.nf`` blocks are code.
The title is the NAME section's line (``bash - GNU Bourne-Again SHell``), else the ``.TH`` name and
section (``BASH(1)``). A page that only points at another (``.so man1/other.1``) is ``empty`` and says
which; one pandoc cannot read is read as plain text, the reason saying why.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING

from raychunk.parse._common import add_reason, no_blocks
from raychunk.parse.pandoc import PandocFailed, convert, plain_text_instead, read_html_of
from raychunk.parse.roff import for_pandoc, idioms_for_pandoc, roff_as_text

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["is_man_page", "name_line_title", "parse_man"]

_REQUEST = re.compile(r"^[.'][ \t]*[A-Za-z\\]", re.M)
_TITLE_LINE = re.compile(r'^\.TH[ \t]+("[^"]*"|\S+)[ \t]+("[^"]*"|\S+)', re.M)
_MDOC = re.compile(r"^\.(?:Dd|Dt|Sh)\b", re.M)
_SOURCE = re.compile(r"^\.so[ \t]+(\S+)[ \t]*$", re.M)
# A font escape that names no font (po4a's translations write ``\f\fI``): groff ignores it, pandoc's
# reader stops on it.
_BARE_FONT = re.compile(r"\\f(?![BIRPC1-4(\[])")
_NAME_LINE = re.compile(r"\S \u2014 |\S - \S|\S \\?- ")
_COMMENT = re.compile(r'^[.\'][ \t]*\\"[^\n]*$', re.M)


def is_man_page(text: str) -> bool:
    """Whether ``text`` is a roff manual page: a ``.TH`` (or mdoc's ``.Dd``/``.Dt``) line first (after
    comments), or one within its first 200 lines and roff requests on at least a tenth of its lines;
    or a page that is only a ``.so`` link to another."""
    head = "\n".join(text[:65536].split("\n")[:200])
    body = _COMMENT.sub("", head).strip()
    if _SOURCE.fullmatch(body):
        return True
    if not (re.search(r"^\.TH[ \t]", head, re.M) or _MDOC.search(head)):
        return False
    if re.match(r"\.(?:TH[ \t]|Dd\b|Dt\b)", body):
        return True  # the title first: a page whose lines are mostly text (a long synopsis, a table)
    lines = [line for line in head.split("\n") if line.strip()]
    return len(_REQUEST.findall(head)) * 10 >= len(lines)


def parse_man(text: str, base: Document) -> ParsedDocument:
    body = _COMMENT.sub("", text).strip()
    if not body:
        return no_blocks(base, "empty", "only comments" if text.strip() else "only whitespace")
    if (m := _SOURCE.fullmatch(body)) is not None:
        return no_blocks(
            base, "empty", f"a link to another manual page (.so {m[1]}): that page is read on its own"
        )
    reader = "mdoc" if _MDOC.search(text[:65536]) else "man"
    html, refusal = None, None
    page_text = idioms_for_pandoc(_BARE_FONT.sub("", text)) if reader == "man" else _BARE_FONT.sub("", text)
    for source in (page_text, None):
        if source is None:  # again, without what pandoc's readers do not know (groff draws or ignores it)
            source = for_pandoc(page_text, reader)
        try:
            html = convert(source.encode("utf-8", errors="replace"), reader, extension="man")
            break
        except PandocFailed as e:
            refusal = refusal or e
    if html is None:
        page = plain_text_instead(roff_as_text(text), base, refusal)
        if page.document.status != "ok":
            return page
        page = add_reason(page, "its roff requests left out")
    else:
        # a page's bold line is a command or a file to type (``.B foo`` under SYNOPSIS), not a heading;
        # its no-fill text (``.nf``) may be prose as well as code: a page mostly of it is read as text
        page = read_html_of(
            html.decode("utf-8", errors="replace"), base, bold_headings=False, preformatted_pages=True
        )
    title = name_line_title(page, text)
    return (
        dataclasses.replace(page, document=dataclasses.replace(page.document, title=title)) if title else page
    )


def name_line_title(page: ParsedDocument, text: str = "") -> str:
    """The NAME section's line (a manual page's, a POD document's; in a translated page, the first
    section's ``name - what it does``), else the ``.TH`` name and section."""
    for i, b in enumerate(page.blocks[:-1]):
        after = page.blocks[i + 1]
        # NAME, or the first section in another language (이름, NOM) holding "name - what it does"
        named = b.text.strip().upper() == "NAME" or (i == 0 and _NAME_LINE.search(after.text))
        if b.kind == "heading" and named:
            if after.kind == "paragraph":
                return " ".join(after.text.split())[:200]
            break
    if (m := _TITLE_LINE.search(text[:65536])) is not None:
        return f"{m[1].strip(chr(34))}({m[2].strip(chr(34))})"[:200]
    return ""
