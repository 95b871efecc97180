"""Byte-identical inputs through the run and price jobs, on a real local Ray."""

import json
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from raychunk import dedupe
from raychunk.chunking import chunk_document
from raychunk.classify import classify
from raychunk.cli import main
from raychunk.config import build_run_config, load_config, load_doc_types
from raychunk.parse import parse_path
from raychunk.tokens import load_counter

GUIDE = (
    "# Install guide\n\n"
    "Download the installer and run it with the default options.\n\n"
    "## Configure\n\n"
    "- Set the region to the one nearest your users.\n"
    "- Keep the audit log on; it costs little and saves hours.\n\n"
    "## Upgrade\n\n"
    "Stop the service, replace the binary, start it again and check the version it reports.\n"
)


def corpus(tmp_path) -> Path:
    """``a.md`` and ``z-copy.md`` byte-identical, ``other.md`` the same size with different bytes."""
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    (src / "sub" / "z-copy.md").write_text(GUIDE)  # listed first on some walks; not the kept one
    (src / "a.md").write_text(GUIDE)
    (src / "other.md").write_text(GUIDE.replace("hours", "HOURS"))
    (src / "empty.txt").write_bytes(b"")
    return src


def test_run_chunks_one_copy_and_records_the_other(tmp_path, fresh_ray, monkeypatch):
    from raychunk.jobs.run import run

    monkeypatch.setattr(dedupe, "DRIVER_HASH_FILES", 0)  # hash as Ray tasks, as on a big corpus
    monkeypatch.setattr(dedupe, "LOCAL_HASH_FILES", 0)
    src = corpus(tmp_path)
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
    chunks = pq.read_table(tmp_path / "out" / "chunks")
    docs = {Path(d["source"]).name: d for d in pq.read_table(tmp_path / "out" / "documents").to_pylist()}

    assert set(docs) == {"a.md", "z-copy.md", "other.md", "empty.txt"}
    kept, copy = docs["a.md"], docs["z-copy.md"]
    assert kept["status"] == "ok" and kept["chunks"] > 0
    assert copy["status"] == "duplicate" and copy["reason"] == f"byte-identical to {src / 'a.md'}"
    assert copy["doc_id"] == kept["doc_id"] and copy["chunks"] == 0 and copy["text"] is None
    assert docs["other.md"]["status"] == "ok" and docs["empty.txt"]["status"] == "empty"

    ids = chunks.column("chunk_id").to_pylist()
    assert len(ids) == len(set(ids)) == kept["chunks"] + docs["other.md"]["chunks"]
    assert str(src / "sub" / "z-copy.md") not in set(chunks.column("source").to_pylist())

    assert kept["text"] == GUIDE
    for c in chunks.filter(pc.equal(chunks.column("source"), kept["source"])).to_pylist():
        assert kept["text"][c["char_start"] : c["char_end"]].strip()

    assert report["documents"]["by_status"] == {"duplicate": 1, "empty": 1, "ok": 2}
    assert report["duplicates"] == {
        "files": 1,
        "bytes_saved": len(GUIDE.encode()),
        "tokens_saved": kept["tokens"],
    }
    saved = json.loads((tmp_path / "out" / "report.json").read_text())
    assert saved["duplicates"] == report["duplicates"]
    assert "byte-identical duplicates skipped | 1" in (tmp_path / "out" / "report.md").read_text()


def test_price_counts_the_copy_and_the_tokens_it_saves(tmp_path, fresh_ray, capsys):
    src = corpus(tmp_path)
    out = tmp_path / "price"
    rc = main(
        [
            "price",
            "--input",
            str(src),
            "--output",
            str(out),
            "--sizes",
            "64",
            "--overlaps",
            "0",
            "--strategies",
            "fixed",
            "--no-measure",
            "--no-chart",
            "--num-cpus",
            "2",
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "1 byte-identical duplicates skipped" in printed and "tokens saved" in printed

    types = load_doc_types()
    parsed = parse_path(src / "a.md")
    doc_type = classify(parsed, types.thresholds).doc_type
    kept_tokens = sum(
        c.n_tokens
        for c in chunk_document(parsed, types.profiles[doc_type], load_counter(), doc_type=doc_type)
    )

    report = json.loads((out / "report.json").read_text())
    assert report["duplicates"] == 1
    profile, fixed = report["settings"]
    assert profile["setting"] == "per-type profile"
    assert profile["duplicates"] == fixed["duplicates"] == 1
    assert profile["tokens_saved"] == kept_tokens
    assert 0 < fixed["tokens_saved"] < fixed["tokens"]
    assert "tokens_saved" in (out / "report.csv").read_text().splitlines()[0]
