"""The retrieval metrics on hand-computed cases; no Ray, no model."""

import json

import numpy as np
import pytest

from raychunk.evaluation import (
    IndexedChunk,
    LabelledQuery,
    Passage,
    ResolvedQuery,
    Unit,
    bootstrap_interval,
    evaluate,
    expand_to_parent,
    load_queries,
    locate_quote,
    match_source,
    paired_difference,
    recommend,
    resolve_queries,
    score_corpus,
    score_units,
    tokens_read,
    top_k,
)
from raychunk.report import render_eval_markdown, render_eval_text
from raychunk.report.eval import build_eval_report


def query(*spans, source="d", quote=None):
    return ResolvedQuery("q1", "?", source, tuple(Passage(s, e, quote) for s, e in spans))


def unit(start, end, source="d", text=""):
    return Unit(source, ((start, end),), (text,))


# -- metrics --------------------------------------------------------------------------------------


def test_partial_overlap():
    # passage 10-30 (20 chars), chunk 20-60 (40 chars): 10 shared.
    r = score_units(query((10, 30)), [unit(20, 60)], tokens=7)
    assert r["recall"] == 0.5
    assert r["precision"] == 10 / 40
    assert r["iou"] == 10 / (40 + 20 - 10)
    assert r["hit"] == 0 and r["rank"] is None and r["rr"] == 0.0  # 50% < 90%
    assert r["tokens"] == 7


def test_hit_needs_ninety_percent_of_the_passage_in_one_chunk():
    assert score_units(query((10, 30)), [unit(12, 40)], tokens=0)["hit"] == 1  # 18/20 = 90%
    assert score_units(query((10, 30)), [unit(13, 40)], tokens=0)["hit"] == 0  # 17/20


def test_passage_split_across_two_chunks_is_recalled_but_not_hit():
    r = score_units(query((10, 30)), [unit(0, 20), unit(20, 40)], tokens=0)
    assert r["recall"] == 1.0
    assert r["hit"] == 0  # neither chunk holds 90% of it
    assert r["precision"] == 20 / 40 and r["iou"] == 20 / 40


def test_duplicate_chunks_count_once_in_characters_but_twice_in_tokens():
    chunks = [IndexedChunk("d", 0, 40, 12), IndexedChunk("d", 0, 40, 12)]
    r = score_units(
        query((10, 30)), [unit(c.start, c.end) for c in chunks], tokens=sum(c.n_tokens for c in chunks)
    )
    assert r["recall"] == 1.0 and r["precision"] == 0.5 and r["iou"] == 0.5
    assert r["rank"] == 1 and r["rr"] == 1.0
    assert r["tokens"] == 24


def test_a_chunk_of_another_document_at_the_same_offsets_does_not_count():
    r = score_units(query((10, 30)), [unit(10, 30, source="other")], tokens=0)
    assert r["recall"] == 0.0 and r["hit"] == 0 and r["precision"] == 0.0 and r["iou"] == 0.0
    # ... but it still dilutes precision when the right chunk comes second.
    r = score_units(query((10, 30)), [unit(10, 30, source="other"), unit(5, 35)], tokens=0)
    assert r["rank"] == 2 and r["rr"] == 0.5 and r["recall"] == 1.0
    assert r["precision"] == 20 / (20 + 30)
    assert r["iou"] == 20 / (20 + 30)


def test_a_chunk_whose_text_contains_the_quote_is_a_hit_even_with_a_loose_span():
    q = query((100, 130), quote="Refunds are paid within 10 days.")
    # A split-table piece carries a span that misses the passage; its text holds the quote.
    r = score_units(q, [unit(0, 50, text="Billing\n\nRefunds are paid\nwithin 10 days.")], tokens=0)
    assert r["hit"] == 1 and r["recall"] == 0.0
    assert (
        score_units(q, [unit(0, 50, source="x", text="Refunds are paid within 10 days.")], tokens=0)["hit"]
        == 0
    )


def test_several_passages_recall_is_over_all_of_them_and_any_one_is_a_hit():
    r = score_units(query((0, 10), (50, 60)), [unit(0, 10)], tokens=0)
    assert r["hit"] == 1 and r["recall"] == 0.5


