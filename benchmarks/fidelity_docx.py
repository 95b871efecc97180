"""Fidelity section ``docx``: generated Word documents whose structure is known exactly.

Each document is drawn by python-docx with a fixed seed, a few sections each, as people write them:
now and then a ``Title`` line, then headings in the built-in ``Heading 1-3`` styles, in a style of
their own based on ``Heading 2`` ("Appendix Heading") or in a Normal paragraph given an outline level
(all three are headings to Word, in its navigation pane); under each, body paragraphs, a bold
"Note: ..." line, a ``Caption`` line, lists numbered by Word (the ``List Number`` / ``List Bullet``
styles and their level-2 forms, whose numbers run on through the document, and lists of their own
numbering: ``3.``, ``b)``, ``iv.``, ``2.1.``, some starting past 1), tables with a header row (now
and then a cell merged across or down, whose text a reader sees in every cell it covers), and text
that sits where a naive reader does not look: a content control around a paragraph, a text box
(a DrawingML shape, or the same with its VML fallback), tracked insertions and deletions, a
footnote; a link written as a field, and hidden text. Pages break before some paragraphs; sections
have header and footer lines. Scored (``ok / total``):

- ``headings``: headings written that are heading blocks with the same text at the same level (a
  ``Title`` line at any level);
- ``under their heading``: body paragraphs, list items and tables whose block's heading path ends
  with the heading they were written under;
- ``not made headings``: "Note: ..." and caption lines that are no heading;
- ``list items``: items whose line (the number Word shows, ``-`` for a bullet, indent per level) is
  in a chunk;
- ``cells``, ``rows``, ``header rows``: as for the other table sections;
- ``content controls``, ``text boxes``, ``footnotes``: their text is in the document's text (a text
  box's exactly once, though its fallback holds it again);
- ``tracked changes``: an insertion's text is in the document's text, a deletion's is not;
- ``fields and hidden text``: a link field's result is in the document's text, its instruction (the
  address) is not, nor a run of hidden text;
- ``page furniture dropped``: header and footer lines that are not in the document's text;
- ``page breaks``: documents with as many page-break blocks as breaks written (none where none);
- ``read in order``: the body's texts (headings, paragraphs, list items, each table's first cell,
  content controls) in document order, consecutive pairs found in order in the document's text.
"""

from __future__ import annotations

import io
import random

from fidelity import ListItem, Section, TruthTable, parse_and_chunk, roman, score_lists, score_tables

_WORDS = [
    "backup",
    "retention",
    "gateway",
    "storage",
    "region",
    "quota",
    "rollout",
    "billing",
    "vendor",
    "contract",
    "schedule",
    "budget",
    "audit",
    "review",
    "capacity",
    "tenant",
    "invoice",
    "archive",
    "policy",
    "network",
]
_NAMES = ("Lena Brandt", "Omar Haddad", "Mei Chen", "Ravi Iyer", "Ana Souza")
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_NS = (
    f'xmlns:w="{_W}" '
    'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
    'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
    'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
    'xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office"'
)
# Word's own formats, as it shows the n-th item: (numFmt, lvlText)
_FORMATS = {
    "decimal": ("decimal", "%1."),
    "letter": ("lowerLetter", "%1)"),
    "roman": ("lowerRoman", "%1."),
}


def _shown(fmt: str, n: int) -> str:
    return {"decimal": str(n), "lowerLetter": chr(96 + n), "lowerRoman": roman(n).lower()}[fmt]


def _phrase(rng: random.Random, k: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(k)).capitalize()


