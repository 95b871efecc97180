"""The cost model's arithmetic, sampling and incremental comparison."""

import math

import pytest

from raychunk.chunking import Profile
from raychunk.document import Block, Document, ParsedDocument, content_hash
from raychunk.pricing import (
    IndexSpec,
    Rates,
    Setting,
    grid,
    in_sample,
    index_bytes,
    measure_document,
    summarize,
    vector_bytes,
)
from raychunk.tokens import WordCounter

WORDS = WordCounter()


def fixed_chunk_count(tokens: int, max_tokens: int, overlap_tokens: int, header_tokens: int = 0) -> int:
    """Closed form of the ``fixed`` strategy on structureless text: windows of ``max_tokens`` minus
    the header line, each repeating ``overlap_tokens`` of the one before."""
    budget = max_tokens - header_tokens
    if tokens <= 0:
        return 0
    if tokens <= budget:
        return 1
    return 1 + math.ceil((tokens - budget) / (budget - overlap_tokens))


def structureless(n_tokens: int, source: str, title: str | None = None) -> ParsedDocument:
    """One paragraph of ``n_tokens`` words with no sentence ends: text with no structure at all."""
    text = " ".join(f"w{i % 97}" for i in range(n_tokens))
    doc = Document(
        content_hash(source.encode() + text.encode()),
        source,
        "text",
        "ok",
        bytes=len(text),
        title=title if title is not None else source,
    )
    return ParsedDocument(doc, text, (Block("paragraph", text, 0, len(text)),))


@pytest.mark.parametrize("size", [32, 64, 100])
@pytest.mark.parametrize("overlap", [0, 0.1, 0.25])
def test_fixed_strategy_matches_closed_form(size, overlap):
    settings = grid([size], [overlap], ["fixed"])
    docs = [structureless(t, f"doc{t}.txt") for t in (10, 31, 250, 999, 1500)]
    for parsed in docs:
        (row,) = measure_document(parsed, "transcript", settings, {}, WORDS)
        header = WORDS.count(parsed.document.title)
        expected = fixed_chunk_count(
            len(parsed.text.split()), size, settings[0].profile.overlap_tokens, header
        )
        assert row["chunks"] == expected, (parsed.document.source, size, overlap)
        assert row["overlap_tokens"] == max(0, expected - 1) * settings[0].profile.overlap_tokens
    rows = [r for p in docs for r in measure_document(p, "transcript", settings, {}, WORDS)]
    report = summarize(
        rows,
        settings,
        dim=384,
        dtype="float32",
        index=IndexSpec(),
        corpus_files=5,
        corpus_bytes=sum(p.document.bytes for p in docs),
        sample=1.0,
        rates=Rates(),
    )
    (s,) = report["settings"]
    assert s["vector_bytes"] == s["vectors"] * 384 * 4 == s["index_bytes"]
    assert s["total_bytes"] == s["vector_bytes"] + s["text_bytes"]


def test_seed_003_example():
    """10,000 documents of 2,000 tokens, 10% overlap, 1,024-dim float32 vectors (4,096 bytes each)."""
    expected = {200: 110_000, 400: 60_000, 1000: 30_000}
    for size, chunks in expected.items():
        per_doc = fixed_chunk_count(2000, size, round(0.1 * size))
        assert per_doc * 10_000 == chunks
        assert vector_bytes(chunks, 1024, "float32") == chunks * 4096
    assert vector_bytes(60_000, 1024, "float32") == 245_760_000
    # The same counts from the real chunker (no title, so no header line), scaled to 10,000 documents.
    for size, chunks in expected.items():
        settings = grid([size], [0.1], ["fixed"])
        per_doc = [
            measure_document(structureless(2000, "", title=""), "prose", settings, {}, WORDS)[0]["chunks"]
        ]
        assert per_doc[0] * 10_000 == chunks
    # "Ten percent overlap means about eleven percent more vectors."
    no_overlap = fixed_chunk_count(2000, 400, 0)
    assert 1.1 <= 2000 / (0.9 * 400) / (2000 / 400) <= 1.12 and no_overlap == 5


def test_dtype_and_hnsw_bytes():
    assert vector_bytes(10, 384, "float16") == 10 * 768
    assert vector_bytes(10, 384, "int8") == 10 * 384
    assert vector_bytes(10, 384, "binary") == 10 * 48
    hnsw = IndexSpec.parse("hnsw:M=16")
    assert (hnsw.kind, hnsw.m) == ("hnsw", 16)
    assert index_bytes(1000, 384, "float32", hnsw) == pytest.approx(1000 * 1536 + 1000 * 4 * (32 + 16 / 15))
    assert IndexSpec.parse("hnsw").m == 16
    with pytest.raises(ValueError, match="accepted values are flat, hnsw"):
        IndexSpec.parse("ivf")


