"""Word documents (.docx), read from the package's XML as Word shows it, not guessed from the words;
OpenDocument texts (.odt) through pandoc's conversion to one, and Word 97-2003 documents (.doc)
through msdoc2docx's (pure Python: no LibreOffice).

- The body is read in order, content controls (``w:sdt``) and custom XML included, and an imported
  part of HTML or plain text (``w:altChunk``, as converters from HTML write) by raychunk's own
  parsers where it stands (another kind is named in the row's reason); a text box is read
  after the paragraph that anchors it (once: Word writes it twice, for new and old readers), a
  footnote or endnote after the paragraph that cites it. Headers, footers, comments, hidden text,
  deleted text, field instructions, a content control's placeholder and a table of contents (its
  lines repeat the headings) give no text; inserted text, field results and equations (as a line of
  text: ``a/b``, ``x^2``, ``√(x)``) do.
- A paragraph is a heading when Word puts it in the navigation pane: an outline level (its own, or
  its style's through ``basedOn``), or a style named ``Heading N``, ``Title`` (level 1) or
  ``Subtitle`` (level 2). A numbered heading keeps its number in its text (``2.1 Scope``).
- A paragraph is a list item when Word numbers it (``w:numPr``, its own or its style's), when its
  style is a list style, or when its text starts with a typed bullet. Its marker is the label Word
  shows (``3.``, ``b)``, ``2.1.``), counted as Word counts it: per list definition and level, a
  deeper level restarting under a shallower one, ``startOverride`` restarting a list; the label
  stays in the text, spanned by no block. A bullet's marker is empty.
- A table keeps its rows on Word's layout grid (``gridBefore``, ``gridSpan``); a merged cell's text
  is repeated in the cells it covers (``copies``); its first row is a header row, or the leading
  rows marked to repeat as a header (``w:tblHeader``). A table nested in a cell is that cell's text.
- Pages are known where Word recorded its layout (``w:lastRenderedPageBreak``): blocks carry their
  pages and a ``page_break`` opens each new page. Elsewhere a hard page break (or a paragraph set to
  start a page, or a section break that starts one) is a ``page_break`` block with no page number.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from raychunk.parse._common import (
    TYPEWRITER_FACE,
    BlockStream,
    ConversionFailed,
    TextAssembler,
    add_reason,
    bold_label,
    cell_text,
    clean_text,
    converted_in_folder,
    finish,
    one_line,
    roman,
)
from raychunk.render import LIST_NUMBER, render_table, squash

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["read_doc", "read_docx", "read_odt"]

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"

# Inline containers whose runs are read as if they stood in the paragraph.
_INLINE = {
    f"{_W}{t}" for t in ("hyperlink", "ins", "moveTo", "smartTag", "customXml", "fldSimple", "dir", "bdo")
}
# Word's list styles (style names as styles.xml writes them, lower case): a list item even unnumbered.
_LIST_STYLE = re.compile(r"list( bullet| number| continue| paragraph)?( \d)?")
_HEADING_STYLE = re.compile(r"heading ([1-9])")
_NAMED_LEVELS = {"title": 1, "subtitle": 2}
_TOC_STYLE = re.compile(r"toc( \d|heading| heading)")
# Styles for code: pandoc's "Source Code", Word's "HTML Preformatted", "Plain Text" and "Macro Text",
# a template's "Code" or "Code Block".
_CODE_STYLE = re.compile(
    r"(?:html )?preformatted(?: text)?|source ?code|plain text|macro text|code(?: block)?|verbatim|listing"
)
# A bullet typed into the text (unstructured's list, with Word's Symbol-font bullet U+F0B7): a list
# item. "-", "–" and "*" only when a space follows.
_TYPED_BULLET = re.compile(r"(?:[\u0095\u2022\u2023\u2043\u204c\u204d\u2219\u25cb\u25cf\u25d8\u25e6\u2619"
                           r"\u2765\u2767\u29be\u29bf\uf0b7\u00b7]|[-\u2013*](?=\s))[ \t\u00a0]*")  # fmt: skip
# Alt text Office writes itself ("... Description automatically generated"), in the UI's language.
_GENERATED_ALT = re.compile(
    r"automatically generated|ai-generated content|generated automatically|automatisch generiert|"
    r"générée automatiquement|generada automáticamente|gerada automaticamente|generata automaticamente|"
    r"自动生成|生成的内容可能不正确|自動的に生成|自動生成|자동으로 생성",
    re.IGNORECASE,
)
# A label that reads as a list item's number (``7.``, ``b)``, ``(iv)``, ``2.1.``) is its marker; any
# other ("Step 3:", "Article I.") stays in the item's text.
_NUMBER_LABEL = re.compile(LIST_NUMBER)
_MAX_SPAN = 63  # Word's widest table
_MAX_LEVEL = 8
_MAX_NUMBER = 32767


def read_docx(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    import docx

    document = docx.Document(io.BytesIO(data))
    part = document.part
    body = document.element.body
    if body is None:
        return finish(base, "", [], reason="no text found: the document's main part has no body")
    notes, lost = _notes(part)
    reader = _Reader(
        styles=_Styles(_related(part, "styles")),
        numbering=_Numbering(_related(part, "numbering")),
        notes=notes,
        rendered=next(body.iter(f"{_W}lastRenderedPageBreak"), None) is not None,
        part=part,
        base=base,
    )
    # each section's properties, in order: its start type (odd page, even page) is in the one ending it
    reader.sections = [s for s in body.iter(f"{_W}sectPr") if s.getparent().tag in (f"{_W}pPr", f"{_W}body")]
    reader.faces_mark_code = reader.typewriter_share(body) < 0.9
    reader.read(body)
    reader.flush()
    changes: dict = {"pages": reader.page if reader.rendered else 0}
    if title:
        changes["title"] = title[:200]
    if lost or reader.lost:
        changes["reason"] = "; ".join(lost + reader.lost)
    return finish(base, reader.asm.text, reader.stream.blocks, **changes)


def read_odt(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    """An OpenDocument text, converted by pandoc into a Word document (``parse/pandoc.py``: in its
    sandbox, it reads no other file) and read as one."""
    from raychunk.parse.pandoc import convert

    return read_docx(convert(data, "odt", "docx", extension="odt"), base, title)


def read_doc(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    """A Word 97-2003 document, converted into a Word document by msdoc2docx (in this process, from a
    private temporary folder) and read as one. What the converter had to leave out of the text (a
    damaged text-box story, a table it flattened) is named in the row's reason; a document whose
    formatting it cannot read at all is read as plain text (``doc_text.py``), the reason saying so."""
    try:
        from doc2docx import convert
        from doc2docx.errors import Doc2DocxError, EncryptedDocumentError, UnsupportedFeatureError
    except ImportError as e:
        raise ImportError(f"reading .doc files needs msdoc2docx: pip install msdoc2docx ({e})") from e
    version = _word_version(data)
    if version is not None and version < _WORD_97:
        raise ConversionFailed(
            f"a Word 6 or Word 95 document (format version {version}): raychunk reads Word 97-2003 .doc files",
            "unsupported",
        )
    try:
        report, package = converted_in_folder(data, "in.doc", "out.docx", lambda a, b: convert(a, b).report)
    except EncryptedDocumentError as e:
        raise ConversionFailed("encrypted legacy Word document: needs a password") from e
    except UnsupportedFeatureError as e:
        raise ConversionFailed(
            f"legacy Word document uses what msdoc2docx cannot read: {one_line(e)}", "unsupported"
        ) from e
    except Doc2DocxError as e:
        # msdoc2docx reads a document's formatting strictly; its text may still be there
        from raychunk.parse.doc_text import read_doc_text

        text_only = read_doc_text(data, base, title, f"msdoc2docx cannot read it ({one_line(e)})")
        if text_only is None:
            raise ConversionFailed(f"not a valid legacy Word document: {one_line(e)}") from e
        return text_only
    converted = _without_object_marks(package)
    parsed = read_docx(converted, base, title)
    diagnostics = report.to_dict().get("diagnostics", ())
    if any(d.get("code") == _TEXT_BOXES_OMITTED for d in diagnostics):
        boxes = _text_boxes(data)
        if boxes:
            parsed = _appended(parsed, boxes)
            diagnostics = [d for d in diagnostics if d.get("code") != _TEXT_BOXES_OMITTED]
            diagnostics.append({"code": _TEXT_BOXES_OMITTED, "placed_at_end": True})
    return add_reason(parsed, _conversion_losses(diagnostics))


_WORD_97 = 0x00C1  # the FIB's nFib from Word 97 on; Word 6 and 95 wrote 101-105


def _word_version(data: bytes) -> int | None:
    """The Word document stream's format version (``nFib``), None where it cannot be read here (the
    converter then says what is wrong)."""
    import olefile

    try:
        with olefile.OleFileIO(data) as ole:
            head = ole.openstream("WordDocument").read(4)
    except Exception:  # not an OLE container, or no Word document stream in it
        return None
    if len(head) < 4 or head[:2] != b"\xec\xa5":
        return None
    return int.from_bytes(head[2:4], "little")


def _without_object_marks(package: bytes) -> bytes:
    """msdoc2docx writes a picture or object it cannot place as U+FFFC in the text: no text of its
    own, taken out of the document's part."""
    import zipfile

    src = zipfile.ZipFile(io.BytesIO(package))
    if b"\xef\xbf\xbc" not in src.read("word/document.xml"):
        return package
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info)
            dst.writestr(
                info, body.replace(b"\xef\xbf\xbc", b"") if info.filename == "word/document.xml" else body
            )
    return out.getvalue()


