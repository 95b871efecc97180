"""Sentence boundaries as offsets, for splitting a block that is over the size cap.

>>> text = "Dr. Smith went home. It rained! Then: nothing?"
>>> [text[s:e] for s, e in sentence_spans(text)]
['Dr. Smith went home.', 'It rained!', 'Then: nothing?']
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from raychunk.render import trimmed

__all__ = ["iter_sentence_spans", "sentence_spans"]

# A sentence ends at . ! ? … (plus closing quotes/brackets) before whitespace and an upper-case
# letter, digit, quote or bracket; or at a line break followed by a speaker turn or a bullet.
_END = re.compile(
    r"""(?:[.!?…]["'”’)\]]*)(\s+)(?=["'“‘(\[]?[A-Z0-9\u00c0-\u024f\u0400-\u04ff])|(\n)(?=\s*(?:[-*•]|\w[\w .'()-]{0,40}:)\s)"""
)
_ABBREV = re.compile(
    r"(?:\b(?:Dr|Mr|Mrs|Ms|Prof|St|vs|etc|e\.g|i\.e|Fig|No|Vol|pp|cf|Inc|Ltd|Jr|Sr)|\b[A-Z])\.$"
)


# A list item's number at the start of a line ("4. Generate..."): it opens the item's sentence.
_MARKER = re.compile(r"(?:^|\n)[ \t]*(?:\d{1,9}|[A-Za-z]|[ivxlcdm]{2,7}|[IVXLCDM]{2,7})[.)]$")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence, whitespace trimmed; together they cover every non-space char."""
    return list(iter_sentence_spans(text))


def iter_sentence_spans(text: str) -> Iterator[tuple[int, int]]:
    """``sentence_spans``, one at a time."""
    start = 0
    for m in _END.finditer(text):
        cut = m.start(1) if m.group(1) is not None else m.start(2)
        if text[cut - 1] == "." and _ABBREV.search(text, max(0, cut - 6), cut):
            continue
        if text[cut - 1] in ".)" and _MARKER.search(text, max(0, start - 1), cut):
            continue
        yield from trimmed(text, start, cut)
        start = m.end()
    yield from trimmed(text, start, len(text))
