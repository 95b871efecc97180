"""The rows in flight are typed: each last document step's rows fit its one Arrow schema
(``schema.RUN_ROWS``, ``MEASURE_ROWS``, ``EVAL_ROWS``) with no key the schema would drop, a
document's facts travel as columns, and the writer turns a block of them into the documents/ and
chunks/ Parquet that the documents' own records give (read back with pyarrow)."""

from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from raychunk import document_steps
from raychunk.config import build_run_config, load_config
from raychunk.evaluation.partials import Retrieval
from raychunk.plan import resolve_plan
from raychunk.pricing import grid
from raychunk.schema import CHUNK_COLUMNS, DOCUMENT_COLUMNS, DOCUMENT_SCHEMA, RUN_ROWS, chunk_schema
from raychunk.sink import ShardSink

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
SLY = 'A line that quotes a row: {"status": "failed", "bytes": 999999, "reason": "x"} ünïcode\n'


@pytest.fixture(scope="module")
def job():
    cfg = build_run_config(load_config(), {"input": [str(SAMPLES)], "embedder.enabled": False})
    return resolve_plan(cfg)


def inputs(tmp_path: Path) -> list[dict]:
    """Real files as the reader gives them: samples, a text that quotes row keys, a file under a
    name that is not UTF-8 (``raw``: its bytes), one of random bytes (fails to decode), a duplicate
    and one that could not be read."""
    sly = tmp_path / "sly.md"
    sly.write_text("# Sly\n\n" + SLY * 3)
    rows = [{"path": str(p), "bytes": p.read_bytes()} for p in sorted(SAMPLES.glob("*.md"))[:2]]
    rows.append({"path": str(sly), "bytes": sly.read_bytes()})
    rows.append(
        {
            "path": str(tmp_path / "caf\\xe9.txt"),
            "bytes": b"caf\xc3\xa9 au lait\n" * 20,
            "raw": b"caf\xe9.txt",
        }
    )
    rows.append({"path": str(tmp_path / "noise.txt"), "bytes": bytes(range(256)) * 8})
    rows.append({"path": str(tmp_path / "copy.md"), "bytes": sly.read_bytes()})
    rows.append({"path": str(tmp_path / "gone.md"), "bytes": None, "read_error": "could not read the file"})
    return rows


def through(step, rows: list[dict]) -> list[dict]:
    return step.fn(rows, **step.kwargs)


def test_every_last_steps_rows_fit_their_schema_with_nothing_dropped(job, tmp_path):
    settings = grid([128], [0], ["structure", "fixed"])
    labelled = {str(SAMPLES / "acme-cloud-admin-guide.md"): [(0, [[0, 20, "Acme"]])]}
    duplicates = {str(tmp_path / "copy.md"): str(tmp_path / "sly.md")}
    lasts = [
        document_steps.chunk(job),
        document_steps.measure(job, settings, keep_ids=True),
        document_steps.for_eval(job, settings, Retrieval(labelled, None, 5, 512)),
    ]
    for last in lasts:
        step = document_steps.documents(job, scheme="", last=last, duplicates=duplicates)
        assert step.schema is last.schema
        out = through(step, inputs(tmp_path))
        assert out and all(set(r) <= set(step.schema.names) for r in out), last.fn.func.__name__
        table = pa.Table.from_pylist(out, schema=step.schema)  # as the executor builds the block
        assert table.num_rows == len(out)


def test_a_block_of_run_rows_is_written_as_the_documents_records_say(job, tmp_path):
    duplicates = {str(tmp_path / "copy.md"): str(tmp_path / "sly.md")}
    step = document_steps.documents(job, scheme="", last=document_steps.chunk(job), duplicates=duplicates)
    rows = through(step, inputs(tmp_path))
    docs = [r for r in rows if r["row_type"] == "document"]
    chunks = [r for r in rows if r["row_type"] == "chunk"]
    by_source = {Path(d["source"]).name: d for d in docs}
    assert {n: d["status"] for n, d in by_source.items()} == {
        **{p.name: "ok" for p in sorted(SAMPLES.glob("*.md"))[:2]},
        "sly.md": "ok",
        "caf\\xe9.txt": "ok",
        "noise.txt": "failed",
        "copy.md": "duplicate",
        "gone.md": "failed",
    }
    assert SLY.strip() in by_source["sly.md"]["text"]  # the text is a column, not inside JSON
    assert by_source["copy.md"]["text"] is None
    assert by_source["caf\\xe9.txt"]["source_bytes"] == b"caf\xe9.txt"

    sink = ShardSink(
        str(tmp_path / "out"),
        pafs.LocalFileSystem(),
        attempt="t",
        dim=None,
        rows_per_shard=10,
        compression="zstd",
    )
    sink.on_write_start()
    result = sink.write([pa.Table.from_pylist(rows, schema=step.schema)], type("Ctx", (), {"task_idx": 0})())
    assert result["documents"] == len(docs) and result["chunks"] == len(chunks)
    written = pq.read_table(tmp_path / "out" / "documents" / "part-t-00000.parquet")
    assert written.schema == DOCUMENT_SCHEMA
    expected = pa.Table.from_pylist(
        [{k: d.get(k) for k in DOCUMENT_COLUMNS} for d in docs], schema=DOCUMENT_SCHEMA
    )
    assert written.to_pylist() == expected.to_pylist()
    written_chunks = pq.read_table(tmp_path / "out" / "chunks" / "part-t-00000.parquet")
    assert written_chunks.schema == chunk_schema(None)
    assert written_chunks.to_pylist() == [{k: c.get(k) for k in CHUNK_COLUMNS} for c in chunks]
    assert {Path(s).name for s in written_chunks.column("source").to_pylist()} >= {"sly.md", "caf\\xe9.txt"}


def test_run_rows_schema_holds_both_tables_columns():
    """Every column of chunks/ and of documents/ has a field in the run's rows, of the same type."""
    for schema in (chunk_schema(None), DOCUMENT_SCHEMA):
        for f in schema:
            assert RUN_ROWS.field(f.name).type == f.type, f.name
