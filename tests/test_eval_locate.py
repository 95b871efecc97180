"""Quotes copied as a viewer shows them are found in raychunk's parsed text (``evaluation.locate``),
and the ones that are not are all listed before anything is chunked.

The viewer is PyMuPDF's ``page.get_text()`` over PDFs of the shared corpus; raychunk's parse renders
the same pages with tables as pipe tables, running headers and footers dropped, hyphenation as is."""

import json
from functools import cache
from pathlib import Path

import pytest

from raychunk.config import build_run_config, load_config
from raychunk.evaluation import LabelledQuery, load_queries, resolve_queries
from raychunk.evaluation.labels import UnlocatedQuotes, apply_locations, locate_passages
from raychunk.evaluation.locate import MAX_NOISE, find_quote, nearest
from raychunk.parse import parse_document

ROOT = Path(__file__).resolve().parent.parent
PDFS = ROOT.parent / "shared" / "corpus" / "pdf"


@cache
def parsed_and_viewed(name: str) -> tuple[str, list[str]]:
    """The PDF's parsed text (raychunk) and its pages as a viewer shows them (PyMuPDF)."""
    import fitz

    path = PDFS / name
    if not path.exists():
        pytest.skip(f"{path} not here: the shared corpus is needed")
    cfg = build_run_config(load_config(), {})
    text = parse_document(path.read_bytes(), str(path), options=cfg.parse).text
    with fitz.open(path) as doc:
        return text, [page.get_text() for page in doc]


def lines(page: str) -> list[str]:
    return [x for x in page.split("\n") if x.strip()]


def test_a_quote_across_two_table_cells_is_found_in_the_pipe_table():
    text, pages = parsed_and_viewed("cms-etc-filled.pdf")
    page = lines(pages[6])
    i = next(i for i, x in enumerate(page) if x.strip() == "Alabama")
    quote = "\n".join(page[i : i + 2])  # two cells of one row, as the viewer copies them
    assert quote not in text and " ".join(quote.split()) not in " ".join(text.split())
    m = find_quote(text, quote)
    assert m is not None and m.how == "words"
    found = text[m.start : m.end]
    assert found.startswith("Alabama") and found.rstrip().endswith("LLC") and " | " in found


def test_a_quote_spanning_a_page_break_skips_the_viewers_page_number_and_footer():
    text, pages = parsed_and_viewed("cms-etc-filled.pdf")
    quote = "\n".join(
        lines(pages[0])[-3:] + lines(pages[1])[:3]
    )  # "... 2 Form CMS-1490S (version 01/18) SECTION 2 ..."
    assert "Form CMS-1490S" in quote and "CMS-1490S" not in text  # the parse drops the running footer
    m = find_quote(text, quote)
    assert m is not None and m.how.startswith("words, ") and 0 < m.skipped <= MAX_NOISE
    found = text[m.start : m.end]
    assert found.startswith("State") and found.endswith("SECTION 2 - INFORMATION ABOUT SERVICES FURNISHED")


def test_a_hyphenated_line_end_across_a_page_break_is_found():
    text, pages = parsed_and_viewed("test_4751.pdf")
    page = lines(pages[17])
    i = next(i for i, x in enumerate(page) if x.rstrip().endswith("Specif-"))
    quote = "\n".join(page[i : i + 2])  # "... Specif-\nically, we assess ..."
    m = find_quote(text, quote)
    assert m is not None and m.how == "words"
    assert "Specifically" in text[m.start : m.end] or "Specif-" in text[m.start : m.end]
    # and the same words typed without the hyphen, as a browser would show the reflowed line
    typed = quote.replace("Specif-\n", "Specif")
    assert find_quote(text, typed) == m or find_quote(text, typed).start == m.start


