"""raychunk's own Word reader (``parse/word.py``) on documents drawn here, raw XML where python-docx
has no API: what the generated ``docx`` fidelity section does not reach (equations, pages Word laid
out, numbered headings, tables of contents, placeholders, alt text, broken grids, hostile values)."""

from __future__ import annotations

import io

import pytest

from raychunk.parse import parse_document

docx = pytest.importorskip("docx")
from docx.oxml import parse_xml  # noqa: E402

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
NS = f'xmlns:w="{W}" xmlns:m="{M}"'


def body(*xml: str, doc=None) -> bytes:
    """A document whose body holds ``xml`` (elements in the w: and m: namespaces), in order."""
    d = doc or docx.Document()
    tail = d.element.body.sectPr
    for x in xml:
        el = parse_xml(x.replace(">", f" {NS}>", 1))  # the namespaces on the outermost element
        if tail is not None:
            tail.addprevious(el)
        else:
            d.element.body.append(el)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def parse(data: bytes):
    parsed = parse_document(data, "memo.docx")
    assert parsed.document.status == "ok", parsed.document.reason
    for b in parsed.blocks:
        assert parsed.text[b.char_start : b.char_end] == b.text, b
    return parsed


def with_footnotes(xml: str):
    """A new document with ``xml`` as its footnotes part (python-docx has no API for one)."""
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part

    d = docx.Document()
    content_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"
    part = Part(PackURI("/word/footnotes.xml"), content_type, xml.encode(), d.part.package)
    d.part.relate_to(part, RELATIONSHIP_TYPE.FOOTNOTES)
    return d


def p(text: str, ppr: str = "") -> str:
    return f"<w:p><w:pPr>{ppr}</w:pPr><w:r><w:t xml:space='preserve'>{text}</w:t></w:r></w:p>"


def test_equations_are_read_as_a_line_of_text():
    """unstructured read no equation: "The angle is θ = ..." came out as "The angle is ."."""
    frac = "<m:f><m:num><m:r><m:t>mλ</m:t></m:r></m:num><m:den><m:r><m:t>a</m:t></m:r></m:den></m:f>"
    power = "<m:sSup><m:e><m:r><m:t>10</m:t></m:r></m:e><m:sup><m:r><m:t>-6</m:t></m:r></m:sup></m:sSup>"
    root = (
        "<m:rad><m:radPr><m:degHide m:val='1'/></m:radPr><m:deg/><m:e><m:r><m:t>x+1</m:t></m:r></m:e></m:rad>"
    )
    data = body(
        f"<w:p><w:r><w:t xml:space='preserve'>The angle is </w:t></w:r><m:oMath><m:r><m:t>sinθ=</m:t></m:r>"
        f"{frac}<m:r><m:t>=2.2×</m:t></m:r>{power}</m:oMath><w:r><w:t>.</w:t></w:r></w:p>",
        f"<w:p><m:oMathPara><m:oMath><m:r><m:t>y=</m:t></m:r>{root}</m:oMath></m:oMathPara></w:p>",
    )
    assert [b.text for b in parse(data).blocks] == ["The angle is sinθ=mλ/a=2.2×10^(-6).", "y=√(x+1)"]


def test_pages_word_laid_out_are_the_blocks_pages():
    """Where Word recorded its layout (w:lastRenderedPageBreak) blocks carry their pages, a paragraph
    running over a page keeps both, and a section that must start on an odd page skips one."""
    lrpb = "<w:r><w:lastRenderedPageBreak/><w:t>Second page.</w:t></w:r>"
    odd = "<w:sectPr><w:type w:val='oddPage'/></w:sectPr>"
    data = body(
        p("First page."),
        f"<w:p>{lrpb}</w:p>",
        "<w:p><w:r><w:t xml:space='preserve'>Runs over </w:t></w:r>"
        "<w:r><w:lastRenderedPageBreak/><w:t>onto the third.</w:t></w:r></w:p>",
        "<w:p><w:pPr><w:sectPr/></w:pPr><w:r><w:t>Ends section one.</w:t></w:r></w:p>",
        "<w:p><w:r><w:lastRenderedPageBreak/><w:t>Section two opens page five.</w:t></w:r></w:p>",
        f"<w:p><w:pPr>{odd}</w:pPr></w:p>",
    )
    parsed = parse(data)
    seen = [(b.kind, b.text, b.pages) for b in parsed.blocks]
    assert seen == [
        ("paragraph", "First page.", (1,)),
        ("page_break", "", (2,)),
        ("paragraph", "Second page.", (2,)),
        ("paragraph", "Runs over onto the third.", (2, 3)),
        ("paragraph", "Ends section one.", (3,)),
        ("page_break", "", (4,)),
        ("page_break", "", (5,)),
        ("paragraph", "Section two opens page five.", (5,)),
    ]
    assert parsed.document.pages == 5


