"""The HTML parser: block kinds, heading paths, tables, boilerplate, tag soup, and source spans."""

from __future__ import annotations

import html
import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raychunk.chunking import Profile, chunk_document
from raychunk.document import Document
from raychunk.parse import parse_document
from raychunk.parse._common import squash
from raychunk.parse.html import parse_html
from raychunk.tokens import DEFAULT_TOKENIZER, load_counter

BASE = Document("id", "t.html", "html", "ok")
ROOT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"  # beside the repo

# Tags that separate words when a browser renders them; any other tag joins its neighbours.
_SEPARATING = re.compile(
    r"<(?:br|/?(?:td|th|tr|p|li|div|table|caption|h[1-6]|dt|dd|ul|ol|pre|blockquote|section))\b[^>]*>", re.I
)


def strip_tags(s: str) -> str:
    s = re.sub(r"<!--.*?(?:-->|\Z)", "", s, flags=re.S)
    s = re.sub(r"<(script|style)\b.*?</\1\s*>", "", s, flags=re.S | re.I)
    s = _SEPARATING.sub(" ", s)
    return re.sub(r"<[^>]*>", "", s)


def span_text(doc, block) -> str:
    # Tags are stripped before entities are decoded, so "&lt;b&gt;" stays text.
    return squash(html.unescape(strip_tags(doc.text[block.char_start : block.char_end])))


def assert_spans(doc) -> None:
    for b in doc.blocks:
        assert 0 <= b.char_start <= b.char_end <= len(doc.text)
        if b.kind == "table":
            # Cells join their lines with "; " and "," and repeat a spanning cell: the same words.
            cells = {w for row in b.rows for c in row for w in re.findall(r"\w+", c)}
            assert cells == set(re.findall(r"\w+", span_text(doc, b))), b
        else:
            assert span_text(doc, b) == squash(b.text), b


def parse(text: str):
    doc = parse_html(text, BASE)
    assert doc.text == text
    return doc


def kinds(doc) -> list[tuple[str, str]]:
    return [(b.kind, b.text) for b in doc.blocks]


def test_headings_and_heading_paths():
    doc = parse(
        "<html><head><title>The title</title></head><body>"
        "<h1>Guide</h1><p>Intro.</p><h2>Install</h2><p>Run it.</p><h3>Linux</h3><p>apt.</p>"
        "<h2>Use</h2><p>Call it.</p></body></html>"
    )
    assert [(b.kind, b.text, b.heading_path) for b in doc.blocks] == [
        ("heading", "Guide", ()),
        ("paragraph", "Intro.", ("Guide",)),
        ("heading", "Install", ("Guide",)),
        ("paragraph", "Run it.", ("Guide", "Install")),
        ("heading", "Linux", ("Guide", "Install")),
        ("paragraph", "apt.", ("Guide", "Install", "Linux")),
        ("heading", "Use", ("Guide",)),
        ("paragraph", "Call it.", ("Guide", "Use")),
    ]
    assert [b.level for b in doc.blocks if b.kind == "heading"] == [1, 2, 3, 2]
    assert doc.document.title == "The title"
    h1 = doc.blocks[0]
    assert doc.text[h1.char_start : h1.char_end] == "<h1>Guide</h1>"
    assert_spans(doc)


def test_title_falls_back_to_first_h1_and_meta_goes_to_metadata():
    doc = parse('<meta name="description" content="About  things"><h2>Sub</h2><h1>Main</h1><p>x</p>')
    assert doc.document.title == "Main"
    assert dict(doc.document.metadata)["description"] == "About things"


def test_table_with_thead():
    doc = parse(
        "<p>Before</p><table><thead><tr><th>Name</th><th>Qty</th></tr></thead>"
        "<tbody><tr><td>apple</td><td>3</td></tr><tr><td>pear &amp; fig</td><td>5</td></tr></tbody></table>"
    )
    table = doc.blocks[1]
    assert table.kind == "table"
    assert table.rows == (("Name", "Qty"), ("apple", "3"), ("pear & fig", "5"))
    assert table.header_rows == 1
    assert table.text == "| Name | Qty |\n|---|---|\n| apple | 3 |\n| pear & fig | 5 |"
    assert doc.text[table.char_start : table.char_end].startswith("<table>")
    assert doc.text[table.char_start : table.char_end].endswith("</table>")
    assert_spans(doc)


def test_table_with_th_first_row_and_implicit_cell_ends():
    doc = parse("<table><tr><th>k<th>v<tr><td>a<td>1<tr><td>b<td>2</table><p>after</p>")
    table = doc.blocks[0]
    assert table.rows == (("k", "v"), ("a", "1"), ("b", "2"))
    assert table.header_rows == 1
    assert kinds(doc)[1] == ("paragraph", "after")
    assert_spans(doc)


def test_table_without_header_rows_and_colspan():
    doc = parse(
        "<table><tr><td colspan=2>wide</td><td>x</td></tr><tr><td>a</td><td>b</td><td>c</td></tr></table>"
    )
    table = doc.blocks[0]
    assert table.header_rows == 0
    # A cell spanning two columns that both hold values reads as each of theirs.
    assert table.rows == (("wide", "wide", "x"), ("a", "b", "c"))


