"""The span check before scoring, and the Chroma-style figures, on hand-computed cases; no Ray, no model."""

import numpy as np
import pytest

from raychunk.evaluation import (
    Passage,
    ResolvedQuery,
    Unit,
    check_chunk,
    check_spans,
    evaluate,
    score_units,
)
from raychunk.report import render_eval_markdown, render_eval_text
from raychunk.report.eval import build_eval_report


def chunk(doc, body, start=None, end=None, *, header="", source="d", index=0, **extra):
    """A chunk dict whose span is ``body``'s first occurrence in ``doc`` unless given."""
    if start is None:
        start = doc.index(body)
        end = start + len(body)
    text = f"{header}\n\n{body}" if header else body
    return {
        "source": source,
        "chunk_index": index,
        "char_start": start,
        "char_end": end,
        "text": text,
        "header": header,
        **extra,
    }


PARA = (
    "Refunds are paid within ten days of the request. Credits never expire and may be moved between "
    "projects. Invoices are issued monthly in arrears."
)


# -- the span check --------------------------------------------------------------------------------


def test_a_chunk_whose_span_is_its_body_passes():
    doc = "Intro.\n\n" + PARA
    assert check_chunk(doc, chunk(doc, PARA, header="Guide > Billing")) is None


def test_a_piece_of_a_split_element_with_the_whole_elements_span_fails_and_is_named():
    doc = "Intro.\n\n" + PARA
    start, end = doc.index(PARA), doc.index(PARA) + len(PARA)
    first, second = PARA[:48], PARA[49:]  # the paragraph cut after its first sentence
    loose = {
        "loose": [
            chunk(doc, first, start, end, index=0),
            chunk(doc, second, start, end, index=1),
        ],
        "exact": [chunk(doc, first, index=0), chunk(doc, second, index=1)],
    }
    got = check_spans({"d": doc}, loose)
    assert got["exact"].ok and got["exact"].chunks == 2
    bad = got["loose"]
    assert not bad.ok and bad.bad == 2 and bad.chunks == 2
    a, b = bad.examples
    assert (a.source, a.chunk_index, a.start, a.end) == ("d", 0, start, end)
    assert "runs 15 words past the body" in a.why
    assert b.chunk_index == 1 and "starts 9 words before the body" in b.why
    assert bad.to_dict()["examples"][0]["span"] == [start, end]


def test_coincident_first_and_last_words_do_not_pass_a_whole_element_span():
    doc = "The cat sat on the mat all day long. The dog sat on the rug all day long."
    piece = doc[37:]
    why = check_chunk(doc, chunk(doc, piece, 0, len(doc)))
    assert why is not None and "9 words the body lacks" in why


def test_a_list_item_rendered_with_a_marker_and_a_tight_span_passes():
    doc = "Steps:\n\n1. Download the agent.\n2. Run the installer.\n"
    body = "- Download the agent.\n- Run the installer."
    assert check_chunk(doc, chunk(doc, body, doc.index("Download"), doc.index("installer.") + 10)) is None
    html = "<ul><li>Download the agent.</li>\n<li class='x'>Run the <b>installer</b>.</li></ul>"
    assert check_chunk(html, chunk(html, body, html.index("<li>"), html.index("</ul>"))) is None
    # The same body with a span that also takes the line before it is not tight.
    assert "starts 2 words before the body ('steps 1'" in check_chunk(doc, chunk(doc, body, 0, len(doc)))


def test_a_chunk_opening_on_a_numbered_item_holds_the_later_items_numbers():
    # The item's span starts after its "5."; the "6." of the item the chunk ends on lies inside it.
    doc = 'Order:\n\n5. `"file:"`\n\nThe policy for file resources.\n\n6. `""`\n\nThe rest.\n'
    body = '5. `"file:"`\n\nThe policy for file resources.\n\n6. `""`'
    start, end = doc.index('`"file:"`'), doc.index('`""`') + 4
    assert check_chunk(doc, chunk(doc, body, start, end)) is None
    # and a span that starts before the first item's number is still not tight
    assert "starts" in check_chunk(doc, chunk(doc, body, 0, end))


def test_markdown_inline_markup_and_link_targets_are_not_body_words():
    doc = "Refunds are **paid** within [ten days](https://acme.example/refunds) of the request."
    body = "Refunds are paid within ten days of the request."
    assert check_chunk(doc, chunk(doc, body, 0, len(doc))) is None
    html = "<p id='r'>Refunds are paid <sup class='reference'>1</sup> within ten days &amp; more.</p>"
    assert check_chunk(html, chunk(html, "Refunds are paid within ten days & more.", 0, len(html))) is None


