"""The text markups pandoc reads for raychunk (``parse.markup``): Typst, Textile, POD, FictionBook,
OPML, txt2tags, Creole, Emacs Muse and Djot. Each sample holds a title, a section, emphasis, a
numbered list and (where the markup has them) a table; each reads with its headings, its list's
numbers and its table's rows. Before, each was an ``unsupported`` row (no reader for its extension)."""

from __future__ import annotations

from pathlib import Path

import pytest

from raychunk.parse import parse_document
from tests.spans import assert_spans_match

pytest.importorskip("pypandoc")

SAMPLES = {
    ".creole": "= Field Notes\n== Setup\nMount the **sensor** on the mast.\n# Level it.\n# Tighten the bolts.\n|=Part|=Count|\n|Bolt|4|\n",
    ".djot": "# Field Notes\n\n## Setup\n\nMount the *sensor* on the mast.\n\n1. Level it.\n2. Tighten the bolts.\n\n| Part | Count |\n|------|-------|\n| Bolt | 4     |\n",
    ".fb2": '<?xml version="1.0" encoding="UTF-8"?>\n<FictionBook xmlns="http://www.gribuser.ru/xml/fictionbook/2.0"><description><title-info><book-title>Field Notes</book-title><author><first-name>Ada</first-name><last-name>Ops</last-name></author><lang>en</lang></title-info></description>\n<body><section><title><p>Setup</p></title><p>Mount the sensor on the mast.</p></section><section><title><p>Storage</p></title><p>Keep spares dry.</p></section></body></FictionBook>\n',
    ".muse": "#title Field Notes\n\n* Setup\n\nMount the *sensor* on the mast.\n\n 1. Level it.\n 2. Tighten the bolts.\n",
    ".opml": '<?xml version="1.0"?><opml version="2.0"><head><title>Field Notes</title></head><body><outline text="Setup"><outline text="Mount the sensor on the mast."/><outline text="Level it."/></outline><outline text="Storage" _note="Keep spares dry."/></body></opml>\n',
    ".pod": "=head1 NAME\n\nField::Notes - notes from the field\n\n=head1 SETUP\n\nMount the B<sensor> on the mast.\n\n=over\n\n=item 1.\n\nLevel it.\n\n=item 2.\n\nTighten the bolts.\n\n=back\n\n=cut\n",
    ".t2t": "Field Notes\n\n\n= Setup =\nMount the **sensor** on the mast.\n+ Level it.\n+ Tighten the bolts.\n",
    ".textile": "h1. Field Notes\n\nh2. Setup\n\nMount the *sensor* on the mast.\n\n# Level it.\n# Tighten the bolts.\n\n|_. Part |_. Count |\n| Bolt | 4 |\n",
    ".typ": '#set document(title: "Field Notes")\n= Field Notes\n== Setup\nMount the *sensor* on the mast.\n+ Level it.\n+ Tighten the bolts.\n- Keep spares.\n#table(columns: 2, [Part], [Count], [Bolt], [4])\n',
}

SETUP = ["Mount the sensor on the mast.", "Level it.", "Tighten the bolts."]


@pytest.mark.parametrize("ext", sorted(SAMPLES))
def test_each_markup_reads_with_its_structure(ext):
    p = parse_document(SAMPLES[ext].encode(), f"notes{ext}")
    assert p.document.status == "ok" and p.document.reason == "", p.document
    assert_spans_match(p, rendered=("page_break",))
    texts = [b.text for b in p.blocks]
    assert "Setup" in texts or "SETUP" in texts
    setup = next(b for b in p.blocks if b.text.lower() == "setup")
    assert setup.kind == "heading"
    under = [b for b in p.blocks if b.heading_path[-1:] == (setup.text,)]
    assert under and under[0].text == SETUP[0]
    items = [b for b in p.blocks if b.kind == "list_item" and b.text in SETUP]
    if ext not in (".fb2", ".opml"):  # neither has numbered lists
        assert [(b.text, b.marker) for b in items] == [("Level it.", "1."), ("Tighten the bolts.", "2.")]
    tables = [b for b in p.blocks if b.kind == "table"]
    if ext in (".textile", ".creole", ".djot"):
        assert tables[0].rows == (("Part", "Count"), ("Bolt", "4")) and tables[0].header_rows == 1
    if ext == ".typ":
        assert tables[0].rows == (("Part", "Count"), ("Bolt", "4"))  # a Typst table names no header
    expected_title = {".pod": "Field::Notes - notes from the field", ".t2t": "Setup"}.get(ext, "Field Notes")
    assert p.document.title == expected_title


POD = Path("/usr/share/perl")


@pytest.mark.skipif(not POD.exists(), reason="no Perl documentation here")
def test_the_systems_own_perl_documentation():
    pods = sorted(POD.rglob("*.pod"))[:12]
    assert pods
    for pod in pods:
        p = parse_document(pod.read_bytes(), pod.name)
        assert (p.document.format, p.document.status) == ("pod", "ok"), (pod, p.document.reason)
        assert any(b.kind == "heading" for b in p.blocks), pod


def test_xml_in_another_encoding_than_utf8_is_read_in_its_own():
    """An ISO-8859-1 DocBook file: decoded by its declaration, handed on to pandoc as UTF-8 with the
    declaration saying so (it said ISO-8859-1, and the words came out mangled)."""
    xml = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n<article xmlns="http://docbook.org/ns/docbook" '
        'version="5.0"><info><title>Café guide</title></info><section><title>Crème</title>'
        "<para>Brûlée.</para></section></article>"
    ).encode("latin-1")
    p = parse_document(xml, "guide.dbk")
    assert [(b.kind, b.text) for b in p.blocks] == [
        ("heading", "Café guide"),
        ("heading", "Crème"),
        ("paragraph", "Brûlée."),
    ]


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("todo.djot", "- [X] Mount it.\n- [ ] Level it.\n- Spare.\n"),
        ("todo.org", "- [X] Mount it.\n- [ ] Level it.\n- Spare.\n"),
    ],
)
def test_a_task_box_is_a_marker_however_the_converter_writes_it(name, source):
    """pandoc writes a Djot task's box, and an Org task's checked one, as text (``[X] Mount it.``):
    read as a checkbox reads, the box is the item's marker (``- [x]``), not words of its text.
    Before, Djot's chunk line was ``- [X] Mount it.`` where Markdown's is ``- [x] Mount it.``."""
    p = parse_document(source.encode(), name)
    assert [(b.marker, b.text) for b in p.blocks] == [
        ("- [x]", "Mount it."),
        ("- [ ]", "Level it."),
        ("-", "Spare."),
    ]
