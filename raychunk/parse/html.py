"""HTML: a streaming parse of the decoded source into headings, paragraphs, list items, code and tables.

Invariant: ``doc.text`` is the decoded HTML source, and a block's span ``text[char_start:char_end]``
is the source of its element: from the start of its opening tag to the end of its closing tag, or
to the end of its last content where the element ends implicitly (tag soup, end of file) or where a
nested block splits it (an ``li`` stops where its nested list starts; text after the nested list is
a block of its own). Loose text in a container (``<div>text</div>``) spans its text and inline tags.
``block.text`` is the visible text of the span: tags, comments and dropped boilerplate removed,
character references decoded, whitespace collapsed, ``<br>`` a line break; ``pre`` keeps its layout
(a page whose body is ``<pre>`` text is read by the plain-text rules: ``html_pre``) and a table's text is ``render_table`` of its cells. So for a paragraph,
``squash(strip_tags(text[start:end]))`` with entities decoded equals ``squash(block.text)``.

It is built on the stdlib's streaming ``html.parser`` rather than a tree builder: lxml silently
drops everything below ~255 nesting levels, and a tree walk can hit the recursion limit, while a
stream of events has neither problem. Nothing is fetched and no entity is resolved (an internal DTD
subset is blanked out before parsing, so its ``]>`` does not leak into the text).

>>> doc = parse_html("<h1>T</h1><p>a &amp; b<ul><li>x</ul>", Document("id", "a.html", "html", "ok"))
>>> [(b.kind, b.text, b.heading_path) for b in doc.blocks]
[('heading', 'T', ()), ('paragraph', 'a & b', ('T',)), ('list_item', 'x', ('T',))]
"""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import BlockStream, bold_label, cell_text, clean_text, finish, roman
from raychunk.parse.html_pre import preformatted_body
from raychunk.render import render_table, squash

__all__ = ["BOILERPLATE_CLASSES", "BOILERPLATE_IDS", "html_blocks", "html_lines", "parse_html"]

_TASK_BOX = re.compile(r"\[([ xX])\][ \t]+(?=\S)")  # a task box written as text at an item's start

_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# fmt: off
_VOID = frozenset({
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input", "keygen",
    "link", "meta", "param", "source", "track", "wbr",
})
# Dropped with everything inside them. header/footer only outside article/main/section; form is
# judged when it closes (ASP.NET pages wrap the whole body in one).
_BOILERPLATE = frozenset({
    "script", "style", "noscript", "template", "svg", "nav", "aside", "button", "select", "iframe",
    "textarea", "object", "applet", "frameset",
    "rustdoc-topbar", "rustdoc-toolbar",  # rustdoc's bar over the page: the item's name again, settings
})
_BOILERPLATE_ROLES = frozenset({"navigation", "banner", "contentinfo", "search"})
BOILERPLATE_CLASSES = frozenset({
    "mw-editsection", "navbox", "sr-only", "visually-hidden", "screen-reader-text", "mw-jump-link",
    "headerlink", "copiable-link", "nav-panel",
    # tables of contents (DocBook XSL's, MediaWiki's), DocBook's previous/next bars over and under a page
    "toc", "navheader", "navfooter",
    # documentation generators' chrome: Drupal's screen-reader text, skip links, heading permalinks
    # (rustdoc's "§", VuePress's and markdown-it-anchor's "#", Docusaurus's), rustdoc's toggles
    "element-invisible", "skip-link", "skip-main-content", "skip-to-content", "skiplink", "doc-anchor",
    "header-anchor", "hash-link", "anchorjs-link", "hideme",
    # pandoc's footnote marks: the back-link ("↩︎") and the reference's number, which runs into the
    # word before it ("last1.")
    "footnote-back", "footnote-ref",
})
# mdBook's key help, and its menu bar (buttons, and the book's name as an h1 over every page's own)
BOILERPLATE_IDS = frozenset({"skip-link", "skip-to-content", "mdbook-help-container", "mdbook-menu-bar", "menu-bar"})
# Chrome by class on one element only: rustdoc's permalink (§), source link and example tooltip
# (ⓘ), Node.js's permalink (#), and rustdoc's "stable since" version, which beside every method
# reads as a paragraph "1.0.0 · Source".
_BOILERPLATE_BY_TAG = {"a": frozenset({"anchor", "src", "tooltip", "mark"}), "span": frozenset({"since"})}
# Texinfo's node menus and its indexes, tables of links to the sections (makeinfo 6: "menu",
# "index-cp"; 7: "cp-entries-printindex", and the letters over and under each index).
_TEXINFO_NAVIGATION = re.compile(r"menu$|index-\w+$|[\w-]+-printindex$")
# ... and its node links over a page (makeinfo 6's div.header): "Next: What is libffi? [Index]"
_TEXINFO_NODE_LINKS = re.compile(
    r"(?:(?:Next|Previous|Prev|Up): [^,\n]{1,200}?,?\s*)+(?:\[(?:Contents|Index)\]\s*)*"
)
# A teaser link's whole text: "Read more", "Continue reading →", "[Read more...]"
_READ_MORE = re.compile(
    r"[\[(]?(?:read more|continue reading|read the (?:full|rest of the) (?:story|article|post))"
    r"(?:\s*(?:»|→|›|>>|\.\.\.|…))?[\])]?",
    re.IGNORECASE,
)
# Block-level elements: they end the text run they interrupt and are tracked on the element stack.
_BLOCK = frozenset({
    "address", "article", "aside", "blockquote", "caption", "center", "details", "dialog", "dd", "dir",
    "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
    "h6", "header", "hgroup", "hr", "li", "listing", "main", "menu", "nav", "ol", "p", "pre", "section",
    "summary", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "legend", "xmp", "plaintext",
    "noframes",
})
# fmt: on
_TRACKED = _BLOCK | {"title"}
# Start tags that close an open <p> (HTML spec, "close a p element" in button scope).
_CLOSES_P = _BLOCK - {"caption", "td", "th", "tr", "tbody", "thead", "tfoot", "legend", "noframes"}
# Elements that bound the scope in which an end tag or an implicit close may find its element.
_SCOPE = frozenset({"table", "td", "th", "caption", "template", "object", "applet", "marquee", "button"})
# "Special" elements that stop an <li>/<dd> start tag from closing an outer <li>/<dd>.
_LI_BARRIER = (_BLOCK - {"div", "p", "address", "li", "dd", "dt"}) | _SCOPE
_TABLE_PARTS = frozenset({"tr", "td", "th", "thead", "tbody", "tfoot", "caption"})
_CONTENT = frozenset({"article", "main", "section"})
_LANG_CLASS = re.compile(r"(?:^|\s)(?:language-|lang-|highlight-source-|highlight-|brush:\s*)([\w+#.-]+)")
# Bare class names taken as a language on <pre>/<code> (class="javascript").
# fmt: off
_LANGUAGES = frozenset({
    "bash", "c", "cpp", "csharp", "css", "go", "haskell", "html", "java", "javascript", "js", "json",
    "kotlin", "lua", "perl", "php", "python", "ruby", "rust", "scala", "shell", "sh", "sql", "swift",
    "typescript", "ts", "xml", "yaml",
})
# fmt: on
_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t]*\r?\n)+")
_TAGLIKE = re.compile(r"<[A-Za-z!/?]")
_DOCTYPE_SUBSET = re.compile(r"<!DOCTYPE[^>\[]*\[.*?\]\s*>", re.IGNORECASE | re.DOTALL)
_META_NAMES = ("description", "author", "keywords", "og:title", "og:description", "og:site_name")