def test_a_split_table_piece_with_repeated_header_rows_spans_its_own_rows():
    rows = [f"| r{i} | {i * 7} |" for i in range(6)]
    doc = "Plans:\n\n| name | price |\n|---|---|\n" + "\n".join(rows) + "\n"
    body = "| name | price |\n|---|---|\n" + "\n".join(rows[3:])
    own = doc.index(rows[3])
    assert check_chunk(doc, chunk(doc, body, own, doc.index(rows[5]) + len(rows[5]), table_part=1)) is None
    # The whole table's span for that piece is loose.
    whole = chunk(doc, body, doc.index("| name"), len(doc) - 1, table_part=1)
    assert check_chunk(doc, whole) is not None
    # The baseline's table text: header cells run together with the rows, no pipes.
    flat = "name price r3 21 r4 28 r5 35"
    assert check_chunk(doc, chunk(doc, flat, own, len(doc) - 1, table_part=1)) is None
    assert check_chunk(doc, chunk(doc, flat, own, len(doc) - 1)) is not None  # not a table piece


def test_overlap_repeats_the_source_before_the_new_text_and_passes():
    doc = "Intro.\n\n" + PARA
    s1, s2, s3 = (doc.index(x) for x in ("Refunds", "Credits", "Invoices"))
    first = chunk(doc, doc[s1 : s2 - 1], index=0)
    second = chunk(doc, doc[s2 : len(doc)], index=1)  # repeats "Credits ... projects." as overlap
    assert check_spans({"d": doc}, {"o": [first, second]})["o"].ok
    # An overlap piece whose span starts at the new text only is not the body's span.
    late = chunk(doc, doc[s2:], s3, len(doc), index=1)
    assert "body word 1 of" in check_chunk(doc, late)


def test_record_keys_are_context():
    doc = "plan,price\nStarter,10\nPro,25\n"
    body = "plan: Starter\nprice: 10\n\nplan: Pro\nprice: 25"
    assert check_chunk(doc, chunk(doc, body, doc.index("Starter"), len(doc) - 1)) is None
    joined = "plan: Starter price: 10\n\nplan: Pro price: 25"
    assert check_chunk(doc, chunk(doc, joined, doc.index("Starter"), len(doc) - 1)) is None


def test_other_failures_say_why():
    doc = "Intro.\n\n" + PARA
    assert "not inside the document" in check_chunk(doc, chunk(doc, PARA, 10, len(doc) + 5))
    c = chunk(doc, PARA, header="Guide")
    c["text"] = c["text"].replace("Guide\n\n", "Guide > X\n\n")
    assert "header line" in check_chunk(doc, c)
    # A span far longer than its body fails without being read.
    huge = "word " * 400_000
    assert "a span of 2,000,000 characters" in check_chunk(huge, chunk(huge, "word", 0, len(huge)))
    assert (
        check_spans({}, {"s": [chunk(doc, PARA)]})["s"].examples[0].why == "no document text for its source"
    )


# -- Chroma-style precision and IoU ----------------------------------------------------------------


def test_chroma_figures_sum_overlapping_retrieved_chunks():
    # passage 10-50 (40 chars); chunks 0-25 and 15-40 share 15-25; together they cover 10-40 of it.
    q = ResolvedQuery("q1", "?", "d", (Passage(10, 50),))
    r = score_units(q, [Unit("d", ((0, 25),)), Unit("d", ((15, 40),))], tokens=0)
    assert r["recall"] == 30 / 40
    assert r["precision"] == 30 / 40  # merged: 0-40 retrieved
    assert r["iou"] == 30 / (40 + 40 - 30)
    assert r["chroma_precision"] == 30 / 50  # summed: 25 + 25 retrieved
    assert r["chroma_iou"] == 30 / (50 + 40 - 30)
    # Without shared characters the two agree; another document's chunk dilutes both.
    r = score_units(q, [Unit("d", ((0, 20),)), Unit("e", ((0, 10),))], tokens=0)
    assert r["chroma_precision"] == r["precision"] == 10 / 30
    assert r["chroma_iou"] == r["iou"] == 10 / (30 + 40 - 10)


# -- the report: a failed setting is reported and not ranked ---------------------------------------


