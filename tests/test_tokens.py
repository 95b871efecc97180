import random
from pathlib import Path

import pytest

from raychunk.chunking import Profile, chunk_document
from raychunk.parse import parse_document
from raychunk.tokens import CachedCounter, WordCounter, load_counter, new_counter

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"  # beside the repo


def test_embedder_tokenizer_is_the_default_and_offline():
    c = load_counter()
    assert c.max_input == 254  # all-MiniLM-L6-v2 reads 256 word pieces, two of them special
    assert c.count("Acme Cloud > Billing") == 5  # ac ##me cloud > billing
    assert c.count_batch(["hello world", ""]) == [2, 0]


def test_tiktoken_cl100k_ships_offline():
    c = load_counter("tiktoken:cl100k_base")
    assert c.count("hello world") == 2
    assert c.max_input is None
    text = "word " * 50
    cuts = c.cut_points(text, 10)
    assert cuts and all(0 < x < len(text) for x in cuts)


def test_unknown_tiktoken_encoding_says_how_to_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(ValueError, match="TIKTOKEN_CACHE_DIR"):
        new_counter("tiktoken:o200k_base")


def test_cached_counter_tokenizes_each_text_once():
    inner = WordCounter()
    calls = []
    original = inner.count_batch
    inner.count_batch = lambda texts: calls.append(list(texts)) or original(texts)
    cached = CachedCounter(inner)
    doc = parse_document(
        b"# T\n\n" + b"\n\n".join(b"Para %d has words. More words here." % i for i in range(20)), "a.md"
    )
    for size in (32, 64, 128):
        chunk_document(doc, Profile(max_tokens=size), cached)
    first = len(calls)
    for size in (32, 64, 128):
        chunk_document(doc, Profile(max_tokens=size), cached)
    assert len(calls) == first  # a second grid pass tokenizes nothing
    assert all(len(batch) == len(set(batch)) for batch in calls)


def test_short_texts_tokenized_as_one_count_and_cut_as_each_alone():
    """An additive tokenizer's short texts, counted together, are tokenized as one text joined by
    line breaks: each text's count and kept offsets are what it gets alone."""
    inner = load_counter("all-MiniLM-L6-v2")
    rng = random.Random(28)
    alphabet = list("ab XY é\u0301 中文 ß İ ﬁ 😀 \t\n\r\x00\ufffd.,;:!?-_'\"()|#*` 12 ")
    alphabet += ["x" * 120, "Привет", "नमस्ते", "   ", "\u200b", "\u00ad", "don't", "e.g."]
    alphabet += ["\x0c", "\x85"]  # a text with one is not plain (counted from its words): it takes this path
    for _ in range(300):
        texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(6)]
        cached = CachedCounter(inner)
        assert cached.count_batch(texts) == inner.count_batch(texts)
        for t in set(texts):
            kept = cached.memo.get(("offsets", t))
            if kept is not None:
                alone = inner.token_offsets(t)
                assert (list(kept.starts), list(kept.ends), kept.bounds) == (
                    list(alone.starts),
                    list(alone.ends),
                    alone.bounds,
                )


def test_bpe_counts_of_short_texts_remembered_across_documents_are_exact(monkeypatch):
    """A BPE counter remembers short texts' counts across documents (a bounded number): a count it
    gives again is what the encoding says of the text, a long text is always encoded, and
    ``forget`` starts it cold."""
    import raychunk.tokens as tokens

    counter = new_counter("tiktoken:cl100k_base")
    enc = counter._enc
    rng = random.Random(7)
    alphabet = list("ab XY é\u0301 中文 ß 😀 \t\n\r.,;:!?-_'\"()|#*` 12 >") + ["\n\n", " >", "x" * 40]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(400)]
    first = counter.count_batch(texts)
    again = counter.count_batch(list(reversed(texts)))[::-1]
    assert first == again == [len(enc.encode_ordinary(t)) for t in texts]
    assert counter._short and all(len(t) <= tokens._SHORT for t in counter._short)
    monkeypatch.setattr(tokens, "_SHORT_KEPT", 10)
    counter.forget()
    assert not counter._short
    assert counter.count_batch(texts) == first
    assert len(counter._short) == 10  # bounded: the rest counted, not kept


@pytest.mark.parametrize(
    "spec, generic",
    [
        ("all-MiniLM-L6-v2", False),
        ("tiktoken:cl100k_base", False),
        ("words", False),
        ("tiktoken:cl100k_base", True),
    ],
)
def test_a_long_text_counts_window_by_window_as_it_does_whole(spec, generic):
    """A text over the window is tokenized in windows cut where the tokenizer never joins two
    characters into one token: the counts, and (word pieces, words) the tokens inside any span, are
    those of the whole text. A tokenizer without such cuts (``generic``) is cut where whitespace
    starts, and the words either side of each cut are counted again together. Windows of 40
    characters, on text made to break them."""
    counter = new_counter(spec)  # an instance of its own: its window is made tiny
    if generic:
        counter.window_cut = None
    rng = random.Random(7)
    alphabet = [
        *"abcdefghXY0123456789",
        *" " * 6,
        *".,;:!?'\"()-_/\\\n\t+=",
        "é",
        "ß",
        "中",
        "\u0301",
        "\r\n",
    ]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 1500))) for _ in range(150)]
    counter.window = 10**9
    whole = counter.count_batch(texts)
    whole_offsets = [counter.token_offsets(t) for t in texts]
    counter.window = 40
    assert counter.count_batch(texts) == whole
    assert CachedCounter(counter).count_batch(texts) == whole
    if not counter.additive:
        return
    cached = CachedCounter(counter)
    cached.count_batch(texts)
    for t, ref in zip(texts, whole_offsets):
        offsets = counter.token_offsets(t)
        assert len(offsets.origins) > 1 or len(t) <= 40
        spans = sorted(tuple(sorted((rng.randint(0, len(t)), rng.randint(0, len(t))))) for _ in range(40))
        expected = [ref.count(s, e) for s, e in spans]
        assert offsets.counts(spans) == expected  # in order, as lists
        assert offsets.counts(spans[:5]) == expected[:5]  # few, searched as arrays
        assert [offsets.count(s, e) for s, e in reversed(spans)] == expected[::-1]
        assert cached.span_counts(t, spans) == expected