def test_hard_page_breaks_without_layout_are_breaks_without_page_numbers():
    data = body(
        p("Before."),
        "<w:p><w:r><w:br w:type='page'/><w:t>After a break.</w:t></w:r></w:p>",
        p("Starts a page.", "<w:pageBreakBefore/>"),
    )
    parsed = parse(data)
    assert [(b.kind, b.pages) for b in parsed.blocks] == [
        ("paragraph", ()),
        ("page_break", ()),
        ("paragraph", ()),
        ("page_break", ()),
        ("paragraph", ()),
    ]
    assert parsed.document.pages == 0


def test_numbered_headings_and_multilevel_labels():
    """Outline-numbered headings keep their number; a second level shows ``1.2.``; a list linked to
    a numbering style (numStyleLink) takes that style's levels."""
    d = docx.Document()
    numbering = d.part.numbering_part.element
    lvls = "".join(
        f"<w:lvl w:ilvl='{i}'><w:start w:val='1'/><w:numFmt w:val='decimal'/>"
        f"<w:lvlText w:val='{'.'.join(f'%{k + 1}' for k in range(i + 1))}.'/></w:lvl>"
        for i in range(3)
    )
    numbering.insert(0, parse_xml(f"<w:abstractNum {NS} w:abstractNumId='90'>{lvls}</w:abstractNum>"))
    numbering.insert(
        1,
        parse_xml(
            f"<w:abstractNum {NS} w:abstractNumId='91'><w:numStyleLink w:val='Outline'/></w:abstractNum>"
        ),
    )
    numbering.append(parse_xml(f"<w:num {NS} w:numId='90'><w:abstractNumId w:val='90'/></w:num>"))
    numbering.append(parse_xml(f"<w:num {NS} w:numId='91'><w:abstractNumId w:val='91'/></w:num>"))
    d.styles.element.append(
        parse_xml(
            f"<w:style {NS} w:type='numbering' w:styleId='Outline'><w:name w:val='Outline List'/>"
            "<w:pPr><w:numPr><w:numId w:val='90'/></w:numPr></w:pPr></w:style>"
        )
    )

    def numbered(text, num, ilvl, style=""):
        st = f"<w:pStyle w:val='{style}'/>" if style else ""
        return p(text, f"{st}<w:numPr><w:ilvl w:val='{ilvl}'/><w:numId w:val='{num}'/></w:numPr>")

    data = body(
        numbered("Scope", 90, 0, "Heading1"),
        numbered("Terms", 90, 1, "Heading2"),
        p("The terms used."),
        numbered("Linked first", 91, 0),
        numbered("Linked nested", 91, 1),
        doc=d,
    )
    parsed = parse(data)
    heads = [(b.text, b.level) for b in parsed.blocks if b.kind == "heading"]
    assert heads == [("1. Scope", 1), ("1.1. Terms", 2)]
    items = [(b.marker, b.text, b.level, b.heading_path) for b in parsed.blocks if b.kind == "list_item"]
    # the linked list shares the outline's definition, so its counters run on
    assert items == [
        ("2.", "Linked first", 0, ("1. Scope", "1.1. Terms")),
        ("2.1.", "Linked nested", 1, ("1. Scope", "1.1. Terms")),
    ]
    assert "2.1. Linked nested" in parsed.text


def test_table_of_contents_placeholders_and_generated_alt_text_give_no_text():
    toc = (
        "<w:sdt><w:sdtPr><w:docPartObj><w:docPartGallery w:val='Table of Contents'/></w:docPartObj></w:sdtPr>"
        f"<w:sdtContent>{p('Contents')}{p('Install 3')}</w:sdtContent></w:sdt>"
    )
    placeholder = (
        "<w:sdt><w:sdtPr><w:showingPlcHdr/></w:sdtPr>"
        f"<w:sdtContent>{p('Click or tap here to enter text.')}</w:sdtContent></w:sdt>"
    )
    cover = f"<w:sdt><w:sdtPr/><w:sdtContent>{p('Acme Handbook 2026')}</w:sdtContent></w:sdt>"
    wp = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"

    def picture(descr):
        return (
            f"<w:p><w:r><w:drawing><wp:inline xmlns:wp='{wp}'><wp:extent cx='1' cy='1'/>"
            f"<wp:docPr id='1' name='Picture 1' descr='{descr}'/></wp:inline></w:drawing></w:r></w:p>"
        )

    data = body(
        toc,
        p("Body text."),
        placeholder,
        cover,
        picture("Architecture: the gateway in front of two regions"),
        picture("A screenshot of a computer Description automatically generated"),
        picture("image1.png"),
    )
    texts = [b.text for b in parse(data).blocks]
    assert texts == ["Body text.", "Acme Handbook 2026", "Architecture: the gateway in front of two regions"]


