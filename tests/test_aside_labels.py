"""The aside set ``evals/aside.jsonl``: labelled like ``evals/corpus.jsonl`` but over other documents
of the shared corpus, kept out of tuning. Well formed, its floors met, no document shared with the
tuning set, every quote in its document (where the shared corpus is beside the repo)."""

from pathlib import Path

import pytest

from tests.drivers import load_script
from tests.labels import assert_well_formed, read_rows

ROOT = Path(__file__).resolve().parent.parent
ASIDE = ROOT / "evals" / "aside.jsonl"
TUNING = ROOT / "evals" / "corpus.jsonl"
CORPUS = ROOT.parent / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not present at {CORPUS}")


def test_rows_are_well_formed_and_meet_the_floors():
    rows = read_rows(ASIDE)
    assert_well_formed(rows)
    for r in rows:
        assert len([t for t in r["tags"] if t in ("structured", "weak")]) == 1, r["id"]
    lines, failures = load_script("check_labels").tag_report(rows, aside=True)
    assert failures == [], "\n".join(lines + failures)
    # and the tuning set's floors are not the aside set's: the same rows fail them
    assert load_script("check_labels").tag_report(rows)[1]


def test_no_document_is_shared_with_the_tuning_set():
    aside = {r["source"] for r in read_rows(ASIDE)}
    tuning = {r["source"] for r in read_rows(TUNING)}
    assert aside and not aside & tuning, sorted(aside & tuning)


@needs_corpus
def test_every_quote_is_in_its_document():
    checks, errors, _ = load_script("check_labels").check(ASIDE, CORPUS)
    assert errors == []
    assert {c.qid for c in checks} == {r["id"] for r in read_rows(ASIDE)}
    assert all(c.occurrences == 1 for c in checks), [c.qid for c in checks if c.occurrences != 1]
