"""Reading and checking the labelled query sets (``evals/*.jsonl``), shared by their tests."""

import json
from pathlib import Path


def read_rows(path: Path) -> list[dict]:
    """The set's questions, one dict a line."""
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def assert_well_formed(labelled: list[dict]) -> None:
    """Unique ids, exactly the five keys, and no question that holds its own quote."""
    ids = [r["id"] for r in labelled]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for r in labelled:
        assert set(r) == {"id", "query", "source", "passages", "tags"}, r["id"]
        for p in r["passages"]:  # the question is asked, not the passage copied
            assert p["quote"].strip().lower() not in r["query"].lower(), r["id"]