# msdoc2docx's diagnostics that mean text or structure is missing from what it wrote (the rest are
# drawings, layout, metadata and repairs, which change no text): the row's reason names them.
_TEXT_LOST = {
    "MAIN_TEXTBOX_TABLE_MALFORMED",  # the text boxes' story
    "GROUPED_MAIN_TEXTBOXES_DEFERRED",
    "MALFORMED_TABLE_FLATTENED",  # a table's rows read as paragraphs
    "TABLE_DEPTH_LIMITED",
    "NUMBERING_TABLE_MALFORMED",  # list numbers
    "STYLE_TABLE_MALFORMED",  # heading styles
    "OLE_OBJECT_OMITTED",
    "NOTE_REFERENCE_DEFERRED",
}


_TEXT_BOXES_OMITTED = "MAIN_TEXTBOX_TABLE_MALFORMED"


def _text_boxes(data: bytes) -> list[str]:
    """The text-box story's paragraphs, read straight from the piece table (``doc_text.py``)."""
    from raychunk.parse.doc_text import doc_stories, story_lines

    stories = doc_stories(data)
    return story_lines(stories.textboxes) if stories is not None else []


def _appended(parsed: ParsedDocument, lines: list[str]) -> ParsedDocument:
    """The parse with ``lines`` after its last block, a paragraph each, under no heading."""
    import dataclasses

    from raychunk.document import Block

    text, blocks = parsed.text, list(parsed.blocks)
    for line in lines:
        start = len(text) + (2 if text else 0)
        text = f"{text}\n\n{line}" if text else line
        blocks.append(Block("paragraph", line, start, start + len(line)))
    document = parsed.document
    if document.status == "empty" and blocks:  # the text boxes were all the text it has
        document = dataclasses.replace(document, status="ok", reason="")
    return dataclasses.replace(parsed, document=document, text=text, blocks=tuple(blocks))


def _conversion_losses(diagnostics) -> str:
    lost = []
    for d in diagnostics:
        code = str(d.get("code", ""))
        if d.get("placed_at_end"):
            lost.append("its text boxes read at the end, as msdoc2docx could not place them")
        elif code in _TEXT_LOST:
            message = one_line(d.get("message", code))
            if message not in lost:
                lost.append(message)
    return f"converted from Word 97-2003: {'; '.join(lost)}" if lost else ""