class _Doc:
    """One document being written, with its truth."""

    def __init__(self, rng: random.Random):
        import docx

        self.rng = rng
        self.d = docx.Document()
        self.used: list[str] = []
        self.ids = iter(range(100, 10**6))
        self.t = {
            "headings": [],  # (text, level; None for a Title line)
            "under": [],  # (text, heading)
            "plain": [],
            "items": [],
            "tables": [],
            "controls": [],
            "boxes": [],
            "inserted": [],
            "deleted": [],
            "shown": [],  # a field's result
            "not shown": [],  # a field's instruction, hidden text
            "footnotes": [],
            "furniture": [],
            "order": [],
            "breaks": 0,
        }
        self.heading = ""
        self.counts: dict[str, dict[int, int]] = {}  # numId -> level -> the number last shown
        self.footnotes: list[tuple[int, str]] = []
        self.numbered_2 = False  # List Number 2 used: its numbers would run on from the first use

    def fresh(self, k: int) -> str:
        """A text no other text of the document holds or is held by (any case), so ``find`` is exact."""
        while True:
            t = f"{_phrase(self.rng, k)} {self.rng.randint(100, 999)}"
            low = t.lower()
            if not any(low in u or u in low for u in self.used):
                self.used.append(low)
                return t

    # -- headings ------------------------------------------------------------------------------------

    def title(self) -> None:
        text = self.fresh(3)
        self.d.add_heading(text, 0)
        self.t["headings"].append((text, None))
        self.t["order"].append(text)

    def add_heading(self, level: int, how: str) -> None:
        from docx.enum.style import WD_STYLE_TYPE
        from docx.oxml import OxmlElement
        from docx.oxml.ns import qn

        text = self.fresh(3)
        if how == "style":
            self.d.add_heading(text, level)
        elif how == "custom":
            if "Appendix Heading" not in [s.name for s in self.d.styles]:
                style = self.d.styles.add_style("Appendix Heading", WD_STYLE_TYPE.PARAGRAPH)
                style.base_style = self.d.styles["Heading 2"]
            self.d.add_paragraph(text, style="Appendix Heading")
            level = 2
        else:
            p = self.d.add_paragraph()
            p.add_run(text).bold = True
            outline = OxmlElement("w:outlineLvl")
            outline.set(qn("w:val"), str(level - 1))
            p._p.get_or_add_pPr().append(outline)
        self.heading = text
        self.t["headings"].append((text, level))
        self.t["order"].append(text)

    # -- body ----------------------------------------------------------------------------------------

    def paragraph(self, *, page_break: bool = False, footnote: bool = False, box: str = ""):
        from docx.enum.text import WD_BREAK

        text = self.fresh(self.rng.randint(6, 11)) + "."
        if page_break:
            self.t["breaks"] += 1
            if self.rng.random() < 0.5:
                self.d.add_page_break()  # a paragraph of its own, as Ctrl+Enter leaves it
                p = self.d.add_paragraph(text)
            else:
                p = self.d.add_paragraph()
                p.add_run().add_break(WD_BREAK.PAGE)
                p.add_run(text)
        else:
            p = self.d.add_paragraph(text)
        self._body(text)
        if footnote:
            self._footnote(p)
        if box:
            self._text_box(p, box)
        return p

    def _body(self, text: str) -> None:
        self.t["under"].append((text, self.heading))
        self.t["order"].append(text)

    def note(self) -> None:
        text = f"Note: {self.fresh(self.rng.randint(3, 6)).lower()}" + (
            "." if self.rng.random() < 0.5 else ""
        )
        self.d.add_paragraph().add_run(text).bold = True
        self.t["plain"].append(text)
        self.t["order"].append(text)

    def caption(self, what: str, k: int) -> None:
        text = f"{what} {k}: {self.fresh(3)}"
        self.d.add_paragraph(text, style="Caption")
        self.t["plain"].append(text)
        self.t["order"].append(text)

    def control(self) -> None:
        """Paragraphs in a block-level content control, as a template's cover page and abstract hold them."""
        from docx.oxml import parse_xml

        texts = [self.fresh(self.rng.randint(5, 9)) + "." for _ in range(self.rng.randint(1, 2))]
        sdt = parse_xml(
            f'<w:sdt xmlns:w="{_W}"><w:sdtPr><w:alias w:val="Abstract"/><w:tag w:val="abstract"/>'
            f'<w:id w:val="{next(self.ids)}"/></w:sdtPr><w:sdtContent/></w:sdt>'
        )
        content = sdt[1]
        for text in texts:
            p = self.d.add_paragraph(text)._p
            content.append(p)  # moved out of the body into the control
        self.d.element.body.insert_element_before(sdt, "w:sectPr")
        self.t["controls"] += texts
        self.t["order"] += texts

    def _text_box(self, p, text: str) -> None:
        from docx.oxml import parse_xml

        n = next(self.ids)
        inner = f"<w:txbxContent><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:txbxContent>"
        drawing = (
            '<w:drawing><wp:anchor distT="0" distB="0" distL="114300" distR="114300" simplePos="0" '
            'relativeHeight="251659264" behindDoc="0" locked="0" layoutInCell="1" allowOverlap="1">'
            '<wp:simplePos x="0" y="0"/><wp:positionH relativeFrom="column"><wp:posOffset>3200400'
            '</wp:posOffset></wp:positionH><wp:positionV relativeFrom="paragraph"><wp:posOffset>0'
            '</wp:posOffset></wp:positionV><wp:extent cx="2286000" cy="457200"/>'
            '<wp:effectExtent l="0" t="0" r="0" b="0"/><wp:wrapSquare wrapText="bothSides"/>'
            f'<wp:docPr id="{n}" name="Text Box {n}"/><wp:cNvGraphicFramePr/>'
            '<a:graphic><a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape">'
            '<wps:wsp><wps:cNvSpPr txBox="1"/><wps:spPr><a:xfrm><a:off x="0" y="0"/>'
            '<a:ext cx="2286000" cy="457200"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom>'
            f"</wps:spPr><wps:txbx>{inner}</wps:txbx><wps:bodyPr/></wps:wsp></a:graphicData></a:graphic>"
            "</wp:anchor></w:drawing>"
        )
        if self.rng.random() < 0.5:
            drawing = (
                f'<mc:AlternateContent><mc:Choice Requires="wps">{drawing}</mc:Choice><mc:Fallback>'
                f'<w:pict><v:shape id="Text Box {n}" o:spid="_x0000_s{n}" type="#_x0000_t202" '
                'style="position:absolute;margin-left:252pt;width:180pt;height:36pt">'
                f"<v:textbox>{inner}</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent>"
            )
        p._p.append(parse_xml(f"<w:r {_NS}>{drawing}</w:r>"))
        self.t["boxes"].append(text)

    def tracked(self) -> None:
        """A paragraph with a tracked insertion and a tracked deletion, changes not yet accepted."""
        from docx.oxml import parse_xml

        lead = self.fresh(self.rng.randint(4, 7))
        inserted, deleted = self.fresh(3).lower(), self.fresh(3).lower()
        p = self.d.add_paragraph()
        p.add_run(lead + " ")
        mark = f'w:author="{self.rng.choice(_NAMES)}" w:date="2024-03-0{self.rng.randint(1, 9)}T10:00:00Z"'
        first = self.rng.random() < 0.5  # the deletion before the insertion, or after it
        ins = f'<w:ins xmlns:w="{_W}" w:id="{next(self.ids)}" {mark}><w:r><w:t>{inserted}</w:t></w:r></w:ins>'
        gone = f"{deleted} " if first else f" {deleted}"
        dele = (
            f'<w:del xmlns:w="{_W}" w:id="{next(self.ids)}" {mark}><w:r>'
            f'<w:delText xml:space="preserve">{gone}</w:delText></w:r></w:del>'
        )
        for x in (dele, ins) if first else (ins, dele):
            p._p.append(parse_xml(x))
        p.add_run(".")
        self._body(lead)
        self.t["inserted"].append(inserted)
        self.t["deleted"].append(deleted)

    def field(self) -> None:
        """A paragraph holding a link as Word writes one (a complex field: its instruction, then the
        result it shows) and a run of hidden text."""
        from docx.oxml import parse_xml

        lead, shown, hidden = self.fresh(self.rng.randint(4, 6)), self.fresh(2), self.fresh(3).lower()
        url = f"https://example.com/{'-'.join(hidden.split()[:2])}"
        p = self.d.add_paragraph()
        p.add_run(lead + " ")
        for x in (
            '<w:r xmlns:w="{w}"><w:fldChar w:fldCharType="begin"/></w:r>',
            '<w:r xmlns:w="{w}"><w:instrText xml:space="preserve"> HYPERLINK "{url}" </w:instrText></w:r>',
            '<w:r xmlns:w="{w}"><w:fldChar w:fldCharType="separate"/></w:r>',
            '<w:r xmlns:w="{w}"><w:t>{shown}</w:t></w:r>',
            '<w:r xmlns:w="{w}"><w:fldChar w:fldCharType="end"/></w:r>',
            '<w:r xmlns:w="{w}"><w:rPr><w:vanish/></w:rPr><w:t xml:space="preserve"> {hidden}</w:t></w:r>',
        ):
            p._p.append(parse_xml(x.format(w=_W, url=url, shown=shown, hidden=hidden)))
        p.add_run(".")
        self._body(lead)
        self.t["shown"].append(shown)
        self.t["not shown"] += [url, hidden]

    def _footnote(self, p) -> None:
        from docx.oxml import parse_xml

        n = len(self.footnotes) + 1
        self.footnotes.append((n, self.fresh(self.rng.randint(5, 9)) + "."))
        p._p.append(
            parse_xml(
                f'<w:r xmlns:w="{_W}"><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
                f'<w:footnoteReference w:id="{n}"/></w:r>'
            )
        )
        self.t["footnotes"].append(self.footnotes[-1][1])

    # -- lists ---------------------------------------------------------------------------------------

    def _item(
        self, text: str, num_id: str, level: int, fmt: str, template: str, starts: dict[int, int], depth=None
    ):
        """The marker Word shows: per list (numId), per level, a deeper level restarting under a new
        item above it; ``depth`` is the item's as a reader sees it, when not its list level."""
        counts = self.counts.setdefault(num_id, {})
        counts[level] = counts[level] + 1 if level in counts else starts.get(level, 1)
        for deeper in [k for k in counts if k > level]:
            del counts[deeper]
        marker = "-"
        if fmt != "bullet":
            marker = template
            for k in range(level + 1):
                marker = marker.replace(f"%{k + 1}", _shown(fmt, counts[k]))
        self.t["items"].append(ListItem(text, marker, level if depth is None else depth))
        self.t["under"].append((text, self.heading))
        self.t["order"].append(text)

    def styled_list(self) -> None:
        """``List Number`` or ``List Bullet`` items, some with ``List Bullet 2`` / ``List Number 2`` items
        under them; the template numbers each style as one list through the whole document."""
        numbered = self.rng.random() < 0.5
        style = "List Number" if numbered else "List Bullet"
        for _ in range(self.rng.randint(2, 4)):
            text = self.fresh(self.rng.randint(3, 6))
            self.d.add_paragraph(text, style=style)
            self._item(text, style, 0, "decimal" if numbered else "bullet", "%1.", {})
            if self.rng.random() < 0.3:
                sub = "List Bullet 2"
                if numbered and not self.numbered_2 and self.rng.random() < 0.5:
                    sub, self.numbered_2 = "List Number 2", True
                for _ in range(self.rng.randint(1, 2)):
                    text = self.fresh(self.rng.randint(3, 5))
                    self.d.add_paragraph(text, style=sub)
                    # a level-2 style is a list of its own at level 0, indented: no restart under a new parent
                    self._item(text, sub, 0, "decimal" if sub == "List Number 2" else "bullet", "%1.", {}, 1)
                if sub == "List Number 2":
                    break  # no more parents: its numbers would run on under the next one

    def own_list(self) -> None:
        """A list with a numbering definition of its own (a fresh w:abstractNum and w:num): letters,
        numerals or numbers, or numbers nested ``2.1.``; sometimes starting past 1, by the level's
        start or by the list's startOverride."""
        from docx.oxml import parse_xml
        from docx.oxml.ns import qn

        kind = self.rng.choice(["decimal", "letter", "roman", "nested"])
        numbering = self.d.part.numbering_part.element
        abstract_id = (
            max(int(a.get(qn("w:abstractNumId"))) for a in numbering.findall(qn("w:abstractNum"))) + 1
        )
        start = self.rng.choice([1, 1, 2, 3, 5])
        override = start != 1 and self.rng.random() < 0.5
        fmt, template = _FORMATS["decimal" if kind == "nested" else kind]
        levels = [(fmt, template)] + ([("decimal", "%1.%2.")] if kind == "nested" else [])
        lvls = "".join(
            f'<w:lvl w:ilvl="{i}"><w:start w:val="{1 if override or i else start}"/><w:numFmt w:val="{f}"/>'
            f'<w:lvlText w:val="{x}"/><w:lvlJc w:val="left"/><w:pPr><w:ind w:left="{720 * (i + 1)}" '
            f'w:hanging="360"/></w:pPr></w:lvl>'
            for i, (f, x) in enumerate(levels)
        )
        abstract = parse_xml(
            f'<w:abstractNum xmlns:w="{_W}" w:abstractNumId="{abstract_id}">'
            f'<w:multiLevelType w:val="hybridMultilevel"/>{lvls}</w:abstractNum>'
        )
        numbering.findall(qn("w:abstractNum"))[-1].addnext(abstract)
        num = numbering.add_num(abstract_id)
        if override:
            num.append(
                parse_xml(
                    f'<w:lvlOverride xmlns:w="{_W}" w:ilvl="0"><w:startOverride w:val="{start}"/></w:lvlOverride>'
                )
            )
        num_id = str(num.numId)
        level = 0
        for k in range(self.rng.randint(2, 5)):
            if kind == "nested" and k:
                level = self.rng.choice([0, 1, 1])
            text = self.fresh(self.rng.randint(3, 6))
            p = self.d.add_paragraph(text, style="List Paragraph")
            num_pr = p._p.get_or_add_pPr().get_or_add_numPr()
            num_pr.get_or_add_ilvl().val = level
            num_pr.get_or_add_numId().val = num.numId
            f, x = levels[level]
            self._item(text, num_id, level, f, x, {0: start})

    # -- tables --------------------------------------------------------------------------------------

    def table(self) -> None:
        rows = [[self.fresh(1) for _ in range(3)]]
        rows += [
            [self.fresh(2), str(self.rng.randint(1, 900)), self.fresh(1)]
            for _ in range(self.rng.randint(2, 4))
        ]
        table = self.d.add_table(len(rows), 3)
        table.style = self.d.styles["Table Grid"]
        covered = set()
        across = self.rng.random() < 0.4
        down = self.rng.random() < 0.4
        if across:  # the last row's two right cells merged (gridSpan)
            r = len(rows) - 1
            covered.add((r, 2))
            rows[r][2] = rows[r][1]
        if down:  # a row label over the first two data rows (vMerge)
            covered.add((2, 0))
            rows[2][0] = rows[1][0]
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                if (r, c) not in covered:  # a covered cell stays empty: merging moves its text in
                    table.cell(r, c).text = value
        if across:
            r = len(rows) - 1
            table.cell(r, 1).merge(table.cell(r, 2))
        if down:
            table.cell(1, 0).merge(table.cell(2, 0))
        self.t["tables"].append(TruthTable(tuple(tuple(r) for r in rows), 1))
        self.t["under"].append((rows[0][0], self.heading))
        self.t["order"].append(rows[0][0])

    # -- the rest ------------------------------------------------------------------------------------

    def furniture(self) -> None:
        section = self.d.sections[0]
        head, foot = self.fresh(3), f"{self.fresh(2)} confidential"
        section.header.paragraphs[0].text = head
        section.footer.paragraphs[0].text = foot
        self.t["furniture"] += [head, foot]

    def save(self) -> bytes:
        if self.footnotes:
            self._footnotes_part()
        buf = io.BytesIO()
        self.d.save(buf)
        return buf.getvalue()

    def _footnotes_part(self) -> None:
        """python-docx has no footnotes: the part written as Word writes it (two separators, then the notes)."""
        from docx.opc.constants import CONTENT_TYPE as CT
        from docx.opc.constants import RELATIONSHIP_TYPE as RT
        from docx.opc.packuri import PackURI
        from docx.opc.part import XmlPart
        from docx.oxml import parse_xml

        notes = "".join(
            f'<w:footnote w:id="{n}"><w:p><w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
            f'<w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> {text}</w:t></w:r></w:p></w:footnote>'
            for n, text in self.footnotes
        )
        xml = (
            f'<w:footnotes xmlns:w="{_W}">'
            '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
            '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/>'
            f"</w:r></w:p></w:footnote>{notes}</w:footnotes>"
        )
        package = self.d.part.package
        part = XmlPart(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, parse_xml(xml), package)
        self.d.part.relate_to(part, RT.FOOTNOTES)


