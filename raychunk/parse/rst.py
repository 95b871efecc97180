"""reStructuredText (``.rst``): read as Sphinx renders it, through pandoc (``parse/pandoc.py``) and
the HTML parser.

pandoc's RST reader, run in its sandbox (an ``include`` or a ``csv-table`` ``:file:`` reads nothing
from the disk: a document cannot pull another file into the index), turns the file into HTML;
``sphinx.lua`` first puts Sphinx's directives and roles as Sphinx shows them (version notes, object
descriptions, navigation left out, roles as their text). The HTML parser then reads the blocks as
for any page: a definition term joined to its definition (``APPEND: Append the COMMAND ...``),
list items with their numbers, tables with their header rows, code with its language.

Sphinx's file-wide metadata, a field list before anything else in the file (``:title:``,
``:orphan:``, ``:description:``), is not shown by Sphinx and gives no block; its ``title`` is the
document's title. An object description (``.. py:function::``, ``.. envvar::``, CMake's
``.. command::``) is marked for the filter, its signature kept as written (pandoc would read the
``GROUP_`` of ``CTEST_RESOURCE_GROUP_<num>`` as a link); any other directive of a domain
(``.. py:module::``) is renamed ``py-module``, pandoc taking no colon in a directive's name. A
``csv-table`` that reads its rows from a file keeps its caption and no rows.

As for the other formats read through a converter, ``doc.text`` is the blocks' texts joined by
blank lines, so every block satisfies ``doc.text[b.char_start:b.char_end] == b.text``.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import listing, with_reason
from raychunk.parse.pandoc import PandocFailed, convert, plain_text_instead, read_html_of
from raychunk.render import squash

__all__ = ["parse_rst", "rst_html"]

_FILTER = Path(__file__).with_name("sphinx.lua")
_FIELD = re.compile(r":([^:\s][^:]*?):(?:[ \t]+(.*))?")
_COMMENT = re.compile(r"\.\.(?:[ \t]+(?!\S*::)(?![_|\[]).*)?")
# Sphinx's object descriptions (Python, C, C++, JavaScript, the standard and RST domains, CMake's,
# autodoc's), in a domain (``py:function``) or the default one: their argument is a signature.
_OBJECTS = (
    "function|class|method|staticmethod|classmethod|attribute|property|data|exception|decorator|"
    "decoratormethod|type|macro|member|var|struct|union|enum|enumerator|concept|namespace|alias|"
    "describe|object|option|cmdoption|envvar|confval|directive|role|setting|"
    "command|variable|signature|genex|"
    "autofunction|autoclass|automethod|autoattribute|autodata|autoexception|autodecorator|autoproperty"
)
_DOMAIN_DIRECTIVE = re.compile(r"^([ \t]*\.\.[ \t]+)([A-Za-z][\w.]*):([A-Za-z][\w.-]*)(?=::)", re.M)
# ``.. py:function:: send(data)`` and the argument's continuation lines, up to a blank line or the
# directive's first option.
_OBJECT = re.compile(
    rf"^(?P<indent>[ \t]*)\.\.[ \t]+(?:\w+:)?(?:{_OBJECTS})::(?P<arg>[^\n]*)\n(?P<more>(?:(?P=indent)[ \t]+(?!:)\S[^\n]*\n)*)",
    re.M,
)
_FILE_OPTION = re.compile(
    r"^([ \t]*\.\.[ \t]+csv-table::.*\n(?:[ \t]+:[^\n]*\n)*?)[ \t]+:(?:file|url):[^\n]*\n", re.M
)
# ``.. parsed-literal::``: a literal block whose inline markup Sphinx renders (``install(`TARGETS`_
# <target>...)``); pandoc knows no such directive and reads its lines as body text (a definition list
# of a signature's first line, the lines joined).
_PARSED_LITERAL = re.compile(
    r"^(?P<indent>[ \t]*)\.\.[ \t]+parsed-literal::[ \t]*\n"
    r"(?:(?P=indent)[ \t]+:[\w-]+:[^\n]*\n)*"
    r"(?P<body>(?:[ \t]*\n|(?P=indent)[ \t]+\S[^\n]*(?:\n|\Z))+)",
    re.M,
)
_INLINE = re.compile(
    r"``(?P<lit>.+?)``"
    r"|(?::[\w:.+-]+:)?`(?P<ref>(?:[^`\\]|\\.)+)`(?:__?)?"
    r"|(?<![\w*])\*\*(?P<strong>[^*\s](?:[^*]*[^*\s])?)\*\*"
    r"|(?<![\w*])\*(?P<em>[^*\s](?:[^*]*[^*\s])?)\*(?!\w)"
)
_TARGET = re.compile(r"^(?P<text>(?:[^\\]|\\.)*?)\s*(?<!\\)<[^<>]*>$", re.S)
_ESCAPE = re.compile(r"\\(.)")
_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")
_PULLS = re.compile(
    r"^[ \t]*\.\.[ \t]+((?:\w+:)?(?:include|literalinclude|cmake-module|auto\w+))::[ \t]*(\S*)", re.M
)


def parse_rst(text: str, base: Document) -> ParsedDocument:
    title, body = file_metadata(text)
    if not body.strip():
        reason = "only file-wide metadata" if body != text else "only whitespace"
        return ParsedDocument(dataclasses.replace(base, status="empty", reason=reason, title=title), "")
    try:
        html = rst_html(body)
    except PandocFailed as e:
        return plain_text_instead(text, base, e)  # its words are there: awscli's examples, a link left open
    page = read_html_of(html, base, **({"title": title} if title else {}))
    pulls = [(m[1], m[2]) for m in _PULLS.finditer(body)]
    if not page.blocks and pulls:
        names = ", ".join(f".. {name}::" for name in sorted({name for name, _ in pulls}))
        return with_reason(
            page, f"no text of its own: it only pulls in other files ({names}), which are not read from here"
        )
    if included := sorted({target for name, target in pulls if name.endswith("include") and target}):
        note = f"included files not inlined ({listing(included)}): each is read on its own"
        return with_reason(page, "; ".join(x for x in (page.document.reason, note) if x))
    return page


def file_metadata(text: str) -> tuple[str, str]:
    """``(title, text without it)``: Sphinx's file-wide metadata is a field list that comes before
    anything but comments; its ``title`` field names the document.

    >>> file_metadata(":title: AWS CLI S3 Configuration\\n:category: S3\\n\\nThe commands ...\\n")
    ('AWS CLI S3 Configuration', '\\n\\n\\nThe commands ...\\n')
    """
    lines = text.split("\n")
    i, fields, title = 0, [], ""
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        m = _FIELD.fullmatch(line.rstrip())
        if m is None and not (_COMMENT.fullmatch(line.rstrip()) and not fields):
            break
        j = i + 1
        while j < len(lines) and (lines[j][:1] in (" ", "\t") and lines[j].strip()):
            j += 1
        if m is not None:
            fields.append((i, j))
            if m.group(1).strip().lower() == "title":
                title = squash(" ".join([m.group(2) or ""] + [x.strip() for x in lines[i + 1 : j]]))
        i = j
    if not fields or (i < len(lines) and lines[i - 1].strip() and lines[i].strip()):
        return "", text  # no field list, or one that runs into the text: a paragraph, not metadata
    for a, b in fields:
        lines[a:b] = [""] * (b - a)
    return title[:200], "\n".join(lines)


def rst_html(text: str) -> str:
    """The RST ``text`` as HTML, by pandoc in its sandbox with ``sphinx.lua``. Raises PandocFailed
    with where pandoc stopped, and ImportError when pandoc is not installed."""
    text = _PARSED_LITERAL.sub(_literal_block, text)
    text = _OBJECT.sub(_marked_object, text)
    text = _DOMAIN_DIRECTIVE.sub(r"\1\2-\3", text)
    text = _FILE_OPTION.sub(r"\1", text)
    html = convert(
        text.encode("utf-8", errors="replace"), "rst", extension="rst", args=(f"--lua-filter={_FILTER}",)
    )
    return html.decode("utf-8", errors="replace")


def _literal_block(m: re.Match) -> str:
    """A parsed literal as the literal block Sphinx shows: its lines as written, its markup as text
    (a reference or a role its text, emphasis its words)."""
    body = _BLANK_LINES.sub("", m["body"])  # pandoc shows a second blank line after "::" as ":"
    if not body.strip():
        return m.group(0)
    return f"{m['indent']}::\n\n" + _INLINE.sub(_inline_text, body)


def _inline_text(m: re.Match) -> str:
    if m["lit"] is not None:
        return m["lit"]
    if m["ref"] is not None:
        ref = m["ref"]
        if (t := _TARGET.match(ref)) is not None and t["text"]:
            ref = t["text"]
        return _ESCAPE.sub(r"\1", ref)
    return m["strong"] if m["strong"] is not None else m["em"]


def _marked_object(m: re.Match) -> str:
    """An object description as ``.. raychunk-object::`` (``sphinx.lua`` makes it a definition), its
    signature a literal: Sphinx reads the argument as written (``CTEST_RESOURCE_GROUP_<num>``), where
    pandoc would take ``GROUP_`` for a link, or a domain's ``py:function`` for no directive at all."""
    lines = [m["arg"].strip(), *(x.strip() for x in m["more"].splitlines())]
    signature = " ".join(x for x in lines if x)
    if not signature:
        return m.group(0)
    if "``" in signature or signature.endswith("\\"):
        return f"{m['indent']}.. raychunk-object::{m['arg']}\n{m['more']}"
    return f"{m['indent']}.. raychunk-object:: ``{signature}``\n"
