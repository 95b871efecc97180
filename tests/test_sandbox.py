"""The document sandbox (raychunk.isolate) names the step a document was in when it went over a
limit, crashed or raised, though the child no longer sends a message per step (it writes the step
into a byte shared with the parent); and a run of many documents comes back whole and in order.
Steps are standard-library callables, so the child can unpickle them anywhere."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from raychunk.isolate import Limits, Sandbox

STEPS = [("parse", float), ("classify", abs), ("chunk", str)]


@pytest.fixture
def box():
    sandbox = Sandbox(Limits(doc_timeout_s=1.5, doc_memory_mb=256, crash_attempts=2))
    yield sandbox
    sandbox.close()


def test_many_documents_come_back_in_order(box):
    out = [box.run(STEPS, str(-i), key="plain")[0] for i in range(300)]
    assert out == [str(float(i)) for i in range(300)]


def test_a_timeout_names_the_step_it_happened_in(box):
    steps = [("parse", float), ("classify", abs), ("chunk", time.sleep)]
    t = time.monotonic()
    result, failure, _ = box.run(steps, "30", key="sleep")
    assert time.monotonic() - t < 10
    assert result is None and failure.kind == "timeout" and failure.stage == "chunk"
    assert (
        failure.reason
        == "chunk took longer than 1.5 s (limits.doc_timeout_s: --set limits.doc_timeout_s=3 gives it more)"
    )
    # the killed child is replaced: the next document goes through
    assert box.run(STEPS, "2", key="plain")[0] == "2.0"


def test_a_crash_names_the_step_and_the_next_document_is_fine(box):
    steps = [("parse", int), ("classify", os._exit), ("chunk", str)]
    result, failure, _ = box.run(steps, "70", key="exit")
    assert result is None and failure.kind == "crash" and failure.stage == "classify"
    assert failure.reason == "worker crashed 2 times on this file (exit code 70, during classify)"
    assert box.run(STEPS, "-3", key="plain")[0] == "3.0"


def test_memory_and_errors_name_their_step(box):
    hungry = [("parse", int), ("classify", abs), ("chunk", bytearray)]
    result, failure, _ = box.run(hungry, str(1024 * 2**20), key="hungry")
    assert result is None and failure.kind == "memory" and failure.stage == "chunk"
    assert (
        failure.reason
        == "chunk needed more than 256 MiB (limits.doc_memory_mb: --set limits.doc_memory_mb=512 gives it more)"
    )
    result, failure, _ = box.run(STEPS, "not a number", key="plain")
    assert result is None and failure.kind == "error" and failure.stage == "parse"
    assert failure.reason.startswith("parse failed with ValueError")


def test_a_batch_goes_on_past_the_documents_that_kill_its_process(box):
    """One round trip for many documents, each under its own limits: a crash (tried again, then
    given up), a hang, a memory hog and an error each end as that document's failure, and every
    other document of the batch still comes back, in order, through a fresh process."""
    steps = [("parse", eval), ("chunk", str)]
    batch = [
        "1 + 1",
        "__import__('os')._exit(70)",
        "2 + 2",
        "__import__('time').sleep(30)",
        "3 + 3",
        "bytearray(1024 * 2**20)",
        "1 / 0",
        "4 + 4",
    ]
    t = time.monotonic()
    out = box.run_many(steps, batch, key="eval")
    assert time.monotonic() - t < 20
    assert [result for result, _, _ in out] == ["2", None, "4", None, "6", None, None, "8"]
    failures = {i: f for i, (_, f, _) in enumerate(out) if f is not None}
    assert failures[1].reason == "worker crashed 2 times on this file (exit code 70, during parse)"
    assert (
        failures[3].reason
        == "parse took longer than 1.5 s (limits.doc_timeout_s: --set limits.doc_timeout_s=3 gives it more)"
    )
    assert failures[3].seconds >= 1.5
    assert (
        failures[5].reason
        == "parse needed more than 256 MiB (limits.doc_memory_mb: --set limits.doc_memory_mb=512 gives it more)"
    )
    assert failures[6].reason.startswith("parse failed with ZeroDivisionError")
    assert sorted(failures) == [1, 3, 5, 6]
    # the clock is each document's own: a batch of quick documents longer than the limit is fine
    quick = box.run_many([("parse", eval)], ["__import__('time').sleep(0.1)"] * 20, key="naps")
    assert [f for _, f, _ in quick] == [None] * 20


def test_a_process_is_kept_after_a_format_loads_its_libraries_not_after_leftovers(tmp_path, monkeypatch):
    """A document that leaves 200 MiB behind gets its process replaced (the next one starts
    clean); one whose format first loads a library of that size does not, or every office file
    would import unstructured, spaCy and torch again (3-4 s each)."""
    (tmp_path / "heavy_parser_lib.py").write_text("BALLAST = b'x' * (200 * 2**20)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    box = Sandbox(Limits(doc_memory_mb=512))
    pid = "__import__('os').getpid()"
    try:
        loads = box.run_many([("parse", eval)], [f"(__import__('heavy_parser_lib'), {pid})[1]", pid], key="l")
        assert loads[0][1] is None and loads[0][0] == loads[1][0]
        hoard = "__import__('gc').__dict__.setdefault('hoard', []).append(b'x' * (200 * 2**20))"
        leaves = box.run_many([("parse", eval)], [f"({hoard}, {pid})[1]", pid], key="l")
        assert leaves[0][1] is None and leaves[0][0] != leaves[1][0]
    finally:
        box.close()


def test_a_block_in_one_trip_gives_the_rows_its_files_give_one_by_one(tmp_path):
    """The job's document step on a block (an Arrow table of ``blocks.SCHEMA`` rows, one round trip,
    as the executor runs it) returns the rows the same files give one a trip, in order: chunks, documents, a file that cannot
    be decoded and one that could not be read."""

    import pyarrow as pa

    from raychunk import document_steps
    from raychunk.blocks import SCHEMA
    from raychunk.config import build_run_config, load_config
    from raychunk.pipeline import _block_of_rows
    from raychunk.plan import resolve_plan

    samples = Path(__file__).resolve().parent.parent / "samples"
    files = [samples / n for n in ("acme-cloud-admin-guide.md", "billing-faq.txt", "error-codes.jsonl")]
    (tmp_path / "noise.txt").write_bytes(bytes(range(256)) * 8)
    rows = [
        {"path": str(p), "bytes": p.read_bytes(), "read_error": None, "raw": None, "size": None}
        for p in files
    ]
    rows.insert(1, {"path": str(tmp_path / "noise.txt"), "bytes": (tmp_path / "noise.txt").read_bytes()})
    rows.insert(
        3, {"path": str(tmp_path / "gone.md"), "bytes": None, "read_error": "could not read the file"}
    )
    rows = [{k: r.get(k) for k in SCHEMA.names} for r in rows]
    cfg = build_run_config(load_config(), {"input": [str(samples)], "embedder.enabled": False})
    job = resolve_plan(cfg)
    step = document_steps.documents(job, scheme="", last=document_steps.chunk(job))

    def facts(out: list[dict]) -> list[dict]:
        rows = pa.Table.from_pylist(out, schema=step.schema).drop_columns(["parse_seconds", "peak_rss_mb"])
        return rows.to_pylist()

    one_by_one = [r for row in rows for r in step.fn([row], **step.kwargs)]
    block = _block_of_rows(step.fn, step.schema)(pa.Table.from_pylist(rows, schema=SCHEMA), **step.kwargs)
    assert isinstance(block, pa.Table) and block.schema == step.schema
    assert facts(block.to_pylist()) == facts(one_by_one)
    documents = [r for r in one_by_one if r["row_type"] == "document"]
    assert [(Path(d["source"]).name, d["status"]) for d in documents] == [
        ("acme-cloud-admin-guide.md", "ok"),
        ("noise.txt", "failed"),
        ("billing-faq.txt", "ok"),
        ("gone.md", "failed"),
        ("error-codes.jsonl", "ok"),
    ]
    assert sum(r["row_type"] == "chunk" for r in one_by_one) > 5


def test_the_document_process_loads_no_arrow_or_numpy_for_text_formats():
    """The job's document steps on markdown, text and JSON lines in the sandbox: the rows come back,
    and the document process has mapped neither pyarrow nor numpy (Arrow is the Ray worker's: its
    import was 0.2 CPU s of each document process's start of about 0.5)."""
    from raychunk import document_steps
    from raychunk.config import build_run_config, load_config
    from raychunk.plan import resolve_plan

    samples = Path(__file__).resolve().parent.parent / "samples"
    names = ("acme-cloud-admin-guide.md", "billing-faq.txt", "error-codes.jsonl")
    cfg = build_run_config(load_config(), {"input": [str(samples)], "embedder.enabled": False})
    job = resolve_plan(cfg)
    steps = document_steps.per_document(job, scheme="", last=document_steps.chunk(job))
    box = Sandbox(cfg.limits)
    try:
        rows = [{"path": str(samples / n), "bytes": (samples / n).read_bytes()} for n in names]
        out = box.run_many(steps, rows, key="text formats")
        maps = Path(f"/proc/{box._proc.pid}/maps").read_text()
    finally:
        box.close()
    assert [f for _, f, _ in out] == [None] * 3
    assert all(sum(r["row_type"] == "chunk" for r in result) > 0 for result, _, _ in out)
    loaded = {p for line in maps.splitlines() for p in ("/pyarrow/", "/numpy/") if p in line}
    assert loaded == set()


def test_the_child_logs_at_the_level_of_the_process_that_started_it(capfd):
    # `raychunk -v parse` promises a failed parse's traceback, which the parser logs at INFO in the child.
    import logging

    log = logging.getLogger("raychunk")
    steps = [("parse", logging.getLogger("raychunk.parse").info)]
    before = log.level
    try:
        for level, shown in ((logging.INFO, True), (logging.WARNING, False)):
            log.setLevel(level)
            sandbox = Sandbox(Limits(doc_timeout_s=10))
            try:
                sandbox.run(steps, "the parser's traceback", key="log")
            finally:
                sandbox.close()
            assert ("INFO the parser's traceback" in capfd.readouterr().err) is shown
    finally:
        log.setLevel(before)
