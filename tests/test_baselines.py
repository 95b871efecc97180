"""Known-answer cases for the unstructured chunk_by_title baseline."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raychunk.chunking import Profile, chunk_document
from raychunk.chunking.baselines import run_unstructured_by_title
from raychunk.document import Block, Document, ParsedDocument
from raychunk.parse import parse_document
from raychunk.tokens import WordCounter

pytest.importorskip("unstructured")

WORDS = WordCounter(max_input=254)
_WORD = re.compile(r"\w+")


def md(src: str, name: str = "guide.md") -> ParsedDocument:
    return parse_document(src.encode(), name)


def by_title(doc: ParsedDocument, max_tokens: int = 64, overlap: float = 0, counter=WORDS):
    return chunk_document(
        doc, Profile(strategy="unstructured_by_title", max_tokens=max_tokens, overlap=overlap), counter
    )


def sentences(n: int, word: str) -> str:
    return " ".join(f"{word.capitalize()} number {i} is here." for i in range(n))


def max_chars(doc: ParsedDocument, max_tokens: int) -> int:
    """The character budget the baseline gives chunk_by_title: max_tokens at this document's ratio."""
    blocks = [b for b in doc.blocks if b.kind != "page_break"]
    ratio = sum(len(b.text) for b in blocks) / sum(WORDS.count_batch([b.text for b in blocks]))
    return round(max_tokens * ratio)


RICH = (
    "# Acme Cloud\n\nIntro to the   cloud.\n\n## Billing\n\n"
    + sentences(30, "refund")
    + "\n\n- Open the console.\n- Click *Billing*.\n\n## Plans\n\n| Plan | Seats |\n|---|---|\n| basic | 5 |\n"
    + "| pro | 50 |\n\n## Code\n\n```py\ndef f(x):\n    return x + 1\n```\n"
)


def test_each_title_starts_a_chunk_with_no_header_line():
    doc = md(
        "# Acme Cloud\n\nIntro.\n\n## Billing\n\n### Refunds\n\nRefunds take 30 days.\n\nPaid to the card.\n\n"
        "## Support\n\nEmail us.\n"
    )
    chunks = by_title(doc)
    assert [(c.heading_path, c.text) for c in chunks] == [
        (("Acme Cloud",), "Acme Cloud\n\nIntro."),
        (("Acme Cloud", "Billing"), "Billing"),
        (("Acme Cloud", "Billing", "Refunds"), "Refunds\n\nRefunds take 30 days.\n\nPaid to the card."),
        (("Acme Cloud", "Support"), "Support\n\nEmail us."),
    ]
    assert all(c.header == "" and c.header_tokens == 0 for c in chunks)
    assert [c.n_tokens for c in chunks] == WORDS.count_batch([c.text for c in chunks])
    assert [c.block_kinds for c in chunks] == [("heading", "paragraph"), ("heading",)] + [
        ("heading", "paragraph")
    ] * 2
    assert len({c.parent_id for c in chunks}) == 4
    assert [c.chunk_index for c in chunks] == [0, 1, 2, 3]
    assert all(c.strategy == "unstructured_by_title" and c.doc_type == "unknown" for c in chunks)


def test_small_sections_are_not_combined():
    # Both sections would fit one chunk many times over; combine_text_under_n_chars=0 keeps them apart.
    chunks = by_title(md("# A\n\nx.\n\n# B\n\ny.\n\n# C\n\nz.\n"), max_tokens=200)
    assert [c.text for c in chunks] == ["A\n\nx.", "B\n\ny.", "C\n\nz."]


def test_elements_in_one_section_are_packed_up_to_the_budget():
    para1, para2, para3 = sentences(3, "alpha"), sentences(3, "beta"), sentences(3, "gamma")  # 18 words
    doc = md(f"# T\n\n{para1}\n\n{para2}\n\n{para3}\n")
    chunks = by_title(doc, max_tokens=48)
    assert [c.text for c in chunks] == [f"T\n\n{para1}\n\n{para2}", para3]
    assert all(len(c.text) <= max_chars(doc, 48) for c in chunks)
    assert chunks[1].heading_path == ("T",) and chunks[1].continuation is False