def test_toc_styled_lines_are_dropped():
    d = docx.Document()
    d.styles.element.append(
        parse_xml(f"<w:style {NS} w:type='paragraph' w:styleId='TOC1'><w:name w:val='toc 1'/></w:style>")
    )
    data = body(p("Install\t3", "<w:pStyle w:val='TOC1'/>"), p("Install", "<w:pStyle w:val='Heading1'/>"),
                p("Run the installer."), doc=d)  # fmt: skip
    assert [(b.kind, b.text) for b in parse(data).blocks] == [
        ("heading", "Install"),
        ("paragraph", "Run the installer."),
    ]


def test_a_broken_grid_is_still_a_table():
    """grid_offset_error.docx (corpus): a row missing the cell a vertical merge runs through made
    unstructured drop cells, and the table became one line of text, "A Merged B1-B3 C"."""

    def tc(text, merge=""):
        props = f"<w:tcPr><w:vMerge w:val='{merge}'/></w:tcPr>" if merge else ""
        return f"<w:tc>{props}<w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:tc>"

    table = (
        "<w:tbl><w:tblGrid><w:gridCol/><w:gridCol/></w:tblGrid>"
        f"<w:tr>{tc('A')}{tc('Merged B1-B3', 'restart')}</w:tr><w:tr>{tc('')}</w:tr>"
        f"<w:tr>{tc('C')}{tc('', 'continue')}</w:tr>"
        "<w:tr><w:trPr><w:gridBefore w:val='1'/></w:trPr>"
        "<w:tc><w:tcPr><w:gridSpan w:val='100000000'/></w:tcPr><w:p><w:r><w:t>wide</w:t></w:r></w:p></w:tc></w:tr>"
        "</w:tbl>"
    )
    [t] = parse(body(table)).blocks
    assert t.kind == "table"
    width = len(t.rows[0])
    assert t.rows[:2] == (
        ("A", "Merged B1-B3") + ("",) * (width - 2),
        ("C", "Merged B1-B3") + ("",) * (width - 2),
    )
    assert t.rows[2][:2] == ("", "wide") and width <= 64  # a hostile span stops at Word's widest table
    assert (1, 1) in t.copies


def test_a_note_cited_twice_is_read_once_and_an_unclosed_field_hides_only_its_paragraph():
    d = with_footnotes(
        f"<w:footnotes {NS}><w:footnote w:type='separator' w:id='-1'><w:p/></w:footnote>"
        f"<w:footnote w:id='1'>{p('Per 28 U.S.C. 586.')}</w:footnote></w:footnotes>"
    )
    ref = "<w:r><w:footnoteReference w:id='1'/></w:r>"
    data = body(
        f"<w:p><w:r><w:t>The trustee acts.</w:t></w:r>{ref}</w:p>",
        f"<w:p><w:r><w:t>As said before.</w:t></w:r>{ref}</w:p>",
        "<w:p><w:r><w:fldChar w:fldCharType='begin'/></w:r><w:r><w:instrText>PAGE</w:instrText></w:r>"
        "<w:r><w:t>instruction never ended</w:t></w:r></w:p>",
        p("Read after it."),
        doc=d,
    )
    texts = [b.text for b in parse(data).blocks]
    assert texts == ["The trustee acts.", "Per 28 U.S.C. 586.", "As said before.", "Read after it."]