def document(rng: random.Random):
    """``(docx bytes, truth)``: a few sections, each feature drawn for a good share of documents and
    put under a heading drawn at random."""
    doc = _Doc(rng)
    n = rng.randint(3, 5)
    if rng.random() < 0.4:
        doc.title()
    if rng.random() < 0.2:
        doc.control()  # a cover page's content control, before the first heading
    features = [f for f, p in _FEATURES if rng.random() < p]
    where: dict[int, list[str]] = {}
    for f in features:
        where.setdefault(rng.randrange(n), []).append(f)
    level, tables, figures = 0, 0, 0
    for i in range(n):
        level = 1 if i == 0 else rng.randint(1, min(level + 1, 3))
        how = rng.choices(["style", "custom", "outline"], [6, 2, 2])[0]
        if how == "custom" and level == 1:
            how = "style"  # the custom style is a level-2 one
        doc.add_heading(level, how)
        here = where.get(i, [])
        rng.shuffle(here)
        doc.paragraph(
            page_break=i > 0 and "break" in here,
            footnote="footnote" in here,
            box=doc.fresh(4) if "box" in here else "",
        )
        for f in here:
            if f == "table":
                tables += 1
                if rng.random() < 0.5:
                    doc.caption("Table", tables)
                doc.table()
            elif f == "list":
                doc.styled_list() if rng.random() < 0.5 else doc.own_list()
            elif f == "own list":
                doc.own_list()
            elif f == "note":
                doc.note()
            elif f == "caption":
                figures += 1
                doc.caption("Figure", figures)
            elif f == "control":
                doc.control()
            elif f == "tracked":
                doc.tracked()
            elif f == "field":
                doc.field()
            elif f == "break" and i == 0:
                doc.paragraph(page_break=True)
        if rng.random() < 0.5:
            doc.paragraph()
    if rng.random() < 0.6:
        doc.furniture()
    return doc.save(), doc.t


