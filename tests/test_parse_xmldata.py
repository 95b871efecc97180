"""XML of any other vocabulary read by its shape: small elements as records (``name: value`` lines),
larger ones as sections headed by their title or naming attribute. Before, such a file was plain
text with its tags (``<key name="..." type="b">``) in every chunk."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raychunk.chunking import Profile, chunk_document
from raychunk.classify import classify
from raychunk.config import load_doc_types
from raychunk.evaluation.spans import check_chunk
from raychunk.parse import parse_document
from raychunk.parse.xmldata import RECORD_CHARS, xml_root
from raychunk.tokens import load_counter

GSCHEMA = (
    b"""<?xml version="1.0" encoding="UTF-8"?>
<schemalist gettext-domain="gsettings-desktop-schemas">
  <schema id="org.gnome.desktop.a11y.magnifier" path="/org/gnome/desktop/a11y/magnifier/">
"""
    + b"".join(
        f"""    <key name="option-{i}" type="b">
      <default>{"true" if i % 2 else "false"}</default>
      <summary>Option number {i}</summary>
      <description>Whether the magnifier follows rule {i}: the lens moves with the focus when it is on.</description>
    </key>
""".encode()
        for i in range(30)
    )
    + b"""    <key name="mag-factor" type="d">
      <default>2.0</default>
      <summary>Magnification factor</summary>
      <description>The power of the magnification. A value of 1.0 means
        no magnification.</description>
    </key>
  </schema>
</schemalist>
"""
)

RSS = (
    b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
  <title>Release notes of Acme DB</title>
  <link>https://acme.example/releases</link>
  <description>Every release of Acme DB &amp; its tools.</description>
"""
    + b"".join(
        f"""  <item>
    <title>Acme DB 2.{i} released</title>
    <link>https://acme.example/releases/2.{i}</link>
    <dc:creator>The Acme team</dc:creator>
    <description>&lt;p&gt;Version 2.{i} fixes &lt;b&gt;{i} bugs&lt;/b&gt; in the replication log.&lt;/p&gt;</description>
  </item>
""".encode()
        for i in range(12)
    )
    + b"""  <item>
    <title>Acme DB 3.0 released</title>
    <description><![CDATA[<p>The WAL writer batches fsync calls: commits are 40% faster.</p>]]></description>
  </item>
</channel>
</rss>
"""
)

CODES = (
    b'<?xml version="1.0"?>\n<!DOCTYPE entries [\n <!ENTITY org "International Standards Body">\n]>\n<entries>\n'
    + b"".join(
        f'  <entry code="C{i:03d}" name="Country {i}" official_name="Republic of Country {i}" source="&org;"/>\n'.encode()
        for i in range(80)
    )
    + b"</entries>\n"
)


def parsed(data: bytes, name: str):
    p = parse_document(data, name)
    text = p.text
    for b in p.blocks:  # every block's span lies in the text and holds its words
        assert 0 <= b.char_start <= b.char_end <= len(text), b
        words = re.findall(r"\w+", b.text.split(": ", 1)[-1] if b.kind == "record" else b.text)
        source = text[b.char_start : b.char_end]
        missing = [w for w in words if w not in source]
        assert len(missing) <= len(words) // 3, (b.kind, b.text[:80], missing[:5])
    return p


def chunks(p, max_tokens=64):
    out = chunk_document(p, Profile(strategy="records", max_tokens=max_tokens), counter=load_counter("words"))
    for c in out:
        assert check_chunk(p.text, c.to_dict()) is None, c.text[:80]
    return out


def test_a_settings_schema_is_a_record_per_key_under_the_schema():
    p = parsed(GSCHEMA, "org.gnome.desktop.a11y.magnifier.gschema.xml")
    assert (p.document.format, p.document.status, p.document.reason) == ("xml", "ok", "")
    schema = ("org.gnome.desktop.a11y.magnifier",)
    assert [b.text for b in p.blocks if b.kind == "heading"] == list(schema)
    records = [b for b in p.blocks if b.kind == "record"]
    assert len(records) == 32 and all(b.heading_path == schema for b in records)
    assert records[0].text == "id: org.gnome.desktop.a11y.magnifier\npath: /org/gnome/desktop/a11y/magnifier/"
    assert records[-1].text == (
        "name: mag-factor\ntype: d\ndefault: 2.0\nsummary: Magnification factor\n"
        "description: The power of the magnification. A value of 1.0 means no magnification."
    )
    last = p.text[records[-1].char_start : records[-1].char_end]
    assert last.startswith('<key name="mag-factor"') and last.endswith("</key>")
    assert not any("<" in b.text for b in p.blocks)
    assert classify(p, load_doc_types(None).thresholds).doc_type == "records"
    out = chunks(p)
    assert len(out) == 32 and out[-1].heading_path == schema
    # each value found where it stands: a key's span runs from its name's value to its description's
    # last word, though that description is wrapped over two lines in the source
    span = p.text[out[-1].char_start : out[-1].char_end]
    assert span.startswith("mag-factor") and span.endswith("means\n        no magnification.")