def test_hostile_numbering_gives_no_label_and_no_failure():
    d = docx.Document()
    numbering = d.part.numbering_part.element
    numbering.insert(
        0,
        parse_xml(
            f"<w:abstractNum {NS} w:abstractNumId='77'><w:lvl w:ilvl='0'><w:start w:val='99999999999'/>"
            "<w:numFmt w:val='chineseCounting'/><w:lvlText w:val='%1%9.'/></w:lvl></w:abstractNum>"
        ),
    )
    numbering.append(parse_xml(f"<w:num {NS} w:numId='77'><w:abstractNumId w:val='77'/></w:num>"))
    data = body(
        p("Odd number", "<w:numPr><w:ilvl w:val='0'/><w:numId w:val='77'/></w:numPr>"),
        p("Missing list", "<w:numPr><w:ilvl w:val='12'/><w:numId w:val='5000'/></w:numPr>"),
        p("No list", "<w:numPr><w:ilvl w:val='0'/><w:numId w:val='0'/></w:numPr>"),
        doc=d,
    )
    assert [(b.kind, b.marker, b.text) for b in parse(data).blocks] == [
        ("list_item", "", "Odd number"),
        ("paragraph", "", "Missing list"),
        ("paragraph", "", "No list"),
    ]


def test_a_damaged_notes_part_costs_its_notes_not_the_document():
    d = with_footnotes("<w:footnotes><w:footnote w:id='1'>cut off")
    parsed = parse(
        body("<w:p><w:r><w:t>Cited.</w:t></w:r><w:r><w:footnoteReference w:id='1'/></w:r></w:p>", doc=d)
    )
    assert [b.text for b in parsed.blocks] == ["Cited."]
    assert parsed.document.reason == "footnotes not read (their part is not well-formed XML)"


def test_word_labels_become_markers_and_chunks_hold_their_spans():
    """Labels that read as numbers (``(1)``, ``b)``, ``2.1.``) are markers, context the chunk renders
    and no span holds; any other label ("Step 3:") stays in the item's text. Every chunk holds its
    span as ``raychunk eval`` checks it (the check knew no ``(1)`` nor ``2.1.`` before)."""
    from tests.spans import chunks_holding_their_spans

    d = docx.Document()
    numbering = d.part.numbering_part.element
    lvls = (("(%1)", "decimal"), ("%1.%2.", "decimal"), ("Step %3:", "decimal"))
    xml = "".join(
        f"<w:lvl w:ilvl='{i}'><w:start w:val='1'/><w:numFmt w:val='{fmt}'/><w:lvlText w:val='{text}'/></w:lvl>"
        for i, (text, fmt) in enumerate(lvls)
    )
    numbering.insert(0, parse_xml(f"<w:abstractNum {NS} w:abstractNumId='60'>{xml}</w:abstractNum>"))
    numbering.append(parse_xml(f"<w:num {NS} w:numId='60'><w:abstractNumId w:val='60'/></w:num>"))

    def item(text, ilvl):
        return p(text, f"<w:numPr><w:ilvl w:val='{ilvl}'/><w:numId w:val='60'/></w:numPr>")

    words = ["the", "gateway", "drains", "its", "queue", "before", "the", "replica", "takes", "over"]
    paragraphs = [item(" ".join(words[k % 5 : k % 5 + 6]) + f" {k}", k % 3) for k in range(24)]
    parsed = parse(body(*paragraphs, doc=d))
    items = [(b.marker, b.level) for b in parsed.blocks][:4]
    assert items == [("(1)", 0), ("1.1.", 1), ("", 2), ("(2)", 0)]
    assert parsed.blocks[2].text.startswith("Step 1: ")
    assert all(n > 1 for n in chunks_holding_their_spans(parsed, 16))


def test_an_imported_html_part_is_read_where_it_stands():
    """``w:altChunk``: converters from HTML put the page in a part of its own that Word imports when
    it opens the file. Neither python-docx nor unstructured read it: its text was lost."""
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part

    d = docx.Document()
    reltype = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/aFChunk"
    html = (
        "<html><body><h2>Retention</h2><p>Logs are kept 30 days.</p><ol><li>Export</li><li>Delete</li></ol>"
        "<table><tr><th>Plan</th><th>Days</th></tr><tr><td>Team</td><td>90</td></tr></table></body></html>"
    )
    page = Part(PackURI("/word/afchunk1.html"), "text/html", html.encode(), d.part.package)
    rtf = Part(PackURI("/word/afchunk2.rtf"), "application/rtf", b"{\\rtf1 x}", d.part.package)
    first, second = d.part.relate_to(page, reltype), d.part.relate_to(rtf, reltype)
    r = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
    data = body(
        p("Before the import."),
        f"<w:altChunk {r} r:id='{first}'></w:altChunk>",
        f"<w:altChunk {r} r:id='{second}'></w:altChunk>",
        p("After it."),
        doc=d,
    )
    parsed = parse(data)
    got = [(b.kind, b.text if b.kind != "table" else b.rows, b.marker) for b in parsed.blocks]
    assert got == [
        ("paragraph", "Before the import.", ""),
        ("heading", "Retention", ""),
        ("paragraph", "Logs are kept 30 days.", ""),
        ("list_item", "Export", "1."),
        ("list_item", "Delete", "2."),
        ("table", (("Plan", "Days"), ("Team", "90")), ""),
        ("paragraph", "After it.", ""),
    ]
    assert parsed.document.reason == "an imported part not read (application/rtf)"