def _related(part, kind: str):
    """The root element of the document part's ``kind`` part (styles, numbering), None without one."""
    from docx.oxml.parser import parse_xml

    for rel in part.rels.values():
        if not rel.is_external and rel.reltype == _REL + kind:
            target = rel.target_part
            element = getattr(target, "element", None)
            return element if element is not None else parse_xml(target.blob)
    return None


def _notes(part) -> tuple[dict[tuple[str, str], object], list[str]]:
    """Footnotes and endnotes by ``(kind, id)`` (the ``w:footnote`` / ``w:endnote`` elements), and
    what could not be read: a damaged notes part costs its notes, not the document."""
    notes, lost = {}, []
    for kind in ("footnote", "endnote"):
        try:
            root = _related(part, kind + "s")
        except (SyntaxError, ValueError):  # lxml's XMLSyntaxError is a SyntaxError
            lost.append(f"{kind}s not read (their part is not well-formed XML)")
            continue
        if root is not None:
            for note in root.iterchildren(f"{_W}{kind}"):
                if note.get(f"{_W}type") in (None, "normal"):
                    notes[(kind, note.get(f"{_W}id"))] = note
    return notes, lost


def _val(element, tag: str) -> str | None:
    """The ``w:val`` of ``element``'s child ``w:tag``; None when either is absent."""
    if element is None:
        return None
    child = element.find(_W + tag)
    return None if child is None else child.get(f"{_W}val")


def _int(value: str | None, default: int | None = None) -> int | None:
    try:
        return int(float(value)) if value is not None else default
    except (ValueError, OverflowError):
        return default


def _on(element) -> bool:
    """A toggle property (``w:vanish``, ``w:tblHeader``) present and not switched off."""
    return element is not None and element.get(f"{_W}val") not in ("0", "false", "off")


@dataclass(frozen=True, slots=True)
class _Style:
    heading: int = 0  # the heading level it gives, 0 for none
    listed: bool = False  # a list style: its paragraphs are list items
    toc: bool = False  # a table-of-contents line or heading
    num_id: str | None = None  # the numbering it gives (through basedOn)
    ilvl: int | None = None
    style_id: str | None = None  # the style that gives the numbering
    list_depth: int = 0  # "List Bullet 2" -> 1
    code: bool = False  # a style for code by its name ("Source Code", "HTML Preformatted")
    mono: bool = False  # set in a typewriter face


class _Styles:
    """Paragraph styles by id, each resolved through its ``basedOn`` chain once."""

    def __init__(self, root):
        self._raw: dict[str, object] = {}
        self._resolved: dict[str | None, _Style] = {}
        self._inherited: dict[tuple, bool | None] = {}  # (property, character style) -> through basedOn
        self._default = None
        if root is not None:
            for style in root.iterchildren(f"{_W}style"):
                sid = style.get(f"{_W}styleId")
                if sid is None:
                    continue
                self._raw.setdefault(sid, style)
                if style.get(f"{_W}type") == "paragraph" and _on_default(style) and self._default is None:
                    self._default = sid

    def raw(self, style_id: str | None):
        return self._raw.get(style_id) if style_id is not None else None

    def bold(self, rpr) -> bool:
        """Whether a run with these properties is bold: its own ``w:b``, else its character
        style's (Word's "Strong"), through ``basedOn``."""
        return bool(self._run_property(rpr, _bold))

    def mono(self, rpr) -> bool | None:
        """Whether a run with these properties is set in a typewriter face: its own fonts, else its
        character style's, through ``basedOn``; None when neither names a face (the paragraph's)."""
        return self._run_property(rpr, _face)

    def _run_property(self, rpr, read):
        """What ``read`` finds in a run's properties, else in its character style's through
        ``basedOn`` (remembered per style); None when none says."""
        if rpr is None:
            return None
        own = read(rpr)
        if own is not None:
            return own
        style_id = _val(rpr, "rStyle")
        if style_id is None:
            return None
        key = (read, style_id)
        if key not in self._inherited:
            self._inherited[key] = self._through_based_on(style_id, read)
        return self._inherited[key]

    def _through_based_on(self, style_id: str | None, read):
        seen: set[str] = set()
        while (
            style_id is not None and style_id not in seen and (style := self._raw.get(style_id)) is not None
        ):
            seen.add(style_id)
            value = read(style.find(f"{_W}rPr"))
            if value is not None:
                return value
            style_id = _val(style, "basedOn")
        return None

    def of(self, style_id: str | None) -> _Style:
        key = style_id if style_id in self._raw else self._default
        if key not in self._resolved:
            self._resolved[key] = self._resolve(key)
        return self._resolved[key]

    def _resolve(self, style_id: str | None) -> _Style:
        heading = outline = None
        listed = toc = False
        num_id = ilvl = owner = None
        depth = 0
        code = False
        mono = None
        seen: set[str] = set()
        first = True
        while style_id is not None and style_id not in seen and style_id in self._raw:
            seen.add(style_id)
            style = self._raw[style_id]
            name = (_val(style, "name") or "").strip().lower()
            code = code or _CODE_STYLE.fullmatch(name) is not None
            if mono is None:
                mono = _face(style.find(f"{_W}rPr"))
            ppr = style.find(f"{_W}pPr")
            if outline is None:
                outline = _int(_val(ppr, "outlineLvl"))
            if heading is None:
                m = _HEADING_STYLE.fullmatch(name)
                heading = int(m.group(1)) if m else _NAMED_LEVELS.get(name)
            if first:
                m = _LIST_STYLE.fullmatch(name)
                listed = m is not None
                depth = int(m.group(2)) - 1 if m and m.group(2) else 0
                toc = _TOC_STYLE.fullmatch(name) is not None
                first = False
            numpr = ppr.find(f"{_W}numPr") if ppr is not None else None
            if numpr is not None:
                if num_id is None and _val(numpr, "numId") is not None:
                    num_id, owner = _val(numpr, "numId"), style_id
                if ilvl is None:
                    ilvl = _int(_val(numpr, "ilvl"))
            style_id = _val(style, "basedOn")
        level = outline + 1 if outline is not None and 0 <= outline <= 8 else 0
        if outline is None:
            level = heading or 0
        return _Style(level, listed, toc, num_id, ilvl, owner, depth, code, bool(mono))