def test_a_feed_is_its_channel_over_one_record_per_item():
    p = parsed(RSS, "releases.rss")
    assert p.document.format == "xml"
    channel = ("Release notes of Acme DB",)
    assert p.blocks[0].kind == "heading" and p.blocks[0].text == channel[0]
    records = [b for b in p.blocks if b.kind == "record"]
    assert records[0].text == (
        "link: https://acme.example/releases\ndescription: Every release of Acme DB & its tools."
    )
    items = records[1:]
    assert len(items) == 13 and all(b.heading_path == channel for b in items)
    # escaped HTML in a value is read as text, a namespaced tag by its local name
    assert items[3].text == (
        "title: Acme DB 2.3 released\nlink: https://acme.example/releases/2.3\ncreator: The Acme team\n"
        "description: Version 2.3 fixes 3 bugs in the replication log."
    )
    assert items[-1].text.endswith("description: The WAL writer batches fsync calls: commits are 40% faster.")
    chunks(p)


def test_entries_described_by_attributes_are_records_and_entities_expand():
    p = parsed(CODES, "codes.xml")
    records = [b for b in p.blocks if b.kind == "record"]
    assert len(records) == 80
    assert records[7].text == (
        "code: C007\nname: Country 7\nofficial_name: Republic of Country 7\nsource: International Standards Body"
    )
    assert p.text[records[7].char_start : records[7].char_end].startswith('<entry code="C007"')


def test_a_large_text_is_paragraphs_under_its_tag_and_mixed_text_is_kept_in_order():
    prose = " ".join(f"Sentence {i} of the notice says what the licence allows." for i in range(60))
    data = f"""<?xml version="1.0"?>
<package><name>acme-tools</name><version>1.2</version>
<license>{prose}</license>
<notes>Built on <b>Debian</b> with <code>make</code>.</notes>
</package>""".encode()
    assert len(prose) > RECORD_CHARS
    p = parsed(data, "package.xml")
    assert [(b.kind, b.heading_path) for b in p.blocks] == [
        ("heading", ()),
        ("record", ("acme-tools",)),
        ("heading", ("acme-tools",)),
        ("paragraph", ("acme-tools", "license")),
        ("record", ("acme-tools",)),
    ]
    assert p.blocks[1].text == "version: 1.2"
    assert p.blocks[3].text == prose
    assert p.blocks[4].text == "notes: Built on Debian with make."
    out = chunk_document(p, Profile(strategy="structure", max_tokens=64), counter=load_counter("words"))
    assert len(out) > 10 and all(check_chunk(p.text, c.to_dict()) is None for c in out)


def test_a_small_document_is_one_record_and_an_empty_one_is_empty():
    p = parsed(
        b'<project xmlns="http://maven.apache.org/POM/4.0.0"><artifactId>app</artifactId></project>\n',
        "pom.xml",
    )
    assert p.document.format == "xml" and [b.text for b in p.blocks] == ["artifactId: app"]
    empty = parse_document(b'<?xml version="1.0"?>\n<config enabled=""><empty/></config>\n', "c.xml")
    assert (empty.document.format, empty.document.status) == ("xml", "empty")


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b'<?xml version="1.0"?>\n<a><b>unclosed</a>\n', "mismatched tag: line 2 column 17"),
        (b'<?xml version="1.0"?>\n<a>&nbsp;</a>\n', "undefined entity: line 2 column 4"),
    ],
)
def test_xml_that_is_not_well_formed_is_plain_text_saying_where_it_broke(data, why):
    p = parse_document(data, "broken.xml")
    assert (p.document.format, p.document.status) == ("text", "ok")
    assert p.document.reason == f"not well-formed XML ({why}): read as plain text"