def test_top_k_is_cosine_and_ties_go_to_the_lower_index():
    chunks = np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 1.0], [1.0, 1.0]])
    idx = top_k(np.array([[0.0, 5.0]]), chunks, 3)
    assert idx.tolist() == [[1, 2, 3]]  # 1 and 2 tie at cosine 1: the lower index first


# -- small-to-big -----------------------------------------------------------------------------------


def section(n=3, tokens=40, header=5, overlap=0):
    return [
        IndexedChunk("d", i * 100, (i + 1) * 100, tokens, f"c{i}", "p", i, header, overlap if i else 0)
        for i in range(n)
    ]


def test_tokens_read_drops_repeated_headers_and_overlap_of_consecutive_chunks():
    fam = section(3, tokens=40, header=5, overlap=3)
    assert tokens_read(fam) == 40 + 32 + 32
    assert tokens_read([fam[0], fam[2]]) == 80  # not adjacent: both headers read
    assert tokens_read([fam[1], fam[1]]) == 40


def test_expand_to_parent_takes_the_whole_section_when_it_fits():
    fam = section(3)
    assert expand_to_parent(fam[1], fam, budget=200) == fam


def test_expand_to_parent_grows_around_the_hit_within_the_budget():
    fam = section(5, tokens=40, header=5)
    # 40 + 35 + 35 = 110 fits 120; a fourth chunk would not.
    got = expand_to_parent(fam[2], fam, budget=120)
    assert got == fam[1:4]  # next first, then previous
    assert expand_to_parent(fam[4], fam, budget=10) == [fam[4]]  # the hit alone, even over budget


def test_small_to_big_recovers_a_passage_in_the_hit_chunks_neighbour():
    fam = section(3)
    vectors = np.eye(3)
    q = query((230, 290))  # inside chunk 2; the query matches chunk 1
    plain = score_corpus([q], np.array([[0.0, 1.0, 0.0]]), fam, vectors, k=1, parent_budget=500)
    assert plain["chunks"][0]["recall"] == 0.0 and plain["chunks"][0]["tokens"] == 40
    big = plain["small_to_big"][0]
    assert big["recall"] == 1.0 and big["hit"] == 1 and big["rank"] == 1
    assert big["tokens"] == 40 + 35 + 35


# -- labels -----------------------------------------------------------------------------------------


def test_locate_quote_exact_then_whitespace_normalised():
    text = "Refunds are\n   paid within 10 days. Credits are paid within 10 days."
    assert locate_quote(text, "paid within 10 days.") == (15, 35)  # the first occurrence
    start, end = locate_quote(text, "Refunds are paid")
    assert (start, end) == (0, 19) and " ".join(text[start:end].split()) == "Refunds are paid"
    assert locate_quote(text, "paid in 30 days") is None


def test_resolve_queries_matches_sources_by_suffix_and_names_the_query_on_errors():
    docs = {"/c/a/guide.md": "Refunds are paid\nwithin 10 days.", "/c/b/faq.txt": "Q: refunds?"}
    q = LabelledQuery("r1", "How fast are refunds?", "a/guide.md", ({"quote": "paid within 10 days"},))
    (r,) = resolve_queries([q], docs)
    # The passage's quote is the text as located: the document's rendering, which its chunks hold.
    assert r.source == "/c/a/guide.md" and r.passages == (Passage(12, 31, "paid\nwithin 10 days"),)
    bad = LabelledQuery("r2", "Refund window?", "guide.md", ({"quote": "30 days"},))
    with pytest.raises(
        ValueError, match=r"query r2 \('Refund window\?'\), guide.md: quote '30 days' is not in"
    ):
        resolve_queries([bad], docs)
    wrong_span = LabelledQuery("r3", "?", "guide.md", ({"span": [0, 7], "quote": "Credits"},))
    with pytest.raises(ValueError, match="query r3.*not the quote"):
        resolve_queries([wrong_span], docs)
    with pytest.raises(ValueError, match="names no document"):
        match_source("nope.md", list(docs))
    with pytest.raises(ValueError, match="names 2 documents"):
        match_source("x.md", ["/a/x.md", "/b/x.md"])