def test_a_cell_spanning_rows_holds_its_place_in_each_and_later_cells_move_right():
    doc = parse(
        "<table><tr><th>Country</th><th>City</th><th>Population</th></tr>"
        "<tr><td rowspan='3'>France</td><td>Paris</td><td>2.1M</td></tr>"
        "<tr><td>Lyon</td><td>0.5M</td></tr><tr><td>Nice</td><td>0.3M</td></tr>"
        "<tr><td>Spain</td><td rowspan=2>Madrid</td><td>3.3M</td></tr><tr><td>Spain</td><td>3.4M</td></tr>"
        "</table>"
    )
    (table,) = doc.blocks
    assert table.rows == (
        ("Country", "City", "Population"),
        ("France", "Paris", "2.1M"),
        ("France", "Lyon", "0.5M"),
        ("France", "Nice", "0.3M"),
        ("Spain", "Madrid", "3.3M"),
        ("Spain", "Madrid", "3.4M"),
    )
    assert table.copies == ((2, 0), (3, 0), (5, 1))  # the source writes them once: context


def test_two_header_rows_with_spans_read_as_each_column_s_headings():
    doc = parse(
        "<table><thead><tr><th rowspan='2'>Region</th><th colspan='2'>2023</th></tr>"
        "<tr><th>Revenue</th><th>Cost</th></tr></thead><tbody><tr><td>Europe</td><td>12</td><td>8</td></tr>"
        "<tr><th colspan=3>A title row over every column</th></tr></tbody></table>"
    )
    (table,) = doc.blocks
    assert table.header_rows == 2
    assert table.rows == (
        ("Region", "2023", "2023"),
        ("Region", "Revenue", "Cost"),
        ("Europe", "12", "8"),
        ("A title row over every column", "", ""),  # one cell alone over all columns: once
    )
    assert table.copies == ((0, 2), (1, 0))


def test_a_br_or_a_table_inside_a_cell_reads_as_its_lines():
    doc = parse(
        "<table><tr><th>Key</th><th>Value</th></tr><tr><td>timeout</td><td>30 s<br>per request</td></tr>"
        "<tr><td>contact</td><td>Fields. <details><summary>contact fields</summary><table>"
        "<tr><th>Name</th><th>Type</th></tr><tr><td>url</td><td>str</td></tr></table></details></td></tr></table>"
    )
    (table,) = doc.blocks
    assert table.rows[1] == ("timeout", "30 s per request")
    assert table.rows[2] == ("contact", "Fields. contact fields; Name, Type; url, str")


def test_ordered_lists_number_their_items_as_a_browser_does():
    doc = parse(
        "<ol start='7'><li>seven</li><li>eight<ol type='a'><li>a</li><li>b</li></ol></li></ol>"
        "<ol type='I' start=3><li>three</li><li value='9'>nine</li><li>ten</li></ol>"
        "<ul><li><input type='checkbox' checked> done</li><li><input type=checkbox> todo</li><li>plain</li></ul>"
        "<ol><li><input type='checkbox'> first task</li></ol>"
    )
    items = [(b.marker, b.text, b.level) for b in doc.blocks]
    assert items == [
        ("7.", "seven", 0),
        ("8.", "eight", 0),
        ("a.", "a", 1),
        ("b.", "b", 1),
        ("III.", "three", 0),
        ("IX.", "nine", 0),
        ("X.", "ten", 0),
        ("- [x]", "done", 0),
        ("- [ ]", "todo", 0),
        ("-", "plain", 0),
        ("1. [ ]", "first task", 0),
    ]
    assert_spans(doc)


def test_a_definition_term_and_its_definition_are_one_block_spanning_both():
    src = "<dl><dt>Shard</dt><dd>One Parquet file.</dd><dd>A second meaning.</dd><dt><code>-a</code></dt><dd><p>Mark variables.</p></dd></dl><dl><dt>Alone</dt></dl>"
    doc = parse(src)
    assert kinds(doc) == [
        ("paragraph", "Shard: One Parquet file."),
        ("paragraph", "A second meaning."),
        ("paragraph", "-a: Mark variables."),
        ("paragraph", "Alone"),
    ]
    first = doc.blocks[0]
    assert src[first.char_start : first.char_end] == "<dt>Shard</dt><dd>One Parquet file.</dd>"


def test_sec_style_table_glues_currency_cells_and_aligns_spanning_headers():
    doc = parse(
        "<table><tr><td></td><td colspan=3>2021</td><td colspan=3>2020</td></tr>"
        "<tr><td>Net income</td><td>$</td><td>2,111</td><td></td><td>$</td><td>(2,208</td><td>)</td></tr>"
        "<tr><td>Margin</td><td></td><td>4.2</td><td>%</td><td></td><td>N/mm 2</td><td>%</td></tr></table>"
    )
    # "%" joins a number, not a unit: "N/mm 2" keeps its "%" in a column of its own.
    assert doc.blocks[0].rows == (
        ("", "2021", "2020", ""),
        ("Net income", "$2,111", "$(2,208)", ""),
        ("Margin", "4.2%", "N/mm 2", "%"),
    )


def test_nested_table_text_goes_into_the_cell():
    doc = parse(
        "<table><tr><th>k</th><th>v</th></tr><tr><td>outer</td>"
        "<td><table><tr><td>in1</td><td>in2</td></tr><tr><td>in3</td><td>in4</td></tr></table></td></tr></table>"
    )
    assert [b.kind for b in doc.blocks] == ["table"]
    assert doc.blocks[0].rows == (("k", "v"), ("outer", "in1, in2; in3, in4"))  # its rows, its cells


