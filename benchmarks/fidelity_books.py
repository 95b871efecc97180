"""Fidelity sections ``epub``, ``rtf`` and ``org``: generated books, word-processor files and Org
notes whose structure is known exactly.

Every case is drawn here with a fixed seed and its truth is what the generator wrote, never what a
parser reads. Scored (``ok / total``) in each section, as in ``fidelity_docx.py``:

- ``headings``: headings written that are heading blocks with the same text (whitespace collapsed)
  at the level written (any level where a book's levels are not consistent, below);
- ``under their heading``: body paragraphs, list items, tables (by their first cell), block quotes
  and code blocks whose block's heading path ends with the heading they were written under (an
  empty path where they come before any heading), across a book's files;
- ``list items``: items whose line (the marker a reader sees, ``-`` for any bullet, two spaces of
  indent per level) is a line of a chunk;
- ``cells``, ``rows``, ``header rows``: as for the other table sections;
- ``read in order``: the texts written (headings, paragraphs, items, each table's first cell,
  quotes), consecutive pairs found in order in the document's text;
- ``title``: the title the file declares (an EPUB's ``dc:title``, RTF's ``{\\info{\\title}}``, Org's
  ``#+TITLE:``) is the document's title or in its text.

``epub``: books packed as EPUB writers pack them, four kinds drawn: Calibre (the package document at
the root, pages ``text/part0003.html``, a chapter split over ``part0003_split_000/001.html``, an
SVG title page holding the cover, EPUB 2 with an NCX only), Sigil (``OEBPS/content.opf``, pages in
``Text/``, often named by hand, ``Chapter 1.xhtml``, so their hrefs are URL-encoded, a cover page
of one ``<img>``, an EPUB 3 navigation document that is sometimes in the spine), Pandoc (``EPUB/``,
a title page, the nav in the spine after it, loose lists' items in ``<p>``, notes as an ``<ol>``
with back-links) and Project Gutenberg's ebookmaker (a title page, headings as
``CHAPTER IV.<br/>Title``, half of them EPUB 3). With any writer a chapter may run on into the
next file, its tail under no heading of its own. The manifest lists the items in another order
than the spine (sorted, or shuffled). Some books have parts: a part's title page (``<h1>``) is a file of its own
and its chapters (``<h2>``, sections ``<h3>``) follow in the next files, so the heading path runs
across files; without parts the chapters are ``<h1>`` or ``<h2>``, and in a share of those the
chapter tag changes from file to file (as converted books have it): their levels are not
consistent and only their text is scored. Chapters hold paragraphs (a drop cap now and then, a
note reference ``<sup>``), epigraphs in ``<blockquote>``, lists (``<ul>``, ``<ol>``, ``start=``,
``type="a"``/``"i"``/``"A"``, nested), tables with a header row of ``<th>`` (in ``<thead>`` or not;
a ``colspan`` or ``rowspan`` now and then, two header rows under a spanning group label); a notes
page with ``linear="no"``, at the end of the spine or right after the chapter whose notes it holds;
in some older books one chapter's file is declared ``iso-8859-1`` and written in Latin-1 bytes (an
accented phrase in each of its paragraphs). Also scored:

- ``navigation left out``: the navigation document's and the NCX's lines (its entries, which repeat
  the headings, its own headings and landmarks) that are no block of the document's, a heading
  block being allowed where the line is a heading the book has (scored on books that are read at
  all: a book not read has lost more than its navigation);
- ``notes read``: the text of each note on the ``linear="no"`` notes page is in the document's text;
- ``accents``: the accented phrases on a Latin-1 page are in the document's text exactly;
- ``quotes``: block quotes whose text is in one chunk, whole.

``rtf``: documents written as four kinds of writer write them: Word (runs in groups with
``\\insrsid``, heading styles ``heading N`` with ``\\outlinelevel`` in the stylesheet and on the
paragraph, or a Normal paragraph given an outline level; lists by the list table, each item led by
``{\\listtext 1.\\tab}``, starting past 1 now and then, letters ``a)``, numerals ``i.``, bullets, a
second level; each table row defined before its cells and again after them, in a group, as Word
does; ``\\'e9`` for a character of the code page, ``\\u1046\\'3f`` beyond it, ``\\rquote`` and its
kin), LibreOffice (``Heading N`` styles with outline levels, ``\\listtext`` lists, ``\\trowd`` per
row, ``\\u233\\'e9`` for every character), WordPad (no headings or tables; lists in ``\\pntext``
with ``{\\*\\pn ...}``, ``\\u1046?`` beyond the code page) and a program's writer (headings mostly
by a stylesheet entry named ``heading N`` alone, with no outline level, else by an outline level on
the paragraph; tables whose later rows reuse the first row's definition, ``\\pard\\intbl ... \\cell
... \\row`` with no new ``\\trowd``, which Word and LibreOffice read as rows of their own; each
character as ``\\uc0\\u233 ``, as macOS's text system writes it; ``\\pntext`` or list-table lists).
A table's first row is its header row (a word processor's table starts with one). Also scored:

- ``escaped characters``: paragraphs holding escaped characters (code-page escapes, ``\\u`` escapes
  of each writer's shape, smart quotes and dashes) whose text is in the document's text exactly.

What pandoc 3.9's RTF reader (raychunk reads RTF through it) cannot express, scored anyway, the
figures being about the document: a heading by style name alone (it reads headings from
``\\outlinelevel`` only), a list number's delimiter (``b)``: its HTML has ``<ol type="a">``), a
list's count after a nested list (it starts a new list there, counting from the list's start
again), a ``\\pntext`` list (a paragraph holding its number, a bullet as a ``·``), and ``\\uN?``:
it skips one character more after the ``?`` (jgm/pandoc#8264, closed, still so in 3.9), so
``Dvo\\u345?\\'e1k`` reads ``Dvořk``.

``org``: Org documents as people keep them: ``#+TITLE:`` / ``#+title:`` and other keyword lines,
now and then a paragraph before the first heading, ``*`` to ``***`` headings, paragraphs filled at
70 columns with inline markup (``*bold*``, ``/italic/``, ``=verbatim=``, links), lists ``1.`` and
``1)`` (numbers written as counted, all ``1.``, or from another number, which Org renumbers from 1;
a ``[@5]`` cookie on the first item starts the count there), ``-`` and ``+`` bullets, task boxes,
items wrapped onto a second line, lists nested under an item's text; aligned tables with a
``|---+---|`` rule under the header row (rows above the first rule are all header rows, as Org
exports them; a table without a rule has none); ``#+BEGIN_QUOTE`` and ``#+BEGIN_SRC`` blocks (upper
or lower case; a source block's lines indented two spaces, as Org's editor leaves them, which
export removes). A ``1)`` item's marker is ``1)``: the delimiter as written. What pandoc's Org
reader cannot express, scored anyway: that delimiter (its HTML has ``<ol>``), and more than one
header row (above the rule it makes none). Also scored:

- ``quotes``: as for ``epub``;
- ``code kept as code``: source blocks that are a code block with the code exactly (common
  indentation removed).
"""

from __future__ import annotations

import io
import random
import re
import textwrap
import urllib.parse
import zipfile
from xml.sax.saxutils import escape

from fidelity import (
    Fresh,
    ListItem,
    Section,
    TruthTable,
    new_truth,
    parse_and_chunk,
    present,
    roman,
    score_code,
    score_document,
    squash,
)

_WORDS = [
    "harbour",
    "lantern",
    "winter",
    "orchard",
    "river",
    "meadow",
    "signal",
    "letter",
    "garden",
    "carriage",
    "voyage",
    "station",
    "window",
    "captain",
    "village",
    "market",
    "bridge",
    "candle",
    "compass",
    "journal",
]
_NAMES = ("Lena Brandt", "Omar Haddad", "Mei Chen", "Ravi Iyer", "Ana Souza")
# accented words of Latin-1 (and so of code page 1252)
_ACCENTED = [
    "café",
    "crème",
    "brûlée",
    "façade",
    "naïve",
    "Zürich",
    "señor",
    "déjà",
    "Ærøskøbing",
    "Ångström",
    "mañana",
    "São",
    "Málaga",
    "Göteborg",
    "garçon",
    "hôtel",
    "fiancée",
    "rôle",
]
# words beyond code page 1252
_FOREIGN = ["Dvořák", "Łódź", "Škoda", "Москва", "Αθήνα", "İzmir", "Đorđe", "Kŕdeľ"]
_PUNCT = ["’", "–", "—", "“", "”"]


