"""The packing rules kept by tuning on ``evals/corpus.jsonl`` (``scripts/tune.py``; figures in
``evals/README.md``), on snippets of the corpus's own documents."""

from raychunk.chunking import Profile, chunk_document
from raychunk.parse import parse_document
from raychunk.tokens import WordCounter

WORDS = WordCounter(max_input=254)

# The end of the Vostok 1 air-to-ground transcript (``txt/vostok1-en.txt``), as the file has it.
VOSTOK_END = """\
_comment: at this point radio coverage passes from Khabarovsk to Moscow.



[00:01:06:00]
Vesna (Horoshylov): Do you read me?

Cedar: I hear you well. Flight goes - well - -




[00:01:09:00]
Vesna (Horoshylov): Flight goes well.

_comment: (no reply).




[00:01:11:00]
Vesna (Horoshylov): Major Gagarin, your flight goes well.

_comment: (no reply).


[00:01:18:00]
_note: automatic systems bring the spacecraft into re-entry attitude

[00:01:28:00]
_note: actual re-entry, post retro burn

[00:01:48:00]
_note: Gagarin ejects

[00:01:58:00]
_note: Gagarin lands
"""


def body(chunk) -> str:
    return chunk.text[len(chunk.header) + 2 :] if chunk.header else chunk.text


def test_a_sections_last_turn_is_not_left_as_a_chunk_of_its_own():
    doc = parse_document(VOSTOK_END.encode(), "vostok1-en.txt")
    profile = Profile(max_tokens=88)
    chunks = chunk_document(doc, profile, WORDS)
    bodies = [body(c) for c in chunks]
    budget = profile.max_tokens - chunks[0].header_tokens
    # Greedy packing filled the second chunk to 82 words and left "[00:01:58:00] _note: Gagarin
    # lands" (5 words) alone; the last turns before it move down until the two are even.
    assert len(chunks) == 3
    assert bodies[-1].startswith("[00:01:28:00]") and bodies[-1].endswith("Gagarin lands")
    assert bodies[1].endswith("re-entry attitude")
    assert WORDS.count(bodies[-1]) * 4 >= budget
    assert all(c.n_tokens <= profile.max_tokens for c in chunks)
    # Every turn is still in exactly one chunk, in order, and each span holds its own turns.
    assert "\n\n".join(bodies).count("[00:01:") == VOSTOK_END.count("[00:01:")
    assert [c.char_start for c in chunks] == sorted(c.char_start for c in chunks)
    assert doc.text[chunks[-1].char_start : chunks[-1].char_end].startswith("[00:01:28:00]")


def test_a_tail_over_a_quarter_of_the_budget_is_left_as_packed():
    doc = parse_document(VOSTOK_END.encode(), "vostok1-en.txt")
    chunks = chunk_document(doc, Profile(max_tokens=128), WORDS)
    assert [body(c).split("\n", 1)[0] for c in chunks] == [
        "_comment: at this point radio coverage passes from Khabarovsk to Moscow.",
        "[00:01:28:00]",
    ]