def test_layout_table_gives_up_its_headings_and_paragraphs():
    doc = parse(
        "<table width=100%><tr><td><h1>Site</h1><p>First para.</p><h2>Part</h2><p>Second para.</p>"
        "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table></td></tr></table>"
    )
    assert [(b.kind, b.text) for b in doc.blocks if b.kind != "table"] == [
        ("heading", "Site"),
        ("paragraph", "First para."),
        ("heading", "Part"),
        ("paragraph", "Second para."),
    ]
    inner = doc.blocks[-1]
    assert inner.kind == "table" and inner.rows == (("a", "b"), ("c", "d"))
    assert inner.heading_path == ("Site", "Part")
    assert_spans(doc)


def _first_chunk(doc) -> str:
    """The first chunk's text, the structure strategy at 200 tokens of the job's tokenizer."""
    return chunk_document(
        doc, Profile(strategy="structure", max_tokens=200), load_counter(DEFAULT_TOKENIZER)
    )[0].text


def test_an_items_later_paragraphs_are_the_items():
    """``<li><p>a</p><p>b</p></li>`` (Sphinx's loose lists, DocBook's every item, pandoc's): one item
    ``a\nb`` spanning both paragraphs, as Markdown's loose item; its later paragraphs were blocks with
    no marker, which a chunk showed as items of their own (``- b``)."""
    doc = parse(
        "<ol start='3'><li><p>Restart the service.</p><p>It takes a <b>minute</b>.</p></li>"
        "<li><p>Check it.</p></li></ol>"
    )
    assert [(b.kind, b.marker, b.text) for b in doc.blocks] == [
        ("list_item", "3.", "Restart the service.\nIt takes a minute."),
        ("list_item", "4.", "Check it."),
    ]
    first = doc.blocks[0]
    assert (
        doc.text[first.char_start : first.char_end]
        == "<p>Restart the service.</p><p>It takes a <b>minute</b>.</p>"
    )
    assert_spans(doc)
    assert "3. Restart the service.\nIt takes a minute.\n4. Check it." in _first_chunk(doc)


def test_an_items_or_definitions_text_in_a_div_keeps_its_number_and_term():
    """Text an item holds in a ``<div>`` (a card: ``<li><a><img></a><div>title</div></li>``) takes
    the item's number, and a definition's in a ``<div>`` joins its term; before, the number was
    dropped (the item shown as a bullet) and the term stood alone."""
    doc = parse(
        "<ol start='4'><li><div class='step'>Drain the node</div></li><li><a href='u'><img src='i.png'></a>"
        "<div><a href='u'>Upgrade it</a></div></li></ol><dl><dt><div>Shard</div></dt><dd><div>One file.</div></dd></dl>"
    )
    assert [(b.kind, b.marker, b.text) for b in doc.blocks] == [
        ("list_item", "4.", "Drain the node"),
        ("list_item", "5.", "Upgrade it"),
        ("paragraph", "", "Shard: One file."),
    ]
    assert [span_text(doc, b) for b in doc.blocks[:2]] == ["Drain the node", "Upgrade it"]


def test_a_bullet_typed_into_an_items_text_is_shown_once():
    """Project Gutenberg's licence (in every book) types its bullets into its items, ``<li>• You
    pay``, under a list styled with none: a chunk shows ``• You pay``, where it showed ``- • You pay``."""
    doc = parse(
        "<p>Provided that:</p><ul><li>• You pay a royalty fee.</li><li>• You refund it.</li><li>Plain.</li></ul>"
    )
    assert "Provided that:\n\n• You pay a royalty fee.\n• You refund it.\n- Plain." in _first_chunk(doc)


def test_a_teasers_read_more_link_is_left_out():
    """rustdoc ends every trait method's summary with a ``Read more`` link, a blog each excerpt with
    ``Continue reading →``: it leads elsewhere and says nothing here (1,531 blocks of 38 of 1,231
    Rust pages ended with it). A link that says more (``Read more about shards``) stays."""
    doc = parse(
        "<div class='docblock'>Returns a duplicate of the value. <a href='../clone/trait.Clone.html'>Read more</a>"
        "</div><p>An excerpt … <a href='/p/1'>Continue reading &rarr;</a></p><p><a href='/more'>Read More</a></p>"
        "<p>See <a href='x'>Read more about shards</a> here.</p><ul><li>One. <a href='a'>[Read more...]</a></li></ul>"
    )
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("paragraph", "Returns a duplicate of the value."),
        ("paragraph", "An excerpt …"),
        ("paragraph", "See Read more about shards here."),
        ("list_item", "One."),
    ]
    assert span_text(doc, doc.blocks[0]) == "Returns a duplicate of the value."


def test_nested_lists_have_depths_and_their_own_text():
    doc = parse(
        "<ul><li>one<ul><li>one.a</li><li>one.b<ol><li>deep</li></ol></li></ul>tail</li>"
        "<li>two</li></ul><ol><li>first</ol>"
    )
    assert [(b.kind, b.text, b.level) for b in doc.blocks] == [
        ("list_item", "one", 0),
        ("list_item", "one.a", 1),
        ("list_item", "one.b", 1),
        ("list_item", "deep", 2),
        ("paragraph", "tail", 0),  # the item's text after its nested list: no item of its own
        ("list_item", "two", 0),
        ("list_item", "first", 0),
    ]
    assert_spans(doc)


