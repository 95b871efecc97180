"""XML of any other vocabulary (configuration, feeds, catalogues, data exports), read by its shape:
an element whose text is small is a record (``name: value`` lines: its attributes, then each
element under it in order, named by its tag); a larger one, or one holding a list of entries (two
or more elements that are more than a value), is a section, headed by its title child
or its ``name``/``id``/``title`` attribute, over the records and sections it holds. Runs of small
leaf elements in a section are one record; a large leaf is a paragraph under its tag; text between
a section's elements is a paragraph, and so is each paragraph of a comment (a configuration file's
documentation), margins and rules dropped. Spans are the elements' places in the source (expat's
offsets). A DITA topic or a TEI text is read as a document instead (``_document``): headings from
titles, paragraphs from the elements that hold text. Not well-formed XML is read as plain text, the
reason saying where it broke."""

from __future__ import annotations

import dataclasses
import html
import re
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import BlockStream, clean_text, finish, with_reason
from raychunk.parse.xmldoc import xml_prolog
from raychunk.render import squash

__all__ = ["RECORD_CHARS", "parse_xml", "shown_attribute", "xml_root"]

RECORD_CHARS = 1500  # an element with at most this much text (its attributes' too) is one record
_DOCUMENTING = 80  # a comment this long in an element makes it a section, the comment a paragraph
_TITLES = ("title", "name", "head", "heading", "caption", "label")
_LABEL_ATTRIBUTES = ("title", "name", "id", "label", "key")
_TAG_END = re.compile(rb"""[^>"']*(?:(?:"[^"]*"|'[^']*')[^>"']*)*>""")
_MARKUP_IN_TEXT = re.compile(r"</[a-zA-Z][\w:-]*\s*>|<br\s*/?>|<p\b")  # escaped HTML in a value (feeds)
_HTML_TAG = re.compile(r"<[^>]*>")
_WORDY = re.compile(r"\w\w")


# Elements of HTML that open a fragment of a page (an Excel export under .xls, a saved snippet):
# without an XML declaration such a file is HTML, not XML
_HTML_ROOTS = frozenset(
    [
        "html",
        "head",
        "body",
        "table",
        "div",
        "p",
        "span",
        "ul",
        "ol",
        "dl",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "a",
        "b",
        "i",
        "u",
        "em",
        "strong",
        "font",
        "center",
        "pre",
        "form",
        "blockquote",
        "br",
        "hr",
        "img",
    ]
)


def xml_root(text: str, tail: str | None = None) -> str | None:
    """The local name of an XML document's root element (``rss``, ``html``, ``svg``), or None when
    the text does not open as XML: an ``<?xml`` declaration, a DOCTYPE that is not HTML's, or an
    element that is closed at the end of the text (``tail``: the file's end, where ``text`` is only
    its start) and is not one of HTML's (a fragment of a page)."""
    head = text[:16384].lstrip()
    if not head.startswith("<"):
        return None
    doctype, root = xml_prolog(head)
    if root is None:
        return None
    name = root[1]
    if head.startswith("<?xml") or (doctype and doctype[1].lower() != "html"):
        return name.split(":")[-1]
    tail = (text[-4096:] if tail is None else tail).rstrip()
    if name.lower() not in _HTML_ROOTS and tail.endswith((f"</{name}>", "/>")):
        return name.split(":")[-1]
    return None


@dataclass(slots=True)
class _Element:
    tag: str
    attributes: list[tuple[str, str]]
    start: int
    tag_end: int = 0  # where its start tag ends
    end: int = 0
    children: list = field(default_factory=list)  # _Element, _Text or _Comment, in order
    size: int = 0  # characters of text and attribute values under it

    def leaf(self) -> bool:
        return not any(isinstance(c, _Element) for c in self.children)

    def own_text(self) -> str:
        return squash(" ".join(c.text for c in self.children if isinstance(c, _Text)))

    def mixed(self) -> bool:
        """Text with elements inside it (``Built on <b>Debian</b>.``): one value, read in order."""
        return not self.leaf() and any(isinstance(c, _Text) and c is not _SPACE for c in self.children)

    def all_text(self) -> str:
        return "".join(
            c.text if isinstance(c, _Text) else c.all_text()
            for c in self.children
            if not isinstance(c, _Comment)
        )


@dataclass(slots=True)
class _Text:
    text: str
    start: int
    end: int


@dataclass(slots=True)
class _Comment:
    """A comment: in configuration files, the documentation (a Maven settings file's is all of it)."""

    text: str
    start: int
    end: int


_SPACE = _Text(" ", -1, -1)  # whitespace between elements: a space in mixed text, nothing elsewhere


