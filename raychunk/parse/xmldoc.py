"""XML documents of the two vocabularies pandoc reads: DocBook (``.dbk``, ``.docbook``; manuals,
books) and JATS (``.nxml``; journal articles as PubMed Central and publishers keep them), and either
under ``.xml``, told by its root element, namespace or DOCTYPE (``xml_vocabulary``). Read by pandoc's
reader in its sandbox (no entity, DTD or XInclude pulls another file in), then the HTML parser's
rules, the front matter by ``front_matter.lua``: the title a level-1 heading over the sections,
authors, date and abstract under it, footnotes under Notes at the end. A JATS article's
acknowledgments and reference list close its body, under their own headings, the references as
numbered lines, one a work. XML of another vocabulary stays plain text, as before.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from raychunk.parse._common import no_blocks
from raychunk.parse.pandoc import PandocFailed, convert, plain_text_instead, read_html_of

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["parse_docbook", "parse_jats", "utf8_declared", "xml_prolog", "xml_vocabulary"]

_FILTER = f"--lua-filter={Path(__file__).with_name('front_matter.lua')}"
_DOCTYPE = re.compile(r"<!DOCTYPE\s+(\w[\w:.-]*)([^>\[]*)", re.I)
_ROOT = re.compile(r"<(?![?!])([\w:.-]+)([^>]*)>")
_DECLARED = re.compile(r"""(\A\s*<\?xml[^>]*?encoding\s*=\s*["'])[^"']*(["'])""")
_REF_LIST = re.compile(r"<ref-list\b.*?</ref-list>", re.S)
_ACK = re.compile(r"<ack\b[^>]*>(.*?)</ack>", re.S)
_REF_TITLE = re.compile(r"<title>(.*?)</title>", re.S)
_REF = re.compile(r"<ref[\s>][^>]*>?(.*?)</ref>", re.S)
# a work's label (the list numbers it) and its database ids
_NOT_PRINTED = re.compile(r"<(label|pub-id|object-id)\b[^>]*>.*?</\1>", re.S)
_TAG = re.compile(r"<[^>]*>")
_DOCBOOK_ROOTS = {"book", "article", "chapter", "section", "part", "set", "refentry", "preface", "appendix"}


def xml_vocabulary(text: str) -> str | None:
    """``docbook`` or ``jats`` for an XML document of that vocabulary, else None: DocBook 5's
    namespace or DocBook's DTD on a DocBook root, a JATS (or NLM) DTD or ``dtd-version`` on an
    ``article`` root with ``front`` matter."""
    head = text[:16384]
    if not head.lstrip().startswith("<"):
        return None
    doctype, root = xml_prolog(head)
    if root is None:
        return None
    name, attributes = root[1].split(":")[-1], root[2]
    declared = (doctype[2] if doctype else "").upper()
    if name == "article" and ("JATS" in declared or "NLM//DTD" in declared or "dtd-version" in attributes):
        return "jats" if "<front" in head or "JATS" in declared else None
    if name in _DOCBOOK_ROOTS and ("docbook.org/ns/docbook" in attributes or "DOCBOOK" in declared):
        return "docbook"
    return None


_PROLOG = re.compile(r"<!--.*?-->|<\?.*?\?>|<!DOCTYPE[^>\[]*(?:\[.*?\])?\s*>", re.S)


def xml_prolog(head: str) -> tuple[re.Match | None, re.Match | None]:
    """The DOCTYPE (its name, then the rest: public and system ids) and the root element's start tag
    (its name, then its attributes) of an XML document's ``head``; None for either it lacks."""
    return _DOCTYPE.search(head), _ROOT.search(_PROLOG.sub("", head))


def utf8_declared(text: str) -> str:
    """XML text (decoded already) whose declaration says UTF-8, as the bytes handed on are: an
    ISO-8859-1 or windows-1251 declaration would have the next reader decode them again, wrongly."""
    return _DECLARED.sub(r"\1UTF-8\2", text, count=1)


def parse_docbook(text: str, base: Document) -> ParsedDocument:
    return _read(text, base, "docbook")


def parse_jats(text: str, base: Document) -> ParsedDocument:
    return _read(_printed_references(text), base, "jats")


def _printed_references(text: str) -> str:
    """An article's acknowledgments and reference list as the body's last sections, under headings
    of their own: pandoc's JATS reader reads what comes after the body a level too deep, gives an
    untitled ``ack`` no heading (its words would sit under the section before), and keeps a
    reference list as data it prints nowhere, and only for one of JATS's citation elements. Each
    work is a numbered line with its words as the record holds them (authors, year, title, journal,
    volume, pages)."""
    if text.rfind("</body>") < 0:
        return text
    moved = []
    for found in list(_ACK.finditer(text))[:8]:
        inner = found[1]
        title = _REF_TITLE.search(inner)
        heading = title[1] if title else "Acknowledgments"
        moved.append(f"<sec><title>{heading}</title>{_REF_TITLE.sub('', inner, 1) if title else inner}</sec>")
    text = _ACK.sub("", text)
    found = _REF_LIST.search(text)
    if found is not None:
        block = found[0]
        items = [
            "<list-item><p>"
            + " ".join(_TAG.sub(" ", _NOT_PRINTED.sub(" ", ref)).split())
            + "</p></list-item>"
            for ref in _REF.findall(block)
        ]
        if items:
            title = _REF_TITLE.search(block)
            heading = title[1] if title else "References"
            moved.append(
                f'<sec><title>{heading}</title><list list-type="order">{"".join(items)}</list></sec>'
            )
            text = text[: found.start()] + text[found.end() :]
    if not moved:
        return text
    end = text.rfind("</body>")
    return text[:end] + "".join(moved) + text[end:]


def _read(text: str, base: Document, reader: str) -> ParsedDocument:
    if not text.strip():
        return no_blocks(base, "empty", "only whitespace")
    try:
        html = convert(
            utf8_declared(text).encode("utf-8", errors="replace"), reader, extension=reader, args=(_FILTER,)
        )
    except PandocFailed as e:
        return plain_text_instead(text, base, e)
    return read_html_of(html.decode("utf-8", errors="replace"), base)