def test_unclosed_p_and_li_end_implicitly():
    doc = parse("<body><p>one<p>two<ul><li>a<li>b</ul><p>three<h2>Head</h2>four")
    assert kinds(doc) == [
        ("paragraph", "one"),
        ("paragraph", "two"),
        ("list_item", "a"),
        ("list_item", "b"),
        ("paragraph", "three"),
        ("heading", "Head"),
        ("paragraph", "four"),
    ]
    first = doc.blocks[0]
    assert doc.text[first.char_start : first.char_end] == "<p>one"
    assert_spans(doc)


def test_pre_code_keeps_whitespace_and_language():
    doc = parse(
        '<pre><code class="language-python">def f(x):\n    return x &lt; 1\n</code></pre>'
        '<pre class="lang-sh">ls  -l\n  cd /</pre><pre>plain</pre>'
    )
    assert [(b.kind, b.text, b.language) for b in doc.blocks] == [
        ("code", "def f(x):\n    return x < 1", "python"),
        ("code", "ls  -l\n  cd /", "sh"),
        ("code", "plain", None),
    ]
    assert_spans(doc)


def test_boilerplate_is_dropped():
    doc = parse(
        "<html><head><style>p { color: red }</style><script>var x = '<p>no</p>';</script></head><body>"
        "<header><a href=/>Home</a></header><nav><ul><li>Menu</li></ul></nav>"
        "<div role=navigation>Crumbs</div><aside>Ads</aside><noscript>Enable JS</noscript>"
        "<article><header><h1>Title</h1></header><p>Body <span aria-hidden=true>icon</span>text.</p>"
        "<div hidden>secret</div><form><input name=q><button>Search</button></form></article>"
        "<footer>Copyright</footer><script>track()</script></body></html>"
    )
    assert kinds(doc) == [("heading", "Title"), ("paragraph", "Body text.")]


def test_documentation_generators_chrome_is_dropped():
    """What rustdoc, mdBook, Docusaurus, VuePress and Drupal put around a page's text: skip links,
    heading permalinks, a keyboard-help popup, a toggle's label (rustdoc's own markup, shortened)."""
    doc = parse(
        '<body><a class="skip-main-content" href="#main-content">Skip to main content</a>'
        '<div id="skip-link"><a href="#main" class="element-invisible element-focusable">Skip to main content</a></div>'
        '<div id="mdbook-help-container"><div id="mdbook-help-popup"><h2 class="mdbook-help-title">Keyboard shortcuts</h2>'
        "<div><p>Press <kbd>S</kbd> to search in the book</p></div></div></div>"
        # mdBook's menu bar: the book's name as an h1 over every page's own, which headed every chunk
        '<div id="mdbook-menu-bar" class="menu-bar sticky"><h1 class="menu-title">The Rust Programming Language</h1></div>'
        '<main><h1>Struct <span class="struct">Vec</span></h1>'
        '<details class="toggle top-doc" open><summary class="hideme"><span>Expand description</span></summary>'
        '<div class="docblock"><p>A contiguous growable array type.</p>'
        '<h2 id="examples"><a class="doc-anchor" href="#examples">§</a>Examples</h2><p>Push and pop.</p>'
        '<h2 id="cap">Capacity<a class="hash-link" href="#cap" aria-label="Direct link">\u200b</a></h2><p>Grows.</p>'
        '<h3 id="x"><a class="header-anchor" href="#x">#</a> Indexing</h3><p>By position.</p></div></details></main></body>'
    )
    assert kinds(doc) == [
        ("heading", "Struct Vec"),
        ("paragraph", "A contiguous growable array type."),
        ("heading", "Examples"),
        ("paragraph", "Push and pop."),
        ("heading", "Capacity"),
        ("paragraph", "Grows."),
        ("heading", "Indexing"),
        ("paragraph", "By position."),
    ]
    from raychunk.evaluation.spans import check_chunk  # the permalinks' marks are markup, not words

    for b in doc.blocks:
        assert (
            check_chunk(doc.text, {"text": b.text, "char_start": b.char_start, "char_end": b.char_end})
            is None
        )


def test_rustdoc_1_9x_chrome_is_dropped():
    """Today's rustdoc (1.9x) repeats the item's name in a top bar and puts a version, a Source link
    and a permalink beside every item: each method read as a paragraph "1.0.0 · Source" and a heading
    "Implementations§" (markup as std::mem::take's page writes it, shortened)."""
    doc = parse(
        '<body class="rustdoc fn"><rustdoc-topbar><h2><a href="#">take</a></h2></rustdoc-topbar>'
        '<main><section id="main-content"><div class="main-heading"><h1>Function <span class="fn">take</span></h1>'
        '<rustdoc-toolbar></rustdoc-toolbar><span class="sub-heading"><span class="since" title="Stable since '
        'Rust version 1.40.0">1.40.0</span> · <a class="src" href="../../src/core/mem/mod.rs.html#838">Source</a>'
        '</span></div><div class="docblock"><p>Replaces <code>dest</code> with the default value.</p>'
        '<h2 id="implementations" class="section-header">Implementations<a href="#implementations" '
        'class="anchor">§</a></h2><div class="example-wrap compile_fail"><a href="#" class="tooltip" '
        'title="This example deliberately fails to compile">ⓘ</a><pre class="rust"><code>let b = a;</code></pre>'
        "</div><p>Take · give</p>"
        '<h3 class="code-header">impl&lt;T&gt; PartialEq for Vec&lt;T&gt;<div class="where">where\n    T: Eq,</div>'
        "</h3><p>Tests for ==.</p></div></section></main></body>"
    )
    assert kinds(doc) == [
        ("heading", "Function take"),
        ("paragraph", "Replaces dest with the default value."),
        ("heading", "Implementations"),
        ("code", "let b = a;"),
        ("paragraph", "Take · give"),  # a middle dot among words stays
        # the where-clause's <div> is a line of its heading: it read as a heading of its own, which
        # every trait method's chunk then carried as its section ("> where A: Allocator, >")
        ("heading", "impl<T> PartialEq for Vec<T> where T: Eq,"),
        ("paragraph", "Tests for ==."),
    ]
    assert doc.blocks[-1].heading_path[-1] == "impl<T> PartialEq for Vec<T> where T: Eq,"
    from raychunk.evaluation.spans import check_chunk  # the dropped chrome is markup, not words

    for b in doc.blocks:
        assert (
            check_chunk(doc.text, {"text": b.text, "char_start": b.char_start, "char_end": b.char_end})
            is None
        )