def test_an_entity_bomb_is_refused_by_expat_and_read_as_text():
    lol = (
        b'<?xml version="1.0"?>\n<!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
        + b"".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">'.encode() for i in range(9))
        + b"]>\n<l>&j;</l>\n"
    )
    p = parse_document(lol, "lol.xml")
    assert p.document.format == "text" and "not well-formed XML" in p.document.reason
    assert len(p.text) < 2000


def test_a_declared_legacy_encoding_is_used_and_spans_count_characters():
    data = (
        b'<?xml version="1.0" encoding="ISO-8859-1"?>\n<cities>'
        + b"".join(
            f'<city name="Z\u00fcrich {i}" country="Schweiz"><note>M\u00fcnster und S\u00e4ntis {i}</note></city>'.encode(
                "latin-1"
            )
            for i in range(40)
        )
        + b"</cities>\n"
    )
    p = parsed(data, "cities.xml")
    assert p.document.encoding == "iso-8859-1"
    assert p.blocks[0].text == "name: Z\u00fcrich 0\ncountry: Schweiz\nnote: M\u00fcnster und S\u00e4ntis 0"
    utf8 = parsed(data.decode("latin-1").replace('"ISO-8859-1"', '"UTF-8"     ').encode(), "cities.xml")
    assert [(b.text, b.char_start, b.char_end) for b in utf8.blocks] == [
        (b.text, b.char_start, b.char_end) for b in p.blocks
    ]
    assert p.text[p.blocks[2].char_start : p.blocks[2].char_end].endswith("S\u00e4ntis 2</note></city>")


def test_the_root_tells_xhtml_and_svg_from_other_xml():
    assert xml_root('<?xml version="1.0"?>\n<!-- c -->\n<!DOCTYPE x>\n<x:feed xmlns:x="u"/>') == "feed"
    assert xml_root("<notes><n>a</n></notes>\n") == "notes"
    assert xml_root("<b>bold</b> and then prose") is None and xml_root("plain") is None
    # a fragment of a page (an Excel export under .xls, a saved snippet) is HTML's, not XML
    assert xml_root("<table><tr><td>Bolt</td></tr></table>") is None
    assert xml_root('<?xml version="1.0"?>\n<table><row/></table>') == "table"
    assert xml_root('<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS//EN" "x.dtd">\n<node>') == "node"
    assert xml_root("<!DOCTYPE html>\n<div>page</div>") is None
    # a file past the 64 KB that detection reads is judged by its end too
    big = (
        b"<catalog>\n"
        + b"".join(b'  <item id="%d">An item of the catalog.</item>\n' % i for i in range(3000))
        + b"</catalog>\n"
    )
    assert len(big) > 65536 and parse_document(big, "catalog.xml").document.format == "xml"
    xhtml = b'<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Hi</h1><p>There.</p></body></html>\n'
    assert parse_document(xhtml, "page.xml").document.format == "html"
    svg = b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><text>Label</text></svg>\n'
    assert parse_document(svg, "figure.xml").document.format == "svg"


def test_comments_are_the_documentation_of_a_configuration_file():
    data = b"""<?xml version="1.0" encoding="UTF-8"?>
<!-- Licensed under the Apache License, Version 2.0. -->
<settings>
  <!--
   | This is the configuration file for the build tool. It can be given at two levels:
   |
   |  1. User level: in ${user.home}/.build/settings.xml, for one user.
   |  2. Global level: in ${build.conf}/settings.xml, for every user of the machine.
   |-->
  <!-- ================================================================== -->
  <localRepository>/var/cache/build</localRepository>
  <!-- offline: whether the build may reach the network at all -->
  <offline>false</offline>
</settings>
"""
    p = parsed(data, "settings.xml")
    assert [(b.kind, b.text) for b in p.blocks] == [
        ("paragraph", "Licensed under the Apache License, Version 2.0."),
        ("paragraph", "This is the configuration file for the build tool. It can be given at two levels:"),
        (
            "paragraph",
            "1. User level: in ${user.home}/.build/settings.xml, for one user. "
            "2. Global level: in ${build.conf}/settings.xml, for every user of the machine.",
        ),
        ("record", "localRepository: /var/cache/build"),
        ("paragraph", "offline: whether the build may reach the network at all"),
        ("record", "offline: false"),
    ]
    # a short comment inside a small record is not read into it
    small = parsed(b"<r><!-- note --><b>x</b><c>y</c></r>", "small.xml")
    assert [b.text for b in small.blocks] == ["b: x\nc: y"]


