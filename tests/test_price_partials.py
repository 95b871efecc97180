"""Per-block price partials: merged in any grouping and order, they give the one-shot report."""

import random
from functools import reduce

import pytest

from raychunk.chunking import Profile
from raychunk.document import Document, ParsedDocument
from raychunk.merge import compare_ids
from raychunk.pricing import (
    BOOTSTRAP_ROUNDS,
    IndexSpec,
    PricePartial,
    Rates,
    Setting,
    grid,
    measure_document,
    partial_from_rows,
    poisson_weights,
    summarize,
    summarize_partial,
)
from raychunk.tokens import WordCounter
from tests.test_pricing import structureless

WORDS = WordCounter()
SETTINGS = grid([64, 128], [0, 0.2], ["fixed"])
ARGS = {"dim": 384, "dtype": "float32", "index": IndexSpec.parse("hnsw:M=16"), "rates": Rates()}


def copy_of(parsed: ParsedDocument, source: str) -> ParsedDocument:
    """A byte-identical copy, as the parse stage marks it: same doc_id, status ``duplicate``."""
    d = parsed.document
    return ParsedDocument(Document(d.doc_id, source, d.format, "duplicate", bytes=d.bytes))


def corpus_rows(n: int = 60, keep_ids: bool = False) -> tuple[list[dict], dict[str, str]]:
    """Rows of ``n`` documents of two types, three of them with copies (one with two), and the
    ``{duplicate source: kept source}`` map ``find_duplicates`` would give."""
    docs = [structureless(20 + (i * 53) % 700, f"doc-{i:03d}.txt") for i in range(n)]
    copies = {"copy-a.txt": docs[1], "copy-b.txt": docs[1], "copy-c.txt": docs[2], "copy-d.txt": docs[4]}
    rows = []
    for i, p in enumerate(docs):
        rows += measure_document(
            p, "prose" if i % 3 else "transcript", SETTINGS, {}, WORDS, keep_ids=keep_ids
        )
    for source, kept in copies.items():
        rows += measure_document(copy_of(kept, source), "", SETTINGS, {}, WORDS, keep_ids=keep_ids)
    return rows, {source: kept.document.source for source, kept in copies.items()}


def blocks_of(rows: list[dict], rng: random.Random) -> list[list[dict]]:
    """The rows shuffled and cut into blocks of random sizes (a document's settings may be split)."""
    rows = rows[:]
    rng.shuffle(rows)
    cuts = sorted(rng.sample(range(1, len(rows)), 7))
    return [rows[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)])]


def old_duplicates_saved(rows: list[dict], label: str) -> dict:
    """The driver-side computation the partials replace: every kept document's tokens in one dict."""
    docs = [r for r in rows if r["setting"] == label]
    kept_tokens = {r["doc_id"]: r["tokens"] for r in docs if r["status"] != "duplicate"}
    copies = [r for r in docs if r["status"] == "duplicate"]
    return {
        "duplicates": len(copies),
        "tokens_saved": sum(kept_tokens.get(r["doc_id"], 0) for r in copies),
    }


@pytest.mark.parametrize("sample", [1.0, 0.3])
def test_merged_block_partials_equal_the_one_shot_report(sample):
    rows, duplicates = corpus_rows()
    kept = frozenset(duplicates.values())
    rounds = BOOTSTRAP_ROUNDS if sample < 1 else 0
    corpus = {
        "corpus_files": 200,
        "corpus_bytes": 10 * sum(r["bytes"] for r in rows if r["setting"] == "fixed 64 o0"),
    }
    one_shot = summarize(rows, SETTINGS, sample=sample, **corpus, **ARGS)
    rng = random.Random(7)
    for trial in range(3):
        parts = [partial_from_rows(b, kept_sources=kept, rounds=rounds) for b in blocks_of(rows, rng)]
        shuffled = rng.sample(parts, len(parts))
        orders = {
            "left": reduce(lambda a, b: a + b, parts, PricePartial()),
            "right": reduce(lambda a, b: b + a, reversed(parts), PricePartial()),
            "shuffled": sum(shuffled, PricePartial()),
            "tree": sum(shuffled[:3], PricePartial()) + sum(shuffled[3:], PricePartial()),
        }
        for name, merged in orders.items():
            report = summarize_partial(merged, SETTINGS, sample=sample, **corpus, **ARGS)
            assert report == one_shot, (trial, name)
    s = one_shot["settings"][0]
    assert s["duplicates"] == (4 if sample == 1 else 40) and s["tokens_saved"] > 0  # scaled x10 when sampled
    assert set(s["by_type"]) == {"duplicate", "prose", "transcript"}
    assert one_shot["sampled_documents"] == 64 and one_shot["duplicates"] == 4


