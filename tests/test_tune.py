"""``raychunk tune`` on a few real sample documents with the real MiniLM: what it refuses, what it
writes (a doc-types file that ``run --doc-types`` accepts), the held-out report, and a second run over
the same cache that embeds nothing."""

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from raychunk.chunking import Profile
from raychunk.cli import main
from raychunk.config import build_run_config, load_config, load_doc_types
from raychunk.jobs.tune import FIELDS, Embedder, profiles_for, run_tune, split
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


def test_a_setting_is_a_profile_or_a_profile_spelled_out(tmp_path):
    types = load_doc_types(None)
    assert profiles_for("profile", types) == dict(types.profiles)
    fixed = Profile(strategy="fixed", max_tokens=200)
    assert profiles_for("fixed:200", types) == {t: fixed for t in types.profiles}
    spelled = profiles_for("structure:256:min_tokens=100,overlap=0.1,table_max_tokens=128", types)
    assert set(spelled.values()) == {
        Profile(max_tokens=256, min_tokens=100, overlap=0.1, table_max_tokens=128)
    }
    data = yaml.safe_load((ROOT / "configs" / "doc_types.yaml").read_text())
    data["types"]["prose"]["max_tokens"] = 200
    other = tmp_path / "types.yaml"
    other.write_text(yaml.safe_dump(data))
    assert profiles_for(f"profile@{other}", types)["prose"].max_tokens == 200
    with pytest.raises(ValueError, match="expected profile, profile@FILE or STRATEGY:MAX_TOKENS"):
        profiles_for("structure", types)
    with pytest.raises(ValueError, match="min_tokens must be"):
        profiles_for("structure:64:min_tokens=64", types)


def test_each_distinct_text_is_embedded_once_and_equals_the_models_vector(tmp_path):
    model = build_run_config(load_config(), {}).embedder.model
    texts = [
        "Cedar: I hear you well.",
        "OTEL_BSP_SCHEDULE_DELAY | Delay interval | 5000",
        "Cedar: I hear you well.",
    ]
    first = Embedder(model, tmp_path)
    v = first(texts)
    assert first.embedded == 2 and v.shape == (3, 384)  # the repeated text once
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5) and np.array_equal(v[0], v[2])
    direct = first.model.encode(texts[:2], convert_to_numpy=True, normalize_embeddings=True)
    assert np.allclose(v[:2], direct, atol=1e-5)
    again = Embedder(model, tmp_path)  # a later run over the same folder
    assert np.array_equal(again(texts[::-1]), v[::-1]) and again.embedded == 0