# Values that share words with the tags and attribute names, need escaping, or are spaced otherwise
# in the source than in the record (the reader makes runs of whitespace one space).
VALUES = [
    "",
    "name",
    "a name",
    "note",
    "0",
    "0.0.0",
    "R&D",
    'say "hi"',
    "x < y > z",
    "Z\u00fcrich",
    "a  b\n   c",
]


def _entries_source(rows: list[tuple[str, str, str, str]]) -> tuple[bytes, list[tuple[int, int] | None]]:
    """The file, and the span each entry's record must have: from its first value to its last (None
    for an entry with no value)."""
    from xml.sax.saxutils import escape

    def quoted(v: str) -> str:
        return escape(v, {'"': "&quot;", "\n": "&#10;"})

    out, spans = '<?xml version="1.0"?>\n<entries>\n', []
    for name, code, note, text in rows:
        pieces = [
            ('  <entry name="', ""),
            (quoted(name), name),
            ('" code="', ""),
            (quoted(code), code),
            ('"><note>', ""),
            (escape(note), note),
            ("</note><text>  ", ""),
            (escape(text), text),
            ("\n</text></entry>\n", ""),
        ]
        held, at = [], len(out)  # (start, end) of each value as it stands, stripped
        for source, value in pieces:
            if value.strip():
                lead = len(source) - len(source.lstrip())
                held.append((at + lead, at + len(source.rstrip())))
            at += len(source)
        spans.append((held[0][0], held[-1][1]) if held else None)
        out += "".join(source for source, _ in pieces)
    return (out + "</entries>\n").encode(), spans


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(
        st.tuples(
            st.sampled_from(VALUES),
            st.sampled_from(VALUES),
            st.sampled_from(VALUES),
            st.sampled_from([*VALUES, " ".join(["a long note on the name"] * 12)]),
        ),
        min_size=1,
        max_size=6,
    ).map(lambda rows: rows + rows[:1]),  # a repeated identical entry
    st.sampled_from([16, 24, 128]),
)
def test_an_entry_spans_its_own_values_whatever_words_its_tags_share(rows, max_tokens):
    data, spans = _entries_source(rows)
    p = parse_document(data, "entries.xml")
    out = chunk_document(p, Profile(strategy="records", max_tokens=max_tokens), counter=load_counter("words"))
    expected = [s for s in spans if s is not None]
    if not expected:
        assert p.document.status == "empty" and out == []
        return
    firsts = [i for i, c in enumerate(out) if not c.continuation]
    assert [out[i].char_start for i in firsts] == [s for s, _ in expected]
    lasts = [i - 1 for i in firsts[1:]] + [len(out) - 1]
    assert [out[i].char_end for i in lasts] == [e for _, e in expected]
    for c in out:
        assert check_chunk(p.text, c.to_dict()) is None, c.text


DITA_TASK = b"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE task PUBLIC "-//OASIS//DTD DITA Task//EN" "task.dtd">
<task id="install-server">
  <title>Installing the server</title>
  <shortdesc>Install the server on a Linux host before you configure the cluster.</shortdesc>
  <taskbody>
    <prereq><p>You need root access and at least 4 GB of memory on the host.</p></prereq>
    <steps>
      <step><cmd>Download the package from the <xref href="downloads.dita">downloads page</xref>.</cmd></step>
      <step><cmd>Verify the checksum of the package.</cmd>
        <info><p>Use <codeph>sha256sum</codeph> and compare the result with the published value.</p></info></step>
      <step><cmd>Run the installer as root.</cmd>
        <substeps><substep><cmd>Accept the licence.</cmd></substep><substep><cmd>Choose /opt.</cmd></substep></substeps>
      </step>
    </steps>
    <result><p>The server is installed and listens on port 8265.</p></result>
  </taskbody>
</task>
"""

TEI = b"""<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0">
  <teiHeader><fileDesc><titleStmt><title>A Short Story</title><author>Jane Doe</author></titleStmt>
  <sourceDesc><p>Transcribed from the first edition.</p></sourceDesc></fileDesc></teiHeader>
  <text><body>
    <div type="chapter" n="1"><head>The Arrival</head>
      <p>It was late when the coach reached the village; the only light came from the <hi rend="italic">vicarage</hi> window.</p>
      <p>She knocked twice before anyone answered.</p>
    </div>
    <div type="chapter" n="2"><head>The Letter</head><p>A letter arrived, sealed with red wax.</p></div>
  </body></text>