def parse_xml(text: str, base: Document) -> ParsedDocument:
    try:
        root, prelude = _tree(text)
    except _NotXml as e:
        from raychunk.parse.text import parse_text

        parsed = parse_text(text, dataclasses.replace(base, format="text"))
        return with_reason(parsed, f"not well-formed XML ({e}): read as plain text")
    out = BlockStream()
    for c in prelude:
        _comment(out, c)
    try:
        if root.tag in _DOCUMENT_ROOTS:
            _document(out, root, 1)
            return finish(base, text, out.blocks)  # its first heading is its title
        if _is_record(root):
            _record(out, root)
        else:
            _section(out, root, 1, top=True)
    except RecursionError:  # expat reads any depth; the walks above recurse
        from raychunk.parse.text import parse_text

        parsed = parse_text(text, dataclasses.replace(base, format="text"))
        return with_reason(parsed, "XML nested too deeply to read by its elements: read as plain text")
    return finish(base, text, out.blocks, title=base.title)  # a tag is no title: the file's name stands


class _NotXml(ValueError):
    pass


def _tree(text: str) -> tuple[_Element, list[_Comment]]:
    """The document's elements with their character spans, built by expat (no DTD or entity from
    outside the file is read), and the comments before its root."""
    from xml.parsers import expat

    data = text.encode("utf-8", "surrogatepass")
    to_char = _char_offsets(text, data)
    parser = expat.ParserCreate(encoding="utf-8")
    parser.buffer_text = True
    parser.specified_attributes = True  # not the defaults a DTD adds: they are not in the text
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack: list[_Element] = []
    done: list[_Element] = []
    prelude: list[_Comment] = []
    last = [0]  # where the text after the last tag starts, in bytes

    def start(tag, attributes):
        at = parser.CurrentByteIndex
        m = _TAG_END.match(data, at + 1)
        last[0] = m.end() if m else at + 1
        attrs = [(_local(k), squash(clean_text(v))) for k, v in attributes.items() if shown_attribute(k)]
        e = _Element(_local(tag), [(k, v) for k, v in attrs if v], to_char(at), to_char(last[0]))
        e.size = sum(len(v) for _, v in e.attributes)
        if stack:
            stack[-1].children.append(e)
        stack.append(e)

    def end(tag):
        at = parser.CurrentByteIndex
        if data.startswith(b"</", at):
            close = data.find(b">", at) + 1
        else:  # <empty/>: expat reports its end past the tag
            close = at
        e = stack.pop()
        e.end = to_char(close)
        last[0] = close
        if stack:
            stack[-1].size += e.size
        else:
            done.append(e)

    def characters(chunk, start=None, end=None):
        if stack and not chunk.strip():
            stack[-1].children.append(_SPACE)
        elif stack:
            at = parser.CurrentByteIndex if end is None else end
            s = to_char(last[0] if start is None else start)
            stack[-1].children.append(_Text(chunk, s, to_char(at) if at >= 0 else s + len(chunk)))
            stack[-1].size += len(chunk.strip())
            last[0] = max(last[0], at)

    def skipped(name, parameter):
        # an entity of a DTD that is not read (a feed's &nbsp; under RSS 0.91's DOCTYPE): its
        # character where HTML has one, else itself, so the words either side stay apart
        if not parameter:
            at = parser.CurrentByteIndex
            characters(html.unescape(f"&{name};"), at, at + len(name.encode()) + 2)

    def comment(body):
        at = parser.CurrentByteIndex
        close = data.find(b"-->", at) + 3
        last[0] = max(last[0], close)
        if _WORDY.search(body):
            c = _Comment(body, to_char(at + 4), to_char(close - 3))
            (stack[-1].children if stack else prelude if not done else []).append(c)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = characters
    parser.SkippedEntityHandler = skipped
    parser.CommentHandler = comment
    try:
        parser.Parse(data, True)
    except expat.ExpatError as e:
        raise _NotXml(f"{expat.errors.messages[e.code]}: line {e.lineno} column {e.offset + 1}") from None
    if not done:
        raise _NotXml("no root element")
    return done[0], prelude


def _char_offsets(text: str, data: bytes):
    """Byte offset in ``data`` (``text`` as UTF-8) → character offset in ``text``."""
    if len(data) == len(text):
        return int
    step = 4096
    marks = array("q", [0])  # byte offset of every step-th character
    pos = 0
    for i in range(0, len(text), step):
        pos += len(text[i : i + step].encode("utf-8", "surrogatepass"))
        marks.append(pos)

    def to_char(b: int) -> int:
        k = bisect_right(marks, b) - 1
        return k * step + len(data[marks[k] : b].decode("utf-8", "ignore"))

    return to_char


