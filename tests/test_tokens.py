import pytest

from raychunk.chunking import Profile, chunk_document
from raychunk.parse import parse_document
from raychunk.tokens import CachedCounter, WordCounter, load_counter


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
        load_counter.__wrapped__("tiktoken:o200k_base")


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