def _indent(ppr) -> int:
    """A paragraph's own left indent, in twentieths of a point."""
    ind = ppr.find(f"{_W}ind") if ppr is not None else None
    if ind is None:
        return 0
    return _int(ind.get(f"{_W}left") or ind.get(f"{_W}start"), 0) or 0


def _bold(rpr) -> bool | None:
    """Whether run properties say bold, None when they do not say."""
    b = rpr.find(f"{_W}b") if rpr is not None else None
    return None if b is None else _on(b)


def _face(rpr) -> bool | None:
    """Whether run properties name a typewriter face, None when they name none."""
    fonts = rpr.find(f"{_W}rFonts") if rpr is not None else None
    if fonts is None:
        return None
    name = fonts.get(f"{_W}ascii") or fonts.get(f"{_W}hAnsi")
    return None if name is None else TYPEWRITER_FACE.search(name) is not None


def _on_default(style) -> bool:
    return style.get(f"{_W}default") in ("1", "true", "on")


class _Numbering:
    """The labels Word shows for numbered paragraphs, counted in document order."""

    def __init__(self, root):
        self._nums: dict[str, object] = {}
        self._abstracts: dict[str, object] = {}
        if root is not None:
            for num in root.iterchildren(f"{_W}num"):
                self._nums.setdefault(num.get(f"{_W}numId"), num)
            for abstract in root.iterchildren(f"{_W}abstractNum"):
                self._abstracts.setdefault(abstract.get(f"{_W}abstractNumId"), abstract)
        self._counters: dict[str, list[int | None]] = {}
        self._restarted: set[tuple[str, int]] = set()
        self.styles: _Styles | None = None

    def _abstract(self, num, depth: int = 0) -> tuple[str | None, object | None]:
        aid = _val(num, "abstractNumId")
        abstract = self._abstracts.get(aid)
        link = _val(abstract, "numStyleLink")
        if link is not None and depth < 4 and self.styles is not None:
            # the list's levels live in the numbering style's own list
            linked = (
                self._nums.get(self.styles.of(link).num_id) if self.styles.raw(link) is not None else None
            )
            if linked is not None and linked is not num:
                return self._abstract(linked, depth + 1)
        return aid, abstract

    def _level(self, num, abstract, ilvl: int):
        for override in num.iterchildren(f"{_W}lvlOverride"):
            if _int(override.get(f"{_W}ilvl")) == ilvl:
                lvl = override.find(f"{_W}lvl")
                if lvl is not None:
                    return lvl
        for lvl in abstract.iterchildren(f"{_W}lvl"):
            if _int(lvl.get(f"{_W}ilvl")) == ilvl:
                return lvl
        return None

    def _start(self, num, lvl, ilvl: int) -> int:
        for override in num.iterchildren(f"{_W}lvlOverride"):
            if _int(override.get(f"{_W}ilvl")) == ilvl and override.find(f"{_W}startOverride") is not None:
                return _int(_val(override, "startOverride"), 1)
        return _int(_val(lvl, "start"), 1)

    def label(self, num_id: str | None, ilvl: int | None, style_id: str | None) -> tuple[str, int] | None:
        """``(label, level)`` of the next paragraph of list ``num_id`` at ``ilvl``, advancing the
        counters; the label is "" for a bullet; None when the paragraph is not numbered."""
        if num_id in (None, "0") or num_id not in self._nums:
            return None
        num = self._nums[num_id]
        aid, abstract = self._abstract(num)
        if abstract is None:
            return None
        if ilvl is None and style_id is not None:
            ilvl = next(
                (
                    _int(lvl.get(f"{_W}ilvl"))
                    for lvl in abstract.iterchildren(f"{_W}lvl")
                    if _val(lvl, "pStyle") == style_id
                ),
                None,
            )
        ilvl = ilvl or 0
        if not 0 <= ilvl <= _MAX_LEVEL:
            return None
        lvl = self._level(num, abstract, ilvl)
        if lvl is None:
            return None
        counters = self._counters.setdefault(aid, [None] * (_MAX_LEVEL + 1))
        restart = any(
            _int(o.get(f"{_W}ilvl")) == ilvl and o.find(f"{_W}startOverride") is not None
            for o in num.iterchildren(f"{_W}lvlOverride")
        )
        if restart and (num_id, ilvl) not in self._restarted:
            self._restarted.add((num_id, ilvl))
            counters[ilvl] = self._start(num, lvl, ilvl)
        elif counters[ilvl] is None:
            counters[ilvl] = self._start(num, lvl, ilvl)
        else:
            counters[ilvl] += 1
        for deeper in range(ilvl + 1, _MAX_LEVEL + 1):
            below = self._level(num, abstract, deeper)
            after = _int(_val(below, "lvlRestart")) if below is not None else None
            if after is None or (after != 0 and ilvl < after):
                counters[deeper] = None
        fmt = _val(lvl, "numFmt") or "decimal"
        if fmt in ("bullet", "none"):
            return "", ilvl
        legal = _on(lvl.find(f"{_W}isLgl"))

        def number(m: re.Match) -> str:
            k = int(m.group(1)) - 1
            if k > ilvl:
                return ""
            referenced = self._level(num, abstract, k)
            if referenced is None:
                return ""
            count = counters[k] if counters[k] is not None else self._start(num, referenced, k)
            return _format(count, "decimal" if legal else (_val(referenced, "numFmt") or "decimal"))

        try:
            return squash(re.sub(r"%([1-9])", number, _val(lvl, "lvlText") or "")), ilvl
        except ValueError:  # a format or number Word's way of writing is not known for
            return "", ilvl


