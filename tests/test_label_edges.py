"""A quote copied with the markup around its words (a list item's ``* ``, a table row's ``| ``) is
scored as its words: it lies inside the structure chunk that holds the item or the row."""

from raychunk.chunking import Profile, chunk_document
from raychunk.evaluation.labels import LabelledQuery, resolve_queries, trim_markup
from raychunk.evaluation.partials import inside_one_chunk
from raychunk.parse import parse_document
from raychunk.tokens import load_counter

DOC = b"""# Samplers

## AlwaysOn

* Returns `RECORD_AND_SAMPLE` always.
* Description MUST be `AlwaysOnSampler`.

## Limits

| Name | Default |
|---|---|
| OTEL_SPAN_LINK_COUNT_LIMIT | 128 |
| OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT | 128 |
"""


def test_marker_and_pipe_quotes_lie_inside_one_chunk():
    parsed = parse_document(DOC, "limits.md")
    quotes = ["* Returns `RECORD_AND_SAMPLE` always.", "| OTEL_SPAN_LINK_COUNT_LIMIT | 128 |"]
    queries = [LabelledQuery(f"q{i}", "?", "limits.md", ({"quote": q},)) for i, q in enumerate(quotes)]
    resolved = resolve_queries(queries, {parsed.document.source: parsed.text})
    texts = [parsed.text[p.start : p.end] for q in resolved for p in q.passages]
    assert texts == ["Returns `RECORD_AND_SAMPLE` always.", "OTEL_SPAN_LINK_COUNT_LIMIT | 128"]
    chunks = chunk_document(parsed, Profile(max_tokens=64), load_counter("all-MiniLM-L6-v2"))
    spans = [{"char_start": c.char_start, "char_end": c.char_end} for c in chunks]
    labelled = [(i, [[p.start, p.end] for p in q.passages]) for i, q in enumerate(resolved)]
    assert inside_one_chunk(spans, labelled) == [0, 1]
    # the item's line, marker included, is not inside any chunk's span: its chunk starts at the words
    at = parsed.text.index(quotes[0])
    assert inside_one_chunk(spans, [(0, [[at, at + len(quotes[0])]])]) == []


def test_markup_alone_and_inner_markup_are_kept():
    text = "a | b\n- x\n|"
    assert trim_markup(text, 0, 5) == (0, 5)  # a pipe between words stays
    assert trim_markup(text, 10, 11) == (10, 11)  # nothing but markup: kept whole
    assert trim_markup("-53 MUST", 0, 8) == (0, 8)  # a minus sign is no list marker
