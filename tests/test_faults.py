"""One bad document never costs the run: faults injected into real runs on a local Ray.

The faults come from ``raychunk.faults`` (test-only, through ``RAYCHUNK_TEST_FAULTS``): a document
whose parse crashes its process, hangs, eats memory or raises; a Ray worker killed mid-task; an
embed actor that dies mid-batch; a driver SIGKILLed mid-run and resumed.
"""

import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from raychunk.config import build_run_config, load_config
from tests.drivers import kill_run_after_shards

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
ROOT = SAMPLES.parent
SPAN_COLUMNS = ["chunk_id", "doc_id", "source", "text", "char_start", "char_end", "page_start", "page_end"]


def config(inputs, out, **overrides):
    return build_run_config(
        load_config(),
        {"input": [str(p) for p in inputs], "output": str(out), "resources.num_cpus": 2, **overrides},
    )


def chunks_of(out: Path, columns=SPAN_COLUMNS):
    return pq.read_table(out / "chunks", columns=columns).sort_by("chunk_id")


def documents_of(out: Path) -> dict[str, dict]:
    rows = pq.read_table(out / "documents").to_pylist()
    return {Path(r["source"]).name: r for r in rows}


@pytest.fixture
def faults(monkeypatch, tmp_path):
    """Set the faults before Ray starts: its workers, and their document processes, inherit them."""

    def set_faults(spec: str):
        monkeypatch.setenv("RAYCHUNK_TEST_FAULTS", spec)
        monkeypatch.setenv("RAYCHUNK_TEST_FAULTS_DIR", str(tmp_path))

    return set_faults


def test_crashing_hanging_and_hungry_documents_become_failed_rows(tmp_path, fresh_ray, faults):
    from raychunk.jobs.run import run

    src = tmp_path / "in"
    shutil.copytree(SAMPLES, src)
    for name in ("crasher", "hanger", "hog", "raiser"):
        (src / f"{name}.txt").write_text(f"The {name} document.\n")
    faults("crash:crasher,hang:hanger,memory:hog,raise:raiser")
    # The limit counts the parser's libraries: an e-mail or office file loads unstructured, spaCy and
    # torch, 450-560 MiB before the document's own memory, so 700 MiB sat too close (it failed CI once).
    # 20 s: an office file's parse imports unstructured, spaCy and torch, several seconds on a loaded
    # 2-core machine (6 s once timed out a pptx there).
    limits = {"limits.doc_timeout_s": 20, "limits.doc_memory_mb": 1024, "limits.crash_attempts": 2}
    t = time.monotonic()
    report = run(config([src], tmp_path / "out", **{"embedder.enabled": False, **limits}))
    elapsed = time.monotonic() - t

    docs = documents_of(tmp_path / "out")
    assert docs["crasher.txt"]["status"] == "failed"
    assert docs["crasher.txt"]["reason"] == "worker crashed 2 times on this file (exit code 70, during parse)"
    assert (
        docs["hanger.txt"]["reason"]
        == "parse took longer than 20 s (limits.doc_timeout_s: --set limits.doc_timeout_s=40 gives it more)"
    )
    assert (
        docs["hog.txt"]["reason"]
        == "parse needed more than 1 GiB (limits.doc_memory_mb: --set limits.doc_memory_mb=2048 gives it more)"
    )
    assert docs["raiser.txt"]["reason"] == "parse failed with RuntimeError: test fault at raiser"
    for name, row in docs.items():
        if name not in ("crasher.txt", "hanger.txt", "hog.txt", "raiser.txt"):
            assert row["status"] == "ok" and row["chunks"] > 0, (name, row["reason"])
        if name != "hog.txt":  # the hog was killed as soon as it was seen over the limit
            assert 0 < row["peak_rss_mb"] <= 1024, name
    assert report["documents"]["by_status"] == {"failed": 4, "ok": len(docs) - 4}
    assert elapsed < 120  # the hang cost its 20 s, not the run


def test_a_killed_worker_and_a_dead_embed_actor_change_nothing(tmp_path, fresh_ray, faults):
    """The Ray worker parsing one file is SIGKILLed mid-task (Ray retries the task), and the embed
    actor dies in its first batch (Ray restarts it and runs the batch again): the output is the
    clean run's, embeddings included."""
    import ray

    from raychunk.jobs.run import run

    src = tmp_path / "in"
    shutil.copytree(SAMPLES, src)
    run(config([src], tmp_path / "clean"))
    ray.shutdown()

    victim = src / "release-notes.txt"
    faults(f"kill-parent-once:{victim},crash-once:embed")
    run(config([src], tmp_path / "faulty"))
    assert (tmp_path / f"raychunk-fault-{_marker(str(victim))}").exists(), "the worker kill did not happen"
    assert (tmp_path / f"raychunk-fault-{_marker('embed')}").exists(), "the actor crash did not happen"

    clean, faulty = chunks_of(tmp_path / "clean"), chunks_of(tmp_path / "faulty")
    assert faulty.num_rows == clean.num_rows > 0
    assert faulty.equals(clean)
    a = np.array(
        pq.read_table(tmp_path / "clean" / "chunks").sort_by("chunk_id").column("embedding").to_pylist()
    )
    b = np.array(
        pq.read_table(tmp_path / "faulty" / "chunks").sort_by("chunk_id").column("embedding").to_pylist()
    )
    assert np.abs(a - b).max() <= 1e-5
    assert {k: v["status"] for k, v in documents_of(tmp_path / "faulty").items()} == {
        k: v["status"] for k, v in documents_of(tmp_path / "clean").items()
    }


def _marker(match: str) -> str:
    import hashlib

    return hashlib.sha1(match.encode()).hexdigest()[:16]


def test_a_killed_driver_resumes_to_the_same_rows(tmp_path, fresh_ray):
    from raychunk.jobs.run import run

    src = tmp_path / "in"
    shutil.copytree(SAMPLES, src)
    out = tmp_path / "out"
    flags = ["--no-embed", "--set", "output_files.rows_per_shard=1", "--set", "resources.files_per_block=1"]
    env = dict(os.environ, RAYCHUNK_TEST_FAULTS="slow:/", RAY_ADDRESS="")  # every document takes 2 s
    kill_run_after_shards(
        ["--input", str(src), "--output", str(out), *flags], out, shards=3, seconds=120, env=env
    )
    staged = len(list(out.glob("_staging/*/_done/*.json")))
    assert not (out / "report.json").exists()

    report = run(config([src], out, **{"embedder.enabled": False, "output_files.resume": True}))
    assert 3 <= report["resumed"]["inputs_already_done"] <= staged < len(list(src.iterdir()))
    run(config([src], tmp_path / "clean", **{"embedder.enabled": False}))

    assert chunks_of(out, None).equals(chunks_of(tmp_path / "clean", None))
    resumed, clean = documents_of(out), documents_of(tmp_path / "clean")
    drop = ("parse_seconds", "peak_rss_mb")
    assert {k: {c: v for c, v in r.items() if c not in drop} for k, r in resumed.items()} == {
        k: {c: v for c, v in r.items() if c not in drop} for k, r in clean.items()
    }
    saved = json.loads((out / "report.json").read_text())
    assert sorted(saved["files"]["chunks"]) == sorted(f"chunks/{p.name}" for p in (out / "chunks").iterdir())
    assert not (out / "_staging").exists()
