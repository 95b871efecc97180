from raychunk.parse import parse_document
from tests.spans import assert_spans_match

DOC = """---
title: Widget Manual
owner: docs-team
---
Widget Manual
=============

Intro paragraph
that wraps.

## Install

```python
# this is a comment, not a heading
pip_install("widget")
```

- first item
  continues here
  - nested item
- second item

1. step one
2. step two

### Proxy

| Setting | Default |
|---------|---------|
| proxy   | none    |
| port    | 8080    |

> A quoted
> note.

Setext two
----------

Final words.
"""


def parse(src: str, name: str = "manual.md"):
    return parse_document(src.encode("utf-8"), name)


def test_block_kinds_headings_and_paths():
    doc = parse(DOC)
    assert doc.document.status == "ok"
    assert doc.document.format == "markdown"
    assert doc.document.title == "Widget Manual"
    assert dict(doc.document.metadata) == {"title": "Widget Manual", "owner": "docs-team"}
    headings = [(b.text, b.level, b.heading_path) for b in doc.blocks if b.kind == "heading"]
    assert headings == [
        ("Widget Manual", 1, ()),
        ("Install", 2, ("Widget Manual",)),
        ("Proxy", 3, ("Widget Manual", "Install")),
        ("Setext two", 2, ("Widget Manual",)),
    ]
    final = doc.blocks[-1]
    assert (final.kind, final.text, final.heading_path) == (
        "paragraph",
        "Final words.",
        ("Widget Manual", "Setext two"),
    )


def test_hash_inside_code_fence_is_code_not_heading():
    doc = parse(DOC)
    code = [b for b in doc.blocks if b.kind == "code"]
    assert len(code) == 1
    assert code[0].language == "python"
    assert code[0].text == '# this is a comment, not a heading\npip_install("widget")'
    assert code[0].heading_path == ("Widget Manual", "Install")
    assert not any("comment" in b.text for b in doc.blocks if b.kind == "heading")


def test_nested_lists_have_depth_and_own_text():
    doc = parse(DOC)
    items = [(b.text, b.level) for b in doc.blocks if b.kind == "list_item"]
    assert items == [
        ("first item\ncontinues here", 0),
        ("nested item", 1),
        ("second item", 0),
        ("step one", 0),
        ("step two", 0),
    ]


def test_pipe_table_keeps_rows_and_header():
    doc = parse(DOC)
    (table,) = [b for b in doc.blocks if b.kind == "table"]
    assert table.rows == (("Setting", "Default"), ("proxy", "none"), ("port", "8080"))
    assert table.header_rows == 1
    assert table.heading_path == ("Widget Manual", "Install", "Proxy")
    assert doc.text[table.char_start : table.char_end].startswith("| Setting | Default |")
    assert doc.text[table.char_start : table.char_end].endswith("| port    | 8080    |")


def test_spans_match_source_text():
    doc = parse(DOC)
    assert_spans_match(doc, exact=False)
    # Top-level blocks are the source slice itself.
    for b in doc.blocks:
        if b.kind in ("heading", "paragraph") and b.text != "A quoted\nnote.":
            assert doc.text[b.char_start : b.char_end] == b.text


def test_bom_and_crlf():
    src = "\ufeff# Deploying\r\n\r\nText one.\r\nText two.\r\n\r\n## Next\r\n\r\nMore.\r\n"
    doc = parse_document(src.encode("utf-8"), "crlf.md")
    assert [(b.kind, b.text) for b in doc.blocks if b.kind == "heading"] == [
        ("heading", "Deploying"),
        ("heading", "Next"),
    ]
    assert doc.document.encoding == "utf-8-sig"
    assert_spans_match(doc, exact=False)
    para = doc.blocks[1]
    assert doc.text[para.char_start : para.char_end] == "Text one.\r\nText two."


def test_unclosed_fence_keeps_the_rest_as_code():
    doc = parse("# T\n\n```\ncode\n# not a heading\n")
    assert [b.kind for b in doc.blocks] == ["heading", "code"]
    assert doc.blocks[1].text == "code\n# not a heading"


def test_deterministic():
    assert parse(DOC) == parse(DOC)


def test_a_quote_inside_a_list_item_splits_the_item_in_source_order():
    """From otel-metrics-sdk.md: a list item's paragraphs around a nested quote. The quote was a block
    of its own emitted first, while the item's one block spanned the quote too."""
    src = (
        "* `attribute_keys`: an allow-list.\n\n"
        "  If a key is both included and excluded, the SDK MAY fail fast.\n\n"
        "  > [!NOTE]\n"
        "  > A removed key may still be exported on Exemplars.\n\n"
        "  SDK documentation SHOULD inform users.\n"
        "* `aggregation`: the name of an aggregation.\n"
    )
    doc = parse(src)
    assert_spans_match(doc, exact=False)
    texts = [b.text for b in doc.blocks]
    assert texts == [
        "`attribute_keys`: an allow-list.\nIf a key is both included and excluded, the SDK MAY fail fast.",
        "[!NOTE]\nA removed key may still be exported on Exemplars.",
        "SDK documentation SHOULD inform users.",
        "`aggregation`: the name of an aggregation.",
    ]
    starts = [b.char_start for b in doc.blocks]
    assert starts == sorted(starts)
    for a, b in zip(doc.blocks, doc.blocks[1:]):
        assert a.char_end <= b.char_start  # no block's span holds another's text