def _numeral(n: int, kind: str) -> str:
    """The n-th number of a list of ``kind`` (HTML's ``type``: 1, a, A, i, I)."""
    if kind == "a":
        return chr(96 + n)
    if kind == "A":
        return chr(64 + n)
    if kind == "i":
        return roman(n).lower()
    if kind == "I":
        return roman(n)
    return str(n)


# == epub =============================================================================================

_XHTML_NS = 'xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"'
_EPUB2_DOCTYPE = (
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">'
)
# (package document's folder, pages' folder and images' folder relative to it)
_LAYOUT = {
    "calibre": ("", "text/", "images/"),
    "sigil": ("OEBPS/", "Text/", "Images/"),
    "pandoc": ("EPUB/", "text/", "media/"),
    "gutenberg": ("OEBPS/", "", "images/"),
}
_JPEG = bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9")  # a stand-in: no reader decodes it


class _Page:
    """An item of the package: a page (XHTML bytes) or an image."""

    def __init__(self, name: str, ident: str, *, linear: bool = True, props: str = "", media: str = ""):
        self.name = name  # relative to the package document's folder, not encoded
        self.id = ident
        self.linear = linear
        self.props = props
        self.media = media or "application/xhtml+xml"
        self.data = b""


class _Book:
    """One EPUB being written, with its truth."""

    def __init__(self, rng: random.Random, n: int):
        self.rng = rng
        self.fresh = Fresh(rng, _WORDS)
        self.n = n
        self.profile = rng.choice(["calibre", "sigil", "pandoc", "gutenberg"])
        self.epub3 = self.profile in ("sigil", "pandoc") or (
            self.profile == "gutenberg" and rng.random() < 0.5
        )
        self.t = new_truth() | {"notes": [], "accents": [], "nav": []}
        self.heading: str | None = None
        self.consistent = True
        self.pages: list[_Page] = []  # in spine order
        self.others: list[_Page] = []  # items of the manifest not in the spine (the cover image)
        self.toc: list[tuple[int, str, str]] = []  # (depth, text, page name) for the nav and the NCX
        self.notes: list[tuple[int, str, str]] = []  # (number, text, page name of its reference)
        self.page_no = 0
        self.named = self.profile == "sigil" and rng.random() < 0.7  # files named by hand: "Chapter 1.xhtml"
        self.folder, self.text_dir, self.image_dir = _LAYOUT[self.profile]
        self.css = {"pandoc": "styles/stylesheet1.css", "sigil": "Styles/style.css"}.get(
            self.profile, "stylesheet.css"
        )
        self.title = self.fresh(3)
        self.author = rng.choice(_NAMES)
        self.t["title"] = self.title
        self.loose = self.profile == "pandoc" or rng.random() < 0.2  # list items in <p>
        self.notes_wanted = False  # paragraphs may carry a note reference
        self.notes_done = False

    # -- names -----------------------------------------------------------------------------------------

    def page_name(self, what: str, k: int = 0, split: int = 0) -> str:
        self.page_no += 1
        i = self.page_no
        if self.profile == "calibre":
            return f"text/part{i:04d}" + (f"_split_{split - 1:03d}" if split else "") + ".html"
        if self.profile == "sigil":
            if self.named:
                base = {"part": f"Part {roman(k)}", "chapter": f"Chapter {k}", "notes": "Notes"}[what]
                return f"Text/{base}{f' ({split})' if split > 1 else ''}.xhtml"
            return f"Text/Section{i:04d}.xhtml"
        if self.profile == "pandoc":
            return f"text/ch{i:03d}.xhtml"
        return f"@public@vhost@g@gutenberg@html@files@{self.n}@{self.n}-h@{self.n}-h-{i}.htm.xhtml"

    def href(self, name: str) -> str:
        return urllib.parse.quote(name, safe="/@")

    def link(self, frm: str, to: str) -> str:
        """``to`` as a page named ``frm`` links to it: relative to its folder, URL-encoded."""
        a, b = frm.rsplit("/", 1)[0] if "/" in frm else "", to.rsplit("/", 1)
        if len(b) == 2 and b[0] == a:
            return self.href(b[1])
        return self.href(("../" if a else "") + to)

    # -- pages -----------------------------------------------------------------------------------------

    def page(self, name: str, head: str, body: list[str], *, latin1: bool = False, linear: bool = True, **kw):
        epub_type = kw.pop("epub_type", "bodymatter")
        p = _Page(name, self.ident(name), linear=linear, **kw)
        css = self.link(name, self.css)
        encoding = "iso-8859-1" if latin1 else self.rng.choice(["utf-8", "UTF-8"])
        doctype = "<!DOCTYPE html>" if self.epub3 else _EPUB2_DOCTYPE
        inner = "\n".join(body)
        if self.profile == "calibre":
            inner = f'<div class="calibre1">\n{inner}\n</div>'
            body_open = '<body class="calibre">'
        elif self.profile == "pandoc":
            body_open = f'<body epub:type="{epub_type}">'
            inner = f'<section class="level1">\n{inner}\n</section>'
        elif self.profile == "gutenberg":
            body_open = "<body>"
            inner = f'<div class="chapter">\n{inner}\n</div>'
        else:
            body_open = "<body>"
        html = (
            f'<?xml version="1.0" encoding="{encoding}"?>\n{doctype}\n<html {_XHTML_NS} xml:lang="en" lang="en">\n'
            f'<head>\n<title>{escape(head)}</title>\n<link href="{css}" rel="stylesheet" type="text/css"/>\n'
            f"</head>\n{body_open}\n{inner}\n</body>\n</html>\n"
        )
        p.data = html.encode("latin-1" if latin1 else "utf-8")
        self.pages.append(p)
        return p

    def ident(self, name: str) -> str:
        if self.profile == "sigil":
            return re.sub(r"[^A-Za-z0-9_.-]", "_", name.rsplit("/", 1)[-1])
        if self.profile == "pandoc":
            return name.rsplit("/", 1)[-1].split(".")[0] + "_xhtml"
        return f"id{len(self.pages) + len(self.others) + 1}"

    # -- truth -----------------------------------------------------------------------------------------

    def heading_html(self, level: int, text: str, *, numbered: str = "") -> str:
        """A heading written at ``level`` (``<hN>``); ``numbered`` a number line before the title, on
        a line of its own (``CHAPTER IV.<br/>The title``)."""
        shown = f"{numbered} {text}" if numbered else text  # as a reader reads it, on one line
        self.t["headings"].append((shown, level if self.consistent else None))
        self.t["order"].append(shown)
        self.heading = shown
        cls = ' class="calibre3"' if self.profile == "calibre" else ""
        anchor = f'<a id="h{len(self.t["headings"])}"></a>' if self.profile == "gutenberg" else ""
        inner = f"{escape(numbered)}<br/>{escape(text)}" if numbered else escape(text)
        return f'<h{level}{cls} id="toc_{len(self.t["headings"])}">{anchor}{inner}</h{level}>'

    def body(self, text: str) -> None:
        self.t["under"].append((text, self.heading))
        self.t["order"].append(text)

    # -- blocks ----------------------------------------------------------------------------------------

    def paragraph(self, name: str, *, first: bool = False, accent: bool = False) -> str:
        key = self.fresh(self.rng.randint(5, 9))
        self.body(key)
        html = escape(key)
        if first and self.rng.random() < 0.15:  # a drop cap
            html = f'<span class="dropcap">{html[0]}</span>{html[1:]}'
        if accent:
            phrase = self.fresh(3, _ACCENTED, cap=False)
            self.t["accents"].append(phrase)
            html += f" {escape(phrase)}"
        if self.rng.random() < 0.4:
            html += f" <i>{self.rng.choice(_WORDS)} {self.rng.choice(_WORDS)}</i>"
        html += "."
        if self.notes_wanted and self.rng.random() < 0.25:
            k = len(self.notes) + 1
            self.notes.append((k, self.fresh(self.rng.randint(6, 10)) + ".", name))
            html += f'<a id="r{k}" href="{{notes}}#n{k}"><sup>{k}</sup></a>'
        cls = ' class="calibre2"' if self.profile == "calibre" else ""
        if first and self.profile != "pandoc":
            cls = ' class="noindent"'
        return f"<p{cls}>{html}</p>"

    def quote(self) -> str:
        text = self.fresh(self.rng.randint(8, 14)) + "."
        self.body(text)
        self.t["quotes"].append(text)
        tail = ""
        if self.rng.random() < 0.5:
            tail = f'\n<p class="attribution">&#8212; {self.rng.choice(_NAMES)}</p>'
        return f'<blockquote class="epigraph">\n<p>{escape(text)}</p>{tail}\n</blockquote>'

    def html_list(self, level: int = 0) -> list[str]:
        kind = self.rng.choices(["ul", "1", "start", "a", "i", "A"], [8, 6, 2, 2, 2, 1])[0]
        start = self.rng.choice([2, 3, 5, 7, 10]) if kind == "start" else 1
        if kind == "ul":
            out = ["<ul>"]
        else:
            attrs = "" if kind in ("1", "start") else f' type="{kind}"'
            attrs += f' start="{start}"' if start != 1 else ""
            if kind in ("a", "i") and self.rng.random() < 0.3:
                start = self.rng.choice([2, 3])
                attrs += f' start="{start}"'
            out = [f"<ol{attrs}>"]
        for j in range(self.rng.randint(2, 4)):
            text = self.fresh(self.rng.randint(3, 6))
            marker = "-" if kind == "ul" else _numeral(start + j, "1" if kind == "start" else kind) + "."
            self.t["items"].append(ListItem(text, marker, level))
            self.body(text)
            item = f"<p>{escape(text)}</p>" if self.loose else escape(text)
            if level < 2 and self.rng.random() < 0.25:
                out.append(f"<li>{item}")
                out += self.html_list(level + 1)
                out.append("</li>")
            else:
                out.append(f"<li>{item}</li>")
        out.append("</ul>" if kind == "ul" else "</ol>")
        return out

    def table(self) -> list[str]:
        ncols = self.rng.randint(3, 4)
        two_heads = ncols == 3 and self.rng.random() < 0.2
        head = [self.fresh(1) for _ in range(ncols)]
        rows = [
            [self.fresh(2)]
            + [str(self.rng.randint(1, 999)) for _ in range(ncols - 2)]
            + [self.fresh(1, cap=False)]
            for _ in range(self.rng.randint(2, 4))
        ]
        out = ['<table class="calibre5">' if self.profile == "calibre" else "<table>"]
        thead = self.rng.random() < 0.6 or two_heads
        if two_heads:
            group, sub = self.fresh(1), [self.fresh(1), self.fresh(1)]
            truth = [[head[0], group, group], [head[0], *sub]]
            out += [
                "<thead>",
                f'<tr><th rowspan="2">{escape(head[0])}</th><th colspan="2">{escape(group)}</th></tr>',
                f"<tr><th>{escape(sub[0])}</th><th>{escape(sub[1])}</th></tr>",
                "</thead>",
            ]
        else:
            truth = [head]
            ths = "".join(f"<th>{escape(c)}</th>" for c in head)
            out += [f"<thead><tr>{ths}</tr></thead>" if thead else f"<tr>{ths}</tr>"]
        out.append("<tbody>" if thead else "")
        down = len(rows) >= 2 and self.rng.random() < 0.2  # a label over the first two rows
        across = self.rng.random() < 0.2  # the last row's last two cells as one
        if down:
            rows[1][0] = rows[0][0]
        if across:
            rows[-1][-1] = rows[-1][-2]
        for r, row in enumerate(rows):
            cells = []
            for c, value in enumerate(row):
                if down and c == 0 and r == 1:
                    continue
                if across and r == len(rows) - 1 and c == ncols - 1:
                    continue
                attrs = ' rowspan="2"' if down and c == 0 and r == 0 else ""
                if across and r == len(rows) - 1 and c == ncols - 2:
                    attrs = ' colspan="2"'
                cells.append(f"<td{attrs}>{escape(value)}</td>")
            out.append(f"<tr>{''.join(cells)}</tr>")
        out.append("</tbody>" if thead else "")
        out.append("</table>")
        truth += rows
        self.t["tables"].append(TruthTable(tuple(map(tuple, truth)), 2 if two_heads else 1))
        self.body(head[0])
        return [x for x in out if x]

    # -- the book --------------------------------------------------------------------------------------

    def write(self) -> None:
        rng = self.rng
        parts = rng.randint(2, 3) if rng.random() < 0.4 else 0
        title_heading = self.profile in ("pandoc", "gutenberg")
        # under parts, or under Gutenberg's title, a chapter is an <h2>; else either
        chapter_level = 2 if parts or self.profile == "gutenberg" else rng.choice([1, 2])
        mixed = not parts and rng.random() < 0.25  # the chapter tag changes from file to file
        self.notes_wanted = rng.random() < 0.6
        latin1 = self.profile != "pandoc" and rng.random() < 0.25  # an older book's page
        if rng.random() < 0.7:
            self.cover()
        if title_heading:
            self.consistent = True
            body = [self.heading_html(1, self.title), f'<p class="author">{escape(self.author)}</p>']
            self.t["order"].append(self.author)
            self.t["under"].append((self.author, self.title))
            name = "text/title_page.xhtml" if self.profile == "pandoc" else self.page_name("chapter", 0)
            if self.profile == "pandoc":
                self.page_no += 1
            self.page(name, self.title, body, epub_type="frontmatter")
            self.toc.append((0, self.title, name))
        self.consistent = not mixed
        chapters = [rng.randint(2, 3) for _ in range(parts)] if parts else [rng.randint(3, 5)]
        latin1_at = rng.randrange(sum(chapters)) if latin1 else -1
        notes_after = rng.randrange(sum(chapters)) if rng.random() < 0.3 else -1
        k = 0
        for p, count in enumerate(chapters):
            if parts:
                name = self.page_name("part", p + 1)
                text = self.fresh(3)
                body = [self.heading_html(1, text, numbered=f"Part {roman(p + 1)}.")]
                self.toc.append((0, self.heading, name))
                if rng.random() < 0.5:
                    body.append(self.quote())
                self.page(name, self.heading, body)
            for _ in range(count):
                level = rng.choice([1, 2]) if mixed else chapter_level
                self.chapter(k + 1, level, 1 if parts else 0, latin1=k == latin1_at)
                if k == notes_after and self.notes:
                    self.notes_page(level)  # right after the chapter whose notes it holds
                k += 1
        if self.notes and not self.notes_done:
            self.notes_page(chapter_level if not mixed else 1)

    def chapter(self, k: int, level: int, depth: int, *, latin1: bool) -> None:
        rng = self.rng
        split = rng.random() < 0.3  # the chapter's tail in a file of its own
        name = self.page_name("chapter", k, split=int(split))
        numbered = ""
        if self.profile == "gutenberg":
            numbered = f"CHAPTER {roman(k)}."
        elif rng.random() < 0.3:
            numbered = f"Chapter {k}"
        blocks = [self.heading_html(level, self.fresh(3), numbered=numbered)]
        head = self.heading
        self.toc.append((depth, head, name))
        if rng.random() < 0.25:
            blocks.append(self.quote())
        blocks.append(self.paragraph(name, first=True, accent=latin1))
        features = [
            f for f, share in (("list", 0.5), ("table", 0.35), ("section", 0.35)) if rng.random() < share
        ]
        rng.shuffle(features)
        for f in features:
            if f == "list":
                blocks.append("\n".join(self.html_list()))
            elif f == "table":
                blocks.append("\n".join(self.table()))
            else:
                blocks.append(self.heading_html(level + 1, self.fresh(3)))
            blocks.append(self.paragraph(name, accent=latin1))
        for _ in range(rng.randint(0, 2)):
            blocks.append(self.paragraph(name, accent=latin1))
        at = rng.randint(2, len(blocks) - 1) if split and len(blocks) > 2 else len(blocks)
        self.page(name, head, blocks[:at], latin1=latin1)
        if at < len(blocks):
            if self.profile == "calibre":
                name2 = name.replace("_split_000", "_split_001")
            else:
                name2 = self.page_name("chapter", k, split=2)
            self.page(name2, head, blocks[at:], latin1=latin1)

    def cover(self) -> None:
        img = f"{self.image_dir}cover.jpg" if self.profile != "calibre" else "cover.jpeg"
        self.others.append(
            _Page(img, "cover-image", media="image/jpeg", props="cover-image" if self.epub3 else "")
        )
        self.others[-1].data = _JPEG
        name = {"calibre": "titlepage.xhtml", "gutenberg": "wrap0000.xhtml"}.get(
            self.profile, f"{self.text_dir}cover.xhtml"
        )
        src = self.link(name, img)
        if self.profile == "calibre":
            body = [
                '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" version="1.1" '
                'width="100%" height="100%" viewBox="0 0 600 800" preserveAspectRatio="none">',
                f'<image width="600" height="800" xlink:href="{src}"/></svg>',
            ]
        else:
            body = [f'<div class="cover"><img src="{src}" alt=""/></div>']
        self.page(name, self.title, body, linear=self.rng.random() < 0.7, epub_type="cover")

    def notes_page(self, level: int) -> None:
        name = self.page_name("notes")
        if self.profile == "sigil" and self.named:
            name = "Text/Notes.xhtml"
        elif self.profile == "pandoc":
            name = "text/notes.xhtml"
        self.t["headings"].append(("Notes", level if self.consistent else None))
        body = [f"<h{level}>Notes</h{level}>"]
        if self.profile == "pandoc":
            body.append('<section class="footnotes" epub:type="endnotes" role="doc-endnotes">\n<ol>')
        for k, text, ref in self.notes:
            back = self.link(name, ref) + f"#r{k}"
            self.t["notes"].append(text)
            if self.profile == "pandoc":
                body.append(
                    f'<li id="n{k}"><p>{escape(text)}<a href="{back}" class="footnote-back" '
                    'role="doc-backlink">&#8617;&#65038;</a></p></li>'
                )
            else:
                body.append(f'<p id="n{k}" class="note"><a href="{back}">{k}.</a> {escape(text)}</p>')
        if self.profile == "pandoc":
            body.append("</ol>\n</section>")
        for p in self.pages:
            p.data = p.data.replace(b"{notes}", self.link(p.name, name).encode("ascii"))
        self.page(name, "Notes", body, linear=False, epub_type="backmatter")
        self.toc.append((0, "Notes", name))
        self.notes_wanted, self.notes_done = False, True

    # -- navigation and packing ------------------------------------------------------------------------

    def nav(self) -> _Page | None:
        if not self.epub3:
            return None
        name = {"sigil": "Text/nav.xhtml", "pandoc": "nav.xhtml"}.get(self.profile, "toc.xhtml")
        toc_title = self.rng.choice(["Table of Contents", "Contents"])
        lines = [toc_title]
        out = [f'<nav epub:type="toc" id="toc" role="doc-toc">\n<h1>{toc_title}</h1>\n<ol>']
        depth = 0
        for d, text, target in self.toc:
            while depth < d:
                out[-1] = out[-1].removesuffix("</li>")
                out.append("<ol>")
                depth += 1
            while depth > d:
                out.append("</ol></li>")
                depth -= 1
            out.append(f'<li><a href="{self.link(name, target)}">{escape(text)}</a></li>')
            lines.append(text)
        while depth > 0:
            out.append("</ol></li>")
            depth -= 1
        out.append("</ol>\n</nav>")
        marks = [("cover", "Cover"), ("toc", "Table of Contents"), ("bodymatter", "Begin Reading")]
        out.append('<nav epub:type="landmarks" id="landmarks" hidden="">\n<h2>Landmarks</h2>\n<ol>')
        for kind, label in marks:
            out.append(
                f'<li><a epub:type="{kind}" href="{self.link(name, self.pages[0].name)}">{label}</a></li>'
            )
        out.append("</ol>\n</nav>")
        lines += ["Landmarks"] + [label for _, label in marks]
        page = _Page(name, "nav", props="nav")
        page.data = (
            '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n'
            f'<html {_XHTML_NS} xml:lang="en" lang="en">\n<head><title>{escape(self.title)}</title></head>\n'
            f"<body>\n{chr(10).join(out)}\n</body>\n</html>\n"
        ).encode()
        self.t["nav"] += lines
        return page

    def ncx(self) -> bytes:
        points: list[str] = []
        opened: list[int] = []  # the depths of the navPoints open
        for k, (d, text, target) in enumerate(self.toc, 1):
            while opened and opened[-1] >= d:
                points.append("</navPoint>")
                opened.pop()
            opened.append(d)
            points.append(
                f'<navPoint id="np{k}" playOrder="{k}"><navLabel><text>{escape(text)}</text></navLabel>'
                f'<content src="{self.href(target)}"/>'
            )
        points += ["</navPoint>"] * len(opened)
        self.t["nav"] += [text for _, text, _ in self.toc if text not in self.t["nav"]]
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">\n'
            f'<head><meta name="dtb:uid" content="urn:uuid:{self.n:08d}"/><meta name="dtb:depth" content="2"/></head>\n'
            f"<docTitle><text>{escape(self.title)}</text></docTitle>\n<navMap>\n{chr(10).join(points)}\n</navMap>\n</ncx>\n"
        ).encode()

    def save(self) -> bytes:
        rng = self.rng
        nav = self.nav()
        spine = list(self.pages)
        if nav is not None:
            if self.profile == "pandoc":
                at = next(i for i, p in enumerate(spine) if p.name.endswith("title_page.xhtml"))
                spine.insert(at + 1, nav)  # after the title page, as pandoc writes it
            elif rng.random() < 0.5:
                spine.append(nav)  # Sigil's place for it
        css = self.css
        items = [(p.id, p.name, p.media, p.props) for p in self.pages]
        items += [(p.id, p.name, p.media, p.props) for p in self.others]
        items.append(("css", css, "text/css", ""))
        items.append(("ncx", "toc.ncx", "application/x-dtbncx+xml", ""))
        if nav is not None:
            items.append((nav.id, nav.name, "application/xhtml+xml", "nav"))
        if rng.random() < 0.5:
            items.sort(key=lambda x: (x[2], x[1]))  # by kind, then name (as Sigil lists them)
        else:
            rng.shuffle(items)
        manifest = "\n".join(
            f'<item id="{i}" href="{self.href(h)}" media-type="{m}"'
            + (f' properties="{pr}"' if pr else "")
            + "/>"
            for i, h, m, pr in items
        )
        itemrefs = "\n".join(
            f'<itemref idref="{p.id}"' + ("" if p.linear else ' linear="no"') + "/>" for p in spine
        )
        version = "3.0" if self.epub3 else "2.0"
        modified = '<meta property="dcterms:modified">2024-03-01T10:00:00Z</meta>' if self.epub3 else ""
        opf = (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<package xmlns="http://www.idpf.org/2007/opf" '
            f'version="{version}" unique-identifier="uid">\n'
            '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">\n'
            f'<dc:identifier id="uid">urn:uuid:{self.n:08d}-0000-4000-8000-000000000000</dc:identifier>\n'
            f"<dc:title>{escape(self.title)}</dc:title>\n<dc:creator>{escape(self.author)}</dc:creator>\n"
            f"<dc:language>en</dc:language>\n{modified}\n</metadata>\n"
            f'<manifest>\n{manifest}\n</manifest>\n<spine toc="ncx">\n{itemrefs}\n</spine>\n</package>\n'
        )
        opf_path = f"{self.folder}content.opf"
        container = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">\n'
            f'<rootfiles><rootfile full-path="{opf_path}" media-type="application/oebps-package+xml"/></rootfiles>\n'
            "</container>\n"
        )
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED)
            z.writestr("META-INF/container.xml", container)
            z.writestr(opf_path, opf)
            for p in [*self.pages, *self.others] + ([nav] if nav is not None else []):
                z.writestr(self.folder + p.name, p.data)
            z.writestr(self.folder + css, "body { margin: 0 }\n.dropcap { float: left }\n")
            z.writestr(self.folder + "toc.ncx", self.ncx())
        return buf.getvalue()