def _local(name: str) -> str:
    return name.rsplit(":", 1)[-1]


def shown_attribute(attribute: str) -> bool:
    """Namespace declarations, schema locations, ``xml:base`` and ``xml:space`` are plumbing, not
    content (``xml:lang`` is kept: it says what language a value is in)."""
    return not (attribute in ("xmlns", "xml:base", "xml:space") or attribute.startswith(("xmlns:", "xsi:")))


def _value(text: str) -> str:
    """A value's text, with HTML that a feed or a config escaped into it read as text."""
    if _MARKUP_IN_TEXT.search(text):
        text = html.unescape(_HTML_TAG.sub(" ", text))
    return squash(clean_text(text))


def _label(e: _Element) -> tuple[str, _Element | None]:
    """What heads a section: its title child's text (and the child), else a naming attribute."""
    for c in e.children:
        if isinstance(c, _Element) and c.tag.lower() in _TITLES and c.leaf() and 0 < c.size <= 200:
            return _value(c.own_text()), c
    attributes = dict(e.attributes)
    for name in _LABEL_ATTRIBUTES:
        if attributes.get(name):
            return attributes[name][:200], None
    return "", None


def _section(out: BlockStream, e: _Element, level: int, *, top: bool = False) -> None:
    label, title = _label(e)
    if not label and not top:
        label = e.tag
    if label:
        out.heading(label, level, *((title.start, title.end) if title else (e.start, e.tag_end)))
        level += 1
    fields: list[_Element] = [] if top or not e.attributes else [e]  # the section's own attributes
    for c in e.children:
        if c is title or c is _SPACE:
            continue
        if isinstance(c, _Element) and _field(c):
            fields.append(c)
            continue
        _fields(out, fields)
        fields = []
        if isinstance(c, _Text):
            out.add("paragraph", _value(c.text), c.start, c.end)
        elif isinstance(c, _Comment):
            _comment(out, c)
        elif _is_record(c):
            _record(out, c)
        elif c.mixed():  # a long text with elements inside it
            out.add("paragraph", _value(c.all_text()), c.start, c.end)
        elif c.leaf():  # a long text under its tag
            out.heading(c.tag, level, c.start, c.tag_end)
            for t in c.children:
                if t is not _SPACE:
                    out.add("paragraph", _value(t.text), t.start, t.end)
            out.leave(level)
        else:
            _section(out, c, level)
    _fields(out, fields)
    out.leave(level if not label else level - 1)


_MARGIN = re.compile(r"^[ \t]*[|*#][ \t]?", re.M)  # a comment's left margin: `` | `` or `` * ``
_RULE = re.compile(r"^[ \t]*[-=*#~+_|]{3,}[ \t]*$", re.M)  # a line of decoration


def _comment(out: BlockStream, c: _Comment) -> None:
    """A comment as its paragraphs (at blank lines, or lines that are only a margin or a rule), each
    spanning its own lines, the margin and rules dropped."""
    lines: list[tuple[int, int, str]] = []  # (start, end) in the comment, and the text of a line
    pos = 0
    for line in c.text.split("\n"):
        words = _RULE.sub("", _MARGIN.sub("", line))
        if words.strip():
            lead = len(line) - len(line.lstrip())
            lines.append((pos + lead, pos + len(line.rstrip()), words))
        elif lines and lines[-1] is not None:
            lines.append(None)
        pos += len(line) + 1
    paragraph: list[tuple[int, int, str]] = []
    for line in [*lines, None]:
        if line is not None:
            paragraph.append(line)
            continue
        if paragraph and _WORDY.search(text := squash(clean_text(" ".join(t for _, _, t in paragraph)))):
            out.add("paragraph", text, c.start + paragraph[0][0], c.start + paragraph[-1][1])
        paragraph = []


# Roots of documents written in XML that no reader of pandoc's takes: DITA topics (a task's steps, a
# concept, a reference) and TEI texts. They read as documents, not as records.
_DOCUMENT_ROOTS = frozenset({"topic", "task", "concept", "reference", "glossentry", "troubleshooting", "TEI"})
_HEADS = frozenset({"title", "head"})


_ORDERED = frozenset({"steps", "substeps", "ol"})  # lists whose items a reader sees numbered
_UNORDERED = frozenset({"ul", "sl", "steps-unordered", "choices", "list"})


