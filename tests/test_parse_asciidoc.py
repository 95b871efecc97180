"""AsciiDoc (``.adoc``) read as Asciidoctor reads its blocks: sections, lists with their numbers,
listings with their language, tables, admonitions, every span into the file. Before, an ``.adoc`` file
was plain text: ``== Install`` a paragraph, no heading path for any chunk."""

from __future__ import annotations

from pathlib import Path

import pytest

from raychunk.parse import parse_document
from tests.spans import assert_spans_match

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


def parsed(data: bytes, name: str):
    p = parse_document(data, name)
    assert_spans_match(p, rendered=("table",))
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
        ("paragraph", "chunk_size:: The cap in tokens.", config, 0, "", None),
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