def book(rng: random.Random, n: int) -> tuple[bytes, dict]:
    b = _Book(rng, n)
    b.write()
    return b.save(), b.t


def score_book(section: Section, case: str, data: bytes, t: dict) -> None:
    parsed, chunks = parse_and_chunk(data, f"{case}.epub", max_tokens=8192)
    score_document(section, case, "epub", parsed, chunks, t)
    headings = {squash(text) for text, _ in t["headings"]}
    ok = 0
    lines = list(dict.fromkeys(t["nav"])) if parsed.blocks else []  # a book not read is not scored here
    for line in lines:
        bad = [
            b
            for b in parsed.blocks
            if squash(b.text) == line and not (b.kind == "heading" and line in headings)
        ]
        if bad:
            section.miss(f"{case}: navigation line {line!r} read as a {bad[0].kind}")
        else:
            ok += 1
    if lines:
        section.add("navigation left out", "epub", ok, len(lines))
    present(section, case, "epub", "notes read", t["notes"], parsed.text)
    present(section, case, "epub", "accents", t["accents"], parsed.text)


EPUB_SEED = 11


def epub_section(fast: bool) -> Section:
    s = Section("epub")
    rng = random.Random(EPUB_SEED)
    for i in range(4 if fast else 20):
        data, truth = book(rng, 1000 + i)
        score_book(s, f"book-{i}", data, truth)
    return s


