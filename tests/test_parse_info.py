"""GNU Info manuals read as the sections they print: headings at their underline's level, text
under them, and none of what an Info reader navigates by (node headers, menus, tables, markers)."""

import dataclasses
import re
from pathlib import Path

from raychunk.parse import parse_document
from tests.spans import assert_spans_match

DATA = Path(__file__).parent / "data" / "info"
_TERMS = re.compile(r"'[^'\n]+'\n(?:'[^'\n]+'\n){0,3} {4,}\S")


def parse(name: str, as_name: str | None = None):
    return parse_document((DATA / name).read_bytes(), as_name or str(DATA / name))


def test_a_manual_reads_as_its_sections():
    doc = parse("time.info.gz")
    assert doc.document.format == "info" and doc.document.status == "ok"
    assert doc.document.title == "Time"
    headings = [(b.level, b.text) for b in doc.blocks if b.kind == "heading"]
    assert headings[:5] == [
        (1, "Time"),
        (1, "1 Measuring Program Resource Use"),
        (2, "1.1 Setting the Output Format"),
        (2, "1.2 The Format String"),
        (3, "1.2.1 Time Resources"),
    ]
    resources = next(b for b in doc.blocks if b.text.startswith("'E'"))
    assert resources.heading_path == (
        "1 Measuring Program Resource Use",
        "1.2 The Format String",
        "1.2.1 Time Resources",
    )
    text = "\n".join(b.text for b in doc.blocks)
    for navigation in ("File: time.info", "* Menu:", "INFO-DIR-SECTION", "Tag Table", "[index]", "Node: "):
        assert navigation not in text, navigation
    # the index node has nothing but its menu: its heading is all that is left of it
    assert doc.blocks[-1].kind == "heading" and doc.blocks[-1].text == "Concept index"
    # a table's entry reads as a manual page's option does: its terms joined to what they do
    entry = "'-f FORMAT', '--format=FORMAT': Use FORMAT as the format string."
    assert any(b.text == entry for b in doc.blocks)
    definitions = [b for b in doc.blocks if b.kind == "paragraph" and _TERMS.match(doc.text, b.char_start)]
    assert len(definitions) > 10
    for b in definitions:  # its span holds its terms and definition, their lines as written
        assert " ".join(b.text.replace("', '", "' '").replace("': ", "' ", 1).split()) == " ".join(
            doc.text[b.char_start : b.char_end].split()
        ), b.text
    exact = [b for b in doc.blocks if b not in definitions and b.kind != "code"]
    assert_spans_match(dataclasses.replace(doc, blocks=exact))
    # an example's margin is left out of its text: its lines are in its span
    assert_spans_match(
        dataclasses.replace(doc, blocks=[b for b in doc.blocks if b.kind == "code"]), exact=False
    )


def test_a_bullet_on_a_line_of_its_own_is_an_item_as_its_neighbours_are():
    """grep.info's separators: a one-line bullet item between two-line ones was a paragraph with
    its ``•`` in its text; a bullet character is only ever a bullet."""
    text = "Points:\n\n   \u2022 Matching lines use a colon between prefix\n     fields and content.\n\n"
    text += "   \u2022 Context lines use a dash.\n\n   \u2022 Groups are set apart\n     by a line.\n"
    doc = parse_document(text.encode(), "notes.txt")
    assert [(b.kind, b.text.split()[0]) for b in doc.blocks] == [
        ("paragraph", "Points:"),
        ("list_item", "Matching"),
        ("list_item", "Context"),
        ("list_item", "Groups"),
    ]
    alone = parse_document(b"Note:\n\n- 5 degrees below zero\n\nNext.\n", "n.txt")
    assert [b.kind for b in alone.blocks] == ["paragraph", "paragraph", "paragraph"]  # a dash may be a dash


def test_a_split_manual_names_where_its_text_is():
    doc = parse("find.info.gz")
    assert doc.document.status == "empty"
    assert doc.document.reason == "an Info manual split into files: its text is in find.info-1, find.info-2"
    part = parse("find.info-2.gz")  # a part is Info by its name
    assert part.document.format == "info" and part.document.status == "ok"
    assert [b.text for b in part.blocks if b.kind == "heading"] == ["'find' Primary Index"]


def test_info_is_known_by_its_content_and_an_info_name_alone_is_not_enough():
    directory = parse("dir")  # no extension: the ^_ line and node header say Info
    assert directory.document.format == "info"
    assert [b.text.split()[:3] for b in directory.blocks] == [
        ["This", "(the", "Directory"],
        ["In", "Debian", "GNU/Linux,"],
    ]
    other = parse_document(b"name=widget\nversion=1.2\n\nA package's info file.\n", "package.info")
    assert other.document.format == "text" and other.document.status == "ok"