def _document(
    out: BlockStream, e: _Element, level: int, marker: list[str] | None = None, depth: int = 0
) -> None:
    """A document's element: its title or head a heading over what follows it; an element with text
    of its own (``<p>``, ``<cmd>``, a mixed one with inline elements) a paragraph of all its text,
    or ``tag: text`` where that is a few words (an author, a date); the items of a list (a DITA
    task's steps, ``ol``, ``ul``) list items under their number or bullet; any other looked into.
    ``marker``: the list marker the next text of this element takes (a step's number for its
    ``cmd``), emptied once taken."""
    title = next((c for c in e.children if isinstance(c, _Element) and c.tag in _HEADS and c.size), None)
    if title is not None:
        out.heading(_value(title.all_text()), level, title.start, title.end)
        level += 1
    numbered = e.tag in _ORDERED
    number = 0
    for c in e.children:
        if c is title or c is _SPACE:
            continue
        if isinstance(c, _Comment):
            _comment(out, c)
        elif isinstance(c, _Text):
            out.add("paragraph", _value(c.text), c.start, c.end)
        elif numbered or e.tag in _UNORDERED:
            number += 1
            item = [f"{number}." if numbered else "-"]
            _document(out, c, level, item, depth + (1 if marker is not None or depth else 0))
        elif c.leaf() or c.mixed():
            text = _value(c.all_text())
            if marker:
                out.add("list_item", text, c.start, c.end, marker=marker.pop(), level=depth)
                continue
            if text and len(text.split()) < 6 and not text.endswith((".", "!", "?", ":")):
                text = f"{c.tag}: {text}"
            out.add("paragraph", text, c.start, c.end)
        else:
            _document(out, c, level, marker, depth)
    if title is not None:
        out.leave(level - 1)


def _is_record(e: _Element) -> bool:
    """Small, and not a list of entries: two elements under it that are more than fields (``<city
    name="Bern"><note>...</note></city>`` twice) make it a section of records, however small, and so
    does such a list further down (a schema list holding one schema of many keys)."""
    if e.size > RECORD_CHARS:
        return False
    entries = 0
    for c in e.children:
        if isinstance(c, _Comment) and len(c.text) >= _DOCUMENTING:
            return False
        if isinstance(c, _Element) and not _field(c):
            entries += 1
            if entries == 2 or not _is_record(c):
                return False
    return True


def _field(e: _Element) -> bool:
    """A small leaf that is a value of its section (``<link>``, ``<glob pattern="*.pdf"/>``), not an
    entry described by its attributes (``<entry code="AF" name="Afghanistan"/>``)."""
    return e.leaf() and e.size <= RECORD_CHARS and (len(e.attributes) <= 1 or bool(e.children))


def _fields(out: BlockStream, elements: list[_Element]) -> None:
    """Leaf elements side by side in a section, as one record (a section's own attributes first)."""
    names: list[str] = []
    cells: list[str] = []
    for i, e in enumerate(elements):
        if i == 0 and not _field(e):  # the section itself: its attributes by their names
            names.extend(k for k, _ in e.attributes)
            cells.extend(v for _, v in e.attributes)
        else:
            _lines(e, [], names, cells)
    _add(out, names, cells, elements)


def _record(out: BlockStream, e: _Element) -> None:
    names: list[str] = []
    cells: list[str] = []
    _lines(e, [], names, cells, top=True)
    _add(out, names, cells, [e])


def _lines(e: _Element, path: list[str], names: list[str], cells: list[str], *, top: bool = False) -> None:
    """``e``'s attributes and text as ``name: value`` lines, named by the tags below the record's own
    (whose attributes go by their names, its text by its tag)."""
    name = " ".join([*path, e.tag])
    if not top and e.attributes and e.leaf() and (text := e.own_text()):
        names.append(f"{name} ({', '.join(f'{k} {v}' for k, v in e.attributes)})")
        cells.append(_value(text))
        return
    names.extend(k if top else f"{name} {k}" for k, _ in e.attributes)
    cells.extend(v for _, v in e.attributes)
    if e.mixed():
        names.append(name)
        cells.append(_value(e.all_text()))
        return
    below = [] if top else [*path, e.tag]
    for c in e.children:
        if c is _SPACE or isinstance(c, _Comment):
            continue
        if isinstance(c, _Text):
            names.append(name)
            cells.append(_value(c.text))
        else:
            _lines(c, below, names, cells)


def _add(out: BlockStream, names: list[str], cells: list[str], elements: list[_Element]) -> None:
    pairs = [(n, v) for n, v in zip(names, cells) if v]
    if not pairs:
        return
    body = "\n".join(f"{n}: {v}" for n, v in pairs)
    names_, cells_ = zip(*pairs)
    out.add("record", body, elements[0].start, elements[-1].end, rows=(names_, cells_), header_rows=1)