def _format(value: int, fmt: str) -> str:
    if not 0 <= value <= _MAX_NUMBER:
        raise ValueError(value)
    if fmt in ("decimal", "decimalHalfWidth", "decimalFullWidth"):
        return str(value)
    if fmt == "decimalZero":
        return f"{value:02d}"
    if fmt in ("lowerLetter", "upperLetter") and value > 0:
        letters = chr(ord("a") + (value - 1) % 26) * ((value - 1) // 26 + 1)
        return letters if fmt == "lowerLetter" else letters.upper()
    if fmt in ("lowerRoman", "upperRoman") and 0 < value < 4000:
        return roman(value) if fmt == "lowerRoman" else roman(value).upper()
    if fmt == "ordinal":
        suffix = "th" if 10 <= value % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(value % 10, "th")
        return f"{value}{suffix}"
    if fmt == "decimalEnclosedCircle" and 1 <= value <= 20:
        return chr(0x2460 + value - 1)
    raise ValueError(fmt)


@dataclass(slots=True)
class _Line:
    """What one paragraph holds: its text, and what it points to."""

    parts: list[str] = field(default_factory=list)
    first_page: int = 0  # the page its first text is on
    lead_breaks: int = 0  # hard page breaks before its text, and after it
    hard_breaks: int = 0
    notes: list[tuple[str, str]] = field(default_factory=list)
    boxes: list = field(default_factory=list)  # w:txbxContent elements
    alt: list[str] = field(default_factory=list)
    # the run properties of its visible text, one per run: whether it is all bold is asked only of
    # a line that could be a heading (``bold_label``)
    faces: list = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.parts)


