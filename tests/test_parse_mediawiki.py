"""MediaWiki markup (``.mediawiki``, and a ``.wiki`` page that reads as MediaWiki) through pandoc's
reader: lists with their depth and numbers, tables with their header cells, templates as the words
of their arguments. Before, a wiki page was plain text: ``# Drain the node.`` lines and ``{|`` table
markup in its paragraphs."""

from __future__ import annotations

import pytest

from raychunk.parse import parse_document
from tests.spans import assert_spans_match

pytest.importorskip("pypandoc")

PAGE = b"""== Deployment ==
The service runs on '''three''' nodes.{{citation needed|date=June 2025}}

=== Steps ===
# Drain the node.
# Upgrade the agent.
#* Check the version with <code>agent --version</code>.

{| class="wikitable"
! Node !! Role
|-
| a1 || primary
|-
| a2 || {{Status|replica|color=green}}
|}

See [[Runbook|the runbook]] and {{Note|text=call {{Team|ops}} first}}.
{{reflist}}
"""


@pytest.mark.parametrize("name", ["deploy.mediawiki", "deploy.wiki"])
def test_a_wiki_page_reads_as_the_wiki_shows_it(name):
    p = parse_document(PAGE, name)
    assert (p.document.format, p.document.status, p.document.reason) == ("mediawiki", "ok", "")
    steps = ("Deployment", "Steps")
    assert [(b.kind, b.text, b.heading_path, b.marker) for b in p.blocks] == [
        ("heading", "Deployment", (), ""),
        ("paragraph", "The service runs on three nodes.", ("Deployment",), ""),
        ("heading", "Steps", ("Deployment",), ""),
        ("list_item", "Drain the node.", steps, "1."),
        ("list_item", "Upgrade the agent.", steps, "2."),
        ("list_item", "Check the version with agent --version.", steps, "-"),
        ("table", "| Node | Role |\n|---|---|\n| a1 | primary |\n| a2 | replica |", steps, ""),
        ("paragraph", "See the runbook and call ops first.", steps, ""),
    ]
    assert_spans_match(p, rendered=("page_break",))


def test_a_wiki_page_of_another_wiki_stays_text():
    doc = parse_document(b"Meeting notes\n\nWe agreed on the plan.\n", "notes.wiki").document
    assert (doc.format, doc.status) == ("text", "ok")