def test_a_partial_is_sized_by_settings_and_duplicates_not_documents():
    small, dups = corpus_rows(30)
    large, _ = corpus_rows(300)
    kept = frozenset(dups.values())
    a = partial_from_rows(small, kept_sources=kept)
    b = partial_from_rows(large, kept_sources=kept)
    for field in ("totals", "by_type", "copies", "kept"):
        assert len(getattr(a, field)) == len(getattr(b, field)), field
    assert len(b.kept) == 3 * len(SETTINGS)  # the three kept documents that have copies, per setting


def test_duplicate_savings_equal_the_driver_side_computation():
    rows, duplicates = corpus_rows()
    # Each block sees only some rows: a kept copy and its duplicates may lie in different blocks.
    blocks = blocks_of(rows, random.Random(1))
    merged = sum(
        (partial_from_rows(b, kept_sources=frozenset(duplicates.values())) for b in blocks), PricePartial()
    )
    report = summarize_partial(merged, SETTINGS, sample=1.0, corpus_files=64, corpus_bytes=1, **ARGS)
    for s in report["settings"]:
        expected = old_duplicates_saved(rows, s["setting"])
        assert {k: s[k] for k in expected} == expected
        assert expected["tokens_saved"] > 0


def test_sampled_intervals_bracket_the_estimate_and_are_deterministic():
    rows, _ = corpus_rows(120)
    corpus = {
        "corpus_files": 400,
        "corpus_bytes": 4 * sum(r["bytes"] for r in rows if r["setting"] == "fixed 64 o0"),
    }
    a = summarize(rows, SETTINGS, sample=0.25, **corpus, **ARGS)
    b = summarize(list(reversed(rows)), SETTINGS, sample=0.25, **corpus, **ARGS)
    assert a == b
    other_seed = summarize(rows, SETTINGS, sample=0.25, seed=1, **corpus, **ARGS)
    assert other_seed["settings"][0]["interval_95"] != a["settings"][0]["interval_95"]
    for s in a["settings"]:
        iv = s["interval_95"]
        for key in ("vectors", "tokens", "total_bytes"):
            low, high = iv[key]
            assert low < s[key] < high, (s["setting"], key)
            assert (high - low) / s[key] < 0.5  # an interval, not the whole line
    # The weights are a document's own: the same for a key, seed and round count wherever it is.
    assert (poisson_weights("doc-1.txt", 50, 0) == poisson_weights("doc-1.txt", 50, 0)).all()
    w = poisson_weights("doc-1.txt", 20000, 0)
    assert abs(w.mean() - 1) < 0.03 and abs(w.var() - 1) < 0.05


def test_compare_ids_counts_per_setting():
    rows, _ = corpus_rows(10, keep_ids=True)
    label = SETTINGS[0].label
    ids = {c["chunk_id"]: c["n_tokens"] for r in rows if r["setting"] == label for c in r["chunk_ids"]}
    previous = list(ids)[:-3] + ["gone-1", "gone-2"]
    counts = compare_ids(rows, previous, [s.label for s in SETTINGS])
    assert counts[label] == {
        "unchanged": len(ids) - 3,
        "new": 3,
        "removed": 2,
        "tokens_to_embed": sum(ids[c] for c in list(ids)[-3:]),
    }
    # Another setting's chunks are all new against the first setting's ids.
    other = counts[SETTINGS[1].label]
    assert other["unchanged"] == 0 and other["removed"] == len(previous)


def test_a_setting_with_no_rows_reports_zeros():
    rows, _ = corpus_rows(5)
    extra = Setting("fixed 999", Profile(strategy="fixed", max_tokens=999))
    report = summarize(rows, [*SETTINGS, extra], sample=1.0, corpus_files=5, corpus_bytes=1, **ARGS)
    s = report["settings"][-1]
    assert (s["chunks"], s["tokens"], s["tokens_p50"], s["by_type"]) == (0, 0, 0.0, {})