def test_nodejs_api_pages_permalinks_and_code_in_both_module_forms():
    """Node.js's API pages (as /usr/share/doc/nodejs has them): a "#" permalink in every heading
    ("Path#" headed each chunk), and a sample in its CommonJS and ES module forms, two <code>s in one
    <pre>, which ran into one line."""
    doc = parse(
        '<section><h2>Path<span><a class="mark" href="#path" id="path">#</a></span>'
        '<a aria-hidden="true" class="legacy" id="path_path"></a></h2><p>It can be accessed using:</p>'
        '<pre class="with-35-chars"><input class="js-flavor-selector" type="checkbox" aria-label="Show modern '
        'ES modules syntax"><code class="language-js cjs">const path = require(\'node:path\');</code>'
        "<code class=\"language-js mjs\">import path from 'node:path';</code></pre></section>"
    )
    assert kinds(doc) == [
        ("heading", "Path"),
        ("paragraph", "It can be accessed using:"),
        ("code", "const path = require('node:path');\nimport path from 'node:path';"),
    ]
    assert doc.blocks[-1].language == "js"


def test_texinfo_menus_and_index_navigation_are_dropped():
    """makeinfo's HTML: a node's menu is a table of links to the sections below it (nettle's manual,
    makeinfo 6: a 246-token table chunk of "• Introduction | What is Nettle?"), an index's letters a
    table over and under it (bash's manual, makeinfo 7: "Jump to: A B C ..."), a node's links over
    its page (makeinfo 6: "Next: What is libffi? [Index]")."""
    doc = parse(
        '<div class="header"><p>Next: <a href="Introduction.html" rel="next">What is libffi?</a>, Up: '
        '<a href="index.html">Top</a> &nbsp; [<a href="Index.html" rel="index">Index</a>]</p></div><hr>'
        '<h2 class="chapter">Nettle</h2><p>This document describes the Nettle library.</p>'
        '<table class="menu" border="0" cellspacing="0"><tr><td align="left" valign="top">&bull; '
        '<a href="#Introduction">Introduction</a>:</td><td>&nbsp;&nbsp;</td><td align="left" valign="top">'
        "What is Nettle?</td></tr></table>"
        '<h2 class="appendix">Index</h2><table class="cp-letters-header-printindex"><tr><th>Jump to: </th>'
        '<td><a class="summary-letter-printindex" href="#I">A</a></td></tr></table>'
        '<table class="index-cp"><tr><td><a href="#x">AES</a>:</td><td><a href="#y">Cipher functions</a></td></tr>'
        "</table><p>The end.</p>"
    )
    assert kinds(doc) == [
        ("heading", "Nettle"),
        ("paragraph", "This document describes the Nettle library."),
        ("heading", "Index"),
        ("paragraph", "The end."),
    ]


def test_docbook_navigation_and_tables_of_contents_are_dropped():
    """DocBook XSL's chunked HTML (Valgrind's manual): a previous/up/next bar over and under each page,
    in the theme's own class, naming the book ("Valgrind User Manual", a chunk of its own), and a
    table of contents over the chapter (a 216-token chunk of section titles)."""
    doc = parse(
        '<body><div><table class="nav" width="100%" summary="Navigation header"><tr><td><a href="p.html">'
        '<img src="prev.png" alt="Prev"></a></td><th align="center">Valgrind User Manual</th></tr></table></div>'
        '<div class="chapter"><h1 class="title">2. Using the core</h1><div class="toc"><p><b>Table of Contents</b></p>'
        '<dl class="toc"><dt><span class="sect1"><a href="#a">2.1. What Valgrind does</a></span></dt></dl></div>'
        "<p>This chapter describes the core.</p></div>"
        '<div class="navfooter"><table summary="Navigation footer"><tr><td>1. Introduction</td></tr></table></div>'
        "</body>"
    )
    assert kinds(doc) == [("heading", "2. Using the core"), ("paragraph", "This chapter describes the core.")]


def test_form_wrapping_the_page_is_kept():
    body = "<p>" + "Real content. " * 50 + "</p>"
    doc = parse(f"<form id=aspnetForm><h1>Page</h1>{body}</form>")
    assert [b.kind for b in doc.blocks] == ["heading", "paragraph"]


def test_entities_decoded_and_external_entities_not_resolved():
    doc = parse(
        '<!DOCTYPE html [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
        "<p>Fish &amp; chips &lt;b&gt; &#169; &eacute; &xxe;</p>"
    )
    assert kinds(doc) == [("paragraph", "Fish & chips <b> © é &xxe;")]
    assert_spans(doc)