</TEI>
"""


def test_a_dita_task_reads_as_a_document_with_its_steps_numbered():
    p = parsed(DITA_TASK, "install.dita.xml")
    assert (p.document.format, p.document.title) == ("xml", "Installing the server")
    t = ("Installing the server",)
    assert [(b.kind, b.marker, b.level, b.heading_path, b.text) for b in p.blocks] == [
        ("heading", "", 1, (), "Installing the server"),
        ("paragraph", "", 0, t, "Install the server on a Linux host before you configure the cluster."),
        ("paragraph", "", 0, t, "You need root access and at least 4 GB of memory on the host."),
        ("list_item", "1.", 0, t, "Download the package from the downloads page."),
        ("list_item", "2.", 0, t, "Verify the checksum of the package."),
        ("paragraph", "", 0, t, "Use sha256sum and compare the result with the published value."),
        ("list_item", "3.", 0, t, "Run the installer as root."),
        ("list_item", "1.", 1, t, "Accept the licence."),
        ("list_item", "2.", 1, t, "Choose /opt."),
        ("paragraph", "", 0, t, "The server is installed and listens on port 8265."),
    ]
    out = chunk_document(p, Profile(strategy="structure", max_tokens=32), counter=load_counter("words"))
    assert all(check_chunk(p.text, c.to_dict()) is None for c in out)
    assert "1. Download the package" in out[0].text or "1. Download the package" in out[1].text


def test_a_tei_text_reads_as_its_chapters():
    p = parsed(TEI, "story.xml")
    assert (p.document.format, p.document.title) == ("xml", "A Short Story")
    assert [(b.kind, b.heading_path, b.text) for b in p.blocks] == [
        ("heading", (), "A Short Story"),
        ("paragraph", ("A Short Story",), "author: Jane Doe"),
        ("paragraph", (), "Transcribed from the first edition."),
        ("heading", (), "The Arrival"),
        (
            "paragraph",
            ("The Arrival",),
            "It was late when the coach reached the village; the only light came from the vicarage window.",
        ),
        ("paragraph", ("The Arrival",), "She knocked twice before anyone answered."),
        ("heading", (), "The Letter"),
        ("paragraph", ("The Letter",), "A letter arrived, sealed with red wax."),
    ]


def test_xml_nested_past_the_walks_depth_is_plain_text_not_a_failure():
    deep = b"<n>" * 5000 + b"the words at the bottom" + b"</n>" * 5000
    p = parse_document(deep, "deep.xml")
    assert (p.document.format, p.document.status) == ("text", "ok")
    assert p.document.reason == "XML nested too deeply to read by its elements: read as plain text"
    assert "the words at the bottom" in p.text


def test_values_are_found_through_cdata_references_and_respacing():
    data = b"""<?xml version="1.0"?>
<items>
  <item><code>R&amp;D</code><text><![CDATA[Keeps   R&amp;D as written]]></text></item>
  <item><code>x &lt; y</code><text>wrapped
      over two lines</text></item>
</items>
"""
    p = parsed(data, "items.xml")
    assert [b.text for b in p.blocks] == [
        "code: R&D\ntext: Keeps R&amp;D as written",
        "code: x < y\ntext: wrapped over two lines",
    ]
    out = chunk_document(p, Profile(strategy="records", max_tokens=64), counter=load_counter("words"))
    spans = [p.text[c.char_start : c.char_end] for c in out]
    assert spans == [
        "R&amp;D</code><text><![CDATA[Keeps   R&amp;D as written",
        "x &lt; y</code><text>wrapped\n      over two lines",
    ]


def test_a_list_of_entries_further_down_makes_its_ancestors_sections():
    # a schema list holding one schema of two keys: small, but the keys are records of their own
    data = (
        b'<schemalist><schema id="org.example.a11y"><key name="a" type="b"><default>true</default></key>'
        b'<key name="b" type="b"><default>false</default></key></schema></schemalist>'
    )
    p = parsed(data, "small.gschema.xml")
    assert [(b.kind, b.heading_path, b.text) for b in p.blocks] == [
        ("heading", (), "org.example.a11y"),
        ("record", ("org.example.a11y",), "id: org.example.a11y"),
        ("record", ("org.example.a11y",), "name: a\ntype: b\ndefault: true"),
        ("record", ("org.example.a11y",), "name: b\ntype: b\ndefault: false"),
    ]
