"""``evals/handbook.jsonl``: 48 questions over the shared corpus's Word handbook
(``other/handbook-872p.docx``), labelled from the parsed text alone, blind to every chunker's
output: the set that measures bold lines read as headings where a document sets its subsections so.
The file holds the handbook four times over (8,140 paragraphs; the copies differ only in list
numbers, heading tabs and a footnote), so every quote occurs in each copy; the passages are drawn
evenly over the first copy, which is where the locator takes a quote (its first occurrence), and a
hit is a chunk of that copy. Well formed, no document shared with the tuning set, every quote exact
and first in the first copy (where the shared corpus is beside the repo)."""

from pathlib import Path

import pytest

from raychunk.parse import parse_path
from tests.drivers import load_script
from tests.labels import assert_well_formed, read_rows

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "evals" / "handbook.jsonl"
TUNING = ROOT / "evals" / "corpus.jsonl"
CORPUS = ROOT.parent / "shared" / "corpus"
DOC = CORPUS / "other" / "handbook-872p.docx"


def test_rows_are_well_formed():
    rows = read_rows(SET)
    assert_well_formed(rows)
    assert len(rows) == 48
    assert {r["source"] for r in rows} == {"other/handbook-872p.docx"}
    assert all(r["tags"] == ["structured", "manual"] for r in rows)


def test_no_document_is_shared_with_the_tuning_set():
    tuning = {r["source"] for r in read_rows(TUNING)}
    assert "other/handbook-872p.docx" not in tuning


@pytest.mark.skipif(not DOC.is_file(), reason=f"shared corpus not present at {CORPUS}")
def test_every_quote_is_exact_and_first_in_the_first_copy():
    checks, errors, _ = load_script("check_labels").check(SET, CORPUS)
    assert errors == []
    assert {c.qid for c in checks} == {r["id"] for r in read_rows(SET)}
    assert all(c.status == "exact" for c in checks), [c.qid for c in checks if c.status != "exact"]
    text = parse_path(str(DOC)).text
    opening = "The Bankruptcy Reform Act of 1978 removed"  # the handbook's first sentence, once a copy
    assert text.count(opening) == 4
    second = text.index(opening, text.index(opening) + 1)
    for r in read_rows(SET):
        quote = r["passages"][0]["quote"]
        assert text.index(quote) < second, r["id"]
