"""The run report as a typed record (``report.run.RunReport``): what ``as_json()`` writes to
``report.json`` (field order, optional parts left out, tuples as lists) and what the renderers read
from it. A real run's report is checked field by field in tests/test_job.py and byte for byte by
scripts/golden_dump.py."""

import dataclasses
import json

from raychunk.report.run import (
    ChunkIdCounts,
    Delta,
    DocumentCounts,
    DocumentNote,
    Duplicates,
    Embedder,
    Incremental,
    Input,
    Ocr,
    RayInfo,
    RunReport,
    Stage,
    Storage,
    Throughput,
    render_run_markdown,
    render_run_text,
)


def _report(**changes) -> RunReport:
    report = RunReport(
        generated="2026-12-03T20:00:00Z",
        output="/out",
        ray=RayInfo("local", {"CPU": 2.0}),
        embedder=Embedder("all-MiniLM-L6-v2", "torch", None, 384, 1, 2, 0.0),
        input=Input(7, 123_456, "/in"),
        documents=DocumentCounts({"failed": 5, "ok": 2}, {"prose": 2}),
        ocr=Ocr(1, 3, 1.25, ("tesseract",), ""),
        duplicates=Duplicates(0, 0, 0),
        chunks=10,
        vectors=10,
        tokens_embedded=900,
        tokens_chunked=900,
        over_embedder_limit=0,
        storage_bytes=Storage(20_000, 5_000, 4_000, 15_360),
        throughput=Throughput(10.0, 2.0, 0.7, 0.012, 1.0, 90.0),
        stages=(Stage("MapBatches(EmbedChunks)", 1, 4.5, None),),
        not_ok=(DocumentNote("a.pdf", "failed", "damaged"), DocumentNote("b.pdf", "failed", "damaged")),
        not_ok_total=5,
        warnings=(DocumentNote("c.md", reason="OCR read a page"),),
        warnings_total=1,
        settings={"chunks": {"tokenizer": "all-MiniLM-L6-v2"}, "vectors": None},
        resumed=None,
    )
    return dataclasses.replace(report, **changes)


def test_as_json_keeps_field_order_and_leaves_out_what_a_run_did_not_have():
    written = _report().with_files({"chunks": ["chunks/a.parquet"]}).as_json()
    assert list(written)[-4:] == ["warnings_total", "settings", "resumed", "files"]  # no incremental
    assert written["not_ok"][0] == {"source": "a.pdf", "status": "failed", "reason": "damaged"}
    assert written["warnings"] == [{"source": "c.md", "reason": "OCR read a page"}]  # a warning has no status
    assert written["ocr"]["engines"] == ["tesseract"] and written["stages"][0]["task_seconds"] is None
    assert "files" not in _report().as_json()
    assert json.loads(json.dumps(written)) == written  # plain JSON all the way down


def test_the_renderers_read_the_record():
    incremental = Incremental("/old", "abc", 4, True, ChunkIdCounts(8, 2, 1), 2, 8, 6, 2, Delta(2, 1))
    report = _report(
        incremental=incremental, embedder=Embedder("m", "onnx-int8", "int8 vectors", 384, 1, 1, 0.0)
    )
    text = render_run_text(report)
    assert "  chunk ids  8 unchanged, 2 new, 1 removed" in text
    assert "  vectors    2 embedded, 8 reused (6 by chunk id, 2 by text)" in text
    assert "  WARNING    embedder.backend=onnx-int8: int8 vectors" in text
    assert "  stage      MapBatches(EmbedChunks): 4.5 s wall" in text
    assert text.endswith(
        "  ... 3 more documents not ok (5 in all): the documents table has every one (status != 'ok')"
    )
    markdown = render_run_markdown(report)
    assert "## Incremental run (previous output `/old`)" in markdown
    assert "| embedder backend | onnx-int8: int8 vectors |" in markdown
    assert "| pages read by OCR | 3 of 1 documents (tesseract, 1.2 CPU s) |" in markdown
    assert "- `c.md`: OCR read a page" in markdown
