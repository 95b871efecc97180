"""The held-out set ``evals/nodejs.jsonl``: technical documentation from outside the shared corpus
(eight pages of Node.js's API docs, kept in ``evals/nodejs/``), labelled blind to every chunker's
output. Well formed, no document shared with the tuning set, every quote once in its document."""

from collections import Counter
from pathlib import Path

from tests.drivers import load_script
from tests.labels import assert_well_formed, read_rows

ROOT = Path(__file__).resolve().parent.parent
HELD_OUT = ROOT / "evals" / "nodejs.jsonl"
TUNING = ROOT / "evals" / "corpus.jsonl"


def test_rows_are_well_formed():
    rows = read_rows(HELD_OUT)
    assert_well_formed(rows)
    for r in rows:
        assert r["tags"][0] == "structured" and "weak" not in r["tags"], r["id"]
        assert (ROOT / "evals" / r["source"]).is_file(), r["source"]
    docs = Counter(r["source"] for r in rows)
    assert len(rows) >= 100 and len(docs) == 8 and min(docs.values()) >= 10, docs
    headings = sum("heading" in r["tags"] for r in rows)
    assert headings >= 0.35 * len(rows), headings


def test_no_document_is_shared_with_the_tuning_set():
    names = {Path(r["source"]).name for r in read_rows(HELD_OUT)}
    tuning = {Path(r["source"]).name for r in read_rows(TUNING)}
    assert names and not names & tuning, sorted(names & tuning)


def test_every_quote_is_once_in_its_document():
    checks, errors, _ = load_script("check_labels").check(HELD_OUT, ROOT / "evals")
    assert errors == []
    assert {c.qid for c in checks} == {r["id"] for r in read_rows(HELD_OUT)}
    assert all(c.occurrences == 1 for c in checks), [c.qid for c in checks if c.occurrences != 1]
    assert all(c.status == "exact" for c in checks), [c.qid for c in checks if c.status != "exact"]
