"""Assertions shared by the parser tests."""

from raychunk.document import BLOCK_KINDS, ParsedDocument
from raychunk.parse._common import clean_text


def assert_spans_match(
    parsed: ParsedDocument,
    *,
    exact: bool = True,
    rendered: tuple[str, ...] = ("page_break", "table", "record"),
) -> None:
    """Every block's span lies in the document text; for text formats its text is that slice, but
    for the ``rendered`` kinds (a table's pipe rendering of source markup; a converted document's
    text is its blocks' own, so only its page breaks)."""
    text = parsed.text
    for b in parsed.blocks:
        assert b.kind in BLOCK_KINDS
        assert 0 <= b.char_start <= b.char_end <= len(text), b
        if b.kind in rendered:
            continue
        source = clean_text(text[b.char_start : b.char_end])
        if exact:
            assert b.text == source, (b.text, source)
        else:
            for line in b.text.split("\n"):
                assert line.strip() in source, (line, source)


def kinds(parsed: ParsedDocument) -> list[tuple[str, str]]:
    return [(b.kind, b.text) for b in parsed.blocks]


def chunks_holding_their_spans(
    parsed: ParsedDocument, max_tokens: int, strategies=("structure", "fixed")
) -> list[int]:
    """Chunk ``parsed`` under each strategy at ``max_tokens`` whitespace words and assert that every
    chunk holds its span as ``raychunk eval`` checks it; the chunk count of each strategy."""
    from raychunk.chunking import Profile, chunk_document
    from raychunk.evaluation.spans import check_chunk
    from raychunk.tokens import load_counter

    counts = []
    for strategy in strategies:
        chunks = chunk_document(
            parsed, Profile(strategy=strategy, max_tokens=max_tokens), counter=load_counter("words")
        )
        for c in chunks:
            why = check_chunk(parsed.text, c.to_dict())
            assert why is None, (strategy, c.text[:80], why)
        counts.append(len(chunks))
    return counts