class _Reader:
    def __init__(
        self, styles: _Styles, numbering: _Numbering, notes: dict, rendered: bool, part=None, base=None
    ):
        self.part = part  # the document's part: its relationships name imported parts
        self.base = base
        self.lost: list[str] = []  # what could not be read, for the row's reason
        self.styles = styles
        self.numbering = numbering
        numbering.styles = styles
        self.notes = notes
        self.rendered = rendered
        self.asm = TextAssembler()
        self.stream = BlockStream()
        self.page = 1
        self._flushed = 1  # the last page whose break went out
        self._breaks = 0  # hard breaks waiting for the next block, where pages are not known
        self._fields: list[bool] = []  # open complex fields: True while in their instruction
        self._aside = 0  # inside text boxes and notes: no headings, no page breaks
        self._end = 0  # where the text so far ends
        self.sections: list = []  # each section's properties, in order
        self._section = 0  # the section being read
        self._in_row = self._row_break = False  # a table row, and whether Word began a page in it
        # a listing's lines, one paragraph each, gathered into one code block: (lines, first page,
        # its paragraphs' indent)
        self._code: tuple[list[str], int, int] | None = None
        self._code_gap = 0  # empty paragraphs since its last line
        self.faces_mark_code = True

    # -- blocks -------------------------------------------------------------------------------------

    def read(self, container) -> None:
        for child in _block_children(container):
            if child.tag == f"{_W}p":
                self._paragraph(child)
            elif child.tag == f"{_W}tbl":
                self._table(child)
            elif not self._aside:
                self._imported(child)

    def _imported(self, chunk) -> None:
        """An ``w:altChunk``: a part of HTML or plain text the document imports where it stands (as
        converters from HTML write one), read by raychunk's own parsers; another kind is named in
        the row's reason."""
        from raychunk.parse.html import parse_html
        from raychunk.parse.text import parse_text

        rel = self.part.rels.get(chunk.get(f"{_R}id") or "") if self.part is not None else None
        if rel is None or rel.is_external:
            return
        target = rel.target_part
        kind = (target.content_type or "").lower()
        read = parse_html if "html" in kind else parse_text if kind.startswith("text/plain") else None
        if read is None:
            self.lost.append(f"an imported part not read ({kind or target.partname})")
            return
        text = clean_text(target.blob.decode("utf-8", errors="replace"))
        for b in read(text, self.base).blocks:
            if b.kind == "heading":
                self._emit("heading", b.text, level=b.level)
            elif b.kind != "page_break" and b.text.strip():
                fields = {k: v for k, v in (("level", b.level), ("marker", b.marker), ("language", b.language),
                          ("rows", b.rows), ("header_rows", b.header_rows), ("copies", b.copies)) if v}  # fmt: skip
                self._emit(b.kind, b.text, **fields)

    def flush(self) -> None:
        """The code block gathered so far, out."""
        if self._code is not None:
            (lines, first_page, _), self._code = self._code, None
            self._code_gap = 0
            self._emit("code", "\n".join(lines), first_page)

    def _emit(self, kind: str, text: str, first_page: int = 0, cut: int = 0, **kw) -> None:
        """Append a block, after the page breaks that come before it."""
        if self._code is not None and kind != "code":
            self.flush()
        pages: tuple[int, ...] = ()
        if self.rendered:
            first_page = first_page or self.page
            if self.stream.blocks:
                for opens in range(self._flushed + 1, first_page + 1):
                    self.stream.add("page_break", "", self._end, self._end, pages=(opens,))
            self._flushed = max(self._flushed, self.page)
            pages = tuple(range(first_page, self.page + 1))
        elif self._breaks:
            if self.stream.blocks:
                for _ in range(self._breaks):
                    self.stream.add("page_break", "", self._end, self._end)
            self._breaks = 0
        start, self._end = self.asm.append(text)
        if kind == "heading" and not kw["level"]:
            self.stream.bold_heading(text, start, self._end, pages=pages)
        elif kind == "heading":
            self.stream.heading(text, kw["level"], start, self._end, pages=pages)
        else:
            self.stream.add(kind, text[cut:], start + cut, self._end, pages=pages, **kw)

    def _paragraph(self, p) -> None:
        ppr = p.find(f"{_W}pPr")
        if (
            not self.rendered
            and not self._aside
            and ppr is not None
            and _on(ppr.find(f"{_W}pageBreakBefore"))
        ):
            self._breaks += 1
        kind, text, cut, kw, line = self._classify(p, ppr)
        if not self.rendered and not self._aside:
            self._breaks += line.lead_breaks
        if kind == "code" and not self._aside:
            if self._code is None:
                self._code = ([], line.first_page or self.page, _indent(ppr))
            else:
                self._code[0].extend([""] * self._code_gap)
            self._code[0].append(text)
            self._code_gap = 0
            if line.alt or line.boxes or line.notes:
                self.flush()
        elif kind:
            if self._code is not None and len(self._code[0]) == 1 and _indent(ppr) > self._code[2]:
                # an option's name over its description, indented under it: a term, not code
                (lines, first_page, _), self._code = self._code, None
                self._code_gap = 0
                self._emit("paragraph", lines[0].strip(), first_page)
            self._emit(kind, text, line.first_page, cut, **kw)
        elif self._code is not None:
            self._code_gap += 1  # a blank line of the listing, if another line follows
        for alt in line.alt:
            self._emit("paragraph", alt, line.first_page)
        self._asides(line)
        if not self.rendered and not self._aside:
            self._breaks += line.hard_breaks
        if ppr is None or ppr.find(f"{_W}sectPr") is None or self._aside:
            return
        # a section ends here; how the next one starts is in the properties that end it
        self._section += 1
        follows = self.sections[self._section] if self._section < len(self.sections) else None
        start = _val(follows, "type")
        if not self.rendered:
            self._breaks += start != "continuous"
        elif (start == "oddPage" and self.page % 2) or (start == "evenPage" and not self.page % 2):
            self.page += 1  # Word's own break opens the next page; an odd or even start may need one more

    def _classify(self, p, ppr) -> tuple[str, str, int, dict, _Line]:
        """``(kind, text, cut, block fields, line)`` of a paragraph; kind is "" for one with no text
        (or a table-of-contents line). ``cut`` is where the block starts in ``text`` (after a label)."""
        style = self.styles.of(_val(ppr, "pStyle"))
        own = ppr.find(f"{_W}numPr") if ppr is not None else None
        num_id = _val(own, "numId") if own is not None else None
        ilvl = _int(_val(own, "ilvl")) if own is not None else None
        owner = None
        if num_id is None:
            num_id, owner = style.num_id, style.style_id
        if ilvl is None:
            ilvl = style.ilvl
        line = _Line()
        self._inline(p, line)
        while self._fields and self._fields[-1]:
            self._fields.pop()  # a field's result may run over paragraphs, never its instruction
        text = clean_text(line.text.replace("\u2061", ""))
        body = text.strip()
        section_mark = ppr is not None and ppr.find(f"{_W}sectPr") is not None
        label = None
        if body or not section_mark:  # Word does not number a paragraph that only ends a section
            label = self.numbering.label(num_id, ilvl, owner)
        if not body or style.toc:
            return "", "", 0, {}, line
        outline = _int(_val(ppr, "outlineLvl"))
        level = style.heading if outline is None else (outline + 1 if 0 <= outline <= 8 else 0)
        if level and not self._aside:
            heading = squash(f"{label[0]} {body}" if label and label[0] else body)
            return "heading", heading, 0, {"level": min(level, 9)}, line
        typed = _TYPED_BULLET.match(body)
        if label is not None or style.listed or (typed and typed.end() < len(body)):
            marker = label[0] if label else ""
            # "List Bullet 2" is its own one-level list, indented: a nested item to the reader
            depth = max(label[1] if label else (ilvl or 0), style.list_depth)
            if marker:
                known = _NUMBER_LABEL.fullmatch(marker) is not None
                fields = {"level": depth, "marker": marker} if known else {"level": depth}
                return "list_item", f"{marker} {body}", len(marker) + 1 if known else 0, fields, line
            cut = typed.end() if typed and typed.end() < len(body) else 0
            return "list_item", body, cut, {"level": depth}, line
        if line.faces and (
            style.code or self.faces_mark_code and all(map(self._typewriter(style), line.faces))
        ):
            return "code", text.strip("\n").rstrip(), 0, {}, line
        if line.faces and not self._aside and all(map(self.styles.bold, line.faces)) and bold_label(body):
            return "heading", body, 0, {"level": 0}, line  # level 0: ``BlockStream.bold_heading``
        return "paragraph", body, 0, {}, line

    def _typewriter(self, style: _Style):
        """Whether a run of a paragraph in ``style`` is set in a typewriter face."""

        def mono(rpr) -> bool:
            face = self.styles.mono(rpr)
            return style.mono if face is None else face

        return mono

    def typewriter_share(self, body) -> float:
        """The share of the body's text set in a typewriter face: a document typed in Courier
        throughout marks no code by its face."""
        chars = mono = 0
        for p in body.iter(f"{_W}p"):
            is_mono = self._typewriter(self.styles.of(_val(p.find(f"{_W}pPr"), "pStyle")))
            for r in p.iterchildren(f"{_W}r"):
                n = sum(len(t.text or "") for t in r.iterchildren(f"{_W}t"))
                chars += n
                mono += n if is_mono(r.find(f"{_W}rPr")) else 0
        return mono / chars if chars else 0.0

    def _asides(self, line: _Line) -> None:
        """A paragraph's text boxes, then the notes it cites: read where it stands, never headings."""
        if self._aside > 4:
            return
        fields, self._fields = self._fields, []
        self._aside += 1
        try:
            for box in line.boxes:
                self.read(box)
            for key in line.notes:
                note = self.notes.pop(key, None)  # a note cited twice is read once
                if note is not None:
                    self.read(note)
        finally:
            self._aside -= 1
            self._fields = fields

    # -- runs -----------------------------------------------------------------------------------------

    def _inline(self, element, line: _Line) -> None:
        for child in element:
            tag = child.tag
            if tag == f"{_W}r":
                self._run(child, line)
            elif tag in _INLINE:
                self._inline(child, line)
            elif tag == f"{_W}sdt":
                content = child.find(f"{_W}sdtContent")
                if content is not None and not _placeholder(child):
                    self._inline(content, line)
            elif tag == f"{_M}oMathPara":
                self._text(line, " ".join(_math(m) for m in child.iterchildren(f"{_M}oMath")))
            elif tag == f"{_M}oMath":
                self._text(line, _math(child))
            elif tag == f"{_MC}AlternateContent":
                chosen = _chosen(child)
                if chosen is not None:
                    self._inline(chosen, line)

    def _text(self, line: _Line, text: str) -> None:
        if not text or (self._fields and self._fields[-1]):
            return  # a field's instruction: what Word shows is its result
        if not line.first_page and text.strip():
            line.first_page = self.page
        line.parts.append(text)

    def _run(self, run, line: _Line) -> None:
        rpr = run.find(f"{_W}rPr")
        hidden = rpr is not None and _on(rpr.find(f"{_W}vanish"))
        face = False  # this run's properties are in line.faces
        for c in run:
            tag = c.tag
            if tag == f"{_W}t":
                if not (
                    face or hidden or not c.text or c.text.isspace() or (self._fields and self._fields[-1])
                ):
                    line.faces.append(rpr)
                    face = True
                if not hidden:
                    self._text(line, c.text or "")
            elif tag in (f"{_W}tab", f"{_W}ptab"):
                if not hidden:
                    self._text(line, "\t")
            elif tag in (f"{_W}br", f"{_W}cr"):
                if c.get(f"{_W}type") == "page":
                    if line.text.strip():
                        line.hard_breaks += 1
                    else:
                        line.lead_breaks += 1
                elif not hidden:
                    self._text(line, "\n")
            elif tag == f"{_W}noBreakHyphen":
                self._text(line, "-")
            elif tag == f"{_W}sym":
                self._text(line, _symbol(c.get(f"{_W}char")))
            elif tag == f"{_W}fldChar":
                kind = c.get(f"{_W}fldCharType")
                if kind == "begin" and len(self._fields) < 64:
                    self._fields.append(True)
                elif kind == "separate" and self._fields:
                    self._fields[-1] = False
                elif kind == "end" and self._fields:
                    self._fields.pop()
            elif tag == f"{_W}lastRenderedPageBreak":
                if self.rendered and not self._aside:
                    if self._in_row:
                        self._row_break = True
                    else:
                        self.page += 1
            elif tag in (f"{_W}footnoteReference", f"{_W}endnoteReference"):
                line.notes.append((tag[len(_W) : -len("Reference")], c.get(f"{_W}id")))
            elif tag in (f"{_W}drawing", f"{_W}pict", f"{_W}object"):
                line.boxes.extend(_boxes(c))
                line.alt.extend(_alt_texts(c))
            elif tag == f"{_MC}AlternateContent":
                chosen = _chosen(c)
                if chosen is not None:
                    line.boxes.extend(_boxes(chosen))
                    line.alt.extend(_alt_texts(chosen))

    # -- tables ---------------------------------------------------------------------------------------

    def _table(self, tbl) -> None:
        first_page = self.page
        rows: list[list[str]] = []
        copied: list[set[int]] = []
        headers: list[bool] = []
        origins: dict[int, str] = {}  # column -> the text of the vertically merged cell open there
        after: list[_Line] = []
        for k, tr in enumerate(_rows(tbl)):
            trpr = tr.find(f"{_W}trPr")
            col = min(max(_int(_val(trpr, "gridBefore"), 0), 0), _MAX_SPAN)
            cells: dict[int, str] = {}
            copies: set[int] = set()
            self._in_row, self._row_break = True, False
            try:
                for tc in _cells(tr):
                    if col >= 4 * _MAX_SPAN:
                        break
                    tcpr = tc.find(f"{_W}tcPr")
                    span = min(max(_int(_val(tcpr, "gridSpan"), 1), 1), _MAX_SPAN)
                    merge = tcpr.find(f"{_W}vMerge") if tcpr is not None else None
                    going_on = merge is not None and merge.get(f"{_W}val") in (None, "continue")
                    text = "" if going_on else self._cell(tc, after)
                    for j in range(col, col + span):
                        if going_on:
                            cells[j] = origins.get(j, "")
                            if cells[j]:
                                copies.add(j)
                        else:
                            cells[j] = text
                            if j > col and text:
                                copies.add(j)
                            if merge is not None:
                                origins[j] = text
                            else:
                                origins.pop(j, None)
                    col += span
            finally:
                self._in_row = False
            if self._row_break:
                self.page += 1
                if k == 0:
                    first_page = self.page
            rows.append([cells.get(j, "") for j in range(max(cells, default=-1) + 1)])
            copied.append(copies)
            headers.append(_on(trpr.find(f"{_W}tblHeader")) if trpr is not None else False)
        keep = [i for i, r in enumerate(rows) if any(r)]
        if keep:
            width = max(len(rows[i]) for i in keep)
            cols = [j for j in range(width) if any(j < len(rows[i]) and rows[i][j] for i in keep)]
            grid = tuple(tuple(rows[i][j] if j < len(rows[i]) else "" for j in cols) for i in keep)
            copies = tuple(
                (r, c)
                for r, i in enumerate(keep)
                for c, j in enumerate(cols)
                if j in copied[i] and grid[r][c]
            )
            marked = 0
            while marked < len(keep) and headers[keep[marked]]:
                marked += 1
            header_rows = min(max(marked, 1), len(grid) - 1) if len(grid) > 1 else 0
            kw: dict = {"rows": grid, "header_rows": header_rows}
            if copies:
                kw["copies"] = copies
            self._emit("table", render_table(grid, header_rows), first_page, **kw)
        for line in after:
            for alt in line.alt:
                self._emit("paragraph", alt)
            self._asides(line)

    def _cell(self, container, after: list[_Line]) -> str:
        """A cell's text on one line: its paragraphs (list items with their labels) and any table nested
        in it; its text boxes and notes wait in ``after`` for the end of the table."""
        lines: list[str] = []
        for child in _block_children(container):
            if child.tag == f"{_W}p":
                kind, text, cut, kw, line = self._classify(child, child.find(f"{_W}pPr"))
                if kind:
                    lines.append(text)
                if line.boxes or line.notes or line.alt:
                    after.append(line)
            elif child.tag == f"{_W}tbl":
                for tr in _rows(child):
                    for tc in _cells(tr):
                        tcpr = tc.find(f"{_W}tcPr")
                        merge = tcpr.find(f"{_W}vMerge") if tcpr is not None else None
                        if merge is None or merge.get(f"{_W}val") == "restart":
                            lines.append(self._cell(tc, after))
        return cell_text(lines)