def test_sample_is_deterministic_and_hash_based():
    names = [f"s3://bucket/doc-{i}.md" for i in range(2000)]
    a = [n for n in names if in_sample(n, 0.1)]
    assert a == [n for n in names if in_sample(n, 0.1)]
    assert 150 < len(a) < 250
    assert set(n for n in names if in_sample(n, 0.05)) <= set(a)  # nested: a smaller sample is a subset


def test_sampled_estimate_scales_and_brackets_the_truth():
    docs = [structureless(50 + (i * 37) % 900, f"doc-{i}.txt") for i in range(300)]
    settings = [Setting("fixed 128", Profile(strategy="fixed", max_tokens=128))]
    rows = [r for p in docs for r in measure_document(p, "prose", settings, {}, WORDS)]
    truth = sum(r["chunks"] for r in rows)
    total_bytes = sum(p.document.bytes for p in docs)
    sampled = [r for r in rows if in_sample(r["source"], 0.2)]
    report = summarize(
        sampled,
        settings,
        dim=8,
        dtype="float32",
        index=IndexSpec(),
        corpus_files=300,
        corpus_bytes=total_bytes,
        sample=0.2,
        rates=Rates(),
    )
    s = report["settings"][0]
    assert report["estimate"] and s["documents"] == 300
    low, high = s["interval_95"]["vectors"]
    assert low <= truth <= high
    assert abs(s["vectors"] - truth) / truth < 0.15


def test_delta_against_previous_ids():
    parsed = structureless(1000, "a.txt")
    settings = [Setting("fixed 100", Profile(strategy="fixed", max_tokens=100))]
    (row,) = measure_document(parsed, "prose", settings, {}, WORDS, keep_ids=True)
    ids = [(c["chunk_id"], c["n_tokens"]) for c in row["chunk_ids"]]
    previous = {cid: n for cid, n in ids[:-2]}
    previous["gone"] = 50
    report = summarize(
        [row],
        settings,
        dim=8,
        dtype="float32",
        index=IndexSpec(),
        corpus_files=1,
        corpus_bytes=parsed.document.bytes,
        sample=1.0,
        previous=previous,
        rates=Rates(tokens_per_second=100.0, gpu_hour_usd=3.6),
    )
    d = report["settings"][0]["delta"]
    assert (d["unchanged"], d["new"], d["removed"]) == (len(ids) - 2, 2, 1)
    assert d["tokens_to_embed"] == sum(n for _, n in ids[-2:])
    assert d["embed_seconds"] == pytest.approx(d["tokens_to_embed"] / 100)
    assert d["embed_usd"] == pytest.approx(d["embed_seconds"] / 3600 * 3.6)


def test_money_only_when_prices_are_given():
    parsed = structureless(300, "a.txt")
    settings = grid([64], [0], ["fixed"])
    rows = measure_document(parsed, "prose", settings, {}, WORDS)
    plain = summarize(
        rows,
        settings,
        dim=8,
        dtype="float32",
        index=IndexSpec(),
        corpus_files=1,
        corpus_bytes=1,
        sample=1.0,
        rates=Rates(),
    )["settings"][0]
    assert not any(k.endswith("usd") or k.endswith("usd_month") for k in plain)
    priced = summarize(
        rows,
        settings,
        dim=8,
        dtype="float32",
        index=IndexSpec(),
        corpus_files=1,
        corpus_bytes=1,
        sample=1.0,
        rates=Rates(storage_gb_month_usd=0.02, api_usd_per_1m_tokens=0.1),
    )["settings"][0]
    assert priced["api_usd"] == pytest.approx(priced["tokens"] / 1e6 * 0.1)
    assert priced["storage_usd_month"] == pytest.approx(priced["total_bytes"] / 1e9 * 0.02)
    assert math.isclose(priced["tokens_mean"], priced["tokens"] / priced["chunks"])


def test_a_grid_table_cap_applies_to_structure_only_and_names_it():
    from raychunk.pricing import grid

    settings = grid([250], [0], ["structure", "fixed"], table_max_tokens=128)
    assert [s.label for s in settings] == ["structure 250 o0 t128", "fixed 250 o0"]
    assert [s.profile.table_cap for s in settings] == [128, 250]
    assert [s.label for s in grid([250], [0], ["structure"])] == ["structure 250 o0"]