# == rtf ==============================================================================================

_CP1252_WORDS = {
    "’": "rquote",
    "‘": "lquote",
    "“": "ldblquote",
    "”": "rdblquote",
    "–": "endash",
    "—": "emdash",
}


def _rtf_escape(text: str, how: str) -> str:
    """``text`` in RTF as the writer ``how`` escapes what is not ASCII."""
    out = []
    for ch in text:
        if ch in "\\{}":
            out.append("\\" + ch)
            continue
        if ord(ch) < 128:
            out.append(ch)
            continue
        try:
            byte = ch.encode("cp1252")[0]
        except UnicodeEncodeError:
            byte = None
        n = ord(ch) if ord(ch) < 32768 else ord(ch) - 65536
        if how == "word":
            if ch in _CP1252_WORDS:
                out.append(f"\\{_CP1252_WORDS[ch]} ")
            elif byte is not None:
                out.append(f"\\'{byte:02x}")
            else:
                out.append(f"\\u{n}\\'3f")
        elif how == "libreoffice":
            out.append(f"\\u{n}\\'{byte if byte is not None else 0x3F:02x}")
        elif how == "wordpad":
            if ch in _CP1252_WORDS:
                out.append(f"\\{_CP1252_WORDS[ch]} ")
            elif byte is not None:
                out.append(f"\\'{byte:02x}")
            else:
                out.append(f"\\u{n}?")
        else:  # a program's writer (as macOS's text system): no fallback, \uc0 each time
            out.append(f"\\uc0\\u{n} ")
    return "".join(out)


