"""AsciiDoc (``.adoc``) read as Asciidoctor reads its blocks: sections, lists with their numbers,
listings with their language, tables, admonitions, every span into the file. Before, an ``.adoc`` file
was plain text: ``== Install`` a paragraph, no heading path for any chunk."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from raychunk.parse import parse_document
from tests.spans import assert_spans_match, chunks_holding_their_spans

DATA = Path(__file__).parent / "data" / "asciidoc"  # asciidoctor-reveal.js's README and licence (MIT)

GUIDE = """= Deploy Guide
:toc: left
:icons: font

This guide covers *deploying* the service.

== Install

.Prerequisites
* Python 3.11
* A Ray cluster
** with 2 CPUs

. Clone the repository.
. Run the installer:
+
[source,bash]
----
./install.sh --prefix /opt/raychunk
----
. Start the service.
.. Check the logs.
.. Check the port.

NOTE: The installer needs root.

=== Configuration

[cols="1,2", options="header"]
|===
|Key |Meaning

|max_tokens
|The chunk cap.

2+|Both columns, one cell.
|===

chunk_size:: The cap in tokens.

[WARNING]
====
Never run two installers at once.
====

// a comment line
ifdef::env-github[]
include::partials/faq.adoc[]
endif::[]

////
A comment block.
////

== Troubleshooting

....
literal text here
....

  an indented literal line
