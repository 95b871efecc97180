"""The eval end to end on a real local Ray: the sample corpus, the shipped labelled set, two settings."""

import json
from pathlib import Path

import pytest

from raychunk.config import build_run_config, load_config
from raychunk.evaluation import load_queries
from raychunk.evaluation.report import evaluate_partials
from raychunk.jobs.eval import prepare_eval, run_eval
from raychunk.parse import parse_document
from raychunk.plan import resolve_plan
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

    inputs = prepare_eval(
        resolve_plan(cfg), settings, queries, k=5, parent_budget=512
    )  # the one Ray run of this test

    # Every passage was located in its document's text, on the workers: no text came back.
    assert len(inputs["queries"]) == len(queries)
    partials = inputs["partials"]
    assert all("text" not in d for d in partials.documents.values())
    for q in inputs["queries"]:
        text = parse_document(Path(q.source).read_bytes(), q.source, options=cfg.parse).text
        assert q.passages and all(0 <= p.start < p.end <= len(text) for p in q.passages)
        for p in q.passages:
            assert " ".join(text[p.start : p.end].split()) == " ".join(p.quote.split())
    assert set(partials.hits) == {s.label for s in settings}
    for ranked in partials.hits.values():  # each question's top 5, best first
        assert len(ranked) == len(queries) and all(len(hits) == 5 for hits in ranked)

    # The pure scoring is deterministic on the same merged results.
    args = dict(settings=settings, k=5, parent_budget=512)
    first = evaluate_partials(**inputs, **args)
    assert json.dumps(first, sort_keys=True) == json.dumps(
        evaluate_partials(**inputs, **args), sort_keys=True
    )

    # run_eval: the same scoring plus the files (the Ray part reused, not run twice).
    monkeypatch.setattr("raychunk.jobs.eval.prepare_eval", lambda *a, **k: inputs)
    report = run_eval(cfg, settings, queries, k=5, parent_budget=512, output=tmp_path / "eval")
    out = tmp_path / "eval"
    assert {p.name for p in out.iterdir()} == {".raychunk-output", "report.json", "report.md", "plot.png"}
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
        assert check["chunks"] == row["vectors"]  # every chunk checked, where its text was
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


def test_unlocatable_quotes_fail_after_parsing_before_any_chunking(tmp_path, fresh_ray, monkeypatch):
    """Every quote not in the parsed text is listed, and nothing is chunked or embedded: the job's
    chunk-and-embed pass (its last step, ``document_steps.for_eval``) is never declared. ``--skip-unlocated`` goes on."""
    from raychunk.evaluation import LabelledQuery
    from raychunk.evaluation.labels import UnlocatedQuotes

    cfg = build_run_config(load_config(), {"input": [str(SAMPLES)], "resources.num_cpus": 2})
    queries = load_queries(QUERIES)[:3] + [
        LabelledQuery("m1", "Gone?", "billing-faq.txt", ({"quote": "Refunds take ninety business days"},)),
        LabelledQuery(
            "m2", "Also gone?", "acme-cloud-admin-guide.md", ({"quote": "The agent needs 64 CPU cores"},)
        ),
    ]
    built = []
    monkeypatch.setattr(
        "raychunk.document_steps.for_eval", lambda *a, **k: built.append(1) or pytest.fail("chunked")
    )
    with pytest.raises(UnlocatedQuotes) as e:
        run_eval(cfg, grid([256], [0], ["fixed"]), queries)
    assert [m["id"] for m in e.value.missing] == ["m1", "m2"] and not built
    assert "its first 3 of 6 words are at character" in str(e.value)  # m2's nearest match
    monkeypatch.undo()
    inputs = prepare_eval(resolve_plan(cfg), grid([256], [0], ["fixed"]), queries, skip_unlocated=True)
    assert [q.qid for q in inputs["queries"]] == [q.qid for q in queries[:3]]
    assert inputs["labels"]["skipped_questions"] == ["m1", "m2"]


def big_markdown(path: Path, n_bytes: int, seed: int) -> None:
    """``n_bytes`` of markdown made of 160-letter words: cheap to parse, count and embed (a word that
    long is one token to the embedder), so one chunk holds the whole file under a 2,048-token cap."""
    import os
    import random

    letters = bytes(range(97, 123)) * 10
    table = bytes(letters[i % len(letters)] for i in range(256))
    raw = os.urandom(n_bytes).translate(table)
    words = [raw[i : i + 160] for i in range(0, len(raw), 160)]
    rng = random.Random(seed)
    paragraphs = [b" ".join(words[i : i + rng.randint(4, 8)]) for i in range(0, len(words), 6)]
    path.write_bytes(b"# Appendix %d\n\n" % seed + b"\n\n".join(paragraphs) + b"\n")


def test_eval_pulls_the_labelled_sets_worth_to_the_driver_not_the_corpus(tmp_path, fresh_ray, monkeypatch):
    """100 documents of 200 KB (20 MB of text) beside two labelled ones: the driver receives the
    questions' top k and small sums, a few hundred KB, and would receive the 20 MB if the texts came
    back (the document facts, or chunk rows, with their text)."""
    import ray.data

    from raychunk.chunking import Profile

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(100):
        big_markdown(
            corpus / f"appendix-{i:03d}.md", 200_000 + 37 * i, seed=i
        )  # sizes differ: no dedupe reads
    labelled = ("billing-faq.txt", "acme-cloud-admin-guide.md")
    for name in labelled:
        (corpus / name).write_bytes((SAMPLES / name).read_bytes())
    queries = [q for q in load_queries(QUERIES) if q.source in labelled]
    text_bytes = sum(p.stat().st_size for p in corpus.iterdir())
    assert text_bytes > 20e6 and len(queries) >= 5

    pulled = []
    iter_batches = ray.data.Dataset.iter_batches

    def counted(self, *args, **kwargs):
        for batch in iter_batches(self, *args, **kwargs):
            pulled.append(batch.nbytes)
            yield batch

    monkeypatch.setattr(ray.data.Dataset, "iter_batches", counted)
    for name in ("take", "take_all", "take_batch", "to_pandas", "iter_rows"):
        monkeypatch.setattr(ray.data.Dataset, name, lambda *a, **k: pytest.fail("rows pulled past the count"))
    cfg = build_run_config(
        load_config(), {"input": [str(corpus)], "resources.num_cpus": 2, "chunk.tokenizer": "words"}
    )
    settings = [Setting("fixed 2048", Profile(strategy="fixed", max_tokens=2048))]
    report = run_eval(cfg, settings, queries, k=5, plot=False)

    assert report["documents"] == 102 and report["questions"] == len(queries)
    (row,) = report["settings"]
    assert row["vectors"] >= 102 and row["span_check"]["ok"], row["span_check"]
    assert row["metrics"]["hit"]["mean"] > 0  # the labelled documents are found among the big ones
    assert sum(pulled) < 1_000_000 and sum(pulled) < text_bytes / 50, sum(pulled)