NODE = (
    "\x1f\nFile: demo.info,  Node: Overview,  Next: Invoking,  Up: Top\n\n"
    "2.1 Overview\n============\n\n"
    "Normally ‘sed’ is invoked like this:\n\n"
    "     sed SCRIPT INPUTFILE...\n\n"
    "   The following commands are\nequivalent:\n\n"
    "     sed 's/hello/world/g' input.txt > output.txt\n"
    "     sed 's/hello/world/g' < input.txt > output.txt\n\n"
    "‘--debug’\n"
    "     Print the input sed program in canonical form, and annotate program\n"
    "     execution.\n"
    "          $ echo 1 | sed '\\%1%s21232'\n"
    "          3\n\n"
    "     A second paragraph of the entry, indented as its text is.\n\n"
    "   • To examine the difference, try the\n"
    "     following commands:\n"
    "          printf '%s\\n' aa bb | sed ':x ; n ; = ; bx'\n\n"
    "        • A nested item, deeper than an example's five columns.\n\n"
    " -- Function: int asn1_parser2tree (const char * FILE, asn1_node *\n"
    "          DEFINITIONS)\n"
    "     FILE: specify the path and the name of the file.\n\n"
    "     *Returns:* 'ASN1_SUCCESS' if the file has a correct syntax.\n\n"
    "   A quotation follows.\n\n"
    "     This program is distributed in the hope that it will be useful,\n"
    "     but WITHOUT ANY WARRANTY; without even the implied warranty of\n"
    "     MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU\n"
    "     General Public License for more details.\n"
)


def test_an_example_is_code_where_makeinfo_indents_it():
    """makeinfo prints an @example five columns in from the text it is in: from the margin, or
    from a list item's or a table entry's text, then often with no blank line before it. Those lines
    were paragraphs (the commands of 20 manuals of this machine: none was code)."""
    doc = parse_document(NODE.encode(), "demo.info")
    assert doc.document.format == "info"
    got = [(b.kind, b.text) for b in doc.blocks]
    assert got == [
        ("heading", "2.1 Overview"),
        ("paragraph", "Normally ‘sed’ is invoked like this:"),
        ("code", "sed SCRIPT INPUTFILE..."),
        ("paragraph", "The following commands are\nequivalent:"),
        (
            "code",
            "sed 's/hello/world/g' input.txt > output.txt\nsed 's/hello/world/g' < input.txt > output.txt",
        ),
        (
            "paragraph",
            "‘--debug’: Print the input sed program in canonical form, and annotate program\nexecution.",
        ),
        ("code", "$ echo 1 | sed '\\%1%s21232'\n3"),
        ("paragraph", "A second paragraph of the entry, indented as its text is."),
        ("list_item", "To examine the difference, try the\n     following commands:"),
        ("code", "printf '%s\\n' aa bb | sed ':x ; n ; = ; bx'"),
        ("list_item", "A nested item, deeper than an example's five columns."),
        (
            "paragraph",
            "-- Function: int asn1_parser2tree (const char * FILE, asn1_node *\n          DEFINITIONS)\n"
            "     FILE: specify the path and the name of the file.",
        ),
        ("paragraph", "*Returns:* 'ASN1_SUCCESS' if the file has a correct syntax."),
        ("paragraph", "A quotation follows."),
        (
            "paragraph",
            "This program is distributed in the hope that it will be useful,\n"
            "     but WITHOUT ANY WARRANTY; without even the implied warranty of\n"
            "     MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU\n"
            "     General Public License for more details.",
        ),
    ]
    # an example's margin is left out of its text (its lines are in its span); a definition's terms
    # are joined
    codes = [b for b in doc.blocks if b.kind == "code"]
    assert_spans_match(dataclasses.replace(doc, blocks=codes), exact=False)
    exact = [b for b in doc.blocks if b.kind != "code" and not b.text.startswith("‘--debug’")]
    assert_spans_match(dataclasses.replace(doc, blocks=exact))


def test_a_real_manual_keeps_its_examples_as_code():
    doc = parse("time.info.gz")
    codes = [b.text for b in doc.blocks if b.kind == "code"]
    assert "time [option...] COMMAND [ARG...]" in codes
    assert any(c.startswith("eg$ time wc /etc/hosts\n      35     111    1134 /etc/hosts") for c in codes)
    assert not any(b.kind == "paragraph" and b.text.startswith(("time [option", "eg$")) for b in doc.blocks)