def test_br_is_a_line_break_and_double_br_splits_paragraphs():
    doc = parse("<p>line one<br>line two<br/><br>next para</p>")
    assert kinds(doc) == [("paragraph", "line one\nline two"), ("paragraph", "next para")]
    assert_spans(doc)


def test_loose_text_and_upper_case_tags():
    doc = parse("<BODY><DIV>Loose <B>bold</B> text<DIV>inner</DIV>after</DIV><H2>Up</H2></BODY>")
    assert kinds(doc) == [
        ("paragraph", "Loose bold text"),
        ("paragraph", "inner"),
        ("paragraph", "after"),
        ("heading", "Up"),
    ]
    loose = doc.blocks[0]
    assert doc.text[loose.char_start : loose.char_end] == "Loose <B>bold</B> text"
    assert_spans(doc)


def test_stray_end_tags_and_misnesting_lose_no_text():
    # A stray end tag is ignored, as a browser does, so it joins what it stands between.
    doc = parse("</div></p>alpha<p>beta</span></td> <b>gamma</p></b>delta</li></ul></table>")
    assert " ".join(b.text for b in doc.blocks) == "alpha beta gamma delta"
    assert_spans(doc)


def test_truncated_mid_tag_is_reported_and_no_markup_leaks():
    doc = parse('<h1>T</h1><p>Complete.</p><p>Cut <a href="http://exa')
    assert kinds(doc) == [("heading", "T"), ("paragraph", "Complete."), ("paragraph", "Cut")]
    assert doc.document.status == "ok"
    assert "truncated" in doc.document.reason


def test_only_boilerplate_is_empty():
    doc = parse("<html><head><script>x()</script></head><body><nav>menu</nav></body></html>")
    assert doc.document.status == "empty"
    assert doc.blocks == ()


def test_unclosed_boilerplate_element_does_not_hide_the_page():
    text = "<aside>Related<h1>Article</h1>" + "<p>Paragraph of real text here.</p>" * 100
    doc = parse(text)
    assert kinds(doc)[:3] == [
        ("paragraph", "Related"),
        ("heading", "Article"),
        ("paragraph", "Paragraph of real text here."),
    ]
    assert [b.kind for b in doc.blocks].count("paragraph") == 101


def test_link_menus_are_dropped():
    menu = "<ul>" + "".join(f'<li><a href="/{i}">Section {i}</a></li>' for i in range(10)) + "</ul>"
    doc = parse(f"<h1>T</h1>{menu}<ul><li>a real item</li><li><a href=x>a link</a> with text</li></ul>")
    assert kinds(doc) == [
        ("heading", "T"),
        ("list_item", "a real item"),
        ("list_item", "a link with text"),
    ]


def test_a_list_of_links_in_a_table_cell_is_the_cells_data():
    # An infobox's Products cell: a list of links that would pass for a menu anywhere else. Its table
    # row spans the list, so dropping it would leave the span holding words the chunk lacks.
    links = "<ul>" + "".join(f'<li><a href="/{i}">Product {i}</a></li>' for i in range(10)) + "</ul>"
    rows = f"<tr><th>Products</th><td>{links}</td></tr><tr><th>Founded</th><td>1975</td></tr>"
    menu = links.replace("Product", "Section")
    doc = parse(f"<h1>T</h1><table>{rows}</table>{menu}")
    assert [b.kind for b in doc.blocks] == ["heading", "table"]  # the menu outside the table is dropped
    (table,) = [b for b in doc.blocks if b.kind == "table"]
    assert table.rows[0] == ("Products", "; ".join(f"Product {i}" for i in range(10)))
    assert_spans(doc)


def test_5000_levels_of_nesting_survive():
    depth = 5000
    text = (
        "<!DOCTYPE html><html><body><h1>Top</h1>"
        + "<div>" * depth
        + "<h2>Deep heading</h2><p>Deep paragraph.</p><table><tr><th>k</th><th>v</th></tr>"
        + "<tr><td>depth</td><td>5000</td></tr></table>"
        + "</div>" * depth
        + "<p>After.</p></body></html>"
    )
    t0 = time.perf_counter()
    doc = parse(text)
    assert time.perf_counter() - t0 < 2.0
    assert [(b.kind, b.text) for b in doc.blocks[:3]] == [
        ("heading", "Top"),
        ("heading", "Deep heading"),
        ("paragraph", "Deep paragraph."),
    ]
    table = doc.blocks[3]
    assert table.rows == (("k", "v"), ("depth", "5000")) and table.header_rows == 1
    assert table.heading_path == ("Top", "Deep heading")
    assert kinds(doc)[4] == ("paragraph", "After.")
    assert_spans(doc)


def test_through_the_dispatcher_and_deterministic():
    data = (
        b"<html><head><meta charset=windows-1252><title>T</title></head>"
        b"<body><h1>Caf\xe9</h1><p>\x93quoted\x94</p></body></html>"
    )
    first = parse_document(data, "page.html")
    second = parse_document(data, "page.html")
    assert first.document.format == "html" and first.document.status == "ok"
    assert kinds(first) == [("heading", "Café"), ("paragraph", "\u201cquoted\u201d")]
    assert first == second
    assert [b.to_dict() for b in first.blocks] == [b.to_dict() for b in second.blocks]