def test_load_queries_reads_jsonl_and_rejects_bad_lines(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text(
        json.dumps({"query": "Refund window?", "source": "guide.md", "passages": [{"quote": "30 days"}]})
        + "\n\n"
        + json.dumps({"id": "s", "query": "Span?", "source": "guide.md", "passages": [{"span": [3, 9]}]})
        + "\n"
    )
    qs = load_queries(p)
    assert [q.qid for q in qs] == ["q1", "s"] and qs[1].passages == ({"span": [3, 9]},)
    p.write_text(json.dumps({"query": "x", "source": "y", "passages": [{"span": [9, 3]}]}) + "\n")
    with pytest.raises(ValueError, match=r"q.jsonl:1: a passage span"):
        load_queries(p)
    p.write_text(json.dumps({"query": "x", "source": "y"}) + "\n")
    with pytest.raises(ValueError, match="'passages' must be"):
        load_queries(p)


# -- bootstrap and recommendation -------------------------------------------------------------------


def test_bootstrap_is_deterministic_and_brackets_the_mean():
    values = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1] * 3
    a = bootstrap_interval(values, seed=7)
    assert a == bootstrap_interval(values, seed=7)
    assert a[0] < np.mean(values) < a[1]
    assert bootstrap_interval([0.5] * 8) == [0.5, 0.5]
    d = paired_difference(values, values)
    assert d == {"mean": 0.0, "interval": [0.0, 0.0]}


def setting(name, vectors, values, total=None):
    return {"setting": name, "vectors": vectors, "total_bytes": total or vectors * 1000, "values": values}


def test_recommend_takes_the_cheaper_of_two_equal_settings():
    values = [1.0] * 25 + [0.0] * 5
    rec = recommend([setting("big", 50, values), setting("small", 30, list(values))])
    assert rec["setting"] == "small"
    assert "cheapest" in rec["reason"]
    assert all(c["within_noise"] and c["difference"] == 0 for c in rec["comparisons"])


def test_recommend_calls_one_question_in_thirty_noise():
    best = [1.0] * 30
    one_less = [1.0] * 29 + [0.0]
    rec = recommend([setting("big", 50, best), setting("small", 30, one_less)])
    assert rec["setting"] == "small"
    assert "a gap of 1.0 question in 30" in rec["reason"]


def test_recommend_does_not_take_a_clearly_worse_cheaper_setting():
    best = [1.0] * 30
    worse = [1.0] * 15 + [0.0] * 15
    rec = recommend([setting("big", 50, best), setting("small", 30, worse)])
    assert rec["setting"] == "big"
    small = next(c for c in rec["comparisons"] if c["setting"] == "small")
    assert not small["within_noise"] and small["interval"][1] < 0 and small["gap_questions"] == 15
    assert "more than noise" in rec["reason"]


def test_recommend_breaks_vector_ties_on_storage():
    v = [1.0] * 10
    rec = recommend([setting("a", 30, v, total=5000), setting("b", 30, list(v), total=4000)])
    assert rec["setting"] == "b"


# -- the whole report from rows ---------------------------------------------------------------------


