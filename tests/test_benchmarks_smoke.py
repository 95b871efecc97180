"""Smoke tests of the benchmark scripts: the reference pipeline's stages, the token accounting of
end_to_end.py, and gpu_embed.py's CPU mode. None starts Ray; the two that load a model are slow."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"


def _load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    if str(ROOT / "benchmarks") not in sys.path:  # as when run as a script: its siblings import
        sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference():
    pytest.importorskip(
        "langchain_text_splitters", reason="the reference pipeline needs langchain-text-splitters"
    )
    return _load("reference_pipeline")


@pytest.fixture(scope="module")
def end_to_end():
    return _load("end_to_end")


@pytest.fixture(scope="module")
def gpu_embed():
    return _load("gpu_embed")


def _write_pdf(path: Path, pages: list[str]) -> Path:
    import pymupdf

    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page(width=1200, height=4000)  # room for ~10k characters of short lines
        if text:
            assert page.insert_textbox(pymupdf.Rect(36, 36, 1164, 3964), text, fontsize=6) >= 0, (
                "text did not fit"
            )
    doc.save(path)
    return path


def test_reference_pages_are_the_pdf_pages(reference):
    pdf = SAMPLES / "acme-sla.pdf"
    rows = reference.pdf_pages({"path": str(pdf), "bytes": pdf.read_bytes()})
    import pymupdf

    with pymupdf.open(pdf) as doc:
        assert [r["text"] for r in rows] == [p.get_text() for p in doc]
    assert all(r["source"] == str(pdf) for r in rows) and any(r["text"].strip() for r in rows)


def test_reference_chunks_2048_chars_with_200_overlap(reference, tmp_path):
    # A real text (the sample admin guide), set on one PDF page in small type: ~10k characters.
    text = (SAMPLES / "acme-cloud-admin-guide.md").read_text()
    text = (text * (1 + 10_000 // len(text)))[:10_000]
    pdf = _write_pdf(tmp_path / "long.pdf", [text])
    (page,) = reference.pdf_pages({"path": str(pdf), "bytes": pdf.read_bytes()})
    assert len(page["text"]) > 3 * reference.CHUNK_SIZE
    chunks = [r["text"] for r in reference.split_page(page)]
    assert len(chunks) >= 4
    assert max(len(c) for c in chunks) <= 2048
    assert min(len(c) for c in chunks[:-1]) > 1500  # packed close to the size, not split per line
    overlaps = []
    for a, b in zip(chunks, chunks[1:]):
        # b starts with the end of a: the longest such prefix, at most 200 characters.
        k = max((k for k in range(1, min(len(a), len(b), 400) + 1) if a.endswith(b[:k])), default=0)
        overlaps.append(k)
    assert all(0 < k <= 200 for k in overlaps), overlaps
    words = set(page["text"].split())
    assert words <= set(" ".join(chunks).split())  # nothing lost between chunks


def test_token_accounting_counts_truncation(end_to_end):
    assert end_to_end.token_accounting([10, 256, 257, 500], 256) == {
        "chunks": 4,
        "tokens": 1023,
        "embedded": 10 + 256 + 256 + 256,
        "dropped": 1 + 244,
        "truncated_chunks": 2,
    }
    assert end_to_end.token_accounting([], 256)["embedded"] == 0


def test_minilm_tokenizer_counts_without_its_128_cap(end_to_end):
    tok, max_len = end_to_end.minilm_tokenizer()
    assert max_len == 256
    long = "retention " * 600
    (n,) = end_to_end.token_lengths(tok, [long])
    assert n == 602  # 600 word pieces + [CLS] + [SEP]: tokenizer.json's own 128 truncation is off
    assert end_to_end.token_accounting([n], max_len)["dropped"] == 346


def test_text_pdfs_skips_pages_without_text(end_to_end, tmp_path):
    body = (SAMPLES / "billing-faq.txt").read_text()[:1500]
    _write_pdf(tmp_path / "b-text.pdf", [body, body])
    _write_pdf(tmp_path / "a-blank.pdf", ["", ""])
    _write_pdf(tmp_path / "c-mostly-blank.pdf", [body, "", "", ""])
    (tmp_path / "d-broken.pdf").write_bytes(b"%PDF-1.4 not really")
    assert [(p.name, n) for p, n in end_to_end.text_pdfs(tmp_path)] == [("b-text.pdf", 2)]


def test_sorted_order_is_longest_first_within_windows(gpu_embed):
    texts = ["a" * n for n in (1, 5, 3, 2, 9, 4, 7, 8, 6)]
    assert gpu_embed.batch_order(texts, 2, sort=False) == list(range(9))
    order = gpu_embed.batch_order(texts, 2, sort=True)  # windows of 4 x 2 texts
    assert sorted(order) == list(range(9))
    assert [len(texts[i]) for i in order] == [9, 8, 7, 5, 4, 3, 2, 1, 6]


@pytest.mark.slow
def test_reference_embedder_drops_tokens_past_256(reference):
    import numpy as np

    emb = reference.Embedder(device="cpu")
    assert emb.model.max_seq_length == 256
    tok = emb.model.tokenizer
    pieces = tok("the refund is prorated " * 200, add_special_tokens=False)["input_ids"]
    head = tok.decode(pieces[:254])  # what fits beside [CLS] and [SEP]
    out = emb({"text": np.array(["the refund is prorated " * 200, head], dtype=object)})
    a, b = out["embeddings"]
    assert float(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b)) > 0.999


@pytest.mark.slow
def test_gpu_embed_quick_cpu_writes_positive_figures(gpu_embed, tmp_path):
    out = tmp_path / "gpu_embed.json"
    args = ["--device", "cpu", "--quick", "--texts", "8", "--bert-texts", "4", "--batch-sizes", "4,8"]
    texts = [str(SAMPLES / "acme-cloud-admin-guide.md"), str(SAMPLES / "billing-faq.txt")]  # quick to parse
    assert gpu_embed.main([*args, "--json", str(out), *texts]) == 0
    report = json.loads(out.read_text())
    assert report["check"]["ok"] and report["max_seq_length"] == 256
    assert report["texts"]["unique"] == 8 and report["texts"]["files"] == 2
    rows = report["rows"]
    assert {(r["model"], r["batch_size"], r["order"]) for r in rows} == {
        (m, b, o)
        for m in ("all-MiniLM-L6-v2", "bert-base (random)")
        for b in (4, 8)
        for o in ("sorted", "unsorted")
    }
    for r in rows:
        assert r["chunks_per_s"] > 0 and r["tokens_per_s"] > 0 and r["ratio_to_cpu"] > 0
        assert 0 < r["tokens"] <= 256 * r["texts"]


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_embed_on_cuda(gpu_embed, tmp_path):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    out = tmp_path / "gpu_embed.json"
    args = [
        "--device",
        "cuda",
        "--texts",
        "256",
        "--batch-sizes",
        "64,256",
        "--cpu-texts",
        "32",
        "--repeats",
        "1",
    ]
    assert gpu_embed.main([*args, "--json", str(out), str(SAMPLES)]) == 0
    report = json.loads(out.read_text())
    assert all(r["dtype"] == "float16" and r["tokens_per_s"] > 0 for r in report["rows"])


def test_bench_all_gathers_the_recorded_figures(tmp_path, monkeypatch):
    """``make bench``'s table is built from what each benchmark records, and nothing without the env."""
    summary = _load("summary")
    monkeypatch.delenv("RAYCHUNK_BENCH_SUMMARY", raising=False)
    summary.record("nothing", 1.0)  # outside make bench: no file, no error
    path = tmp_path / "s.jsonl"
    monkeypatch.setenv("RAYCHUNK_BENCH_SUMMARY", str(path))
    summary.record("CPU stage, 2 CPUs vs 1", 1.444, target=">= 1.7", before="0.90", met=False)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows == [
        {
            "figure": "CPU stage, 2 CPUs vs 1",
            "value": 1.444,
            "target": ">= 1.7",
            "before": "0.90",
            "met": False,
        }
    ]
    bench_all = _load("bench_all")
    assert {script for _, script, _, _ in bench_all.BENCHMARKS} <= {
        p.stem for p in (ROOT / "benchmarks").glob("*.py")
    }


def test_rst_parse_compares_on_the_same_files(tmp_path, capsys):
    pytest.importorskip("pypandoc")
    (tmp_path / "a.rst").write_text(
        "Cmd\n===\n\n``APPEND``\n  .. versionadded:: 3.2\n\n  Append it.\n\n1. one\n2. two\n"
    )
    assert _load("rst_parse").main(["--corpus", str(tmp_path), "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "1 .rst files" in out and "x unstructured's speed" in out
    assert "raychunk 1 in words, 0 bare; unstructured 1 bare numbers" in out
    assert "numbered list items with their numbers: raychunk 2;" in out


def test_office_parse_compares_the_readers_with_unstructured(capsys):
    pytest.importorskip("pptx")
    pytest.importorskip("unstructured")
    samples = str(ROOT / "samples")
    assert _load("office_parse").main(["--corpus", samples, "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "3 files (1 .docx, 1 .pptx, 1 .eml)" in out and "the first file of each format" in out
    assert out.count("x unstructured's speed") == 2 and "all" in out and ".docx" in out
    # the sample deck's three bullets are list items only in raychunk's blocks
    assert "list items: raychunk 6, unstructured 3" in out