def test_viewer_quotes_of_a_table_pdf_are_found_in_the_parsed_text():
    """Three-line windows from the body of every page (the lines a header or footer may use left
    out): nearly all are found; the rest are lines the parse reads in another order."""
    text, pages = parsed_and_viewed("cms-etc-filled.pdf")
    quotes = [
        "\n".join(page[j : j + 3])
        for page in map(lines, pages)
        for j in range(3, max(3, len(page) - 6), 5)
        if len(" ".join(page[j : j + 3]).split()) >= 6
    ]
    found = [find_quote(text, q) for q in quotes]
    exact = sum(m is not None and m.how in ("exact", "whitespace") for m in found)
    located = sum(m is not None for m in found)
    assert len(quotes) > 100
    assert located >= 0.85 * len(quotes) and located - exact >= 0.2 * len(quotes), (
        located,
        exact,
        len(quotes),
    )


def test_markdown_markup_and_unicode_are_what_a_viewer_does_not_show():
    md = (
        "# Setup\n\nRun the **agent** with `--token` from the [admin console](https://x.example/a?b=1) "
        "and the \ufb01le \u201cagent.conf\u201d \u2014 not the default.\n"
    )
    m = find_quote(
        md, 'Run the agent with --token from the admin console and the file "agent.conf" - not the default.'
    )
    assert m is not None and m.how == "words"
    assert md[m.start : m.end].startswith("Run the **agent**") and md[m.start : m.end].endswith("default")
    hyphen = "the exam-\nple shows it"
    assert find_quote(hyphen, "the example shows it").start == 0
    assert find_quote("the example shows it", "the exam-\nple shows it").end == len("the example shows it")


def test_edges_whole_text_start_end_and_repeats():
    text = "Alpha beta gamma. Delta epsilon. Alpha beta gamma again."
    assert find_quote(text, text) == find_quote(text, text) and (
        find_quote(text, text).start,
        find_quote(text, text).end,
    ) == (0, len(text))
    assert find_quote(text, "alpha  BETA").start == 0  # words: case and spaces
    assert find_quote(text, "gamma again.").end == len(text)
    m = find_quote(text, "Alpha beta gamma")
    assert (m.start, m.occurrences) == (0, 2)  # the first, and the count
    w = find_quote(text, "alpha, beta: gamma")
    assert (w.start, w.occurrences, w.how) == (0, 2, "words")
    assert find_quote(text, "   ") is None and find_quote(text, "omega") is None
    assert find_quote("", "alpha") is None


def test_noise_is_bounded():
    body = "the warranty covers parts and labour for two years from delivery"
    noise = " ".join(f"w{i}" for i in range(MAX_NOISE + 1))
    split = body.replace("labour for", f"labour\n{noise}\nfor")
    assert find_quote(split, body) is None  # more noise than allowed between two words
    ok = body.replace("labour for", "labour\nPage 7 of 9 Acme Manual\nfor")
    assert find_quote(ok, body).how == "words, 6 skipped"


def test_every_unlocatable_quote_is_listed_with_its_nearest_match(tmp_path):
    text, _ = parsed_and_viewed("cms-etc-filled.pdf")
    source = str(PDFS / "cms-etc-filled.pdf")
    good = LabelledQuery(
        "g1", "Where in Alabama?", "cms-etc-filled.pdf", ({"quote": "Alabama\nPalmetto GBA, LLC"},)
    )
    absent = LabelledQuery(
        "a1", "Refunds?", "cms-etc-filled.pdf", ({"quote": "Refunds are paid within 10 days"},)
    )
    partly = LabelledQuery(
        "a2", "Zip?", "cms-etc-filled.pdf", ({"quote": "Alabama Palmetto GBA, LLC is closed on Sundays"},)
    )
    queries = [good, absent, partly]
    located = {i: locate_passages(q, source, text) for i, q in enumerate(queries)}
    with pytest.raises(UnlocatedQuotes) as e:
        apply_locations(queries, [source] * 3, located)
    message = str(e.value)
    assert "2 labelled passages not found" in message and "query a1" in message and "query a2" in message
    assert "query g1" not in message and "--skip-unlocated" in message
    assert "its first 4 of 8 words are at character" in message  # the nearest match of a2
    kept, labels = apply_locations(queries, [source] * 3, located, skip_unlocated=True)
    assert [q.qid for q in kept] == ["g1"] and labels["skipped_questions"] == ["a1", "a2"]
    assert labels["passages_found"] == {"words": 1} and len(labels["unlocated"]) == 2
    assert "refunds" not in text.lower() and nearest(text, "Refunds are paid within 10 days") is None