def test_evaluate_from_rows_has_costs_metrics_and_is_deterministic():
    from raychunk.pricing import Setting

    text = "Refunds are paid within 10 days. Backups are kept for 35 days. Seats are billed monthly."
    documents = {"/c/guide.md": {"text": text, "doc_type": "manual", "status": "ok", "doc_id": "g"}}

    def chunk(i, s, e):
        return {
            "source": "/c/guide.md",
            "char_start": s,
            "char_end": e,
            "n_tokens": 10,
            "text": text[s:e],
            "parent_id": "p",
            "chunk_index": i,
            "header_tokens": 2,
            "overlap_tokens": 0,
            "over_limit": False,
        }

    settings = [Setting("small"), Setting("big")]
    chunks = {
        "small": [chunk(0, 0, 32), chunk(1, 33, 62), chunk(2, 63, len(text))],
        "big": [chunk(0, 0, len(text))],
    }
    vectors = {"small": np.eye(3), "big": np.array([[1.0, 1.0, 1.0]])}
    queries = [
        ResolvedQuery("a", "refunds", "/c/guide.md", (Passage(0, 32),)),
        ResolvedQuery("b", "backups", "/c/guide.md", (Passage(33, 62),)),
    ]
    qv = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    args = dict(k=1, parent_budget=100, dim=3, seed=1)
    r1 = evaluate(queries, qv, documents, chunks, vectors, settings, **args)
    r2 = evaluate(queries, qv, documents, chunks, vectors, settings, **args)
    assert r1 == r2
    small, big = r1["settings"]
    assert small["vectors"] == 3 and big["vectors"] == 1 and small["total_bytes"] > big["total_bytes"]
    assert small["metrics"]["recall"]["mean"] == 1.0 and big["metrics"]["recall"]["mean"] == 1.0
    assert small["metrics"]["tokens"]["mean"] == 10
    assert small["metrics"]["precision"]["mean"] == 1.0 and big["metrics"]["precision"]["mean"] < 0.5
    assert r1["recommendation"]["setting"] == "big"  # same recall, fewer vectors
    typed = build_eval_report(r1)
    assert "small" in render_eval_text(typed) and render_eval_markdown(typed).startswith(
        "# raychunk eval report"
    )


def _tagged_corpus():
    """Six sections of one document, each its own chunk in ``small``, all one chunk in ``big``;
    question i asks for section i (its vector), half tagged ``table``."""
    from raychunk.pricing import Setting

    parts = [f"Section {i} says value {i} is {i * 11} units." for i in range(6)]
    text = " ".join(parts)
    starts = [text.index(p) for p in parts]
    documents = {"/c/d.md": {"text": text, "doc_type": "manual", "status": "ok", "doc_id": "d"}}

    def chunk(i, s, e, n):
        return {
            "source": "/c/d.md",
            "char_start": s,
            "char_end": e,
            "n_tokens": n,
            "text": text[s:e],
            "parent_id": f"p{i}",
            "chunk_index": i,
            "header_tokens": 0,
            "overlap_tokens": 0,
            "over_limit": False,
        }

    chunks = {
        "structure 8 o0": [chunk(i, s, s + len(p), 10) for i, (s, p) in enumerate(zip(starts, parts))],
        "fixed 8 o0": [chunk(0, 0, len(text), 60)],
    }
    vectors = {"structure 8 o0": np.eye(6), "fixed 8 o0": np.ones((1, 6))}
    queries = [
        ResolvedQuery(f"q{i}", "?", "/c/d.md", (Passage(s, s + len(p)),), ("table",) if i % 2 else ("prose",))
        for i, (s, p) in enumerate(zip(starts, parts))
    ]
    # q5 points at section 0 first, its own second: a miss at k=1, found at rank 2.
    qv = np.eye(6)
    qv[5] = [1, 0, 0, 0, 0, 0.5]
    return documents, chunks, vectors, queries, qv, [Setting("structure 8 o0"), Setting("fixed 8 o0")]


