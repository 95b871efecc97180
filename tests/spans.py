"""Assertions shared by the parser tests."""

from raychunk.document import BLOCK_KINDS, ParsedDocument
from raychunk.parse._common import clean_text


def assert_spans_match(parsed: ParsedDocument, *, exact: bool = True) -> None:
    """Every block's span lies in the document text; for text formats its text is that slice."""
    text = parsed.text
    for b in parsed.blocks:
        assert b.kind in BLOCK_KINDS
        assert 0 <= b.char_start <= b.char_end <= len(text), b
        if b.kind in ("page_break", "table", "record"):
            continue
        source = clean_text(text[b.char_start : b.char_end])
        if exact:
            assert b.text == source, (b.text, source)
        else:
            for line in b.text.split("\n"):
                assert line.strip() in source, (line, source)


def kinds(parsed: ParsedDocument) -> list[tuple[str, str]]:
    return [(b.kind, b.text) for b in parsed.blocks]