_FRAGMENTS = [
    "<p>", "</p>", "<div>", "</div>", "<ul>", "<ol>", "</ul>", "<li>", "</li>", "<h2>", "</h2>", "<h3>",
    "<table>", "</table>", "<tr>", "<td>", "</td>", "<th>", "<b>", "</b>", "<br>", "<pre>", "</pre>",
    "<blockquote>", "</blockquote>", "<dl>", "<dt>", "<dd>", "word", "two words", " ", "\n", "&amp;",
    "<!-- c -->", "<span>", "</span>", "<a href=x>", "</a>", "<thead>", "</tr>",
]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=40))
def test_tag_soup_never_crashes_and_spans_hold(pieces):
    text = "".join(pieces)
    doc = parse(text)
    # A definition term is joined to its definition as "term: definition", the ":" the reader's
    # (no fragment holds one), so both sides are compared without it.
    for b in doc.blocks:
        assert 0 <= b.char_start <= b.char_end <= len(text)
        if b.kind in ("heading", "paragraph", "list_item", "code"):
            # Compared without spaces: a stray end tag separates words in strip_tags, not in a browser.
            assert span_text(doc, b).replace(" ", "") == squash(b.text).replace(" ", "").replace(":", "")
    # Nothing visible is lost: every character of the source's text is in some block.
    visible = squash(html.unescape(strip_tags(text))).replace(" ", "")
    got = "".join(" ".join(c for r in b.rows for c in r) if b.kind == "table" else b.text for b in doc.blocks)
    assert sorted(got.replace(" ", "").replace("\n", "").replace(":", "")) == sorted(visible)


def test_a_definition_term_joined_to_its_definition_spans_both_in_tag_soup():
    """The example hypothesis found: a term and its definition outside a ``<dl>``."""
    doc = parse("<dt>word<dd>word")
    assert [(b.kind, b.text, span_text(doc, b)) for b in doc.blocks] == [
        ("paragraph", "word: word", "word word")
    ]


_DRAFT = (
    "<html><head><title>remoteStorage</title></head><body>"
    "<p>[Docs] [txt]</p><pre>INTERNET DRAFT                 M. de Jong\n\n"
    "Table of Contents\n\n   1. Introduction.....2\n   2. Requests.......3\n\n"
    '<span class="h2"><a name="section-1">1</a>.  Introduction</span>\n\n'
    "    Many services for data storage &amp; sync are\n    available over the internet.\n\n"
    "       *  GET a document\n\n"
    "</pre><!--NewPage--><pre class='newpage'>"
    "de Jong                Expires 18 June 2015                [Page 1]\n\n"
    '<span class="h2"><a name="section-2">2</a>. Requests</span>\n\n'
    "    Client-to-server requests SHOULD be made over https.\n\n"
    '<span class="h3"><a name="section-2.1">2.1</a>.  GET</span>\n\n'
    "    A GET request to a folder returns a description.\n</pre></body></html>"
)


def test_preformatted_body_reads_numbered_sections_as_headings():
    # An IETF draft as HTML (readability-ietf-1.html): its body is <pre> pages of plain text.
    doc = parse(_DRAFT)
    assert not [b for b in doc.blocks if b.kind == "code"]
    heads = [(b.text, b.level, b.heading_path) for b in doc.blocks if b.kind == "heading"]
    assert heads == [
        ("1. Introduction", 1, ()),
        ("2. Requests", 1, ()),
        ("2.1. GET", 2, ("2. Requests",)),
    ]
    by_text = {b.text.split()[0]: b for b in doc.blocks}
    assert by_text["Many"].heading_path == ("1. Introduction",)
    assert by_text["A"].heading_path == ("2. Requests", "2.1. GET")
    assert (
        by_text["Many"].text == "Many services for data storage & sync are\n    available over the internet."
    )
    # The contents lines are list items, not headings; a page footer stays text, under its section.
    assert [b.kind for b in doc.blocks if "....." in b.text] == ["list_item", "list_item"]
    assert by_text["de"].kind == "paragraph" and by_text["de"].heading_path == ("1. Introduction",)
    assert_spans(doc)
    first = next(b for b in doc.blocks if b.kind == "heading")
    assert doc.text[first.char_start : first.char_end] == "1</a>.  Introduction"


def test_pre_stays_code_when_it_is_not_the_body():
    prose = "<p>" + "An article that quotes a command line or two between its paragraphs. " * 4 + "</p>"
    doc = parse(f"{prose}<pre>1. Install\n\n$ pip install x</pre>{prose}")
    assert [b.kind for b in doc.blocks] == ["paragraph", "code", "paragraph"]
    # A <pre> that names its language is code even when it is most of the page.
    doc = parse(
        '<p>Intro.</p><pre class="language-python">1. Install\n\nimport x\nx.run()  # a long line</pre>'
    )
    assert [b.kind for b in doc.blocks] == ["paragraph", "code"]
    # Nor is a C sample that names none (makeinfo's <pre class="example">, most of libffi's "Closure
    # Example" page): it was read as a draft's page, its lines paragraphs.
    sample = (
        "#include &lt;stdio.h&gt;\n#include &lt;ffi.h&gt;\n\n/* Acts like puts. */\n"
        "void puts_binding(ffi_cif *cif, void *ret, void* args[])\n{\n  *(ffi_arg *)ret = fputs(args[0]);\n}\n\n"
        "int main()\n{\n  ffi_cif cif;\n  return 0;\n}\n"
    )
    doc = parse(
        f'<h3>2.6 Closure Example</h3><p>A trivial example.</p><div class="example"><pre class="example">{sample}</pre></div>'
    )
    assert [b.kind for b in doc.blocks] == ["heading", "paragraph", "code"]