def _block_children(container) -> Iterator:
    """The paragraphs and tables of a body, cell, text box or note, through content controls."""
    for child in container:
        tag = child.tag
        if tag in (f"{_W}p", f"{_W}tbl", f"{_W}altChunk"):
            yield child
        elif tag == f"{_W}sdt":
            content = child.find(f"{_W}sdtContent")
            if content is not None and not _placeholder(child) and not _toc_control(child):
                yield from _block_children(content)
        elif tag == f"{_W}customXml":
            yield from _block_children(child)
        elif tag == f"{_MC}AlternateContent":
            chosen = _chosen(child)
            if chosen is not None:
                yield from _block_children(chosen)


def _rows(tbl) -> Iterator:
    return _wrapped(tbl, f"{_W}tr")


def _cells(tr) -> Iterator:
    return _wrapped(tr, f"{_W}tc")


def _wrapped(parent, tag: str) -> Iterator:
    """``parent``'s children of ``tag``, through the content controls and custom XML around them."""
    for child in parent:
        if child.tag == tag:
            yield child
        elif child.tag in (f"{_W}sdt", f"{_W}customXml"):
            inner = child.find(f"{_W}sdtContent") if child.tag == f"{_W}sdt" else child
            if inner is not None:
                yield from _wrapped(inner, tag)