"""


_DESCRIPTION = re.compile(r"(\S.*?)(?::{2,4}|;;)(?:[ \t]+|$)")


def parsed(data: bytes, name: str):
    """The parse, every block's text its span's (a description's with its ``::`` read as ``:``)."""
    p = parse_document(data, name)
    descriptions = [
        b for b in p.blocks if b.kind == "paragraph" and _DESCRIPTION.match(p.text[b.char_start : b.char_end])
    ]
    others = [b for b in p.blocks if b not in descriptions]
    assert_spans_match(dataclasses.replace(p, blocks=others), rendered=("table",))
    for b in descriptions:
        source = p.text[b.char_start : b.char_end]
        assert b.text == _DESCRIPTION.sub(lambda m: m[1] + ": ", source, count=1).strip(), (b.text, source)
    return p


def test_a_guide_reads_as_asciidoctor_renders_it():
    p = parsed(GUIDE.encode(), "guide.adoc")
    assert (p.document.format, p.document.status) == ("asciidoc", "ok")
    assert p.document.title == "Deploy Guide"
    assert p.document.reason == "included files not inlined (partials/faq.adoc): each is read on its own"
    t = ("Deploy Guide",)
    install, config = (*t, "Install"), (*t, "Install", "Configuration")
    got = [(b.kind, b.text, b.heading_path, b.level, b.marker, b.language) for b in p.blocks]
    assert got == [
        ("heading", "Deploy Guide", (), 1, "", None),
        ("paragraph", "This guide covers *deploying* the service.", t, 0, "", None),
        ("heading", "Install", t, 2, "", None),
        ("paragraph", "Prerequisites", install, 0, "", None),  # a block title
        ("list_item", "Python 3.11", install, 0, "-", None),
        ("list_item", "A Ray cluster", install, 0, "-", None),
        ("list_item", "with 2 CPUs", install, 1, "-", None),
        ("list_item", "Clone the repository.", install, 0, "1.", None),
        ("list_item", "Run the installer:", install, 0, "2.", None),
        ("code", "./install.sh --prefix /opt/raychunk", install, 0, "", "bash"),  # attached by +
        ("list_item", "Start the service.", install, 0, "3.", None),  # the list goes on past it
        ("list_item", "Check the logs.", install, 1, "a.", None),
        ("list_item", "Check the port.", install, 1, "b.", None),
        ("paragraph", "NOTE: The installer needs root.", install, 0, "", None),
        ("heading", "Configuration", install, 3, "", None),
        (
            "table",
            "| Key | Meaning |\n|---|---|\n| max_tokens | The chunk cap. |\n| Both columns, one cell. |  |",
            config,
            0,
            "",
            None,
        ),
        ("paragraph", "chunk_size: The cap in tokens.", config, 0, "", None),  # a description
        ("paragraph", "Never run two installers at once.", config, 0, "", None),
        ("heading", "Troubleshooting", t, 2, "", None),
        ("code", "literal text here", (*t, "Troubleshooting"), 0, "", None),
        ("code", "an indented literal line", (*t, "Troubleshooting"), 0, "", None),
    ]
    assert "comment" not in " ".join(b.text for b in p.blocks)


def test_a_project_readme_in_asciidoc():
    """asciidoctor-reveal.js's README: a header with its author line and attribute entries, GitHub
    conditionals, a comment, sections; and its licence, a block title over a literal block."""
    p = parsed((DATA / "reveal-js-README.adoc").read_bytes(), "README.adoc")
    title = "Reveal.js converter for Asciidoctor"
    assert p.document.title == title and p.document.reason == ""
    assert [b.text for b in p.blocks if b.kind == "heading"] == [
        title,
        "Documentation",
        "Contributing",
        "Copyright and Licensing",
    ]
    text = " ".join(b.text for b in p.blocks)
    assert ":toc:" not in text and "ifdef::" not in text and "sync'ed" not in text
    contributing = [b.text for b in p.blocks if b.heading_path == (title, "Contributing")]
    assert contributing == [
        "Interested in contributing?\nWe are interested!\n"
        "Developer-focused documentation is {url-documentation-site}/project/hacking[over here]."
    ]
    lic = parsed((DATA / "reveal-js-LICENSE.adoc").read_bytes(), "LICENSE.adoc")
    assert [b.kind for b in lic.blocks] == ["paragraph", "code"]
    assert lic.blocks[0].text == "The MIT License" and "Permission is hereby granted" in lic.blocks[1].text


@pytest.mark.parametrize(
    ("adoc", "status", "reason", "kinds"),
    [
        (
            b"include::chapter-1.adoc[]\ninclude::chapter-2.adoc[leveloffset=+1]\n",
            "empty",
            "no text of its own",
            [],
        ),
        (b":toc:\n// only a comment\n", "empty", "no text found", []),
        # a listing that is never closed runs to the end, as Asciidoctor reads it
        (b"== Run\n\n----\n$ raychunk run\n\nmore\n", "ok", "", ["heading", "code"]),
        (b"== Caf\xe9\n\nCr\xe8me br\xfbl\xe9e.\n", "ok", "", ["heading", "paragraph"]),
        (b"|===\n|a |b\n|c\n", "ok", "", ["table"]),  # a table cut short, a row cut short
        (
            b"== Title  \n\nText.\n\n----  \ncode\n----\n",
            "ok",
            "",
            ["heading", "paragraph", "code"],
        ),  # trailing spaces
    ],
)
def test_asciidoc_edges(adoc, status, reason, kinds):
    p = parsed(adoc, "doc.adoc")
    assert p.document.status == status and p.document.reason.startswith(reason), p.document
    assert [b.kind for b in p.blocks] == kinds


def test_lists_nest_by_marker_and_number_as_their_attributes_say():
    """Asciidoctor nests a list by its marker, not its indent, and numbers it from ``[start=N]`` in
    the style ``[loweralpha]`` names; a nested list under the next item counts from its start
    again. Before: every ``*`` item under a ``-`` list was level 0, and ``start`` and the style were
    ignored (``1.`` for ``[start=4]``, ``1.`` for ``[loweralpha]``)."""
    adoc = b"""== Steps

[start=4]
. Stop the service.
* the API first
* then the workers
. Back up the data.
.. the database
.. the files
. Restore.
.. check the logs

[loweralpha]
. First.
. Second.

- Bullet.
* Nested under it.
** Deeper.
- Again.

. Fresh list.
"""
    p = parsed(adoc, "steps.adoc")
    got = [(b.level, b.marker, b.text) for b in p.blocks if b.kind == "list_item"]
    assert got == [
        (0, "4.", "Stop the service."),
        (1, "-", "the API first"),
        (1, "-", "then the workers"),
        (0, "5.", "Back up the data."),
        (1, "a.", "the database"),
        (1, "b.", "the files"),
        (0, "6.", "Restore."),
        (1, "a.", "check the logs"),
        (0, "a.", "First."),
        (0, "b.", "Second."),
        (0, "-", "Bullet."),
        (1, "-", "Nested under it."),
        (2, "-", "Deeper."),
        (0, "-", "Again."),
        (0, "1.", "Fresh list."),
    ]


def test_table_cells_spanning_columns_and_rows_fill_each_place_they_cover():
    """``2+|`` spans two columns, ``.2+|`` two rows, ``2*|`` writes a cell twice: each place the cell
    covers holds its text (copies marked), so the columns after it stay in place. Before, the
    spec was dropped and the cells after a spanning one moved a column left."""
    adoc = b"""[cols="3*",options="header"]
|===
|Region |Seats |Price
|north |10 |3
2+|Total |13
.2+|south |4 |5
|6 |7
2*|same |8
3+|A note over the table's width
|===
"""
    p = parsed(adoc, "t.adoc")
    (table,) = [b for b in p.blocks if b.kind == "table"]
    assert table.rows == (
        ("Region", "Seats", "Price"),
        ("north", "10", "3"),
        ("Total", "Total", "13"),
        ("south", "4", "5"),
        ("south", "6", "7"),
        ("same", "same", "8"),
        ("A note over the table's width", "", ""),
    )
    assert set(table.copies) == {(2, 1), (4, 0)}
    assert table.header_rows == 1


def test_a_table_split_by_rows_spans_each_part_to_its_last_cell():
    """A table with a spanning cell, chunked a few rows a part: each part's span ends with its last
    row's last cell. Before, a row's closing pipe (the rendering's, AsciiDoc rows have none) mapped
    to the next row's opening one, after its ``2+`` spec: the span ran a word past the part."""
    rows = "\n".join(f"|row {k} alpha |{k} |{k * 3}" for k in range(12))
    adoc = f"""[cols="3*",options="header"]
|===
|Name |Count |Total
{rows}
2+|Sum of all |198
|===
""".encode()
    p = parsed(adoc, "t.adoc")
    (table,) = [b for b in p.blocks if b.kind == "table"]
    assert table.rows[-1] == ("Sum of all", "Sum of all", "198")
    structure, _ = chunks_holding_their_spans(p, max_tokens=24)
    assert structure > 3