@pytest.mark.parametrize("spec", ["all-MiniLM-L6-v2", "words"])
def test_offsets_of_a_window_too_long_for_two_bytes(spec):
    """A run with nowhere to cut makes a window over 65535 characters: its offsets take four bytes
    each (the others two), and every count stays that of the whole text."""
    counter = new_counter(spec)
    text = "ab cd, " * 8000 + "x" * 70_000 + " cd.e" * 20_000 + "y" * 66_000
    offsets = counter.token_offsets(text)
    counter.window = 10**9
    whole = counter.token_offsets(text)
    assert len(offsets.origins) > 2
    assert {s.typecode for s in offsets.starts} == {"H", "I"} and whole.starts.typecode == "I"
    rng = random.Random(1)
    spans = sorted(tuple(sorted((rng.randint(0, len(text)), rng.randint(0, len(text))))) for _ in range(300))
    assert offsets.counts(spans) == whole.counts(spans) == [whole.count(s, e) for s, e in spans]
    assert len(offsets) == len(whole) == counter.count(text)


def test_a_process_has_one_counter_per_spec_however_it_is_asked_for():
    """What the chunk step asks for (``load_counter(spec, model_dir)``) is what a caller that
    leaves ``model_dir`` out gets: ``forget()`` on one empties the other."""
    spec = "tiktoken:cl100k_base"
    assert load_counter(spec) is load_counter(spec, None) is load_counter(spec=spec, model_dir=None)
    assert new_counter(spec) is not load_counter(spec)


def test_word_piece_counts_of_plain_texts_are_the_tokenizer_s(monkeypatch):
    """A word-piece counter counts a plain text as the sum of its words' counts, each word counted
    once and remembered: the same count as the tokenizer gives the whole text, through BERT's
    normalizer (accents, CJK, control and zero-width characters, Unicode spaces, words over 100
    characters, special tokens in the text). A text with a character that Python splits at and BERT
    drops is not plain (None), and is counted whole."""
    import raychunk.tokens as tokens

    counter = new_counter("all-MiniLM-L6-v2")
    rng = random.Random(25)
    alphabet = list("ab XY é\u0301 中文 ß İ ﬁ 😀 \t\n\r\x00\x01\x7f\ufffd.,;:!?-_'\"()|#*` 12 ")
    alphabet += [
        "\xa0",
        "\u3000",
        "\u2028",
        "\u200b",
        "\u00ad",
        "x" * 120,
        "Привет",
        "नमस्ते",
        "[SEP]",
        "[UNK]",
    ]
    alphabet += ["don't", "e.g.", "ﬀ", "Ǆ", "ẞ", "\u0130stanbul"]
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(600)]
    truth = [len(e.ids) for e in counter._encodings(texts)]
    plain = counter.plain_counts(texts)
    assert [n for n in plain if n is not None] == [n for n, p in zip(truth, plain) if p is not None]
    assert sum(n is not None for n in plain) == len(texts)
    assert counter.plain_counts(texts) == plain  # again, from the remembered words
    assert counter._words and all(len(w) <= tokens._WORD_CHARS for w in counter._words)
    for odd in ("a\x1cb", "a\x85b", "a\x0bb", "a\x0cb"):
        assert counter.plain_counts([odd]) == [None]
        assert CachedCounter(counter).count(odd) == len(
            counter._tok.encode(odd, add_special_tokens=False).ids
        )
    monkeypatch.setattr(tokens, "_WORDS_KEPT", 0)
    counter.forget()
    assert not counter._words
    assert counter.plain_counts(texts) == plain and not counter._words  # counted, not kept


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not checked out next to the repo")
def test_word_piece_counts_of_corpus_blocks_are_the_tokenizer_s():
    """Every block of the corpus's md, html and txt pages (and the two-block joins of each page's
    first blocks), a Chinese page's among them, counts the same from its words as tokenized whole."""
    counter = new_counter("all-MiniLM-L6-v2")
    corpus = CORPUS
    texts = []
    for folder in ("md", "html", "txt"):
        paths = sorted((corpus / folder).iterdir())
        for path in paths[:8] + [p for p in paths if "zh-Hans" in p.name]:  # CJK runs, one word a character
            blocks = [b.text for b in parse_document(path.read_bytes(), str(path)).blocks]
            texts += blocks + ["\n\n".join(blocks[k : k + 2]) for k in range(min(40, len(blocks)))]
    truth = counter.count_batch(texts)
    assert CachedCounter(counter).count_batch(texts) == truth
    assert sum(n is not None for n in counter.plain_counts(texts)) > 0.9 * len(texts) > 1000