def _corpus():
    from raychunk.pricing import Setting

    text = "Refunds are paid within 10 days. Backups are kept for 35 days. Seats are billed monthly."
    documents = {"/c/guide.md": {"text": text, "doc_type": "manual", "status": "ok", "doc_id": "g"}}
    cuts = [(0, 32), (33, 62), (63, len(text))]

    def row(i, s, e, body=None):
        return {
            "source": "/c/guide.md",
            "char_start": s,
            "char_end": e,
            "n_tokens": 10,
            "text": text[s:e] if body is None else body,
            "header": "",
            "parent_id": "p",
            "chunk_index": i,
            "header_tokens": 0,
            "overlap_tokens": 0,
            "over_limit": False,
        }

    honest = [row(i, s, e) for i, (s, e) in enumerate(cuts)]
    # One cheap chunk holding the first sentence, with the whole document's span: recall 1 everywhere.
    loose = [row(0, 0, len(text), body=text[:32])]
    queries = [
        ResolvedQuery("a", "refunds", "/c/guide.md", (Passage(0, 32),)),
        ResolvedQuery("b", "backups", "/c/guide.md", (Passage(33, 62),)),
        ResolvedQuery("c", "seats", "/c/guide.md", (Passage(63, len(text)),)),
    ]
    args = dict(
        query_vectors=np.eye(3),
        documents=documents,
        vectors={"honest": np.eye(3), "loose": np.array([[1.0, 1.0, 1.0]])},
        k=1,
        parent_budget=100,
        dim=3,
        seed=1,
    )
    return queries, honest, loose, Setting, args


def test_a_setting_whose_spans_fail_is_reported_and_left_out_of_the_recommendation():
    queries, honest, loose, Setting, args = _corpus()
    settings = [Setting("honest"), Setting("loose")]
    r = evaluate(queries, chunks={"honest": honest, "loose": loose}, settings=settings, **args)
    by = {row["setting"]: row for row in r["settings"]}
    assert by["loose"]["metrics"]["recall"]["mean"] == 1.0  # what loose spans buy
    assert by["honest"]["span_check"] == {"ok": True, "chunks": 3, "bad": 0, "examples": []}
    check = by["loose"]["span_check"]
    assert not check["ok"] and check["bad"] == 1 and check["examples"][0]["chunk_index"] == 0
    assert r["span_failures"] == ["loose"]
    rec = r["recommendation"]
    assert rec["setting"] == "honest" and rec["excluded"] == ["loose"]
    assert [c["setting"] for c in rec["comparisons"]] == ["honest"]
    for name in ("chroma_precision", "chroma_iou"):
        m = by["honest"]["metrics"][name]
        assert m["mean"] == 1.0 and m["interval"] == [1.0, 1.0]

    text = render_eval_text(build_eval_report(r))
    assert "SPAN CHECK FAILED for 1 of 2 settings" in text
    assert "guide.md chunk 0 [0, 88): the span runs" in text
    assert "Recommendation (*): honest (among the settings whose spans hold; left out: loose)" in text
    assert "FAIL 1/1" in text and "precision (Chroma)" in text
    md = render_eval_markdown(build_eval_report(r))
    assert "> **Span check failed for 1 of 2 settings: loose.**" in md and "## Span check" in md
    assert any(line.startswith("| loose | 1 of 1 | guide.md | 0 | [0, 88) |") for line in md.splitlines())


def test_when_no_setting_passes_nothing_is_recommended(tmp_path):
    pytest.importorskip("matplotlib")
    from raychunk.report import write_eval

    queries, _, loose, Setting, args = _corpus()
    args["vectors"] = {"loose": args["vectors"]["loose"]}
    r = evaluate(queries, chunks={"loose": loose}, settings=[Setting("loose")], **args)
    assert r["recommendation"]["setting"] is None and r["recommendation"]["comparisons"] == []
    typed = build_eval_report(r)
    assert "Recommendation: none" in render_eval_text(typed)
    assert "**None.**" in render_eval_markdown(typed)
    assert len(write_eval(typed, tmp_path)) == 3  # the plot draws without a recommendation


def test_chunks_of_a_log_with_terminal_escapes_hold_their_spans():
    """The span check drops what the parsers' clean_text drops, terminal escapes included."""
    from raychunk.chunking import Profile, chunk_document
    from raychunk.parse import parse_document
    from raychunk.tokens import load_counter

    lines = [
        f"2024-05-{i % 28 + 1:02d} \x1b[3{i % 8}mstep {i}\x1b[0m ran the \x1b[1mtests\x1b[m again"
        for i in range(300)
    ]
    parsed = parse_document("\n".join(lines).encode(), "ci.log")
    chunks = chunk_document(
        parsed, Profile(strategy="structure", max_tokens=64), counter=load_counter("words")
    )
    assert len(chunks) > 5
    for c in chunks:
        assert "\x1b" not in c.text and "[0m" not in c.text
        assert (
            check_chunk(
                parsed.text,
                {"text": c.text, "header": c.header, "char_start": c.char_start, "char_end": c.char_end},
            )
            is None
        )