def test_long_paragraph_is_split_and_its_pieces_span_their_own_parts():
    para = sentences(40, "gamma")
    doc = md(f"# T\n\n{para}\n")
    (block,) = [b for b in doc.blocks if b.kind == "paragraph"]
    chunks = by_title(doc, max_tokens=40)
    title, pieces = chunks[0], chunks[1:]
    assert title.text == "T"  # the paragraph did not fit beside its title
    assert len(pieces) > 3
    assert all(len(c.text) <= max_chars(doc, 40) for c in pieces)
    assert [c.continuation for c in pieces] == [False] + [True] * (len(pieces) - 1)
    # Each piece spans its own part of the paragraph, in order, and together they cover it.
    assert [doc.text[c.char_start : c.char_end] for c in pieces] == [c.text for c in pieces]
    assert pieces[0].char_start == block.char_start and pieces[-1].char_end == block.char_end
    assert all(a.char_end < b.char_start for a, b in zip(pieces, pieces[1:]))
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    assert all(c.overlap_tokens == 0 for c in chunks)
    # Without overlap the pieces are the paragraph, cut at spaces.
    assert " ".join(c.text for c in pieces) == para


def test_overlap_prefixes_only_pieces_of_a_split_element():
    para = sentences(40, "gamma")
    doc = md(f"# T\n\n{para}\n\n# U\n\nShort one.\n")
    chunks = by_title(doc, max_tokens=40, overlap=8)
    pieces = [c for c in chunks if c.block_kinds == ("paragraph",) and c.heading_path == ("T",)]
    assert pieces[0].overlap_tokens == 0 and chunks[-1].overlap_tokens == 0
    assert chunks[-1].text == "U\n\nShort one."
    for prev, nxt in zip(pieces, pieces[1:]):
        # The next piece starts by repeating the end of the previous one, and counts those tokens.
        repeated = max((nxt.text[:k] for k in range(1, 40) if prev.text.endswith(nxt.text[:k])), key=len)
        assert len(repeated) > 20 and nxt.text[len(repeated)] == " "
        assert nxt.overlap_tokens == WORDS.count(repeated) <= 12


def test_spans_lie_in_the_text_and_hold_the_chunk_words():
    doc = md(RICH)
    chunks = by_title(doc, max_tokens=32, overlap=6)
    assert len(chunks) > 4
    for c in chunks:
        assert 0 <= c.char_start < c.char_end <= len(doc.text)
        source = doc.text[c.char_start : c.char_end]
        for word in _WORD.findall(c.text):
            assert word in source, (word, c.text, source)


def test_same_input_same_chunks_and_ids():
    doc = md(RICH)
    a = [c.to_dict() for c in by_title(doc, max_tokens=32, overlap=6)]
    b = [c.to_dict() for c in by_title(md(RICH), max_tokens=32, overlap=6)]
    assert a == b
    assert len({c["chunk_id"] for c in a}) == len(a)
    other = [c.chunk_id for c in chunk_document(doc, Profile(max_tokens=32, overlap=6), WORDS)]
    assert not set(other) & {c["chunk_id"] for c in a}


def test_small_table_is_one_table_chunk_apart_from_prose():
    doc = md("# T\n\nBefore.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAfter.\n")
    (table,) = [b for b in doc.blocks if b.kind == "table"]
    chunks = by_title(doc, max_tokens=200)
    assert [c.text for c in chunks] == ["T\n\nBefore.", "a b 1 2", "After."]
    t = chunks[1]
    assert t.block_kinds == ("table",) and t.table_part == 0 and t.table_id
    # The chunk's text is the cells: its span runs from the first cell to the last.
    assert doc.text[t.char_start : t.char_end] == "a | b |\n|---|---|\n| 1 | 2"
    assert table.char_start < t.char_start < t.char_end < table.char_end
    assert chunks[0].table_id is None and chunks[2].table_id is None


def test_big_table_splits_by_rows_with_header_repeated():
    rows = "\n".join(f"| plan{i} | {i * 10} seats |" for i in range(30))
    doc = md(f"# Plans\n\n| Plan | Seats |\n|---|---|\n{rows}\n")
    tables = [c for c in by_title(doc, max_tokens=40) if c.table_id]
    assert len(tables) > 2
    assert len({c.table_id for c in tables}) == 1
    assert [c.table_part for c in tables] == list(range(len(tables)))
    assert [c.continuation for c in tables] == [False] + [True] * (len(tables) - 1)
    assert all(c.text.startswith("Plan Seats plan") and c.overlap_tokens == 0 for c in tables)
    seen = [w for c in tables for w in c.text.split() if w.startswith("plan")]
    assert seen == [f"plan{i}" for i in range(30)]
    assert len({c.chunk_id for c in tables}) == len(tables)


