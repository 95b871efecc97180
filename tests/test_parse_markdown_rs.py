"""markdown-it.rs' tree (raychunk.parse.markdown_rs) gives the markdown walker the same tokens, and
so the same documents, as markdown-it-py: on the real corpus, on generated tiny files, on the edge
cases; where it cannot (a tab in a container's indentation, an unclosed fence in a list item), the
document goes to markdown-it-py."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raychunk.parse import markdown as md_parse
from raychunk.parse import markdown_rs, parse_document

pytest.importorskip("markdown_it_pyrs")

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not present at {CORPUS}")

# What the walker reads of each token type (raychunk.parse.markdown.parse_markdown).
_MAPPED = {"heading_open", "paragraph_open", "fence", "code_block", "html_block", "table_open"}


def _read(tok) -> tuple:
    k = [tok.type]
    if tok.type in _MAPPED:
        k.append(tuple(tok.map))
    if tok.type == "dt_open":
        k.append(tok.map[0])
    if tok.type in ("paragraph_open", "list_item_open"):
        k.append(tok.level)
    if tok.type in ("inline", "fence", "code_block", "html_block"):
        k.append(tok.content)
    if tok.type == "front_matter":
        k.append(tok.content.rstrip("\n"))
    if tok.type == "heading_open":
        k.append(tok.tag)
    if tok.type == "fence":
        k += [tok.markup, tok.info]
    if tok.type == "ordered_list_open":
        k += [tok.markup, int((tok.attrs or {}).get("start", 1))]
    return tuple(k)


def _both(data: bytes, source: str, monkeypatch):
    fast = parse_document(data, source)
    with monkeypatch.context() as m:
        m.setattr(md_parse, "block_tokens", lambda text: None)
        pure = parse_document(data, source)
    return fast, pure


EDGE = {
    "nested_lists": b"- a\n  - b\n    1. c\n    2. d\n       > q\n       > r\n  - e\n\n  para\n- f\n",
    "ordered": b"3) a\n4) b\n\n1. x\n\n10. y\n",
    "escaped_pipes": b"| a | b \\| c |\n|---|---|\n| `x \\| y` | z |\n| only |\n",
    "empty_cells": b"| a | |\n|--|--|\n| | b |\n",
    "header_only_table": b"| a | b |\n|---|---|\n",
    "setext": b"Title\n=====\n\nSub\n---\ntext\n",
    "heading_closers": b"## T ##\n#\n# \n### Install { #install }\n",
    "front_matter": b"---\ntitle: Hi\ntags: [a]\n---\n\n# H\n\nbody\n",
    "html_blocks": b"<table><tr><td>x</td></tr></table>\n\n<details>\n<summary>S</summary>\n\nbody\n</details>\n",
    "html_at_eof": b"a\n\n<div>\nx\n</div> ",
    "html_in_item": b"- a\n\n  <div>\n  x\n  </div>\n",
    "crlf": b"# T\r\n\r\npara\r\nline\r\n\r\n- a\r\n- b\r\n\r\n```\r\ncode\r\n```\r\n",
    "cr": b"# T\r\rpara\r",
    "latin1": "# Caf\u00e9 cr\u00e8me\n\n- \u00fcber\n\n| \u00e4 | b |\n|---|---|\n| x | \u00f6 |\n".encode(
        "latin-1"
    ),
    "utf8_wide": "# \u65e5\u672c\n\n- \u00fc\n- \u65e5\u672c\u8a9e\n\n\u6bb5\u843d\u3002\n".encode(),
    "code_at_eof": b"a\n\n    code\n    more  ",
    "unclosed_fence": b"a\n\n```\nx\n\n",
    "deflist": b"Term\n:   def one\n\n    more\n\nT2\n: d2\n",
    "references": b"[a]: http://x 'T'\n\npara [a]\n",
    "quoted_list": b"> - a\n> - b\n>\n> p\n\n> ```\n> q\n> ```\n",
    "lazy_item_line": b"- c\nd\n",
    "rules": b"a\n\n***\n\n---\n",
    "empty_items": b"-\n  foo\n- \n- bar\n",
    "wiki": b"== One ==\ntext\n\n== Two ==\nmore\n",
    "top_level_tabs": b"# T\n\n```go\nfunc f() {\n\treturn\n}\n```\n",
    "lists_five_deep": "".join("  " * i + f"- item {i}\n" for i in range(5)).encode(),
    "unicode_space_edges": "  \u00a0 nbsp\n* star\n\u2028sep\n\n\x0cff\n".encode(),
    "open_comment": b"a\n\n<!--\nx\n\n",
    "pre_closed_by_script": b"<pre>\nx\n</script>\nafter\n",
    # markdown-it-py's parse: the tree cannot stand for these
    "bare_reference_label": b"[ref]:\n/url\n\ntext [ref]\n",
    "one_column_table": b"| a |\n---\n",
    "indented_front_matter": b"  ---\ntitle: x\n  ---\n",
    "table_then_no_break_space": "| a | b |\n|---|---|\n\u00a0\n| 1 | 2 |\n".encode(),
    "open_comment_at_eof": b"a\n\n<!--\nx\n\t",
    "lists_twelve_deep": "".join("  " * i + f"- item {i}\n" for i in range(12)).encode(),
    "hundreds_deep": "".join("  " * i + f"- item {i}\n" for i in range(400)).encode(),
    "lazy_quote_text": b"> a\nb\n",
    "lazy_quote_line": b"> a\n  b\n",
    "quote_then_numbered_item": b"> quote\n10. ten\n",
    "quote_then_table": b"> - ql\n| 1 | 2 |\n|---|---|\n",
    "quoted_empty_item": b"> q\n1.\n",
    "table_then_empty_item": b"| 1 | 2 |\n|---|---|\n1.\n",
    "definition_then_underline": b"Term\n: d\n10. ten\n===\n",
    "fence_open_at_eof": b"a\n\n~~~\nx\nmore",
    "tab_in_item": b"- a\n\tb\n\n\tcode\n",
    "unclosed_fence_in_item": b"- a\n  ```\n  x\n\n- b\n",
}
FALLS_BACK = {
    "tab_in_item",
    "unclosed_fence_in_item",
    "lists_twelve_deep",
    "hundreds_deep",
    "lazy_quote_line",
    "quote_then_numbered_item",
    "quote_then_table",
    "quoted_empty_item",
    "table_then_empty_item",
    "definition_then_underline",
    "fence_open_at_eof",
    "bare_reference_label",
    "one_column_table",
    "indented_front_matter",
    "open_comment_at_eof",
    "table_then_no_break_space",
}


@pytest.mark.parametrize("name", sorted(EDGE))
def test_edge_cases_parse_the_same_either_way(name, monkeypatch):
    data = EDGE[name]
    fast, pure = _both(data, f"{name}.md", monkeypatch)
    assert fast == pure
    assert fast.document.status == "ok" and fast.blocks
    text = md_parse._DEEP.sub(r"\1", fast.text)
    tokens = markdown_rs.block_tokens(text)
    if name in FALLS_BACK:
        assert tokens is None
    else:
        py = md_parse._parser().parse(text)
        assert [_read(t) for t in tokens] == [_read(t) for t in py if t.type not in markdown_rs.SKIPPED]


def test_nul_characters_as_markdown_it_py_reads_them(monkeypatch):
    # The reader refuses bytes with NULs as binary; the parse of such text still agrees.
    from raychunk.document import Document

    text = "a\0b\n\n# x\0\n- \0\n"
    base = Document("x", "a.md", "markdown", "ok")
    fast = md_parse.parse_markdown(text, base)
    monkeypatch.setattr(md_parse, "block_tokens", lambda text: None)
    assert fast == md_parse.parse_markdown(text, base) and markdown_rs.block_tokens(text) is not None


def test_text_the_rust_parser_cannot_take_goes_to_markdown_it_py():
    from raychunk.document import Document

    text = "# caf\ud800e\n\n- a\n"  # a lone surrogate: no UTF-8 for it
    assert markdown_rs.block_tokens(text) is None
    doc = md_parse.parse_markdown(text, Document("x", "a.md", "markdown", "ok"))
    assert [(b.kind, b.text) for b in doc.blocks] == [("heading", "caf\ud800e"), ("list_item", "a")]


def test_an_empty_file_and_whitespace(monkeypatch):
    for data in (b"", b"   \n\n", b"\n"):
        fast, pure = _both(data, "empty.md", monkeypatch)
        assert fast == pure and not fast.blocks


@needs_corpus
def test_corpus_markdown_parses_the_same_either_way(monkeypatch):
    files = sorted((CORPUS / "md").rglob("*.md"))
    assert len(files) >= 10
    through_tree = 0
    for path in files:
        data = path.read_bytes()
        fast, pure = _both(data, str(path), monkeypatch)
        assert fast == pure, path.name
        through_tree += markdown_rs.block_tokens(md_parse._DEEP.sub(r"\1", fast.text)) is not None
    assert through_tree == len(files)  # none of the corpus needs the fallback


def test_generated_tiny_files_parse_the_same_either_way(tmp_path, monkeypatch):
    from benchmarks.peer_pipelines import tiny_corpus

    tiny_corpus(tmp_path, 60)
    for path in random.Random(5).sample(sorted(tmp_path.rglob("*.md")), 20):
        fast, pure = _both(path.read_bytes(), str(path), monkeypatch)
        assert fast == pure and len(fast.blocks) >= 8


def test_without_markdown_it_pyrs_the_pure_parse_runs(monkeypatch):
    monkeypatch.setattr(markdown_rs, "_MD", None)
    monkeypatch.setattr(markdown_rs, "_MISSING", True)
    assert not markdown_rs.available() and markdown_rs.block_tokens("# T\n") is None
    doc = parse_document(EDGE["nested_lists"], "a.md")
    assert [b.kind for b in doc.blocks][:2] == ["list_item", "list_item"]


# Lines that reach the constructs the two parsers read apart (lazy lines, open fences, tabs, tables
# ending at a block) and the common ones, in any order.
_PIECES = [
    "# H",
    "## H2 ##",
    "Title",
    "===",
    "---",
    "text line",
    "",
    "",
    "- item",
    "* star",
    "1. one",
    "2) two",
    "10. ten",
    "  - nested",
    "    - deeper",
    "> quote",
    "> > qq",
    "> - ql",
    ">",
    "```",
    "~~~",
    "    code",
    "\tcode",
    "| a | b |",
    "|---|---|",
    "| x \\| y | `z|w` |",
    "<div>",
    "</div>",
    "<!-- c -->",
    "Term",
    ":   def",
    "[ref]: http://x",
    "***",
    "- [x] task",
    "  text cont",
    "- a\tb",
    "1.",
    "-",
    "  > q in item",
    "a <b>c</b>",
    "caf\u00e9 \u65e5\u672c",
    "<!--",
    "<pre>",
    "</script>",
    "[ref2]:",
    "  \u00a0 nbsp",
    "\x0cff",
    "  ---",
    "> |---|---|",
    "   > indented q",
    "0. zero",
    "  : indented def",
    "    ===",
    "\u00a0",
    "  | a | b |",
    "  <div>",
]


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=14),
    crlf=st.booleans(),
    final_newline=st.booleans(),
)
def test_any_mix_of_constructs_parses_the_same_either_way(lines, crlf, final_newline):
    text = ("\r\n" if crlf else "\n").join(lines) + ("\n" if final_newline else "")
    data = text.encode()
    fast = parse_document(data, "mix.md")
    md_parse_block_tokens = md_parse.block_tokens
    md_parse.block_tokens = lambda text: None
    try:
        pure = parse_document(data, "mix.md")
    finally:
        md_parse.block_tokens = md_parse_block_tokens
    assert fast == pure
