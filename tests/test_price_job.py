"""`raychunk price` end to end on the sample corpus, on a real local Ray."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from raychunk.chunking import chunk_document
from raychunk.classify import classify
from raychunk.cli import main
from raychunk.config import load_doc_types
from raychunk.parse import parse_path
from raychunk.tokens import load_counter

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _profile_ids(paths) -> dict[str, int]:
    """The chunk ids `raychunk run` would write for these files (the per-type profiles)."""
    types = load_doc_types()
    counter = load_counter()
    ids = {}
    for p in paths:
        parsed = parse_path(p)
        doc_type = classify(parsed, types.thresholds).doc_type
        for c in chunk_document(parsed, types.profiles[doc_type], counter, doc_type=doc_type):
            ids[c.chunk_id] = c.n_tokens
    return ids


def test_price_grid_writes_table_files_and_chart(tmp_path, fresh_ray, capsys):
    prev = tmp_path / "prev" / "chunks"
    prev.mkdir(parents=True)
    some = sorted(SAMPLES.glob("*.md")) + sorted(SAMPLES.glob("*.csv"))
    ids = _profile_ids(some)
    ids["0" * 32] = 40  # a chunk that no longer exists
    pq.write_table(pa.table({"chunk_id": list(ids), "n_tokens": list(ids.values())}), prev / "part-0.parquet")

    out = tmp_path / "price"
    rc = main(
        [
            "price",
            "--input",
            str(SAMPLES),
            "--output",
            str(out),
            "--sizes",
            "128,256",
            "--overlaps",
            "0,0.2",
            "--strategies",
            "structure,fixed",
            "--tokens-per-second",
            "1000",
            "--gpu-hour-usd",
            "2",
            "--index",
            "hnsw:M=16",
            "--previous",
            str(tmp_path / "prev"),
            "--num-cpus",
            "2",
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "per-type profile" in printed and "fixed 256 o0.2" in printed and "By document type" in printed

    report = json.loads((out / "report.json").read_text())
    labels = [s["setting"] for s in report["settings"]]
    assert labels == [
        "per-type profile",
        "structure 128 o0",
        "structure 128 o0.2",
        "structure 256 o0",
        "structure 256 o0.2",
        "fixed 128 o0",
        "fixed 128 o0.2",
        "fixed 256 o0",
        "fixed 256 o0.2",
    ]
    n_files = len([p for p in SAMPLES.iterdir() if p.is_file()])
    for s in report["settings"]:
        assert s["documents"] == n_files
        assert s["vectors"] == s["chunks"] > 0
        assert s["vector_bytes"] == s["vectors"] * 384 * 4
        assert s["index_bytes"] > s["vector_bytes"]  # HNSW links
        assert s["total_bytes"] == s["index_bytes"] + s["text_bytes"]
        assert s["tokens_p50"] <= s["tokens_p95"]
        assert s["embed_usd"] == pytest.approx(s["tokens"] / 1000 / 3600 * 2)
        assert sum(t["chunks"] for t in s["by_type"].values()) == s["chunks"]
    fixed = {s["setting"]: s for s in report["settings"]}
    assert fixed["fixed 128 o0.2"]["vectors"] > fixed["fixed 128 o0"]["vectors"]  # overlap costs vectors
    assert fixed["fixed 128 o0.2"]["overlap_share"] > 0 == fixed["fixed 128 o0"]["overlap_share"]

    delta = report["settings"][0]["delta"]
    assert delta["unchanged"] == len(ids) - 1
    assert delta["removed"] == 1
    assert delta["new"] == report["settings"][0]["chunks"] - delta["unchanged"]

    assert (out / "report.md").read_text().startswith("# raychunk price report")
    csv_lines = (out / "report.csv").read_text().splitlines()
    assert csv_lines[0].startswith("scope,setting,documents,chunks,vectors")
    assert (out / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sampled_price_is_labelled_an_estimate(tmp_path, fresh_ray, capsys):
    out = tmp_path / "price"
    rc = main(
        [
            "price",
            "--input",
            str(SAMPLES),
            "--output",
            str(out),
            "--sizes",
            "256",
            "--overlaps",
            "0",
            "--sample",
            "0.5",
            "--no-measure",
            "--no-chart",
            "--num-cpus",
            "2",
        ]
    )
    assert rc == 0
    assert "ESTIMATE" in capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    assert report["estimate"] and 0 < report["sampled_documents"] < report["corpus_files"]
    assert all(s["interval_95"] for s in report["settings"])
    assert not (out / "chart.png").exists()