_RTF_FORMATS = {  # a list's kind -> its \levelnfc
    "1": 0,
    "a": 4,
    "i": 2,
    "bullet": 23,
}


class _Rtf:
    """One RTF document being written, with its truth."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.fresh = Fresh(rng, _WORDS)
        self.profile = rng.choices(["word", "libreoffice", "wordpad", "program"], [35, 25, 15, 25])[0]
        self.t = new_truth() | {"escaped": []}
        self.heading: str | None = None
        self.out: list[str] = []
        self.lists: list[
            tuple[int, list[tuple[str, str, int]]]
        ] = []  # (listid, levels (kind, delimiter, start))
        self.rsid = rng.randint(100000, 999999)
        self.listtext = self.profile in ("word", "libreoffice") or (
            self.profile == "program" and rng.random() < 0.5
        )

    # -- paragraphs ------------------------------------------------------------------------------------

    def runs(self, text: str, *, bold: bool = False) -> str:
        """The text as the writer splits it into runs (Word: at a word, now and then)."""
        b = "\\b" if bold else ""
        if self.profile == "word":
            words = text.split(" ")
            cut = (
                self.rng.randint(1, len(words) - 1)
                if len(words) > 2 and self.rng.random() < 0.5
                else len(words)
            )
            pieces = [" ".join(words[:cut]), " ".join(words[cut:])]
            return "".join(
                f"{{\\rtlch\\fcs1 \\af31507 \\ltrch\\fcs0 {b}\\insrsid{self.rsid} "
                f"{_rtf_escape((' ' if i else '') + x, 'word')}}}"
                for i, x in enumerate(pieces)
                if x
            )
        esc = _rtf_escape(text, self.profile)
        if self.profile == "libreoffice":
            return f"{{\\rtlch \\ltrch\\loch{b} {esc}}}"
        return f"{{{b} {esc}}}" if bold else esc

    def para_end(self) -> str:
        if self.profile == "word":
            return f"{{\\rtlch\\fcs1 \\af31507 \\ltrch\\fcs0 \\insrsid{self.rsid} \\par }}"
        return "\\par"

    def normal(self) -> str:
        return {
            "word": "\\pard\\plain \\ltrpar\\ql \\li0\\ri0\\sa160\\sl259\\slmult1\\widctlpar\\wrapdefault\\aspalpha"
            "\\aspnum\\faauto\\adjustright\\rin0\\lin0\\itap0 \\rtlch\\fcs1 \\af31507\\afs22\\alang1025 \\ltrch\\fcs0 "
            "\\f31506\\fs22\\lang1033\\langfe1033\\cgrid\\langnp1033\\langfenp1033 ",
            "libreoffice": "\\pard\\plain \\s0\\ql\\widctlpar\\hyphpar0\\ltrpar\\cf0\\kerning1\\dbch\\af5\\langfe2052"
            "\\dbch\\af6\\afs24\\alang1081\\loch\\f3\\hich\\af3\\fs24\\lang2057\\sb0\\sa140",
            "wordpad": "\\pard\\sa200\\sl276\\slmult1\\f0\\fs22\\lang9 ",
            "program": "\\pard\\plain\\s0 ",
        }[self.profile]

    def paragraph(self, *, escaped: bool = False) -> None:
        key = self.fresh(self.rng.randint(5, 9))
        text = key
        if escaped:
            words = self.rng.sample(_ACCENTED, 2)
            if self.rng.random() < 0.6:
                words.insert(self.rng.randint(0, 2), self.rng.choice(_FOREIGN))
            if self.rng.random() < 0.5:
                p = self.rng.choice(_PUNCT)
                words[-1] = {"’": f"{words[-1]}’s", "“": f"“{words[-1]}”", "”": f"“{words[-1]}”"}.get(
                    p, words[-1]
                )
                if p in "–—":
                    words.insert(1, p)
            text = f"{key} {' '.join(words)} {self.rng.randint(10, 99)}"
            self.t["escaped"].append(text + ".")
        self.t["under"].append((key, self.heading))
        self.t["order"].append(key)
        self.out.append(f"{self.normal()}{self.runs(text + '.')}{self.para_end()}")

    def heading_par(self, level: int, how: str) -> None:
        text = self.fresh(3)
        self.heading = text
        self.t["headings"].append((text, level))
        self.t["order"].append(text)
        s, o = level, level - 1
        if how == "style":
            if self.profile == "word":
                props = (
                    f"\\pard\\plain \\ltrpar\\s{s}\\ql \\li0\\ri0\\sb240\\keepn\\widctlpar\\wrapdefault\\aspalpha"
                    f"\\aspnum\\faauto\\outlinelevel{o}\\adjustright\\rin0\\lin0\\itap0\\pararsid{self.rsid} "
                    f"\\rtlch\\fcs1 \\af31503\\afs{34 - 2 * level}\\alang1025 \\ltrch\\fcs0 \\fs{34 - 2 * level}\\cf19"
                    "\\lang1033\\langfe1033\\loch\\af31502\\hich\\af31502\\dbch\\af31501\\cgrid\\langnp1033\\langfenp1033 "
                )
                mark = f"_Toc{self.rng.randint(10**8, 10**9)}"
                self.out.append(
                    f"{props}{{\\*\\bkmkstart {mark}}}{self.runs(text)}{{\\*\\bkmkend {mark}}}{self.para_end()}"
                )
            else:  # libreoffice
                props = f"\\pard\\plain \\s{s}\\outlinelevel{o}\\ql\\keepn\\sb240\\sa120\\ltrpar\\b\\fs{36 - 4 * level}"
                self.out.append(f"{props}{self.runs(text)}{self.para_end()}")
        elif how == "outline":  # a Normal paragraph given an outline level
            self.out.append(f"{self.normal()}\\outlinelevel{o}{self.runs(text, bold=True)}{self.para_end()}")
        else:  # by the style's name alone
            self.out.append(
                f"\\pard\\plain\\s{s}\\keepn\\sb240\\b\\fs{34 - 2 * level} {_rtf_escape(text, 'program')}\\par"
            )

    # -- lists ---------------------------------------------------------------------------------------

    def rtf_list(self) -> None:
        rng = self.rng
        kind = rng.choices(["1", "bullet", "a", "i"], [5, 4, 1, 1])[0]
        delim = ")" if kind == "a" or (kind == "1" and rng.random() < 0.15) else "."
        start = rng.choice([2, 3, 5]) if kind != "bullet" and rng.random() < 0.2 else 1
        if not self.listtext:
            self.pn_list(kind, delim, start)
            return
        sub = rng.choice(["bullet", "a", "i"])
        levels = [(kind, delim, start), (sub, ".", 1)]
        list_id = 1000 + len(self.lists)
        ls = len(self.lists) + 1
        self.lists.append((list_id, levels))
        count = [start - 1, 0]
        for _ in range(rng.randint(2, 4)):
            self.list_item(ls, 0, levels, count)
            if rng.random() < 0.3:
                count[1] = 0
                for _ in range(rng.randint(1, 2)):
                    self.list_item(ls, 1, levels, count)

    def list_item(self, ls: int, level: int, levels, count: list[int]) -> None:
        kind, delim, _ = levels[level]
        start = levels[level][2]
        count[level] += 1
        n = count[level] if level == 0 else start + count[level] - 1
        shown = "-" if kind == "bullet" else _numeral(n, kind) + delim
        text = self.fresh(self.rng.randint(3, 6))
        self.t["items"].append(ListItem(text, shown, level))
        self.t["under"].append((text, self.heading))
        self.t["order"].append(text)
        indent = 720 * (level + 1)
        if kind == "bullet":
            mark = "\\'b7" if level == 0 else "o"
            font = "\\f3" if level == 0 else "\\f10"
        else:
            mark, font = shown, "\\f31506"
        if self.profile == "word":
            listtext = (
                f"{{\\listtext\\pard\\plain\\ltrpar \\rtlch\\fcs1 \\af31507\\afs22 \\ltrch\\fcs0 {font}"
                f"\\fs22\\insrsid{self.rsid} \\hich\\af31506\\dbch\\af31505\\loch\\f31506 {mark}\\tab}}"
            )
            props = (
                f"\\pard\\plain \\ltrpar\\s34\\ql \\fi-360\\li{indent}\\ri0\\sa160\\sl259\\slmult1\\widctlpar"
                f"\\wrapdefault\\aspalpha\\aspnum\\faauto\\ls{ls}\\ilvl{level}\\adjustright\\rin0\\lin{indent}\\itap0"
                f"\\pararsid{self.rsid}\\contextualspace \\rtlch\\fcs1 \\af31507\\afs22\\alang1025 \\ltrch\\fcs0 "
                "\\f31506\\fs22\\lang1033\\langfe1033\\cgrid\\langnp1033\\langfenp1033 "
            )
            self.out.append(f"{listtext}{props}{self.runs(text)}{self.para_end()}")
        elif self.profile == "libreoffice":
            props = f"\\pard\\plain \\s24\\ls{ls}\\ilvl{level}\\li{indent}\\ri0\\lin{indent}\\rin0\\fi-360\\sb0\\sa0"
            listtext = f"{{\\listtext\\pard\\plain {font} {mark}\\tab}}"
            self.out.append(f"{props}{listtext}{self.runs(text)}\\par")
        else:
            listtext = f"{{\\listtext {font} {mark}\\tab}}"
            self.out.append(
                f"{listtext}\\pard\\ls{ls}\\ilvl{level}\\fi-360\\li{indent} {self.runs(text)}\\par"
            )

    def pn_list(self, kind: str, delim: str, start: int) -> None:
        """A list as WordPad (and Word 95) write one: each item's number as text, ``\\pntext``."""
        pn = {"1": "\\pndec", "a": "\\pnlcltr", "i": "\\pnlcrm"}.get(kind, "")
        for j in range(self.rng.randint(2, 4)):
            text = self.fresh(self.rng.randint(3, 6))
            shown = "-" if kind == "bullet" else _numeral(start + j, kind) + delim
            self.t["items"].append(ListItem(text, shown, 0))
            self.t["under"].append((text, self.heading))
            self.t["order"].append(text)
            if kind == "bullet":
                pntext = "{\\pntext\\f1\\'b7\\tab}"
                pnset = "{\\*\\pn\\pnlvlblt\\pnf1\\pnindent0{\\pntxtb\\'b7}}"
            else:
                pntext = f"{{\\pntext\\f0 {shown}\\tab}}"
                pnset = f"{{\\*\\pn\\pnlvlbody\\pnf0\\pnindent0\\pnstart{start}{pn}{{\\pntxta{delim}}}}}"
            if j == 0:
                self.out.append(
                    f"\\pard{pntext}{pnset}\n\\fi-360\\li720\\sa200\\sl276\\slmult1 {self.runs(text)}\\par"
                )
            else:
                self.out.append(f"{pntext}{self.runs(text)}\\par")

    # -- tables --------------------------------------------------------------------------------------

    def table(self, how: str) -> None:
        rng = self.rng
        ncols = rng.randint(2, 4)
        rows = [[self.fresh(1) for _ in range(ncols)]]
        rows += [
            [self.fresh(2)]
            + [str(rng.randint(1, 999)) for _ in range(ncols - 2)]
            + [self.fresh(1, cap=False)]
            for _ in range(rng.randint(2, 4))
        ]
        self.t["tables"].append(TruthTable(tuple(map(tuple, rows)), 1))
        self.t["under"].append((rows[0][0], self.heading))
        self.t["order"].append(rows[0][0])
        width = 9000 // ncols
        border = "\\clbrdrt\\brdrs\\brdrw10 \\clbrdrl\\brdrs\\brdrw10 \\clbrdrb\\brdrs\\brdrw10 \\clbrdrr\\brdrs\\brdrw10 "
        cells = "".join(f"{border}\\cellx{width * (c + 1)}" for c in range(ncols))
        for r, row in enumerate(rows):
            trowd = f"\\trowd \\irow{r}\\irowband{r}\\ltrrow\\trgaph108\\trleft-108 {cells}"
            if how == "word":
                texts = "".join(
                    f"{self.runs(x)}{{\\rtlch\\fcs1 \\af31507 \\ltrch\\fcs0 \\insrsid{self.rsid} \\cell }}"
                    for x in row
                )
                self.out.append(
                    f"{trowd}\\pard\\plain \\ltrpar\\ql \\li0\\ri0\\widctlpar\\intbl\\wrapdefault\\aspalpha\\aspnum"
                    f"\\faauto\\adjustright\\rin0\\lin0\\pararsid{self.rsid}\\yts11 \\rtlch\\fcs1 \\af31507\\afs22 "
                    f"\\ltrch\\fcs0 \\f31506\\fs22 {texts}\\pard\\plain \\ltrpar\\ql \\li0\\ri0\\sa160\\sl259\\slmult1"
                    f"\\widctlpar\\intbl\\wrapdefault\\aspalpha\\aspnum\\faauto\\adjustright\\rin0\\lin0 \\rtlch\\fcs1 "
                    f"\\af31507\\afs22 \\ltrch\\fcs0 \\f31506\\fs22 {{\\rtlch\\fcs1 \\af31507 \\ltrch\\fcs0 "
                    f"\\insrsid{self.rsid} {trowd}\\row }}"
                )
            elif how == "own":  # LibreOffice: each cell a paragraph of its own
                texts = "\\pard\\plain \\s0\\intbl ".join(f"{self.runs(x)}\\cell" for x in row)
                self.out.append(f"{trowd}\n\\pard\\plain \\s0\\intbl\\ql {texts}\\row")
            else:  # the first row's definition reused
                texts = "".join(f"{self.runs(x)}\\cell " for x in row)
                lead = f"{trowd}\n" if r == 0 else ""
                plain = self.rng.choice(["", "\\plain"])
                self.out.append(f"{lead}\\pard{plain}\\intbl {texts}\\row")

    # -- the document ----------------------------------------------------------------------------------

    def write(self) -> None:
        rng = self.rng
        if self.profile in ("word", "libreoffice") and rng.random() < 0.4:
            self.t["title"] = self.fresh(3)
        heads = self.profile != "wordpad"
        n = rng.randint(3, 5)
        if not heads or rng.random() < 0.3:
            self.paragraph()
        level = 0
        for i in range(n):
            if heads:
                level = 1 if i == 0 else rng.randint(1, min(level + 1, 3))
                if self.profile == "program":
                    how = "name" if rng.random() < 0.6 else "outline"
                elif self.profile == "word":
                    how = "style" if rng.random() < 0.75 else "outline"
                else:
                    how = "style"
                self.heading_par(level, how)
            self.paragraph(escaped=rng.random() < 0.35)
            for f in [
                f for f, share in (("list", 0.5), ("table", 0.4), ("escaped", 0.3)) if rng.random() < share
            ]:
                if f == "list":
                    self.rtf_list()
                elif f == "table" and self.profile != "wordpad":
                    how = {"word": "word", "libreoffice": "own"}.get(self.profile)
                    self.table(how or ("reuse" if rng.random() < 0.8 else "own"))
                elif f == "escaped":
                    self.paragraph(escaped=True)
                self.paragraph()

    def header(self) -> str:
        styles = ["{\\ql \\widctlpar\\f0\\fs22 \\snext0 Normal;}"]
        for s in (1, 2, 3):
            name = f"{'Heading' if self.profile == 'libreoffice' else 'heading'} {s}"
            outline = "" if self.profile == "program" else f"\\outlinelevel{s - 1}"
            styles.append(
                f"{{\\s{s}\\ql\\keepn\\sb240{outline}\\b\\fs{34 - 2 * s} \\sbasedon0 \\snext0 {name};}}"
            )
        styles.append("{\\s34\\ql \\fi-360\\li720 \\sbasedon0 \\snext34 List Paragraph;}")
        lists = []
        for list_id, levels in self.lists:
            lv = []
            for k, (kind, delim, start) in enumerate(levels):
                nfc = _RTF_FORMATS[kind]
                if kind == "bullet":
                    text = (
                        "{\\leveltext\\leveltemplateid67698689\\'01\\u-3913 ?;}{\\levelnumbers;}\\f3"
                        if k == 0
                        else ("{\\leveltext\\leveltemplateid67698691\\'01o;}{\\levelnumbers;}\\f10")
                    )
                else:
                    text = f"{{\\leveltext\\'02\\'0{k}{delim};}}{{\\levelnumbers\\'01;}}"
                lv.append(
                    f"{{\\listlevel\\levelnfc{nfc}\\levelnfcn{nfc}\\leveljc0\\leveljcn0\\levelfollow0"
                    f"\\levelstartat{start}\\levelspace360\\levelindent0{text}\\fi-360\\li{720 * (k + 1)}"
                    f"\\lin{720 * (k + 1)} }}"
                )
            lists.append(
                f"{{\\list\\listtemplateid{list_id * 7}\\listhybrid{''.join(lv)}{{\\listname ;}}\\listid{list_id}}}"
            )
        table = ""
        if lists:
            overrides = "".join(
                f"{{\\listoverride\\listid{list_id}\\listoverridecount0\\ls{k + 1}}}"
                for k, (list_id, _) in enumerate(self.lists)
            )
            table = f"{{\\*\\listtable{''.join(lists)}}}\n{{\\*\\listoverridetable{overrides}}}\n"
        info = ""
        if self.t["title"]:
            info = f"{{\\info{{\\title {self.t['title']}}}{{\\author {self.rng.choice(_NAMES)}}}}}\n"
        fonts = (
            "{\\fonttbl{\\f0\\fswiss\\fcharset0 Calibri;}{\\f1\\fnil\\fcharset2 Symbol;}{\\f3\\fbidi \\froman"
            "\\fcharset2\\fprq2 Symbol;}{\\f10\\fbidi \\fnil\\fcharset2\\fprq2 Wingdings;}{\\f31506\\fbidi \\fswiss"
            "\\fcharset0\\fprq2 Calibri;}}"
        )
        lead = {
            "word": "{\\rtf1\\adeflang1025\\ansi\\ansicpg1252\\uc1\\adeff31507\\deff0\\deflang1033\\deflangfe1033",
            "libreoffice": "{\\rtf1\\ansi\\deff3\\adeflang1025",
            "wordpad": "{\\rtf1\\ansi\\ansicpg1252\\deff0\\nouicompat\\deflang1033",
            "program": "{\\rtf1\\ansi\\ansicpg1252\\deff0",
        }[self.profile]
        generator = {
            "wordpad": "{\\*\\generator Riched20 10.0.19041}",
            "libreoffice": "{\\*\\generator LibreOffice/7.6.4.1$Linux_X86_64 LibreOffice_project/1}",
        }.get(self.profile, "")
        sheet = "" if self.profile == "wordpad" else f"{{\\stylesheet{''.join(styles)}}}\n"
        return f"{lead}{fonts}\n{sheet}{table}{generator}{info}\\viewkind4\\uc1\n"

    def save(self) -> bytes:
        return (self.header() + "\n".join(self.out) + "\n}\n").encode("ascii")


