"""``raychunk tune`` on a few real sample documents with the real MiniLM: what it refuses, what it
writes (a doc-types file that ``run --doc-types`` accepts), the held-out report, and a second run over
the same cache that embeds nothing."""

import json
from pathlib import Path

import pytest

from raychunk.cli import main
from raychunk.config import build_run_config, load_config, load_doc_types
from raychunk.jobs.tune import FIELDS, run_tune, split
from raychunk.plan import resolve_plan

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
SOURCES = ("acme-cloud-admin-guide.md", "billing-faq.txt", "security-incident-runbook.html")


@pytest.fixture(scope="module")
def queries(tmp_path_factory) -> Path:
    rows = [json.loads(x) for x in (ROOT / "evals" / "samples.jsonl").read_text().splitlines() if x.strip()]
    path = tmp_path_factory.mktemp("tune") / "q.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows if r["source"] in SOURCES))
    return path


@pytest.fixture(scope="module")
def first(queries, tmp_path_factory):
    out = tmp_path_factory.mktemp("tune-out")
    rc = main(
        [
            "tune",
            "--input",
            str(SAMPLES),
            "--queries",
            str(queries),
            "--cache",
            str(out / "cache"),
            "--output",
            str(out / "doc_types.yaml"),
            "--min-questions",
            "4",
            "--types",
            "manual,faq",
        ]
    )
    assert rc == 0
    return out, json.loads((out / "tune.json").read_text())


def test_writes_a_doc_types_file_run_accepts(first):
    out, report = first
    written = out / "doc_types.yaml"
    tuned = load_doc_types(written)
    start = load_doc_types(None)
    assert tuned.thresholds == start.thresholds and list(tuned.overrides) == list(start.overrides)
    for kind, p in start.profiles.items():  # only the tuned type may move
        if kind != "manual":
            assert tuned.profiles[kind] == p, kind
    resolve_plan(build_run_config(load_config(), {"chunk.doc_types": str(written)}))  # as `run` checks it
    assert written.read_text().startswith("# Written by raychunk tune")
    for step in report["steps"]:  # one field at a time, from the candidates, each with its interval
        assert step["field"] in FIELDS and step["value"] in FIELDS[step["field"]]
        lo, hi = step["interval"]
        assert lo <= step["diff"] <= hi
        assert step["kept"] == (
            lo > 0 or (hi >= 0 and step["diff"] >= -0.02 and step["vectors"] < step["vectors_before"])
        )
    assert report["steps"], "manual has enough questions: some change must be tried"


def test_refuses_a_type_with_too_few_questions_saying_how_many_it_needs(first):
    _, report = first
    assert "faq" in report["refused"] and "manual" not in report["refused"]
    why = report["refused"]["faq"]
    assert "needs 4 to tune on" in why and "label about" in why


def test_reports_the_held_out_questions_it_did_not_tune_on(first, queries):
    _, report = first
    ids = [json.loads(x)["id"] for x in queries.read_text().splitlines() if x.strip()]
    held = report["held_out"]
    assert held["questions"] == sum(split(i, 0.5) for i in ids) > 0
    assert 0 <= held["hit_before"] <= 1 and 0 <= held["hit_after"] <= 1
    lo, hi = held["interval"]
    assert lo <= held["difference"] <= hi
    assert held["vectors_before"] > 0 and held["vectors_after"] > 0


def test_a_second_run_over_the_cache_embeds_nothing_and_tunes_the_same(first, queries, tmp_path):
    out, report = first
    said: list[str] = []
    again = run_tune(
        SAMPLES,
        queries,
        output=tmp_path / "doc_types.yaml",
        cache=out / "cache",
        min_questions=4,
        only=["manual", "faq"],
        say=said.append,
    )
    assert report["embedded"] > 0 and again["embedded"] == 0 and again["reused"] > 0
    assert again["profiles"] == report["profiles"] and again["held_out"] == report["held_out"]
    assert any(line.startswith("faq: not tuned") for line in said)