def _chosen(alternate):
    """The branch of an ``mc:AlternateContent`` to read: its first choice, else its fallback."""
    choice = alternate.find(f"{_MC}Choice")
    return choice if choice is not None else alternate.find(f"{_MC}Fallback")


def _placeholder(sdt) -> bool:
    """A content control showing its placeholder ("Click or tap here to enter text.")."""
    props = sdt.find(f"{_W}sdtPr")
    return props is not None and props.find(f"{_W}showingPlcHdr") is not None


def _toc_control(sdt) -> bool:
    props = sdt.find(f"{_W}sdtPr")
    if props is None:
        return False
    gallery = props.find(f"{_W}docPartObj/{_W}docPartGallery")
    return gallery is not None and (gallery.get(f"{_W}val") or "").startswith("Table of Contents")


def _boxes(element) -> Iterator:
    """The outermost text boxes (``w:txbxContent``) in a drawing, one branch of each alternative."""
    for child in element:
        if child.tag == f"{_W}txbxContent":
            yield child
        elif child.tag == f"{_MC}AlternateContent":
            chosen = _chosen(child)
            if chosen is not None:
                yield from _boxes(chosen)
        else:
            yield from _boxes(child)


_FILE_NAME = re.compile(r"[\w\- .()]+\.(png|jpe?g|gif|bmp|tiff?|emf|wmf|svg|webp)", re.IGNORECASE)


def _alt_texts(element) -> Iterator[str]:
    """A picture's description, unless Word wrote it or it is only the picture's file name."""
    for props in element.iter(f"{_WP}docPr"):
        text = squash(clean_text(props.get("descr") or ""))
        if text and not _GENERATED_ALT.search(text) and not _FILE_NAME.fullmatch(text):
            yield text


def _symbol(code: str | None) -> str:
    """A ``w:sym`` character; Symbol-font codes sit in the private-use area (F0xx)."""
    try:
        value = int(code or "", 16)
    except ValueError:
        return ""
    if value == 0xF0B7:
        return "\u2022"
    if 0xF000 <= value <= 0xF0FF or not 0x20 <= value <= 0x10FFFF:
        return ""
    return chr(value)


def _math(element) -> str:
    """An equation (OMML) as one line: ``a/b``, ``x^2``, ``x_i``, ``√(x)``, ``(a+b)``."""
    tag = element.tag
    if tag == f"{_M}t" or tag == f"{_W}t":
        return element.text or ""
    if tag.endswith("Pr") or tag == f"{_W}rPr":
        return ""
    part = {c.tag[len(_M) :]: c for c in element if c.tag.startswith(_M)}
    if tag == f"{_M}f":
        return f"{_group(part.get('num'))}/{_group(part.get('den'))}"
    if tag == f"{_M}sSup":
        return f"{_group(part.get('e'))}^{_group(part.get('sup'))}"
    if tag == f"{_M}sSub":
        return f"{_group(part.get('e'))}_{_group(part.get('sub'))}"
    if tag == f"{_M}sSubSup":
        return f"{_group(part.get('e'))}_{_group(part.get('sub'))}^{_group(part.get('sup'))}"
    if tag == f"{_M}rad":
        degree = _math(part["deg"]) if "deg" in part else ""
        return f"{degree}√({_math(part['e']) if 'e' in part else ''})"
    if tag == f"{_M}d":
        props = part.get("dPr")
        opens, closes, between = (
            _prop(props, k, d) for k, d in (("begChr", "("), ("endChr", ")"), ("sepChr", "|"))
        )
        return opens + between.join(_math(e) for e in element.iterchildren(f"{_M}e")) + closes
    if tag == f"{_M}nary":
        sign = _prop(part.get("naryPr"), "chr", "∫")
        low = f"_{_group(part['sub'])}" if "sub" in part and _math(part["sub"]) else ""
        high = f"^{_group(part['sup'])}" if "sup" in part and _math(part["sup"]) else ""
        return f"{sign}{low}{high} {_math(part['e']) if 'e' in part else ''}".rstrip()
    return "".join(_math(c) for c in element)


def _group(element) -> str:
    text = _math(element) if element is not None else ""
    return text if len(text) <= 1 or re.fullmatch(r"\w+|\(.*\)", text) else f"({text})"


def _prop(props, name: str, default: str) -> str:
    if props is None:
        return default
    found = props.find(f"{_M}{name}")
    return default if found is None else (found.get(f"{_M}val") or "")