def rtf_document(rng: random.Random) -> tuple[bytes, dict]:
    d = _Rtf(rng)
    d.write()
    return d.save(), d.t


def score_rtf(section: Section, case: str, data: bytes, t: dict) -> None:
    parsed, chunks = parse_and_chunk(data, f"{case}.rtf", max_tokens=8192)
    score_document(section, case, "rtf", parsed, chunks, t)
    present(section, case, "rtf", "escaped characters", t["escaped"], parsed.text)


RTF_SEED = 12


def rtf_section(fast: bool) -> Section:
    s = Section("rtf")
    rng = random.Random(RTF_SEED)
    for i in range(4 if fast else 30):
        data, truth = rtf_document(rng)
        score_rtf(s, f"rtf-{i}", data, truth)
    return s


# == org ==============================================================================================

_CODE = {
    "python": "def {name}(rows):\n    total = 0\n    for row in rows:\n        if row:\n            total += row\n    return total",
    "sh": 'for f in *.log; do\n  gzip "$f"\ndone\necho {name}',
    "emacs-lisp": '(defun {name} ()\n  (interactive)\n  (message "done"))',
}


_ORG_ITEM = re.compile(r"\s*(?:\d+[.)]|[-+*])(?:\s|$)|\s*[#|*:]")


class _Org:
    """One Org document being written, with its truth."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.fresh = Fresh(rng, _WORDS)
        self.t = new_truth() | {"code": []}
        self.heading: str | None = None
        self.lines: list[str] = []
        self.upper = rng.random() < 0.4  # #+BEGIN_QUOTE or #+begin_quote

    def kw(self, word: str) -> str:
        return word.upper() if self.upper else word.lower()

    def fill(self, text: str) -> list[str]:
        """``text`` filled at 70 columns or a little less, so that no line starts as an item would
        (``412. ...``: Org would read a list there)."""
        for width in range(70, 40, -1):
            lines = textwrap.wrap(text, width)
            if not any(_ORG_ITEM.match(x) for x in lines):
                return lines
        return [text]

    def paragraph(self) -> None:
        key = self.fresh(self.rng.randint(5, 9))
        self.t["under"].append((key, self.heading))
        self.t["order"].append(key)
        extra = ""
        w = self.rng.choice(_WORDS)
        match self.rng.randrange(6):
            case 0:
                extra = f" about *{w}*"
            case 1:
                extra = f" and /{w}/ again"
            case 2:
                extra = f" with ={w}.conf="
            case 3:
                extra = f" see [[https://example.org/{w}][the {w} page]]"
        self.lines += self.fill(f"{key}{extra}. {self.fresh(self.rng.randint(4, 8))}.")
        self.lines.append("")

    def heading_line(self, level: int) -> None:
        text = self.fresh(3)
        self.heading = text
        self.t["headings"].append((text, level))
        self.t["order"].append(text)
        self.lines.append(f"{'*' * level} {text}")
        if self.rng.random() < 0.2:
            self.lines += [":PROPERTIES:", f":CUSTOM_ID: sec-{len(self.t['headings'])}", ":END:"]
        if self.rng.random() < 0.5:
            self.lines.append("")

    def org_list(self, level: int = 0, indent: str = "") -> None:
        """A list: its numbers as written (counted, all ``1.``, or counted from another number) are
        not what Org shows, which counts from 1 or from a ``[@N]`` cookie on the first item."""
        rng = self.rng
        kind = rng.choices(["1.", "1)", "-", "+", "task"], [6, 1, 5, 2, 1])[0]
        numbered = kind in ("1.", "1)")
        written = rng.choices(["count", "ones", "offset"], [7, 2, 1])[0] if numbered else ""
        cookie = rng.choice([3, 5, 10]) if numbered and rng.random() < 0.2 else 0
        offset = rng.choice([2, 4]) if written == "offset" else 0
        for j in range(rng.randint(2, 4)):
            text = self.fresh(rng.randint(3, 6))
            if kind == "task":
                done = rng.random() < 0.5
                bullet, marker = f"- [{'X' if done else ' '}]", "- [x]" if done else "- [ ]"
            elif numbered:
                n = 1 if written == "ones" else 1 + j + offset
                bullet = f"{n}{kind[1]}" + (f" [@{cookie}]" if cookie and j == 0 else "")
                marker = f"{(cookie or 1) + j}{kind[1]}"
            else:
                bullet, marker = kind, "-"
            self.t["under"].append((text, self.heading))
            self.t["order"].append(text)
            lead = f"{indent}{bullet} "
            if rng.random() < 0.15:  # wrapped onto a second line, under the item's text
                tail = self.fresh(rng.randint(3, 5), cap=False)
                self.lines += [f"{lead}{text}", " " * len(lead) + tail]
                text = f"{text} {tail}"
            else:
                self.lines.append(f"{lead}{text}")
            self.t["items"].append(ListItem(text, marker, level))
            if level < 2 and rng.random() < 0.25:  # under the item's text
                self.org_list(level + 1, indent + " " * (len(bullet.split(" [")[0]) + 1))

    def table(self) -> None:
        rng = self.rng
        ncols = rng.randint(2, 4)
        heads = rng.choices([1, 0, 2], [8, 1, 1])[0]
        rows = [[self.fresh(1) for _ in range(ncols)] for _ in range(max(heads, 1))]
        rows += [
            ([self.fresh(2)] + [str(rng.randint(1, 999)) for _ in range(ncols - 1)])[:ncols]
            for _ in range(rng.randint(2, 4))
        ]
        self.t["tables"].append(TruthTable(tuple(map(tuple, rows)), heads))
        self.t["under"].append((rows[0][0], self.heading))
        self.t["order"].append(rows[0][0])
        widths = [max(len(r[c]) for r in rows) for c in range(ncols)]

        def line(row):
            return (
                "| "
                + " | ".join(x.rjust(w) if x.isdigit() else x.ljust(w) for x, w in zip(row, widths))
                + " |"
            )

        rule = "|" + "+".join("-" * (w + 2) for w in widths) + "|"
        for r, row in enumerate(rows):
            self.lines.append(line(row))
            if heads and r == heads - 1:
                self.lines.append(rule)
        self.lines.append("")

    def quote(self) -> None:
        text = self.fresh(self.rng.randint(10, 16)) + "."
        self.t["quotes"].append(text)
        self.t["under"].append((text, self.heading))
        self.t["order"].append(text)
        self.lines += [f"#+{self.kw('begin_quote')}", *self.fill(text), f"#+{self.kw('end_quote')}", ""]

    def src(self) -> None:
        lang = self.rng.choice(list(_CODE))
        name = self.fresh(2, cap=False).replace(" ", "-" if lang == "emacs-lisp" else "_")
        code = _CODE[lang].format(name=name)
        self.t["code"].append(code)
        self.t["under"].append((name, self.heading))
        self.t["order"].append(name)
        indent = "  " if self.rng.random() < 0.5 else ""
        body = [indent + x if x else x for x in code.split("\n")]
        self.lines += [f"#+{self.kw('begin_src')} {lang}", *body, f"#+{self.kw('end_src')}", ""]

    def write(self) -> None:
        rng = self.rng
        if rng.random() < 0.7:
            self.t["title"] = self.fresh(3)
            self.lines.append(f"#+{self.kw('title')}: {self.t['title']}")
            self.lines.append(f"#+{self.kw('author')}: {rng.choice(_NAMES)}")
            if rng.random() < 0.5:
                self.lines.append(f"#+{self.kw('options')}: toc:nil num:nil")
            self.lines.append("")
        if rng.random() < 0.4:
            self.paragraph()
        level = 0
        for i in range(rng.randint(3, 6)):
            level = 1 if i == 0 else rng.randint(1, min(level + 1, 3))
            self.heading_line(level)
            self.paragraph()
            features = [
                f
                for f, s in (("list", 0.6), ("table", 0.4), ("quote", 0.3), ("src", 0.3))
                if rng.random() < s
            ]
            rng.shuffle(features)
            for f in features:
                getattr(self, {"list": "org_list", "table": "table", "quote": "quote", "src": "src"}[f])()
                if f == "list":
                    self.lines.append("")
                self.paragraph()

    def save(self) -> bytes:
        return ("\n".join(self.lines) + "\n").encode("utf-8")


def org_document(rng: random.Random) -> tuple[bytes, dict]:
    d = _Org(rng)
    d.write()
    return d.save(), d.t


def score_org(section: Section, case: str, data: bytes, t: dict) -> None:
    parsed, chunks = parse_and_chunk(data, f"{case}.org", max_tokens=8192)
    score_document(section, case, "org", parsed, chunks, t)
    score_code(section, case, "org", parsed, t["code"])


ORG_SEED = 13


def org_section(fast: bool) -> Section:
    s = Section("org")
    rng = random.Random(ORG_SEED)
    for i in range(4 if fast else 20):
        data, truth = org_document(rng)
        score_org(s, f"org-{i}", data, truth)
    return s


SECTIONS = {"epub": epub_section, "rtf": rtf_section, "org": org_section}