def test_resolve_queries_keeps_the_located_text_as_the_quote():
    text = "| Plan | Price |\n|---|---|\n| Team | 12 USD |\n"
    (r,) = resolve_queries(
        [LabelledQuery("t", "Team price?", "p.md", ({"quote": "Team 12 USD"},), ("table",))],
        {"/d/p.md": text},
    )
    (p,) = r.passages
    assert text[p.start : p.end] == p.quote == "Team | 12 USD" and r.tags == ("table",)


def test_tags_are_read_and_checked(tmp_path):
    p = tmp_path / "q.jsonl"
    row = {"query": "x?", "source": "y.md", "passages": [{"quote": "x"}]}
    p.write_text(
        json.dumps({**row, "tags": ["table", "structured", "table"]}) + "\n" + json.dumps(row) + "\n"
    )
    a, b = load_queries(p)
    assert a.tags == ("table", "structured") and b.tags == ()
    for bad in (["table", ""], "table", [3]):
        p.write_text(json.dumps({**row, "tags": bad}) + "\n")
        with pytest.raises(ValueError, match="'tags' must be a list of non-empty strings"):
            load_queries(p)


def test_a_repeated_quote_is_its_first_occurrence_and_only_a_chunk_there_hits():
    from raychunk.evaluation.metrics import Unit, score_units

    text = "## site_url\n\n**default**: `null`\n\n## repo_url\n\n**default**: `null`\n"
    q = LabelledQuery("d", "Default site_url?", "c.md", ({"quote": "**default**: `null`"},), ("heading",))
    (r,) = resolve_queries([q], {"/d/c.md": text})
    (p,) = r.passages
    assert (p.start, p.end, p.quote) == (13, 32, None)  # the first; no quote to match elsewhere
    second = text.index("**default**", p.end)
    wrong = Unit("/d/c.md", ((second, second + 19),), (text[second : second + 19],))
    right = Unit("/d/c.md", ((p.start, p.end),), (text[p.start : p.end],))
    assert score_units(r, [wrong], 5)["hit"] == 0 and score_units(r, [wrong, right], 10)["rank"] == 2
    located = locate_passages(q, "/d/c.md", text)
    kept, labels = apply_locations([q], ["/d/c.md"], {0: located})
    assert labels["ambiguous"] == [
        {"id": "d", "source": "/d/c.md", "quote": "**default**: `null`", "occurrences": 2, "scored": [13, 32]}
    ]


def test_eval_flags_are_checked_before_anything_runs(capsys):
    from raychunk.cli import main

    assert (
        main(["eval", "--sizes", "256", "--overlaps", "0", "--compare", "structure 999 o0", "fixed 256 o0"])
        == 2
    )
    assert "--compare 'structure 999 o0': not a setting of this run (" in capsys.readouterr().err
    assert main(["eval", "--read-budget", "0"]) == 2
    assert "--read-budget 0: expected a token count >= 1" in capsys.readouterr().err


def test_a_changed_word_or_a_neighbouring_table_value_is_not_noise():
    rows = (
        "| Delay interval (in milliseconds) between two consecutive exports | 1000 |\n"
        "| Maximum queue size | 2048 |\n"
        "| Delay interval (in milliseconds) between two consecutive exports | 5000 |\n"
    )
    assert find_quote(rows, "Delay interval (in seconds) between two consecutive exports | 1000") is None
    assert find_quote(rows, "Delay interval (in milliseconds) between two consecutive exports | 2048") is None
    m = find_quote(rows, "Delay interval (in milliseconds) between two consecutive exports 5000")
    assert rows[m.start : m.end].endswith("| 5000") and m.occurrences == 1