# (feature, share of documents that draw it); "break", "footnote" and "box" go with a section's
# first paragraph
_FEATURES = [
    ("list", 0.7),
    ("own list", 0.4),
    ("table", 0.6),
    ("note", 0.5),
    ("caption", 0.4),
    ("control", 0.4),
    ("box", 0.4),
    ("tracked", 0.4),
    ("field", 0.4),
    ("footnote", 0.4),
    ("break", 0.5),
]


def score_document(section: Section, case: str, data: bytes, t: dict, fmt: str = "docx") -> None:
    """Score one document against its truth; ``fmt`` is its extension (``doc``: the same document
    saved as Word 97-2003, ``fidelity_legacy.py``)."""
    parsed, chunks = parse_and_chunk(data, f"{case}.{fmt}")
    blocks = [b for b in parsed.blocks if b.kind != "page_break"]
    heads = {}
    for b in blocks:
        if b.kind == "heading":
            heads.setdefault(b.text, b.level)
    ok = 0
    for text, level in t["headings"]:
        if text in heads and (level is None or heads[text] == level):
            ok += 1
        else:
            section.miss(f"{case}: heading {text!r} level {level}: got {heads.get(text, 'no heading')}")
    section.add("headings", fmt, ok, len(t["headings"]))
    ok = 0
    for text, heading in t["under"]:
        b = next((b for b in blocks if b.kind != "heading" and text in b.text), None)
        path = b.heading_path if b is not None else None
        if path and path[-1] == heading:
            ok += 1
        else:
            section.miss(f"{case}: {text[:40]!r} under {path!r}, want under {heading!r}")
    section.add("under their heading", fmt, ok, len(t["under"]))
    made = [x for x in t["plain"] if x in heads]
    for x in made:
        section.miss(f"{case}: {x!r} made a heading")
    if t["plain"]:
        section.add("not made headings", fmt, len(t["plain"]) - len(made), len(t["plain"]))
    if t["items"]:
        score_lists(section, case, fmt, t["items"], chunks)
    found = [(b.rows, b.header_rows) for b in blocks if b.kind == "table"]
    score_tables(section, case, fmt, t["tables"], found)
    text = parsed.text
    for figure, texts, want in (
        ("content controls", t["controls"], lambda x: x in text),
        ("text boxes", t["boxes"], lambda x: text.count(x) == 1),
        ("footnotes", t["footnotes"], lambda x: x in text),
    ):
        ok = sum(1 for x in texts if want(x))
        for x in texts:
            if not want(x):
                section.miss(f"{case}: {figure}: {x!r} found {text.count(x)} times")
        if texts:
            section.add(figure, fmt, ok, len(texts))
    _in_and_out(section, case, fmt, "tracked changes", text, t["inserted"], t["deleted"])
    _in_and_out(section, case, fmt, "fields and hidden text", text, t["shown"], t["not shown"])
    if t["furniture"]:
        kept = [x for x in t["furniture"] if x in text]
        for x in kept:
            section.miss(f"{case}: header/footer {x!r} in the text")
        section.add("page furniture dropped", fmt, len(t["furniture"]) - len(kept), len(t["furniture"]))
    breaks = sum(1 for b in parsed.blocks if b.kind == "page_break")
    if breaks != t["breaks"]:
        section.miss(f"{case}: {breaks} page breaks, want {t['breaks']}")
    section.add("page breaks", fmt, int(breaks == t["breaks"]), 1)
    at = [text.find(x) for x in t["order"]]
    ok = sum(1 for a, b in zip(at, at[1:]) if 0 <= a < b)
    if ok < len(at) - 1:
        section.miss(f"{case}: {ok}/{len(at) - 1} in order")
    section.add("read in order", fmt, ok, len(at) - 1)
    section.cases += 1


def _in_and_out(section: Section, case: str, fmt: str, figure: str, text: str, wanted, unwanted) -> None:
    """One check a text: each ``wanted`` is in the document's text, each ``unwanted`` is not."""
    checks = [(x, x in text, "missing") for x in wanted] + [(x, x not in text, "read") for x in unwanted]
    for x, good, what in checks:
        if not good:
            section.miss(f"{case}: {figure}: {x!r} {what}")
    if checks:
        section.add(figure, fmt, sum(good for _, good, _ in checks), len(checks))


SEED = 1


def docx_section(fast: bool) -> Section:
    s = Section("docx")
    rng = random.Random(SEED)
    for i in range(3 if fast else 30):
        data, truth = document(rng)
        score_document(s, f"doc-{i}", data, truth)
    return s


SECTIONS = {"docx": docx_section}
