"""The eval end to end on a real local Ray: the sample corpus, the shipped labelled set, two settings."""

import json
from pathlib import Path

import pytest

from raychunk.config import build_run_config, load_config
from raychunk.evaluation import evaluate, load_queries
from raychunk.jobs.eval import prepare_eval, run_eval
from raychunk.pricing import Setting, grid

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
QUERIES = ROOT / "evals" / "samples.jsonl"

pytestmark = pytest.mark.slow


def test_shipped_labelled_set_covers_every_sample_document():
    queries = load_queries(QUERIES)
    assert len(queries) >= 30
    named = {q.source for q in queries}
    assert named == {p.name for p in SAMPLES.iterdir() if p.is_file()}


def test_eval_on_the_sample_corpus(tmp_path, fresh_ray, monkeypatch):
    cfg = build_run_config(load_config(), {"input": [str(SAMPLES)], "resources.num_cpus": 2})
    settings = grid([256], [0], ["structure", "fixed"])
    queries = load_queries(QUERIES)

    inputs = prepare_eval(cfg, settings, queries)  # the one Ray run of this test

    # Every passage was located in its document's text.
    assert len(inputs["queries"]) == len(queries)
    for q in inputs["queries"]:
        text = inputs["documents"][q.source]["text"]
        assert q.passages and all(0 <= p.start < p.end <= len(text) for p in q.passages)
        for p in q.passages:
            assert " ".join(text[p.start : p.end].split()) == " ".join(p.quote.split())
    assert set(inputs["chunks"]) == {s.label for s in settings}
    for label, rows in inputs["chunks"].items():
        assert inputs["vectors"][label].shape == (len(rows), inputs["dim"])
    assert inputs["query_vectors"].shape == (len(queries), inputs["dim"])

    # The pure scoring is deterministic on the same embeddings.
    args = dict(settings=settings, k=5, parent_budget=512)
    first = evaluate(**inputs, **args)
    assert json.dumps(first, sort_keys=True) == json.dumps(evaluate(**inputs, **args), sort_keys=True)

    # run_eval: the same scoring plus the files (the Ray part reused, not run twice).
    monkeypatch.setattr("raychunk.jobs.eval.prepare_eval", lambda *a, **k: inputs)
    report = run_eval(cfg, settings, queries, k=5, parent_budget=512, output=tmp_path / "eval")
    out = tmp_path / "eval"
    assert {p.name for p in out.iterdir()} == {"report.json", "report.md", "plot.png"}
    saved = json.loads((out / "report.json").read_text())
    assert saved["recommendation"] == report["recommendation"] == first["recommendation"]
    assert saved["questions"] == len(queries) and saved["documents"] == 12 and saved["k"] == 5
    assert [r["setting"] for r in saved["settings"]] == [s.label for s in settings]
    for row in saved["settings"]:
        assert row["vectors"] > 0 and row["total_bytes"] > 0
        for name in ("hit", "recall", "precision", "iou", "chroma_precision", "chroma_iou", "mrr", "tokens"):
            m = row["metrics"][name]
            assert m["interval"][0] <= m["mean"] <= m["interval"][1]
        # Summed retrieved characters are at least the merged ones.
        for name in ("precision", "iou"):
            assert row["metrics"][f"chroma_{name}"]["mean"] <= row["metrics"][name]["mean"] + 1e-9
        check = row["span_check"]
        assert check["chunks"] == len(inputs["chunks"][row["setting"]])
        assert check["ok"], check["examples"]  # structure and fixed spans hold their bodies
        assert set(row["small_to_big"]) == {"hit", "recall", "tokens"}
        assert row["small_to_big"]["recall"]["mean"] >= row["metrics"]["recall"]["mean"] - 1e-9
        assert row["metrics"]["recall"]["mean"] > 0.5  # far above chance on this corpus
    rec = saved["recommendation"]
    assert rec["setting"] in {s.label for s in settings} and rec["reason"]
    assert len(saved["per_query"]) == len(queries)
    assert (out / "report.md").read_text().startswith("# raychunk eval report")
    assert (out / "plot.png").read_bytes()[:4] == b"\x89PNG"


def test_a_label_naming_no_document_fails_before_the_job(tmp_path, fresh_ray):
    from raychunk.evaluation import LabelledQuery

    cfg = build_run_config(load_config(), {"input": [str(SAMPLES)], "resources.num_cpus": 2})
    bad = [LabelledQuery("x1", "Where?", "missing.md", ({"quote": "x"},))]
    with pytest.raises(ValueError, match=r"query x1 \('Where\?'\): source 'missing.md' names no document"):
        run_eval(cfg, [Setting("per-type profile")], bad)