def test_report_per_tag_paired_and_reading_budget():
    documents, chunks, vectors, queries, qv, settings = _tagged_corpus()
    r = evaluate(
        queries,
        qv,
        documents,
        chunks,
        vectors,
        settings,
        k=1,
        depth=3,
        read_budget=25,
        parent_budget=100,
        dim=6,
    )
    small, big = r["settings"]
    # k=1: the small chunks miss q5 (ranked section 0 first); the one big chunk holds every passage.
    assert small["metrics"]["hit"]["mean"] == pytest.approx(5 / 6) and big["metrics"]["hit"]["mean"] == 1.0
    # 25 tokens read: two 10-token chunks (q5 finds its section second); the 60-token chunk never fits.
    rb = small["reading_budget"]
    assert rb["tokens"] == 25 and rb["chunks"]["budget_recall"]["mean"] == 1.0
    assert rb["chunks"]["budget_tokens"]["mean"] == 20 and rb["short"]["chunks"] == 0
    assert big["reading_budget"]["chunks"]["budget_recall"]["mean"] == 0.0
    assert big["reading_budget"]["chunks"]["budget_tokens"]["mean"] == 0
    # Per tag: q1, q3, q5 are "table"; q5 is the miss.
    tab = r["by_tag"]["table"]
    assert tab["questions"] == 3 and r["by_tag"]["prose"]["questions"] == 3
    assert tab["settings"]["structure 8 o0"]["metrics"]["hit"]["mean"] == pytest.approx(2 / 3)
    assert r["by_tag"]["prose"]["settings"]["structure 8 o0"]["metrics"]["hit"]["mean"] == 1.0
    lo, hi = tab["settings"]["structure 8 o0"]["metrics"]["hit"]["interval"]
    assert 0 <= lo <= 2 / 3 <= hi <= 1
    # Paired by default: structure X against fixed X, overall and per tag.
    (pair,) = r["paired"]
    assert (pair["a"], pair["b"]) == ("structure 8 o0", "fixed 8 o0")
    hit = pair["metrics"]["hit"]
    assert hit["overall"]["difference"] == pytest.approx(-1 / 6) and hit["overall"]["questions"] == 6
    assert hit["by_tag"]["table"]["difference"] == pytest.approx(-1 / 3)
    assert hit["by_tag"]["prose"] == {
        "questions": 3,
        "a": 1.0,
        "b": 1.0,
        "difference": 0.0,
        "interval": [0.0, 0.0],
    }
    lo, hi = hit["overall"]["interval"]
    assert lo <= -1 / 6 <= hi <= 0
    text, md = render_eval_text(build_eval_report(r)), render_eval_markdown(build_eval_report(r))
    assert "By tag" in text and "structure 8 o0 - fixed 8 o0, hit@1" in text
    assert "## By tag" in md and "## Paired comparisons" in md and "recall in 25t" in md
    # Explicit pairs replace the default.
    r2 = evaluate(
        queries,
        qv,
        documents,
        chunks,
        vectors,
        settings,
        k=1,
        parent_budget=100,
        dim=6,
        compare=[("fixed 8 o0", "structure 8 o0")],
    )
    assert r2["paired"][0]["metrics"]["hit"]["overall"]["difference"] == pytest.approx(1 / 6)


def test_recommendation_says_what_the_cheaper_index_costs_the_reader():
    from raychunk.evaluation import recommend

    values = [1.0] * 29 + [0.0]
    rec = recommend(
        [
            {
                "setting": "a",
                "vectors": 10,
                "total_bytes": 1,
                "tokens": 900.0,
                "budget_recall": 0.8,
                "read_budget": 1000,
                "values": values,
            },
            {
                "setting": "b",
                "vectors": 20,
                "total_bytes": 2,
                "tokens": 400.0,
                "budget_recall": 0.9,
                "read_budget": 1000,
                "values": [1.0] * 30,
            },
        ]
    )
    assert rec["setting"] == "a" and rec["best"] == "b"
    assert (
        "Mind the reading cost, which the rule does not weigh: its top k hand the reader 900 tokens per question against 400 for b"
        in rec["reason"]
    )
    assert "within 1,000 tokens read it reaches recall 0.80 against 0.90" in rec["reason"]
    assert rec["comparisons"][0]["budget_recall"] == 0.8


def test_structure_is_paired_with_fixed_at_its_size_and_at_an_equal_index_cost():
    from raychunk.evaluation.report import default_pairs

    labels = ["per-type profile", "structure 250 o0 t128", "fixed 194 o0", "fixed 250 o0", "fixed 160 o0"]
    vectors = {"structure 250 o0 t128": 1201, "fixed 194 o0": 1189, "fixed 250 o0": 901, "fixed 160 o0": 1478}
    assert default_pairs(labels) == [("structure 250 o0 t128", "fixed 250 o0")]
    # fixed 194 makes fewer vectors than structure: the cheapest fixed that makes as many is fixed 160
    assert default_pairs(labels, vectors) == [
        ("structure 250 o0 t128", "fixed 250 o0"),
        ("structure 250 o0 t128", "fixed 160 o0"),
    ]
