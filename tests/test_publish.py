"""Publishing a staged output: the duplicate chunk id guard and the documents compaction, on real Parquet."""

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from raychunk import publish
from raychunk.schema import DOCUMENT_SCHEMA, documents_table

FS = pafs.LocalFileSystem()


def stage(out, chunk_parts: list[list[tuple[str, str]]], docs: list[dict] = ()) -> str:
    """A staging folder with one chunks part per list of ``(chunk_id, source)`` and one documents part."""
    staging = publish.staging_folder(str(out))
    FS.create_dir(f"{staging}/chunks", recursive=True)
    FS.create_dir(f"{staging}/documents", recursive=True)
    for i, part in enumerate(chunk_parts):
        table = pa.table(
            {"chunk_id": [c for c, _ in part], "source": [s for _, s in part], "n_tokens": [1] * len(part)},
            schema=pa.schema([("chunk_id", pa.string()), ("source", pa.string()), ("n_tokens", pa.int32())]),
        )
        pq.write_table(table, f"{staging}/chunks/part-{i:05d}.parquet")
    pq.write_table(documents_table(list(docs)), f"{staging}/documents/part-00000.parquet")
    return staging


def test_a_chunk_id_written_twice_stops_the_publish_and_keeps_everything(tmp_path):
    out = tmp_path / "out"
    (out / "chunks").mkdir(parents=True)
    (out / "chunks" / "previous.parquet").write_bytes(b"the previous run")
    staging = stage(
        out, [[("id-1", "docs/a.md"), ("id-2", "docs/a.md")], [("id-3", "docs/c.md"), ("id-2", "docs/b.md")]]
    )
    with pytest.raises(RuntimeError) as e:
        publish.publish(FS, staging, str(out), overwrite=True)
    message = str(e.value)
    assert "id-2" in message and "docs/a.md" in message and "docs/b.md" in message
    assert staging in message and "refusing to publish" in message
    assert FS.get_file_info(f"{staging}/chunks/part-00001.parquet").type == pafs.FileType.File
    assert (out / "chunks" / "previous.parquet").read_bytes() == b"the previous run"


def test_unique_ids_publish(tmp_path):
    out = tmp_path / "out"
    staging = stage(out, [[("id-1", "a"), ("id-2", "a")], [], [("id-3", "b")]])
    publish.check_unique_chunk_ids(FS, staging)
    publish.publish(FS, staging, str(out), overwrite=False)
    assert sorted(pq.read_table(out / "chunks").column("chunk_id").to_pylist()) == ["id-1", "id-2", "id-3"]
    assert not (out / "_staging").exists()


def test_a_run_with_no_chunks_publishes(tmp_path):
    staging = stage(tmp_path / "out", [])
    publish.check_unique_chunk_ids(FS, staging)


def test_documents_compact_into_one_file_and_come_back_without_text(tmp_path):
    rows = [
        {"doc_id": "2", "source": "b.md", "status": "ok", "text": "bee"},
        {"doc_id": "1", "source": "a.md", "status": "duplicate", "text": None},
    ]
    staging = stage(tmp_path / "out", [], rows)
    docs = publish.compact_documents(FS, staging, "zstd")
    assert "text" not in docs.column_names and docs.column("source").to_pylist() == ["a.md", "b.md"]
    written = pq.read_table(f"{staging}/documents/documents.parquet")
    assert written.schema.equals(DOCUMENT_SCHEMA, check_metadata=False)
    assert written.column("text").to_pylist() == [None, "bee"]

    big = stage(tmp_path / "big", [], rows)
    docs = publish.compact_documents(FS, big, "zstd", max_bytes=0)  # too big to gather: parts stay
    assert "text" not in docs.column_names and docs.column("source").to_pylist() == ["a.md", "b.md"]
    assert FS.get_file_info(f"{big}/documents/part-00000.parquet").type == pafs.FileType.File