def test_pages_come_from_the_blocks():
    text = "Title\n\nOne.\n\nTwo."
    blocks = (
        Block("heading", "Title", 0, 5, level=1, pages=(1,)),
        Block("paragraph", "One.", 7, 11, ("Title",), pages=(1,)),
        Block("page_break", "", 11, 11, pages=(2,)),
        Block("paragraph", "Two.", 13, 17, ("Title",), pages=(2,)),
    )
    doc = ParsedDocument(Document("d1", "a.pdf", "pdf", "ok", pages=2), text, blocks)
    (c,) = run_unstructured_by_title(doc, Profile("unstructured_by_title", 64), WORDS, doc_type="manual")
    assert c.text == "Title\n\nOne.\n\nTwo."
    assert (c.page_start, c.page_end, c.char_start, c.char_end) == (1, 2, 0, 17)
    assert c.doc_type == "manual"


def test_over_limit_against_the_embedder_input():
    doc = md(f"# T\n\n{sentences(8, 'delta')}\n")
    chunks = by_title(doc, max_tokens=200, counter=WordCounter(max_input=20))
    assert [c.over_limit for c in chunks] == [True]


def test_huge_element_without_orig_elements_keeps_its_block(monkeypatch):
    # unstructured leaves orig_elements off pieces of an element over 1M characters.
    import unstructured.chunking.base as base

    monkeypatch.setattr(base, "SPLIT_ORIG_ELEMENTS_MAX_CHARS", 10)
    doc = md(f"# T\n\n{sentences(30, 'omega')}\n\nAfter it.\n")
    (para, after) = [b for b in doc.blocks if b.kind == "paragraph"]
    chunks = by_title(doc, max_tokens=40)
    assert chunks[-1].text == "After it."
    assert (chunks[-1].char_start, chunks[-1].char_end) == (after.char_start, after.char_end)
    pieces = chunks[1:-1]
    assert [doc.text[c.char_start : c.char_end] for c in pieces] == [c.text for c in pieces]
    assert pieces[0].char_start == para.char_start and pieces[-1].char_end == para.char_end


@pytest.mark.parametrize(
    "blocks",
    [
        (),
        (Block("page_break", "", 0, 0),),
        (Block("paragraph", "  \n ", 0, 4), Block("heading", "", 4, 4)),
    ],
)
def test_documents_without_text_give_no_chunks(blocks):
    doc = ParsedDocument(Document("d", "x.txt", "text", "ok"), "    ", blocks)
    assert run_unstructured_by_title(doc, Profile("unstructured_by_title"), WORDS, doc_type="prose") == []


def test_failed_document_gives_no_chunks():
    doc = ParsedDocument(Document("d", "x.pdf", "pdf", "failed", reason="bad"), "", ())
    assert by_title(doc) == []


_KINDS = ("heading", "paragraph", "list_item", "table", "code", "record", "page_break")


@st.composite
def odd_document(draw):
    parts, blocks, pos = [], [], 0
    for kind, text in draw(
        st.lists(st.tuples(st.sampled_from(_KINDS), st.text(max_size=60)), min_size=1, max_size=8)
    ):
        rows = (tuple(text.split(" ")[:3]),) if kind == "table" else ()
        blocks.append(Block(kind, text, pos, pos + len(text), rows=rows, header_rows=int(bool(rows))))
        parts.append(text)
        pos += len(text) + 2
    return ParsedDocument(Document("d", "odd.md", "markdown", "ok"), "\n\n".join(parts), tuple(blocks))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(odd_document(), st.sampled_from([16, 24, 64]), st.sampled_from([0, 0.25]))
def test_odd_input_never_raises(doc, max_tokens, overlap):
    chunks = by_title(doc, max_tokens=max_tokens, overlap=overlap)
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    for c in chunks:
        assert c.text and 0 <= c.char_start <= c.char_end <= len(doc.text)
