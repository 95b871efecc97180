"""The eval report is a typed record (``report.eval.EvalReport``) built once from what
``evaluation.report`` computed; ``as_json()`` is ``report.json``, key for key and in order, and the
renderers read the record."""

import dataclasses
import json

import pytest

from raychunk.evaluation import evaluate, load_queries, match_source
from raychunk.evaluation.labels import LabelledQuery, apply_locations, locate_passages
from raychunk.evaluation.report import evaluate_partials
from raychunk.report.eval import EvalReport, build_eval_report, render_eval_markdown, render_eval_text
from tests.test_eval_partials import QUERIES, both_reports, embedded  # noqa: F401  (a fixture)
from tests.test_eval_spans import _corpus


def same_json(record: EvalReport, computed: dict) -> None:
    assert json.dumps(record.as_json(), indent=2, ensure_ascii=False) == json.dumps(
        computed, indent=2, ensure_ascii=False
    )


def test_a_report_with_failed_spans_is_its_record_key_for_key():
    queries, honest, loose, Setting, args = _corpus()
    computed = evaluate(
        queries,
        chunks={"honest": honest, "loose": loose},
        settings=[Setting("honest"), Setting("loose")],
        **args,
    )
    report = build_eval_report(computed)
    same_json(report, computed)
    assert "embedding" not in report.as_json() and "written" not in report.as_json()
    loose_row = report.settings[1]
    assert not loose_row.span_check.ok and loose_row.span_check.examples[0].span == (0, 88)
    assert report.recommendation.setting == "honest" and report.recommendation.excluded == ("loose",)
    assert report.span_failures == ("loose",) and report.labels is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.k = 3  # type: ignore[misc]
    # The renderers read the record, never the computed dict.
    with pytest.raises(AttributeError):
        render_eval_text(computed)
    assert "FAIL 1/1" in render_eval_text(report)
    assert "| loose | 1 of 1 | guide.md | 0 | [0, 88) |" in render_eval_markdown(report)

    args["vectors"] = {"loose": args["vectors"]["loose"]}
    none = evaluate(queries, chunks={"loose": loose}, settings=[Setting("loose")], **args)
    report = build_eval_report(none)
    same_json(report, none)
    assert report.recommendation.setting is None and report.recommendation.comparisons == ()
    assert "Recommendation: none" in render_eval_text(report)


def test_a_key_the_record_does_not_know_fails_when_built():
    queries, honest, _, Setting, args = _corpus()
    args["vectors"] = {"honest": args["vectors"]["honest"]}
    computed = evaluate(queries, chunks={"honest": honest}, settings=[Setting("honest")], **args)
    computed["settings"][0]["surprise"] = 1
    with pytest.raises(TypeError, match="surprise"):
        build_eval_report(computed)


@pytest.mark.slow
def test_the_sample_corpus_eval_is_its_record_key_for_key(embedded):  # noqa: F811
    """Both computations on the sample corpus, with located labels (a quote not found, skipped), the
    embedding counts, the embedder and the files written."""
    settings, resolved, table, texts, qv, sizes = embedded
    old, new, partials = both_reports(embedded, table)
    sources = sorted(texts)
    asked = load_queries(QUERIES) + [
        LabelledQuery("nowhere", "what is not there", "acme-sla.pdf", ({"quote": "no such words at all"},))
    ]
    named = [match_source(q.source, sources) for q in asked]
    located = {i: locate_passages(q, s, texts[s]) for i, (q, s) in enumerate(zip(asked, named))}
    _, labels = apply_locations(asked, named, located, skip_unlocated=True)
    labels["seconds"] = 0.4
    assert labels["unlocated"] and labels["skipped_questions"] == ["nowhere"]
    args = dict(k=5, parent_budget=512, dim=qv.shape[1], file_sizes=sizes, read_budget=300)
    partials.embedding.update({"embedded": 40, "reused": 60, "seconds": 1.5})
    tagged = [
        dataclasses.replace(q, tags=("even",) if i % 2 else ("odd", "first")) for i, q in enumerate(resolved)
    ]
    with_labels = evaluate_partials(
        tagged, partials, settings, labels=labels, compare=[(settings[1].label, settings[2].label)], **args
    )
    for computed in (old, new, with_labels):
        report = build_eval_report(computed)
        same_json(report, computed)
        assert [r.setting for r in report.settings] == [s.label for s in settings]
        assert len(report.per_query) == len(resolved)
    # What the job adds: the embedder's name, and the files once written.
    report = dataclasses.replace(
        build_eval_report(with_labels, embedder="minilm"), written=("report.json", "report.md")
    )
    same_json(report, {**with_labels, "embedder": "minilm", "written": ["report.json", "report.md"]})
    assert list(report.by_tag) == ["even", "first", "odd"]
    assert list(report.paired[0].metrics.recall.by_tag) == ["even", "first", "odd"]
    assert report.embedding.reused == 60 and report.embedder == "minilm"
    assert report.labels.skipped_questions == ("nowhere",)
    assert "nowhere acme-sla.pdf" in render_eval_text(report)
    assert "60 of 100 chunk vectors reused (60%)" in render_eval_markdown(report)
    assert dataclasses.replace(report, written=None).as_json() == {
        **json.loads(json.dumps(with_labels)),
        "embedder": "minilm",
    }


def test_labels_located_twice_and_through_a_running_header_are_typed():
    text = (
        "Refunds take 30 days to arrive.\n\nRefunds take 30 days to arrive.\n\nBackups run every night at "
        "two\n\nACME Admin Guide   Page 3\n\nin the morning, kept for ninety days."
    )
    asked = [
        LabelledQuery("a", "refunds", "/c/x.md", ({"quote": "Refunds take 30 days"},)),
        LabelledQuery(
            "b",
            "backups",
            "/c/x.md",
            ({"quote": "Backups run every night at two in the morning, kept for ninety days."},),
        ),
    ]
    located = {i: locate_passages(q, "/c/x.md", text) for i, q in enumerate(asked)}
    _, labels = apply_locations(asked, ["/c/x.md"] * 2, located)
    queries, honest, _, Setting, args = _corpus()
    args["vectors"] = {"honest": args["vectors"]["honest"]}
    computed = evaluate(
        queries, chunks={"honest": honest}, settings=[Setting("honest")], labels=labels, **args
    )
    report = build_eval_report(computed)
    same_json(report, computed)
    (twice,), (skipped,) = report.labels.ambiguous, report.labels.noise_skipped
    assert (twice.id, twice.occurrences, twice.scored) == ("a", 2, (0, 20))
    assert skipped.id == "b" and skipped.how == "words, 5 skipped" and report.labels.seconds is None
    text = render_eval_text(report)
    assert "1 quote(s) occur more than once: the first occurrence is scored (a: 2x)." in text
    assert "page numbers): b (words, 5 skipped)." in text