def test_a_pre_of_one_long_line_is_judged_a_line_at_a_time():
    """Found by scripts/fuzz.py (seed 74): a manual page with 20,000 ``<script>`` pasted into it made a
    ``<pre>`` of one 160 KB line, and telling whether it read as code (a regex over the whole text
    that backtracked through the line from each of its characters) took 93 s; a line at a time it
    is a scan. A line that ends in ";" is a code line, one that only holds one inside is not."""
    import time

    line = "&lt;script&gt;" * 5000
    started = time.perf_counter()
    doc = parse(f"<p>Intro.</p><pre>{line}\n{line}</pre>")
    assert time.perf_counter() - started < 5  # 12 s before (quadratic in the line); milliseconds now
    assert [b.kind for b in doc.blocks] == ["paragraph", "paragraph"]  # read as the page's text
    assert doc.blocks[1].text.startswith("<script>" * 5000)
    doc = parse("<p>Intro.</p><pre>int x = 1;\nint y = 2; // two\nreturn x + y;</pre>")
    assert [b.kind for b in doc.blocks] == ["paragraph", "code"]
    doc = parse("<p>Intro.</p><pre>a; b\nc // d\ne</pre>")
    assert [b.kind for b in doc.blocks] == ["paragraph", "paragraph"]


def test_a_redirect_page_is_empty_and_names_its_target():
    """mdBook, Sphinx and MkDocs leave a page where one moved: a meta refresh and "Redirecting to...".
    Its one line was a chunk (105 of the Rust toolchain's book pages); it is ``empty``, naming where
    it leads, as a manual page's ``.so`` link is."""
    page = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Redirecting...</title>'
        '<meta http-equiv="refresh" content="0; URL=../reference/build-cache.html">'
        '</head><body><p>Redirecting to... <a href="../reference/build-cache.html">'
        "../reference/build-cache.html</a>.</p></body></html>"
    )
    doc = parse(page)
    assert doc.document.status == "empty" and not doc.blocks
    assert doc.document.reason == (
        "a redirect to ../reference/build-cache.html (a meta refresh): that page is read on its own"
    )
    # the attributes the other way round, a quoted URL, a delay of a few seconds
    doc = parse('<meta content="3;url=\'moved.html\'" http-equiv="Refresh"><p>This page has moved.</p>')
    assert doc.document.status == "empty" and "a redirect to moved.html" in doc.document.reason
    # a page with its own text that refreshes itself (a dashboard) is read
    body = "<p>" + "Build status of every branch, refreshed each minute. " * 10 + "</p>"
    doc = parse(f'<meta http-equiv="refresh" content="60"><h1>Status</h1>{body}')
    assert doc.document.status == "ok" and len(doc.blocks) == 2
    doc = parse(f'<meta http-equiv="refresh" content="0; url=new.html"><h1>Status</h1>{body}')
    assert doc.document.status == "ok"  # a redirect with a page of its own: its text is kept


def test_a_page_of_headings_only_keeps_the_sentences_among_them():
    """rustdoc's error-code pages: an h1 and h4 sentences under it, nothing else. The page was
    ``empty`` (only headings); a heading with nothing under it that is a sentence is its text."""
    doc = parse(
        "<main><h1>Error code E0208</h1>"
        "<h4>This error code is internal to the compiler and will not be emitted with normal Rust code.</h4>"
        "<h4>Note: this error code is no longer emitted by the compiler.</h4></main>"
    )
    assert [(b.kind, b.heading_path) for b in doc.blocks] == [
        ("heading", ()),
        ("paragraph", ("Error code E0208",)),
        ("paragraph", ("Error code E0208",)),
    ]
    assert doc.blocks[2].text == "Note: this error code is no longer emitted by the compiler."
    # an index page of titles stays empty: nothing in it reads as a sentence
    doc = parse("<h1>Build Commands</h1><h2>cargo build</h2><h2>cargo check</h2>")
    assert all(b.kind == "heading" for b in doc.blocks)
    # a sentence-like heading over text of its own stays a heading
    doc = parse("<h2>Why does this fail to compile at all?</h2><p>Because.</p>")
    assert [b.kind for b in doc.blocks] == ["heading", "paragraph"]


def test_real_ietf_draft_has_its_sections():
    path = ROOT_CORPUS / "html" / "readability-ietf-1.html"
    if not path.exists():
        pytest.skip("the shared corpus is not beside the repository")
    doc = parse_document(path.read_bytes(), path.name)
    heads = [b for b in doc.blocks if b.kind == "heading"]
    assert (
        len(heads) == 28 and heads[0].text == "1. Introduction" and heads[-1].text == "18. Authors' addresses"
    )
    assert [b.text for b in heads if b.level == 2][:2] == ["12.1. WebFinger", "12.2. OAuth dialog form"]
    assert not [b for b in doc.blocks if b.kind == "code"]
    assert_spans(doc)


def test_a_marked_section_without_a_keyword_is_a_bogus_comment():
    # Found by scripts/fuzz.py (seed 1212): Python 3.11's html.parser raised on "<![" and no keyword,
    # and the page failed; a browser reads it as a comment to the next ">".
    for src in ("<p>a</p><![\x1fCDATA[ junk ]]><p>b</p>", "<p>a</p><![ if x <p>b</p>"):
        doc = parse(src)
        assert doc.document.status == "ok" and kinds(doc) == [("paragraph", "a"), ("paragraph", "b")]
    assert kinds(parse("<p>a<![CDATA[x]]>b</p>")) == [("paragraph", "ab")]
