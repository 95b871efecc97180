"""The price report is a typed record (``report.price.PriceReport``) built once from what the job
measured and priced; ``as_json()`` is ``report.json``, key for key and in order, and the renderers
read the record."""

import dataclasses
import json

import pytest

from raychunk.pricing import IndexSpec, Rates, summarize
from raychunk.report.price import PriceReport, build_price_report, render_price_markdown, render_price_text
from tests.test_price_partials import SETTINGS, corpus_rows


@pytest.mark.parametrize(
    "sample, rates, with_previous",
    [
        (1.0, Rates(), False),
        (
            0.5,
            Rates(
                gpu_hour_usd=2.0, storage_gb_month_usd=0.1, api_usd_per_1m_tokens=0.02, tokens_per_second=900
            ),
            True,
        ),
        (1.0, Rates(tokens_per_second=1000), True),
    ],
)
def test_report_json_is_the_summary_key_for_key(sample, rates, with_previous):
    rows, _ = corpus_rows(40, keep_ids=with_previous)
    previous = None
    if with_previous:
        ids = [c["chunk_id"] for r in rows if r["setting"] == SETTINGS[0].label for c in r["chunk_ids"]]
        previous = {cid: 1 for cid in ids[: len(ids) // 2]} | {"gone": 1}
    summary = summarize(
        rows,
        SETTINGS,
        dim=384,
        dtype="float32",
        index=IndexSpec.parse("hnsw:M=16"),
        corpus_files=80,
        corpus_bytes=10**6,
        sample=sample,
        rates=rates,
        previous=previous,
    )
    notes, projection = ["a note"], ["a projection line"]
    throughput = {"tokens_per_second": 900.0, "device": "cpu"} if rates.tokens_per_second else None
    report = build_price_report(summary, notes=notes, projection=projection, throughput=throughput)
    expected = {**summary, "notes": notes, "projection": projection, "throughput": throughput}
    assert json.dumps(report.as_json(), indent=2) == json.dumps(expected, indent=2)
    assert "written" not in report.as_json()
    written = dataclasses.replace(report, written=("report.json", "report.md"))
    assert written.as_json() == {**expected, "written": ["report.json", "report.md"]}
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.dim = 8  # type: ignore[misc]
    first = report.settings[0]
    assert first.setting == SETTINGS[0].label and first.chunks == summary["settings"][0]["chunks"]
    assert (first.interval_95 is not None) == (sample < 1)
    assert (first.delta is not None) == with_previous
    assert (first.embed_seconds is not None) == bool(rates.tokens_per_second)
    text, markdown = render_price_text(report), render_price_markdown(report)
    assert f"{first.vectors:,}" in text and f"{first.vectors:,}" in markdown
    assert ("Against the previous run" in text) == with_previous
    assert ("storage $/mo" in text) == (rates.storage_gb_month_usd is not None)


def test_a_report_without_settings_renders():
    report = PriceReport((), 0, 0, 0, 0, 1.0, False, 384, "float32", "flat", (), (), None)
    assert "0 files" in render_price_text(report)