def test_heading_attribute_lists_are_not_part_of_the_title():
    src = (
        "# FastAPI in Containers { #fastapi-in-containers }\n\nIntro.\n\n"
        "## Docker Cache {: #docker-cache .tip }\n\nCopy the requirements first.\n\n"
        "## Sets {a, b}\n\nBraces that are no attribute list stay.\n"
    )
    doc = parse(src, "docker.md")
    headings = [(b.text, b.heading_path) for b in doc.blocks if b.kind == "heading"]
    assert headings == [
        ("FastAPI in Containers", ()),
        ("Docker Cache", ("FastAPI in Containers",)),
        ("Sets {a, b}", ("FastAPI in Containers",)),
    ]
    assert doc.document.title == "FastAPI in Containers"
    assert_spans_match(doc)


def test_ordered_items_keep_their_numbers_from_the_list_start_and_their_delimiter():
    doc = parse(
        "7. Drain\n8. Upgrade\n   1) nested\n   1) again\n\ntext\n\n1. a\n1. b\n\n- [x] done\n- plain\n"
    )
    items = [(b.marker, b.text, b.level) for b in doc.blocks if b.kind == "list_item"]
    assert items == [
        ("7.", "Drain", 0),
        ("8.", "Upgrade", 0),
        ("1)", "nested", 1),
        ("2)", "again", 1),
        ("1.", "a", 0),
        ("2.", "b", 0),  # numbered from the start, as a renderer shows it
        ("-", "[x] done", 0),  # the task box is the author's text
        ("-", "plain", 0),
    ]
    assert_spans_match(doc, exact=False)


def test_a_definition_term_joins_its_definition_spanning_both():
    src = "Intro.\n\nShard\n:   One Parquet file.\n\n    More about it.\n\nAlone\n: \n"
    doc = parse(src)
    assert [(b.kind, b.text) for b in doc.blocks][:3] == [
        ("paragraph", "Intro."),
        ("paragraph", "Shard: One Parquet file."),
        ("paragraph", "More about it."),
    ]
    joined = doc.blocks[1]
    assert src[joined.char_start : joined.char_end] == "Shard\n:   One Parquet file."


def test_inline_html_is_read_as_text_and_code_spans_autolinks_entities_stay_as_written():
    src = (
        "## <a id='x'></a>Install <small>v2</small>\n\n"
        "Press <kbd>Ctrl</kbd>+<kbd>C</kbd><br>to stop; `<br>` is code, see <https://x.org> &amp; <!-- note --> more.\n"
    )
    doc = parse(src)
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("heading", "Install v2"),
        ("paragraph", "Press Ctrl+C\nto stop; `<br>` is code, see <https://x.org> &amp; more."),
    ]
    para = doc.blocks[1]
    assert src[para.char_start : para.char_end].startswith("Press <kbd>")


def test_markup_in_table_cells_is_text_a_nested_table_its_rows():
    src = (
        "| Key | Value |\n|---|---|\n| <code>timeout</code> | 30 s<br>per request |\n"
        "| `a \\| b` | either |\n"
        "| contact | Fields. <details><summary><code>contact</code> fields</summary><table><tr><th>Name</th>"
        "<th>Type</th></tr><tr><td><code>url</code></td><td>str</td></tr></table></details> |\n"
    )
    (table,) = parse(src).blocks
    assert table.rows == (
        ("Key", "Value"),
        ("timeout", "30 s per request"),
        ("`a | b`", "either"),
        ("contact", "Fields. contact fields; Name, Type; url, str"),
    )
    assert "<" not in table.text


def test_an_html_block_is_parsed_as_html_into_blocks_of_its_own():
    src = (
        "# T\n\n<h2 align='center'>Models</h2>\n\n<table>\n<tr><th>Model</th><th>Size</th></tr>\n"
        "<tr><td>small</td><td>12 MB</td></tr>\n</table>\n\n<ol start='3'><li>three</li></ol>\n\nAfter.\n"
    )
    doc = parse(src)
    assert [(b.kind, b.text, b.heading_path) for b in doc.blocks if b.kind != "table"] == [
        ("heading", "T", ()),
        ("heading", "Models", ("T",)),
        ("list_item", "three", ("T", "Models")),
        ("paragraph", "After.", ("T", "Models")),
    ]
    (table,) = [b for b in doc.blocks if b.kind == "table"]
    assert table.rows == (("Model", "Size"), ("small", "12 MB"))
    assert src[table.char_start : table.char_end].startswith("<table>")
    assert src[table.char_start : table.char_end].endswith("</table>")
    (item,) = [b for b in doc.blocks if b.kind == "list_item"]
    assert item.marker == "3."
