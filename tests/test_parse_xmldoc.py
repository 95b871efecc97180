"""XML documents pandoc reads: DocBook manuals and JATS articles, by extension or told apart under
``.xml`` by their root. Before, either was plain text with its tags (``<sec id="s1"><title>``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from raychunk.parse import parse_document
from tests.spans import assert_spans_match

pytest.importorskip("pypandoc")

DATA = Path(__file__).parent / "data" / "jats"

DOCBOOK5 = b"""<?xml version="1.0" encoding="utf-8"?>
<article xmlns="http://docbook.org/ns/docbook" version="5.0">
  <info><title>Operator Manual</title><author><personname>Ada Ops</personname></author></info>
  <section>
    <title>Install</title>
    <para>Run the installer as root.<footnote><para>Or with sudo.</para></footnote></para>
    <orderedlist>
      <listitem><para>Download the package.</para></listitem>
      <listitem><para>Verify its checksum.</para></listitem>
    </orderedlist>
    <programlisting language="bash">./install.sh --prefix /opt</programlisting>
    <section>
      <title>Ports</title>
      <informaltable><tgroup cols="2">
        <thead><row><entry>Port</entry><entry>Use</entry></row></thead>
        <tbody><row><entry>8265</entry><entry>dashboard</entry></row></tbody>
      </tgroup></informaltable>
    </section>
  </section>
</article>
"""

DOCBOOK4 = b"""<?xml version="1.0"?>
<!DOCTYPE book PUBLIC "-//OASIS//DTD DocBook XML V4.5//EN" "http://www.oasis-open.org/docbook/xml/4.5/docbookx.dtd">
<book><title>Field Guide</title>
<chapter><title>Setup</title><para>Mount the sensor.</para>
<itemizedlist><listitem><para>Level it.</para></listitem></itemizedlist></chapter>
</book>
"""


def parsed(data: bytes, name: str):
    p = parse_document(data, name)
    assert_spans_match(p, rendered=("page_break",))
    return p


@pytest.mark.parametrize("name", ["manual.dbk", "manual.xml"])
def test_a_docbook_article_reads_as_its_sections(name):
    p = parsed(DOCBOOK5, name)
    assert (p.document.format, p.document.status, p.document.reason) == ("docbook", "ok", "")
    t = ("Operator Manual",)
    install = (*t, "Install")
    assert [(b.kind, b.text, b.heading_path, b.marker) for b in p.blocks] == [
        ("heading", "Operator Manual", (), ""),
        ("paragraph", "Ada Ops", t, ""),
        ("heading", "Install", t, ""),
        ("paragraph", "Run the installer as root.", install, ""),
        ("list_item", "Download the package.", install, "1."),
        ("list_item", "Verify its checksum.", install, "2."),
        ("code", "./install.sh --prefix /opt", install, ""),
        ("heading", "Ports", install, ""),
        ("table", "| Port | Use |\n|---|---|\n| 8265 | dashboard |", (*install, "Ports"), ""),
        ("heading", "Notes", t, ""),
        ("list_item", "Or with sudo.", (*t, "Notes"), "1."),
    ]
    old = parsed(DOCBOOK4, "guide.xml")  # DocBook 4's DTD, no namespace
    assert old.document.format == "docbook"
    assert [(b.kind, b.text) for b in old.blocks] == [
        ("heading", "Field Guide"),
        ("heading", "Setup"),
        ("paragraph", "Mount the sensor."),
        ("list_item", "Level it."),
    ]


def test_a_jats_article_from_pubmed_central():
    """A PLoS ONE article as PubMed Central keeps it (CC BY; ``data/jats/README.md``), named ``.xml``:
    the title over the authors, the structured abstract's parts under Abstract, the sections, and
    the 33 works of its reference list as numbered lines, which pandoc's JATS reader prints nowhere
    for this kind of citation."""
    p = parsed((DATA / "pone.0000217.nxml").read_bytes(), "pone.0000217.xml")
    assert (p.document.format, p.document.status) == ("jats", "ok")
    title = "Quantifying Organismal Complexity using a Population Genetic Approach"
    assert p.document.title == title
    top = [b.text for b in p.blocks if b.kind == "heading" and b.heading_path == (title,)]
    assert top[:3] == ["Abstract", "Introduction", "Model and Results"] and top[-3:] == [
        "Acknowledgments",
        "References",
        "Notes",
    ]
    abstract = [b.text for b in p.blocks if b.kind == "heading" and b.heading_path == (title, "Abstract")]
    assert abstract == ["Background", "Methodology", "Conclusions/Significance"]
    works = [b for b in p.blocks if b.heading_path == (title, "References")]
    assert len(works) == 33 and all(b.kind == "list_item" for b in works)
    assert works[0].marker == "1." and works[0].text == (
        "McShea DW 1996 Metazoan complexity and evolution: Is there a trend? Perspective. Evolution 50 477 492"
    )
    assert re.search(r"</?[a-z-]+[ >/]", p.text) is None  # no tag of the XML left in the text


def test_xml_of_another_vocabulary_is_read_as_xml_not_pandoc():
    pom = b'<?xml version="1.0"?>\n<project xmlns="http://maven.apache.org/POM/4.0.0"><artifactId>app</artifactId></project>\n'
    assert parse_document(pom, "pom.xml").document.format == "xml"
    # an article root without JATS's DTD or front matter is no JATS article either
    other = b"<article><h>Title</h><p>Text</p></article>\n"
    assert parse_document(other, "post.xml").document.format == "xml"