_PARA = ("paragraph", 0, None)
# Elements whose own span a block takes: the run of text they open starts at their opening tag.
_ANCHORED = _HEADINGS | {
    "p",
    "li",
    "dt",
    "dd",
    "blockquote",
    "caption",
    "figcaption",
    "summary",
    "legend",
    "pre",
}
_LINK_SCOPE = frozenset({"p", "li", "td", "th", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6"})
_CURRENCY = frozenset({"$", "€", "£", "¥"})
_CLOSERS = frozenset({")", "%", ")%"})
_NUMBER_START = re.compile(r"[(\-\u2014\u2013]?\s*[\d.,]|[\u2014\u2013-]$")
_NUMBER = re.compile(r"[$€£¥]?\(?[-\u2013\u2014]?\s*\d[\d.,]*\s*\Z")

# An output op: (kind, text, start, end, level, language, rows, header_rows, link_chars, marker,
# copies), replayed into a BlockStream at the end so that tables can decide late (data or layout)
# what they emit. ``marker``: a list item's, or _TERM / _DEFINITION for a definition list's term and
# the first block of its definition, which the replay joins (``Term: definition``); ``copies``: a
# table's cells that repeat a cell spanning rows or columns (``Block.copies``).
_TERM, _DEFINITION = "\x00term", "\x00definition"


class _Frame:
    """An open element. Index fields point at the nearest open element of a sort within its scope."""

    __slots__ = (
        "tag", "start", "ctx", "anchor", "lists", "content", "lang", "p", "li", "dd", "h",
        "tbl", "sect", "tr", "cell", "table", "sink", "skip", "inner", "hidden", "cdata", "sink_mark",
        "list", "numbering", "counter", "marker", "used", "flat", "quoted",
    )  # fmt: skip

    def __init__(self, tag: str, start: int, parent: _Frame | None):
        self.tag = tag
        self.start = start
        if parent is None:
            self.ctx, self.anchor, self.lists, self.content, self.lang = None, None, 0, False, None
            self.p = self.li = self.dd = self.h = self.tbl = self.sect = self.tr = self.cell = -1
            self.list = -1
            self.quoted = False
        else:
            self.ctx, self.anchor, self.lists = parent.ctx, parent.anchor, parent.lists
            self.content, self.lang = parent.content, parent.lang
            self.p, self.li, self.dd, self.h = parent.p, parent.li, parent.dd, parent.h
            self.tbl, self.sect, self.tr, self.cell = parent.tbl, parent.sect, parent.tr, parent.cell
            self.list = parent.list
            self.quoted = parent.quoted
        self.table = None
        self.numbering: str | None = None  # an <ol>'s type (1, a, A, i, I); None for other lists
        self.counter = 0
        self.marker = ""  # an <li>'s marker, given to its first block only
        self.used = False  # a <dd> whose first block has been joined to its term
        self.sink = None
        self.skip = False
        self.inner: dict[str, int] | None = None
        self.hidden = 0
        self.cdata = False
        self.sink_mark: tuple[list, int] | None = None
        self.flat = False  # a <div> inside a heading: a line of the heading, not a block of its own


class _Run:
    """The text block being collected: pieces of decoded text, None marking a <br>."""

    __slots__ = (
        "start",
        "end",
        "ctx",
        "anchor",
        "lang",
        "pieces",
        "has_text",
        "brs",
        "before_br",
        "links",
        "holder",
        "chars",
        "bold",
    )

    def __init__(self, start: int, end: int, ctx: tuple, anchor: _Frame | None, holder: _Frame | None = None):
        self.start, self.end, self.ctx, self.anchor = start, end, ctx, anchor
        # loose text's nearest <li>, <dt> or <dd> (``<li><div>text</div></li>``): whose marker it takes
        self.holder = holder
        self.lang = ctx[2]
        self.pieces: list[str | None] = []
        self.has_text = False
        self.brs = 0
        self.before_br = end
        self.links = 0  # characters of text inside <a>, to spot link lists (menus, language lists)
        self.chars = 0  # characters of text, and of them inside <b> or <strong>: a bold line's heading
        self.bold = 0


class _Table:
    __slots__ = ("role", "rows", "stray", "caption")

    def __init__(self, role: str):
        self.role = role
        self.rows: list[_Row] = []
        self.stray: list[tuple] = []
        self.caption: list[tuple] = []


class _Row:
    __slots__ = ("cells", "head")

    def __init__(self, head: bool):
        self.cells: list[_Cell] = []
        self.head = head


class _Cell:
    __slots__ = ("ops", "th", "span", "rows")

    def __init__(self, th: bool, span: int, rows: int = 1):
        self.ops: list[tuple] = []
        self.th = th
        self.span = span
        self.rows = rows


def parse_html(
    text: str, base: Document, *, bold_headings: bool = True, preformatted_pages: bool = True
) -> ParsedDocument:
    """Parse decoded HTML ``text`` into blocks whose spans point into ``text`` itself. A ``<p>``
    wholly in bold that reads as a label is a heading (``BlockStream.bold_heading``), unless
    ``bold_headings`` is off (a manual page's bold is a command or a file name). A page whose body is
    mostly ``<pre>`` has them read as text (``html_pre``), unless ``preformatted_pages`` is off (a
    converter's ``<pre>`` is a literal block its source marked as such)."""
    fed = _blank_doctype_subset(text)
    cut = text.rfind("<")
    truncated = cut >= 0 and ">" not in text[cut:] and _TAGLIKE.match(text, cut) is not None
    if truncated:
        fed = fed[:cut]  # a tag cut off by the end of the file is not text
    keep: set[int] = set()
    for _ in range(4):
        events = _Events(text, keep)
        events.run(fed)
        # An unclosed boilerplate element (say an <aside> never closed) hides the rest of the page,
        # which a browser would show; parse again with that element kept.
        lost = events.unclosed_skip
        if lost is None or lost.start in keep or lost.cdata or lost.hidden < 2000:
            break
        keep.add(lost.start)

    stream = BlockStream()
    ops = _items_whole(_with_terms(events.ops))
    if preformatted_pages:
        ops = preformatted_body(text, ops)
    for kind, btext, start, end, level, language, rows, header_rows, _, marker, copies in ops:
        if kind == "heading":
            if level:
                stream.heading(btext, level, start, end)
                continue
            if bold_headings:
                stream.bold_heading(btext, start, end)
                continue
            kind = "paragraph"
        kw: dict = {}
        if level:
            kw["level"] = level
        if language:
            kw["language"] = language
        if rows:
            kw["rows"], kw["header_rows"] = rows, header_rows
        if copies:
            kw["copies"] = copies
        if marker:
            kw["marker"] = marker
        stream.add(kind, btext, start, end, **kw)

    changes: dict = {}
    title = squash(clean_text("".join(events.title_parts))) if events.title_parts else ""
    if not title:
        title = next((b.text for b in stream.blocks if b.kind == "heading" and b.level == 1), "")
    if title:
        changes["title"] = title[:200]
    if events.metadata:
        changes["metadata"] = tuple(events.metadata.items())
    if (target := _redirect(text)) and sum(len(b.text) for b in stream.blocks) <= 300:
        changes["reason"] = f"a redirect to {target[:200]} (a meta refresh): that page is read on its own"
        return finish(base, text, [], **changes)
    reasons = []
    if truncated:
        reasons.append(f"truncated: the file ends inside a tag at offset {cut}")
    if not stream.blocks:
        reasons.append("no visible text outside markup and boilerplate")
    if reasons:
        changes["reason"] = "; ".join(reasons)
    return finish(base, text, stream.blocks, **changes)


_REFRESH = re.compile(
    r"""<meta\b[^>]*?\bhttp-equiv\s*=\s*["']?refresh["']?[^>]*?\bcontent\s*=\s*(["'])\s*(\d+(?:\.\d*)?)\s*[;,]\s*(?:url\s*=\s*)?['"]?([^"'>\s]+)""",
    re.I,
)
_REFRESH_FIRST = re.compile(
    r"""<meta\b[^>]*?\bcontent\s*=\s*(["'])\s*(\d+(?:\.\d*)?)\s*[;,]\s*(?:url\s*=\s*)?['"]?([^"'>\s]+)[^>]*?\bhttp-equiv\s*=\s*["']?refresh""",
    re.I,
)


def _redirect(text: str) -> str:
    """Where a page sends its reader at once (``<meta http-equiv="refresh" content="0; URL=...">``,
    within 10 seconds: mdBook's, Sphinx's and MkDocs' moved pages), else ''."""
    head = text[:8192]
    if "refresh" not in head.lower():
        return ""
    m = _REFRESH.search(head) or _REFRESH_FIRST.search(head)
    return unescape(m[3]) if m and float(m[2]) <= 10 else ""


def html_blocks(fragment: str) -> list[tuple]:
    """The blocks of an HTML fragment (inline HTML in markdown, an HTML block), as
    ``(kind, text, start, end, level, language, rows, header_rows, marker, copies)`` with spans into the
    fragment, by the same rules as a page: headings, paragraphs, list items with their markers,
    tables with their rows, a definition term joined to its definition."""
    events = _Events(fragment, set())
    events.run(_blank_doctype_subset(fragment))
    return [(*op[:8], op[9], op[10]) for op in _items_whole(_with_terms(events.ops))]


def html_lines(fragment: str, *, breaks: bool = True) -> list[str]:
    """An HTML fragment's visible text as lines: one per block (a numbered item with its number), a
    table one line per row with its cells joined by ``, ``; a ``<br>`` a line break (with
    ``breaks=False``, as in a table cell, where it wraps a line: a space).

    >>> html_lines("<b>30 s</b><br>per request <details><summary>More</summary><table>"
    ...            "<tr><td>a</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></table></details>")
    ['30 s', 'per request', 'More', 'a, 1', 'b, 2']
    """
    lines: list[str] = []
    for op in html_blocks(fragment):
        found = _op_lines(op, breaks=breaks)
        if op[0] == "list_item" and op[8] not in ("", "-") and found:
            found[0] = f"{op[8]} {found[0]}"
        lines.extend(line for line in found if line.strip())
    return lines


def _blank_doctype_subset(text: str) -> str:
    """Replace a DOCTYPE with an internal subset (``<!ENTITY ...>``) by spaces, keeping offsets."""
    head = text[:65536]
    m = _DOCTYPE_SUBSET.search(head)
    if m is None:
        return text
    blank = re.sub(r"[^\n]", " ", m.group())
    return text[: m.start()] + blank + text[m.end() :]


def _language(attrs: dict, *, bare: bool = False) -> str | None:
    """The language a class="language-x" / "lang-x" (or, on pre/code, a bare "python") names."""
    cls = attrs.get("class")
    if cls:
        m = _LANG_CLASS.search(cls)
        if m:
            return m.group(1).lower()
        if bare:
            for token in cls.lower().split():
                if token in _LANGUAGES:
                    return token
    lang = attrs.get("data-lang") or attrs.get("data-language")
    return lang.lower() if lang else None


def _with_terms(ops: list[tuple]) -> list[tuple]:
    """``ops`` with each definition term joined to the first block of the definition after it: one
    block ``Term: definition`` spanning both, so the two are never chunked apart."""
    out: list[tuple] = []
    for op in ops:
        marker = op[9]
        if marker == _DEFINITION and out and out[-1][9] == _TERM:
            term = out.pop()
            text = f"{term[1]}{'' if term[1].endswith(':') else ':'} {op[1]}"
            op = (op[0], text, term[2], *op[3:9], "", op[10])
        elif marker == _DEFINITION:
            op = (*op[:9], "", op[10])
        if out and out[-1][9] == _TERM:
            out[-1] = (*out[-1][:9], "", out[-1][10])
        out.append(op)
    if out and out[-1][9] == _TERM:
        out[-1] = (*out[-1][:9], "", out[-1][10])
    return out


def _items_whole(ops: list[tuple]) -> list[tuple]:
    """``ops`` with a list item's later paragraphs (``<li><p>a</p><p>b</p></li>``: only its first
    block has the marker) joined to the item's block, one item ``a\nb`` spanning both, as Markdown's
    loose item reads; one after a block nested in the item (a list, code, a table) cannot join it
    and is a paragraph, not an item of its own."""
    out: list[tuple] = []
    parts: list[str] = []  # the texts of the item ``out[-1]`` is, while paragraphs join it
    for op in ops:
        if op[0] == "list_item" and not op[9]:
            last = out[-1] if out else None
            if last is not None and last[0] == "list_item" and last[4] == op[4]:
                if not parts:
                    parts.append(last[1])
                parts.append(op[1])
                out[-1] = (last[0], "", last[2], op[3], *last[4:8], last[8] + op[8], *last[9:])
                continue
            op = ("paragraph", *op[1:4], 0, *op[5:])
        if parts:
            out[-1] = (out[-1][0], "\n".join(parts), *out[-1][2:])
            parts = []
        out.append(op)
    if parts:
        out[-1] = (out[-1][0], "\n".join(parts), *out[-1][2:])
    return out


def _op_lines(op: tuple, *, breaks: bool = True) -> list[str]:
    """An op's text as lines: a table's rows (cells joined by ``, ``), else its own lines (or one,
    its ``<br>`` line breaks spaces, without ``breaks``)."""
    if op[0] == "table":
        return [", ".join(c for c in row if c) for row in op[6]]
    return op[1].split("\n") if breaks else [op[1].replace("\n", " ")]


def _op_text(op: tuple) -> str:
    return cell_text(_op_lines(op, breaks=False))


# A start tag of the common shape (a name, then attributes with quoted or bare values, separated by
# ASCII whitespace, closed by ``>`` or ``/>``), matched in one go. On such a tag ``html.parser``'s
# tolerant patterns give the same name, attributes and end; anything else is left to them.
_SIMPLE_TAG = re.compile(
    r"<([a-zA-Z][-a-zA-Z0-9:_.]*)"
    r"((?:[ \t\n\r\f]+[a-zA-Z_:@][-a-zA-Z0-9_:.@]*"
    r"(?:[ \t\n\r\f]*=[ \t\n\r\f]*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`/]+(?=[ \t\n\r\f>])))?)*)"
    r"[ \t\n\r\f]*(/?)>"
)
_SIMPLE_ATTR = re.compile(
    r"[ \t\n\r\f]+([a-zA-Z_:@][-a-zA-Z0-9_:.@]*)"
    r"(?:[ \t\n\r\f]*=[ \t\n\r\f]*(\"[^\"]*\"|'[^']*'|[^\s\"'=<>`/]+))?"
)


class _Tokens(HTMLParser):
    """``html.parser`` that knows each event's offset in the fed text without counting lines, and
    reads start tags of the common shape with one pattern: the same events (``tests/test_html_tokens.py``)
    for 14-26% off the HTML parse (``benchmarks/html_parse.py``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self._fed = 0  # characters fed so far
        self._at = 0  # where the next event starts, in the unconsumed rawdata

    def feed(self, data: str) -> None:
        self._fed += len(data)
        super().feed(data)

    def goahead(self, end: int) -> None:
        self._base = self._fed - len(self.rawdata)
        self._at = 0
        super().goahead(end)

    def updatepos(self, i: int, j: int) -> int:
        self._at = j
        return j

    def event_start(self) -> int:
        """Where the event being handled starts, in the fed text."""
        return self._base + self._at

    def parse_marked_section(self, i: int, report: int = 1) -> int:
        """``<![`` and no keyword after it (``<![\x1fCDATA[``) is a bogus comment to its ``>``, as
        browsers read it; Python 3.11's parser raises on it."""
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:
            j = self.rawdata.find(">", i + 3)
            if j < 0:
                return -1
            self.unknown_decl(self.rawdata[i + 3 : j])
            return j + 1

    def parse_starttag(self, i: int) -> int:
        rawdata = self.rawdata
        m = _SIMPLE_TAG.match(rawdata, i)
        if m is None:
            return super().parse_starttag(i)
        endpos = m.end()
        self._HTMLParser__starttag_text = rawdata[i:endpos]
        self.lasttag = tag = m.group(1).lower()
        attrs = []
        if m.group(2):
            for name, value in _SIMPLE_ATTR.findall(m.group(2)):
                if value[:1] in ("'", '"'):
                    value = value[1:-1]
                elif not value:
                    value = None  # a name without a value: bare values are never empty
                if value:
                    value = unescape(value)
                attrs.append((name.lower(), value))
        if m.group(3):
            self.handle_startendtag(tag, attrs)
        else:
            self.handle_starttag(tag, attrs)
            if tag in self.CDATA_CONTENT_ELEMENTS:
                self.set_cdata_mode(tag)
        return endpos


class _Events(_Tokens):
    """Turns parser events into output ops, keeping an element stack of block-level elements only."""

    def __init__(self, text: str, keep: set[int]):
        super().__init__()
        self.text = text
        self.keep = keep
        self.root = _Frame("#root", 0, None)
        self.stack: list[_Frame] = []
        self.count: dict[str, int] = {}
        self.ops: list[tuple] = []
        self.sinks: list[list[tuple]] = [self.ops]
        self.run_: _Run | None = None
        self.inline_start: int | None = None
        self.pending = False
        self.last_end = 0
        self.skip: _Frame | None = None
        self.in_title = False
        self.title_parts: list[str] = []
        self.have_title = False
        # where the open <a> began in the run: (run or None, its pieces then, its end, its link chars)
        self.link_at: tuple | None = None
        self.metadata: dict[str, str] = {}
        self.closing = False
        self.unclosed_skip: _Frame | None = None
        self.in_link = False
        self.in_bold = 0  # <b> and <strong> open in the text being collected

    # -- driving ---------------------------------------------------------------------------------

    def run(self, fed: str) -> None:
        self.feed(fed)
        self.closing = True
        self.close()
        self._settle(len(self.text))
        self.unclosed_skip = self.skip
        while self.stack:
            self._pop(None)
        self._flush()

    def _settle(self, p: int) -> None:
        """Text data ends where the next event starts."""
        if self.pending:
            self.pending = False
            if self.run_ is not None:
                self.run_.end = p
        self.last_end = max(self.last_end, p)

    @property
    def top(self) -> _Frame:
        return self.stack[-1] if self.stack else self.root

    # -- events ----------------------------------------------------------------------------------

    def handle_starttag(self, tag, attrs):
        p = self.event_start()
        self._settle(p)
        end = p + len(self.get_starttag_text() or "")
        self._start(tag, attrs, p, end)
        self.last_end = end

    def handle_startendtag(self, tag, attrs):
        # <x/>: XHTML's empty element. Taking it as open-and-closed never swallows what follows.
        p = self.event_start()
        self._settle(p)
        end = p + len(self.get_starttag_text() or "")
        self._start(tag, attrs, p, end)
        if tag not in _VOID:
            self._end(tag, end)
        self.last_end = end

    def handle_endtag(self, tag):
        p = self.event_start()
        self._settle(p)
        gt = self.text.find(">", p)
        end = gt + 1 if gt >= 0 else len(self.text)
        self._end(tag, end)
        self.last_end = end

    def handle_data(self, data):
        p = self.event_start()
        self._settle(p)
        if self.skip is not None:
            if not self.skip.cdata:
                self.skip.hidden += len(data)
            return
        if self.in_title:
            self.title_parts.append(data)
            return
        if self.closing and len(data) > 1 and _TAGLIKE.match(data):
            return  # an unterminated tag or comment at end of file, handed back as text
        blank = data.isspace()
        run = self.run_
        if run is None:
            if blank:
                return
            top = self.top
            start = self.inline_start if self.inline_start is not None else p
            holder = None
            if top.anchor is None and max(top.li, top.dd) >= 0:
                holder = self.stack[max(top.li, top.dd)]
            run = self.run_ = _Run(start, p, top.ctx or _PARA, top.anchor, holder)
        run.pieces.append(data)
        if not blank:
            run.has_text = True
            run.brs = 0
            n = len(data.strip())
            run.chars += n
            if self.in_bold:
                run.bold += n
            if self.in_link:
                run.links += n
        self.pending = True

    def handle_comment(self, data):
        self._settle(self.event_start())

    def handle_decl(self, decl):
        self._settle(self.event_start())

    def handle_pi(self, data):
        self._settle(self.event_start())

    def unknown_decl(self, data):
        self._settle(self.event_start())

    # -- start tags ------------------------------------------------------------------------------

    def _start(self, tag: str, attrs: list, p: int, end: int) -> None:
        sk = self.skip
        if sk is not None:
            if tag in _VOID:
                return
            if not self._implicitly_closes(sk.tag, tag) or (
                sk.inner and any(n and t in _BLOCK for t, n in sk.inner.items())
            ):
                if sk.inner is None:
                    sk.inner = {}
                sk.inner[tag] = sk.inner.get(tag, 0) + 1
                return
            self._pop(None)
        if self.in_title and tag in _BLOCK:
            while self.in_title:
                self._pop(None)

        if tag in ("html", "body", "head"):
            if tag == "html":
                lang = dict(attrs).get("lang")
                if lang:
                    self.metadata.setdefault("lang", lang)
            return
        if tag in _VOID:
            self._void(tag, attrs, p, end)
            return

        top = self.top
        # Implicit closes, as a browser does them.
        if tag == "li" and top.li >= 0:
            self._pop_to(top.li)
        elif (tag == "dt" or tag == "dd") and top.dd >= 0:
            self._pop_to(top.dd)
        elif tag in _TABLE_PARTS:
            if self.top.tbl < 0:
                self._flush()
                return  # a cell or row outside any table: browsers ignore the tag
            self._close_for_table_part(tag, p)
        elif tag == "table":
            t = self.top
            if t.tbl >= 0 and t.cell < t.tbl:
                self._pop_to(t.tbl)  # <table> straight inside a table (not in a cell) ends the outer one
        if tag in _CLOSES_P and self.top.p >= 0:
            self._pop_to(self.top.p)
        if tag in _HEADINGS and self.stack and self.stack[-1].tag in _HEADINGS:
            self._pop(None)

        amap = dict(attrs) if attrs else {}
        if amap and self._hidden(tag, amap, p) or tag in _BOILERPLATE and p not in self.keep:
            self._begin_skip(tag, p)
            return
        if tag in ("header", "footer") and not self.top.content and p not in self.keep:
            self._begin_skip(tag, p)
            return

        if tag not in _TRACKED:
            run = self.run_
            if tag == "a":
                self.in_link = True  # <a> does not nest: a new one ends the last
                self.link_at = (
                    (run, len(run.pieces), run.end, run.links) if run is not None else (None, 0, 0, 0)
                )
            elif tag == "b" or tag == "strong":
                self.in_bold += 1
            elif tag == "code" and run is not None and run.ctx[0] == "code":
                if run.lang is None:
                    run.lang = _language(amap, bare=True)
                elif run.pieces and not run.pieces[-1].endswith("\n"):
                    run.pieces.append("\n")  # Node's docs: the CommonJS and the ES module form, one each
            if run is not None:
                run.end = end
            elif self.inline_start is None:
                self.inline_start = p
            return
        if tag == "title":
            if self.have_title or self.run_ is not None:
                return
            self._push(tag, p)
            self.in_title = True
            return

        if tag == "div" and self.run_ is not None and self.run_.ctx[0] == "heading":
            # rustdoc's impl headings hold their where-clause in a <div>: one heading, not two
            self._br(end)
            self._push(tag, p).flat = True
            return
        self._flush()
        f = self._push(tag, p)
        if amap:
            lang = _language(amap, bare=tag == "pre")
            if lang:
                f.lang = lang
        parent_ctx = f.ctx
        if tag in _HEADINGS:
            f.ctx = ("heading", int(tag[1]), None)
            f.h = len(self.stack) - 1
        elif tag == "p" or tag in ("dt", "dd", "blockquote", "summary", "legend", "figcaption"):
            if parent_ctx is None or parent_ctx[0] == "paragraph":
                f.ctx = _PARA
            if tag == "blockquote":
                f.quoted = True
        elif tag == "li":
            f.ctx = ("list_item", max(0, f.lists - 1), None)
            f.marker = self._number(f, amap.get("value"))
        elif tag in ("pre", "listing", "xmp", "plaintext"):
            f.ctx = ("code", 0, f.lang)
        elif tag in ("ul", "ol", "menu", "dir"):
            f.lists += 1
            f.list = len(self.stack) - 1
            if tag == "ol":
                kind = (amap.get("type") or "1").strip()
                f.numbering = kind if kind in _NUMBERINGS else "1"
                f.counter = _integer(amap.get("start"), 1) - 1
            if f.cell <= f.tbl:  # in a table cell, links are the cell's data (an infobox's products)
                f.sink_mark = (self.sinks[-1], len(self.sinks[-1]))
        elif tag in _CONTENT:
            f.content = True
        elif tag == "table":
            f.table = _Table((amap.get("role") or "").lower())
            f.sink = f.table.stray
        elif tag in ("td", "th"):
            f.ctx = None
            span = max(1, min(50, _integer(amap.get("colspan"), 1)))
            rows = max(1, min(1000, _integer(amap.get("rowspan"), 1)))
            cell = _Cell(tag == "th", span, rows)
            self.stack[f.tr].table.cells.append(cell)  # the row object hangs on the tr frame
            f.sink = cell.ops
        elif tag == "caption":
            f.ctx = _PARA
            f.sink = self.stack[f.tbl].table.caption
        elif tag == "tr":
            sect = self.stack[f.sect] if f.sect > f.tbl else None
            row = _Row(sect is not None and sect.tag == "thead")
            self.stack[f.tbl].table.rows.append(row)
            f.table = row
        elif tag == "form":
            f.sink = []
        if f.sink is not None:
            self.sinks.append(f.sink)
        if tag in _ANCHORED:
            f.anchor = f
            self.run_ = _Run(p, end, f.ctx or _PARA, f)
        else:
            f.anchor = None

    def _number(self, li: _Frame, value: str | None) -> str:
        """An ``<li>``'s marker: its list's next number as the list counts (``start``, ``type``, an
        item's ``value``), or ``-`` outside an ``<ol>``."""
        lst = self.stack[li.list] if 0 <= li.list < len(self.stack) else None
        if lst is None or lst.numbering is None:
            return "-"
        lst.counter = _integer(value, lst.counter + 1)
        return _numeral(lst.counter, lst.numbering) + "."

    def _read_more(self) -> bool:
        """Drop the link just closed where its whole text is a teaser's ``Read more`` (rustdoc's
        after every trait method's summary, a blog's after each excerpt): it leads elsewhere and
        says nothing here. Whether it was dropped."""
        at, self.link_at = self.link_at, None
        run = self.run_
        if at is None or run is None or (at[0] is not None and at[0] is not run):
            return False
        first = at[1] if at[0] is run else 0
        if not _READ_MORE.fullmatch(squash("".join(x for x in run.pieces[first:] if x is not None))):
            return False
        if at[0] is None:  # the run began inside the link: nothing else in it
            self.run_, self.inline_start = None, None
            return True
        del run.pieces[first:]
        run.end, run.links = at[2], at[3]
        run.has_text = any(x is not None and not x.isspace() for x in run.pieces)
        return True

    def _marker(self, anchor: _Frame | None) -> str:
        """The marker of the block a run makes: its item's (the first block of an ``<li>`` only), or
        _TERM / _DEFINITION in a definition list; loose text's (an item's ``<div>``) its holder's."""
        if anchor is None:
            return ""
        li = anchor if anchor.tag == "li" else None
        if li is None and 0 <= anchor.li < len(self.stack) and anchor.ctx and anchor.ctx[0] == "list_item":
            li = self.stack[anchor.li]
        if li is not None:
            marker, li.marker = li.marker, ""
            return marker
        if anchor.tag in ("dt", "dd"):
            holder = anchor
        elif 0 <= anchor.dd < len(self.stack) and self.stack[anchor.dd] is not anchor:
            holder = self.stack[anchor.dd]
        else:
            return ""
        if holder.tag == "dt":
            return _TERM
        if holder.used:
            return ""
        holder.used = True
        return _DEFINITION

    def _checkbox(self, amap: dict) -> None:
        """A checkbox before any text of a list item is a task box: ``- [x]``, ``1. [ ]``."""
        li = self.top.li
        if (amap.get("type") or "").lower() != "checkbox" or li < 0 or not self.stack[li].marker:
            return
        if self.run_ is not None and self.run_.has_text:
            return
        item = self.stack[li]
        if not item.marker.endswith("]"):
            item.marker += " [x]" if "checked" in amap else " [ ]"

    def _void(self, tag: str, attrs: list, p: int, end: int) -> None:
        if tag == "input":
            self._checkbox(dict(attrs))
        if tag == "br":
            self._br(end)
        elif tag == "hr":
            self._flush()
        elif tag == "meta":
            amap = dict(attrs)
            name = (amap.get("name") or amap.get("property") or "").lower()
            content = amap.get("content")
            if name in _META_NAMES and content:
                self.metadata.setdefault(name, squash(content)[:1000])
        elif self.run_ is not None:
            self.run_.end = end

    def _hidden(self, tag: str, amap: dict, p: int) -> bool:
        if p in self.keep:
            return False
        if "hidden" in amap or (amap.get("aria-hidden") or "").lower() == "true":
            return True
        role = amap.get("role")
        if role and role.lower() in _BOILERPLATE_ROLES:
            return True
        style = amap.get("style")
        if style and "none" in style or style and "hidden" in style:
            s = style.replace(" ", "").lower()
            if "display:none" in s or "visibility:hidden" in s:
                return True
        if amap.get("id") in BOILERPLATE_IDS:
            return True
        if tag == "table" and (amap.get("summary") or "").startswith(
            ("Navigation header", "Navigation footer")
        ):
            return True  # DocBook XSL's previous/up/next bar, in a theme's own class (Valgrind's "nav")
        cls = amap.get("class")
        if not cls:
            return False
        names = cls.split()
        if tag == "table" and any(_TEXINFO_NAVIGATION.match(name) for name in names):
            return True
        return not BOILERPLATE_CLASSES.isdisjoint(names) or (
            tag in _BOILERPLATE_BY_TAG and not _BOILERPLATE_BY_TAG[tag].isdisjoint(names)
        )

    def _begin_skip(self, tag: str, p: int) -> None:
        if tag in _BLOCK:
            self._flush()
        f = self._push(tag, p)
        f.skip = True
        f.cdata = tag in ("script", "style")
        self.skip = f

    def _close_for_table_part(self, tag: str, p: int) -> None:
        """Close what a new row, cell, section or caption ends; open an implied <tr>."""
        t = self.top
        if tag in ("thead", "tbody", "tfoot", "caption"):
            self._pop_above(t.tbl)
        elif tag == "tr":
            self._pop_above(max(t.tbl, t.sect))
        else:  # td, th
            target = max(t.tbl, t.sect, t.tr)
            self._pop_above(target)
            if self.stack[target].tag != "tr":
                self._flush()
                f = self._push("tr", p)
                f.ctx, f.anchor = None, None
                row = _Row(self.stack[target].tag == "thead")
                self.stack[f.tbl].table.rows.append(row)
                f.table = row

    @staticmethod
    def _implicitly_closes(open_tag: str, tag: str) -> bool:
        if open_tag == "p":
            return tag in _CLOSES_P
        if open_tag == "li":
            return tag == "li"
        if open_tag in ("dt", "dd"):
            return tag in ("dt", "dd")
        if open_tag in ("td", "th"):
            return tag in ("td", "th", "tr", "tbody", "thead", "tfoot")
        if open_tag == "tr":
            return tag in ("tr", "tbody", "thead", "tfoot")
        return False

    # -- end tags --------------------------------------------------------------------------------

    def _end(self, tag: str, end: int) -> None:
        sk = self.skip
        if sk is not None:
            if sk.inner and sk.inner.get(tag):
                sk.inner[tag] -= 1
                return
            if tag == sk.tag:
                self._pop(end)
                return
            if tag not in _TRACKED or self._find(tag, below=len(self.stack) - 1) < 0:
                return
            self._pop(None)  # an ancestor's end tag ends the skipped element too

        if tag == "br":  # </br> is read as <br> by browsers
            self._br(end)
            return
        if tag not in _TRACKED:
            if tag == "a":
                self.in_link = False
                if self._read_more():
                    return
            elif (tag == "b" or tag == "strong") and self.in_bold:
                self.in_bold -= 1
            if tag not in ("html", "body", "head") and self.run_ is not None:
                self.run_.end = end
            return
        if tag in _HEADINGS:
            i = self.top.h
        elif not self.count.get(tag):
            i = -1
        else:
            i = self._find(tag)
        if i < 0:
            if tag == "p":  # a stray </p> is an empty paragraph to a browser: a break
                self._flush()
            return
        self._pop_to(i, end)

    def _find(self, tag: str, below: int | None = None) -> int:
        """Index of the open ``tag`` this end tag closes, or -1 when a scope boundary hides it."""
        if not self.count.get(tag):
            return -1
        if tag in _TABLE_PARTS:
            barrier = {"table"}
        elif tag == "table":
            barrier = set()
        elif tag in ("li", "dt", "dd"):
            barrier = _SCOPE | {"ul", "ol", "dl", "menu"}
        else:
            barrier = _SCOPE
        for i in range((len(self.stack) if below is None else below) - 1, -1, -1):
            t = self.stack[i].tag
            if t == tag:
                return i
            if t in barrier:
                return -1
        return -1

    # -- the stack -------------------------------------------------------------------------------

    def _push(self, tag: str, p: int) -> _Frame:
        f = _Frame(tag, p, self.stack[-1] if self.stack else None)
        i = len(self.stack)
        self.stack.append(f)
        self.count[tag] = self.count.get(tag, 0) + 1
        if tag in _SCOPE:
            f.p = f.li = f.dd = f.h = -1
        elif tag in _LI_BARRIER:
            f.li = f.dd = -1
        if tag == "p":
            f.p = i
        elif tag == "li":
            f.li = i
        elif tag in ("dt", "dd"):
            f.dd = i
        elif tag == "table":
            f.tbl, f.sect, f.tr, f.cell = i, -1, -1, -1
        elif tag in ("thead", "tbody", "tfoot"):
            f.sect = i
        elif tag == "tr":
            f.tr = i
        elif tag in ("td", "th", "caption"):
            f.cell = i
        return f

    def _pop_above(self, i: int) -> None:
        while len(self.stack) > i + 1:
            self._pop(None)

    def _pop_to(self, i: int, end: int | None = None) -> None:
        while len(self.stack) > i + 1:
            self._pop(None)
        self._pop(end)

    def _pop(self, end: int | None) -> None:
        """Close the innermost open element; ``end`` is its end tag's end, None if implied."""
        f = self.stack.pop()
        self.count[f.tag] -= 1
        if f.skip:
            self.skip = None
            if f.tag in _BLOCK:
                self.inline_start = None
            return
        if f.tag == "title":
            self.in_title = False
            self.have_title = bool(squash("".join(self.title_parts)))
            return
        run = self.run_
        if run is not None:
            if run.anchor is f:
                if end is not None:
                    run.end = end
                self._flush()
            elif f.flat:
                self._br(end if end is not None else self.last_end)
            elif f.tag in _BLOCK:
                self._flush()
        self.inline_start = None
        if f.tag in _LINK_SCOPE:
            self.in_link = False
        if f.sink_mark is not None:
            sink, mark = f.sink_mark
            # Judged at the outermost list, and at inner ones while small (5,000 nested lists stay linear).
            if f.lists == 1 or len(sink) - mark <= 200:
                _drop_link_list(sink, mark)
        if f.sink is not None:
            ops = self.sinks.pop()
            if f.tag == "table":
                self._finish_table(f, end if end is not None else self.last_end)
            elif f.tag == "form" and (
                any(op[0] == "heading" for op in ops) or sum(len(op[1]) for op in ops) >= 500
            ):
                self.sinks[-1].extend(ops)  # a form wrapping the page (ASP.NET), not a search box

    # -- text runs -------------------------------------------------------------------------------

    def _br(self, end: int) -> None:
        run = self.run_
        if run is None:
            return
        if run.ctx[0] == "code":
            run.pieces.append("\n")
            run.end = end
            return
        if run.brs == 0:
            run.before_br = run.end  # the end of the content before this run of breaks
        run.end = end
        run.brs += 1
        run.pieces.append(None)
        if run.brs >= 2 and run.has_text and run.ctx[0] == "paragraph":
            # <br><br> separates paragraphs (essays laid out with breaks, not <p>).
            run.end = run.before_br
            while run.pieces and (run.pieces[-1] is None or run.pieces[-1].isspace()):
                run.pieces.pop()
            self._flush()

    def _flush(self) -> None:
        run = self.run_
        self.run_ = None
        self.inline_start = None
        self.pending = False
        self.in_bold = 0  # bold left open is not carried into the next block
        if run is None or not run.has_text:
            return
        kind, level, _ = run.ctx
        if kind == "code":
            body = clean_text("".join(p for p in run.pieces if p is not None))
            body = _LEADING_BLANK_LINES.sub("", body).rstrip()  # the newline after <pre> is not content
            if not body.strip():
                return
            self.sinks[-1].append(("code", body, run.start, run.end, 0, run.lang, (), 0, 0, "", ()))
            return
        lines, cur = [], []
        for piece in run.pieces:
            if piece is None:
                lines.append("".join(cur))
                cur = []
            else:
                cur.append(piece)
        lines.append("".join(cur))
        sep = " " if kind == "heading" else "\n"
        body = sep.join(s for s in (squash(clean_text(line)) for line in lines) if s)
        if kind == "paragraph" and (not body.strip("· ") or _TEXINFO_NODE_LINKS.fullmatch(body)):
            return  # the separator left between dropped chrome (rustdoc's "1.0.0 · Source"); node links
        if body:
            marker = self._marker(run.anchor or run.holder) if kind in ("list_item", "paragraph") else ""
            if kind == "list_item" and marker and not marker.endswith("]") and (box := _TASK_BOX.match(body)):
                # a task box written as text (pandoc's Djot and Org readers: ``[X] done``), as a checkbox reads
                marker += " [x]" if box[1] in "xX" else " [ ]"
                body = body[box.end() :]
            if kind == "paragraph" and not marker and self._bold_line(run, body):
                kind, level = "heading", 0  # level 0: a bold line, ``BlockStream.bold_heading``
            self.sinks[-1].append((kind, body, run.start, run.end, level, None, (), 0, run.links, marker, ()))

    def _bold_line(self, run: _Run, body: str) -> bool:
        """A ``<p>`` of the page's flow (not in a list, definition, table, quote or form) set wholly
        in bold, with no link, that reads as a label (``bold_label``)."""
        a = run.anchor
        return (
            run.bold == run.chars
            and not run.links
            and a is not None
            and a.tag == "p"
            and run.holder is None
            and a.li < 0
            and a.dd < 0
            and a.tbl < 0
            and not a.quoted
            and len(self.sinks) == 1
            and bold_label(body)
        )

    # -- tables ----------------------------------------------------------------------------------

    def _finish_table(self, f: _Frame, end: int) -> None:
        t: _Table = f.table
        out = self.sinks[-1]
        out.extend(t.stray)
        grid: list[list[str]] = []
        spans: list[tuple[int, int, int]] = []  # (row, first column, colspan) of spanning cells
        heads: list[bool] = []
        longest = 0
        any_heading = nested = any_th = False
        carry: dict[int, list] = {}  # cells spanning rows below, by column (``_place_row``)
        copies: set[tuple[int, int]] = set()
        for row in t.rows:
            cells = []
            for cell in row.cells:
                # A cell's blocks (paragraphs, items, a nested table's rows) are its lines; a <br>
                # inside one wraps it (header cells of filings: "Number of<br>Securities").
                s = cell_text(line for op in cell.ops for line in _op_lines(op, breaks=False))
                longest = max(longest, len(s))
                any_th = any_th or cell.th
                for op in cell.ops:
                    any_heading = any_heading or op[0] == "heading"
                    nested = nested or op[0] == "table"
                cells.append((s, cell.span, cell.rows))
            texts = _place_row(cells, carry, len(grid), spans, copies)
            if any(texts):
                grid.append(texts)
                heads.append(row.head or (bool(row.cells) and all(c.th for c in row.cells)))
            else:
                spans = [sp for sp in spans if sp[0] != len(grid)]
                copies = {c for c in copies if c[0] != len(grid)}
        rows, copies = _tidy_grid(grid, spans, copies)
        header_rows = 0
        while header_rows < len(heads) and heads[header_rows]:
            header_rows += 1
        ncols = len(rows[0]) if rows else 0
        # A layout table (a page, a sidebar, a bullet laid out as a row) gives up its content as
        # ordinary blocks; only a grid of short cells with several rows and columns is data.
        layout = (
            t.role in ("presentation", "none")
            or len(rows) <= 1
            or ncols <= 1
            or any_heading
            or longest > 2000
            or (nested and not any_th)
        )
        ops = [op for row in t.rows for cell in row.cells for op in cell.ops]
        if _is_menu(ops, minimum=4):
            return  # a navigation bar laid out as a table
        out.extend(t.caption)
        if layout:
            for row in t.rows:
                out.extend(_layout_row(row))
        elif rows:
            out.append(
                (
                    "table",
                    render_table(rows, header_rows),
                    f.start,
                    end,
                    0,
                    None,
                    rows,
                    header_rows,
                    0,
                    "",
                    copies,
                )
            )


_NUMBERINGS = frozenset("1aAiI")


def _integer(value: str | None, default: int) -> int:
    """An integer attribute (``start``, ``value``, ``colspan``) as a browser reads it; ``default``
    when it is missing or not a number."""
    m = re.match(r"\s*([+-]?\d{1,9})", value or "")
    return int(m.group(1)) if m else default


def _numeral(n: int, kind: str) -> str:
    """``n`` as an ``<ol type=kind>`` counts: 1, a (a..z, aa..), A, i (roman), I. Letters and
    numerals fall back to digits where they have none (0, negatives, roman past 3999)."""
    if kind in "aA" and n > 0:
        out = ""
        while n > 0:
            n, r = divmod(n - 1, 26)
            out = chr(97 + r) + out
        return out if kind == "a" else out.upper()
    if kind in "iI":
        return roman(n) if kind == "i" else roman(n).upper()
    return str(n)


def _place_row(
    cells: list[tuple[str, int, int]],
    carry: dict[int, list],
    row: int,
    spans: list[tuple[int, int, int]],
    copies: set[tuple[int, int]],
) -> list[str]:
    """One table row's texts by column: its cells ``(text, colspan, rowspan)`` in the columns that
    cells spanning rows from above leave free, as a browser lays them out. ``carry`` (column ->
    ``[text, rows left, colspan]``) is updated; a cell spanning columns is noted in ``spans``, the
    copy of one spanning rows from above in ``copies``."""
    texts: list[str] = []

    def place(s: str, span: int) -> None:
        if span > 1 and s:
            spans.append((row, len(texts), span))
        texts.append(s)
        texts.extend([""] * (span - 1))

    todo = sorted(carry)  # the columns held from above, left to right

    def place_carried(last: bool) -> None:
        while todo and (todo[0] <= len(texts) or last):
            j = todo.pop(0)
            if j < len(texts):  # overlapped by a wider cell of this row: dropped, as a browser does
                del carry[j]
                continue
            texts.extend([""] * (j - len(texts)))
            c = carry[j]
            copies.add((row, j))
            place(c[0], c[2])
            c[1] -= 1
            if c[1] <= 0:
                del carry[j]

    below: dict[int, list] = {}
    for text, span, rows in cells:
        place_carried(False)
        if rows > 1 and text:
            below[len(texts)] = [text, rows - 1, span]
        place(text, span)
    place_carried(True)
    carry.update(below)
    return texts


def _drop_link_list(sink: list[tuple], mark: int) -> None:
    """Drop a just-closed list that is a menu: many short items that are all link text."""
    ops = sink[mark:]
    if all(op[0] == "list_item" for op in ops) and _is_menu(ops, minimum=8):
        del sink[mark:]


def _is_menu(ops: list[tuple], *, minimum: int) -> bool:
    """Many short blocks that are (almost) all link text."""
    if len(ops) < minimum or any(op[0] not in ("list_item", "paragraph") for op in ops):
        return False
    chars = sum(len(op[1]) for op in ops)
    return chars <= 40 * len(ops) and sum(op[8] for op in ops) >= 0.9 * chars


def _tidy_grid(
    grid: list[list[str]], spans: list[tuple[int, int, int]], copies: set[tuple[int, int]]
) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[int, int], ...]]:
    """Square the grid, glue SEC-style "$" / ")" / "%" cells to their numbers, put each spanning
    cell's text over the columns it heads, and drop empty columns. Returns the rows and the cells
    that are copies (``copies``: those of cells spanning rows, by the grid's columns; the copies
    made here are added), by the columns kept."""
    width = max((len(r) for r in grid), default=0)
    for r in grid:
        r.extend([""] * (width - len(r)))
        for j, c in enumerate(r):
            if c in _CURRENCY:
                k = next((k for k in range(j + 1, width) if r[k]), None)
                if k is not None and _NUMBER_START.match(r[k]):
                    r[k] = c + r[k]
                    r[j] = ""
            elif c in _CLOSERS:
                k = next((k for k in range(j - 1, -1, -1) if r[k]), None)
                if (
                    k is not None
                    and _NUMBER.match(r[k])
                    and (c[0] != ")" or r[k].count("(") > r[k].count(")"))
                ):
                    r[k] = r[k] + c
                    r[j] = ""
    if spans:
        # A cell spanning columns reads as the heading of each of them that holds values (a
        # ``2023`` over Revenue and Cost), so its text goes in each (that holds over half as many
        # values as the fullest: not over a stray "%" column); over columns that hold none
        # (an SEC filing's "$" and ")" cells, glued above), or as the one cell of a row over all of
        # them (a title row), it goes once, over the column that holds the most.
        spanning = {(i, j) for i, j, _ in spans}
        filled = [sum(1 for i, r in enumerate(grid) if r[j] and (i, j) not in spanning) for j in range(width)]
        for i, j, n in spans:
            cover = range(j, min(width, j + n))
            most = max(filled[k] for k in cover)
            cols = [k for k in cover if 2 * filled[k] > most and (k == j or not grid[i][k])]
            title = not any(c for k, c in enumerate(grid[i]) if k not in cover) and all(
                k in cover for k in range(width) if filled[k]
            )
            text = grid[i][j]
            copied = (i, j) in copies
            copies.discard((i, j))
            if len(cols) > 1 and not title:
                for k in cols:
                    grid[i][k] = text
                if j not in cols:
                    grid[i][j] = ""
                copies.update((i, k) for k in (cols if copied else cols[1:]))
                continue
            best = max(cover, key=lambda k: (filled[k], -k))
            if best != j and not grid[i][best]:
                grid[i][best], grid[i][j] = grid[i][j], ""
            if copied:
                copies.add((i, best if grid[i][best] == text else j))
    used = [j for j in range(width) if any(r[j] for r in grid)]
    column = {j: k for k, j in enumerate(used)}
    kept = tuple(sorted((i, column[j]) for i, j in copies if j in column and grid[i][j]))
    return tuple(tuple(r[j] for j in used) for r in grid), kept


def _layout_row(row: _Row) -> list[tuple]:
    """A layout table row's blocks; a row of one-paragraph cells (a bullet and its text, a label
    and its value) reads as one paragraph."""
    ops = [op for cell in row.cells for op in cell.ops]
    if len(ops) > 1 and all(len(c.ops) <= 1 for c in row.cells) and all(op[0] == "paragraph" for op in ops):
        text = " ".join(op[1] for op in ops)
        return [("paragraph", text, ops[0][2], ops[-1][3], 0, None, (), 0, sum(op[8] for op in ops), "", ())]
    return ops