def _save(d) -> bytes:
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def test_a_listing_in_a_typewriter_face_is_one_code_block_with_its_lines():
    """Word users set code a line a paragraph in Courier New, a blank paragraph between parts:
    one code block, its indentation and blank line kept; a word in the face inside a sentence, and
    a sentence in the default face, stay paragraphs."""
    d = docx.Document()
    d.add_paragraph("Save this as fetch.py and run it once the service is up:")
    for line in (
        "import json",
        "",
        "def fetch(url):",
        "    with open(url) as f:",
        "        return json.load(f)",
    ):
        d.add_paragraph().add_run(line).font.name = "Courier New"
    inline = d.add_paragraph("Then call ")
    inline.add_run("fetch()").font.name = "Consolas"
    inline.add_run(" with the address the service printed when it started.")
    d.add_paragraph("That is all.")
    parsed = parse(_save(d))
    assert [(b.kind, b.text) for b in parsed.blocks] == [
        ("paragraph", "Save this as fetch.py and run it once the service is up:"),
        ("code", "import json\n\ndef fetch(url):\n    with open(url) as f:\n        return json.load(f)"),
        ("paragraph", "Then call fetch() with the address the service printed when it started."),
        ("paragraph", "That is all."),
    ]


def test_a_code_style_or_a_typewriter_character_style_makes_code():
    """pandoc writes a code block as one "Source Code" paragraph with line breaks; an indented block
    as runs of a character style whose face is a typewriter's ("Verbatim Char")."""
    from docx.enum.style import WD_STYLE_TYPE

    d = docx.Document()
    d.styles.add_style("Source Code", WD_STYLE_TYPE.PARAGRAPH)
    verbatim = d.styles.add_style("Verbatim Char", WD_STYLE_TYPE.CHARACTER)
    verbatim.font.name = "Consolas"
    d.add_paragraph("Build it:")
    block = d.add_paragraph(style="Source Code")
    block.add_run("./configure --prefix=/usr").add_break()
    block.add_run("make install")
    d.add_paragraph("Or the short form:")
    d.add_paragraph().add_run("  make all", style="Verbatim Char")
    d.add_paragraph("Done.")
    parsed = parse(_save(d))
    assert [(b.kind, b.text) for b in parsed.blocks if b.kind == "code"] == [
        ("code", "./configure --prefix=/usr\nmake install"),
        ("code", "  make all"),
    ]
    assert [b.text for b in parsed.blocks if b.kind == "paragraph"] == [
        "Build it:",
        "Or the short form:",
        "Done.",
    ]


def test_an_options_name_over_its_indented_description_is_a_term_not_code():
    from docx.shared import Pt

    d = docx.Document()
    d.add_paragraph("Options:")
    d.add_paragraph().add_run("--quiet").font.name = "Courier New"
    d.add_paragraph("Print nothing but errors.").paragraph_format.left_indent = Pt(36)
    d.add_paragraph().add_run("make -j4").font.name = "Courier New"
    d.add_paragraph("That builds it on four cores.")
    parsed = parse(_save(d))
    assert [(b.kind, b.text) for b in parsed.blocks] == [
        ("paragraph", "Options:"),
        ("paragraph", "--quiet"),
        ("paragraph", "Print nothing but errors."),
        ("code", "make -j4"),
        ("paragraph", "That builds it on four cores."),
    ]


def test_a_document_typed_in_courier_throughout_marks_no_code_by_its_face():
    d = docx.Document()
    d.styles["Normal"].font.name = "Courier New"
    memo = (
        "MEMORANDUM",
        "To: the board",
        "The accounts for the year are closed, and the auditors have signed them without a note.",
        "The build server is to be replaced in the spring; its disks are at the end of their life.",
    )
    for line in memo:
        d.add_paragraph(line)
    d.add_paragraph("make all", style=d.styles.add_style("Source Code", 1))  # a code style still is
    parsed = parse(_save(d))
    assert [(b.kind, b.text) for b in parsed.blocks] == [
        *(("paragraph", line) for line in memo),
        ("code", "make all"),
    ]
