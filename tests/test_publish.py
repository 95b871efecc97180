"""Staging, resume and publishing, on real Parquet: the duplicate chunk id guard, the documents
compaction, what a resume keeps and drops, and a publish that never leaves the output unreadable."""

import json
from collections import Counter

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

from raychunk import publish
from raychunk.config import ConfigError
from raychunk.schema import DOCUMENT_SCHEMA, documents_table

FS = pafs.LocalFileSystem()
CHUNKS = pa.schema(
    [
        ("chunk_id", pa.string()),
        ("source", pa.string()),
        ("n_tokens", pa.int32()),
        ("text", pa.large_string()),
        ("over_limit", pa.bool_()),
    ]
)


def chunk_table(pairs: list[tuple[str, str]]) -> pa.Table:
    n = len(pairs)
    columns = [[c for c, _ in pairs], [s for _, s in pairs], [1] * n, ["t"] * n, [False] * n]
    return pa.table(columns, schema=CHUNKS)


def stage(out, chunk_parts: list[list[tuple[str, str]]], docs: list[dict] = ()) -> publish.Staging:
    """A staging folder with one chunks part per list of ``(chunk_id, source)`` and one documents part."""
    staging = publish.open_staging(FS, str(out), {"run": 1}, resume=False)
    FS.create_dir(f"{staging.path}/chunks", recursive=True)
    FS.create_dir(f"{staging.path}/documents", recursive=True)
    for i, part in enumerate(chunk_parts):
        pq.write_table(chunk_table(part), f"{staging.path}/chunks/part-x-{i:05d}.parquet")
    pq.write_table(documents_table(list(docs)), f"{staging.path}/documents/part-x-00000.parquet")
    return staging


def test_a_chunk_id_written_twice_stops_the_publish_and_keeps_everything(tmp_path):
    out = tmp_path / "out"
    (out / "chunks").mkdir(parents=True)
    (out / "chunks" / "previous.parquet").write_bytes(b"the previous run")
    staging = stage(
        out, [[("id-1", "docs/a.md"), ("id-2", "docs/a.md")], [("id-3", "docs/c.md"), ("id-2", "docs/b.md")]]
    )
    with pytest.raises(RuntimeError) as e:
        publish.move_in(FS, staging, str(out), [], overwrite=True)
    message = str(e.value)
    assert "id-2" in message and "docs/a.md" in message and "docs/b.md" in message
    assert staging.path in message and "refusing to publish" in message
    assert FS.get_file_info(f"{staging.path}/chunks/part-x-00001.parquet").type == pafs.FileType.File
    assert (out / "chunks" / "previous.parquet").read_bytes() == b"the previous run"


def test_the_previous_output_stays_readable_until_the_new_report_names_the_new_shards(tmp_path):
    out = tmp_path / "out"
    old = stage(out, [[("old-1", "a")]])
    files = publish.move_in(FS, old, str(out), [], overwrite=False)
    publish.write_report(FS, str(out), "report.json", json.dumps({"files": files}))
    publish.retire_old(FS, old, str(out), files)

    new = stage(out, [[("new-1", "a")], [("new-2", "b")]])
    # The new shards have names of their own: moving them in clobbers nothing of the old output.
    for part in FS.get_file_info(pafs.FileSelector(f"{new.path}/chunks")):
        FS.move(part.path, part.path.replace("part-x-", f"part-{new.attempt}-"))
    files = publish.move_in(FS, new, str(out), [], overwrite=True)
    old_report = json.loads((out / "report.json").read_text())
    assert [pq.read_table(out / f).column("chunk_id")[0].as_py() for f in old_report["files"]["chunks"]] == [
        "old-1"
    ]
    publish.write_report(FS, str(out), "report.json", json.dumps({"files": files}))
    publish.retire_old(FS, new, str(out), files)
    assert sorted(pq.read_table(out / "chunks").column("chunk_id").to_pylist()) == ["new-1", "new-2"]
    assert sorted(f"chunks/{p.name}" for p in (out / "chunks").iterdir()) == files["chunks"]
    assert not (out / "_staging").exists() and not list(out.glob(".*.tmp"))


def test_documents_compact_into_one_file_and_come_back_without_text(tmp_path):
    rows = [
        {"doc_id": "2", "source": "b.md", "status": "ok", "text": "bee"},
        {"doc_id": "1", "source": "a.md", "status": "duplicate", "text": None},
    ]
    staging = stage(tmp_path / "out", [], rows)
    files = publish.compact_documents(FS, staging, "zstd")
    [compact] = files
    written = pq.read_table(compact)
    assert written.schema.equals(DOCUMENT_SCHEMA, check_metadata=False)
    assert written.column("text").to_pylist() == [None, "bee"]
    # The parts stay until the publish, for a resume.
    assert FS.get_file_info(f"{staging.path}/documents/part-x-00000.parquet").type == pafs.FileType.File

    big = stage(tmp_path / "big", [], rows)
    files = publish.compact_documents(FS, big, "zstd", max_bytes=0)  # too big to gather: parts stay
    assert files == [f"{big.path}/documents/part-x-00000.parquet"]


def shard(staging: publish.Staging, name: str, chunks: list[tuple[str, str]], docs: dict[str, int]):
    """A shard as the sink writes it: its files, then its manifest."""
    table = chunk_table(chunks)
    rows = [{"doc_id": s, "source": s, "status": "ok", "chunks": n} for s, n in docs.items()]
    files = []
    if chunks:
        pq.write_table(table, f"{staging.path}/chunks/{name}.parquet")
        files.append(f"chunks/{name}.parquet")
    if rows:
        pq.write_table(documents_table(rows), f"{staging.path}/documents/{name}.parquet")
        files.append(f"documents/{name}.parquet")
    FS.create_dir(f"{staging.path}/_done", recursive=True)
    manifest = publish.shard_manifest(
        files[0] if chunks else None, files[-1] if rows else None, table, rows, 0, 0
    )
    (FS.open_output_stream(f"{staging.path}/_done/{name}.json")).write(json.dumps(manifest).encode())


def test_resume_keeps_whole_documents_and_drops_the_rest(tmp_path):
    out = tmp_path / "out"
    staging = stage(out, [])
    FS.delete_file(f"{staging.path}/documents/part-x-00000.parquet")
    # a.md: whole in shard 1. b.md: its document row and one of its two chunks in shard 1, the other
    # chunk never written. c.md: chunks in shard 2 but its manifest was never written (a cut write).
    shard(staging, "s1", [("a1", "a.md"), ("a2", "a.md"), ("b1", "b.md")], {"a.md": 2, "b.md": 2})
    pq.write_table(chunk_table([("c1", "c.md")]), f"{staging.path}/chunks/s2.parquet")
    done = publish.resume_state(FS, staging.path, "zstd")
    assert done == {"a.md"}
    assert not (tmp_path / staging.path / "chunks/s2.parquet").exists()
    assert pq.read_table(f"{staging.path}/chunks/s1.parquet").column("chunk_id").to_pylist() == ["a1", "a2"]
    assert pq.read_table(f"{staging.path}/documents/s1.parquet").column("source").to_pylist() == ["a.md"]
    [result] = publish.shard_results(FS, staging.path)
    assert result["chunks"] == 2 and result["documents"] == 1


def test_resume_takes_a_manifest_cut_short_for_a_shard_never_done(tmp_path):
    """Found by CI (tests/test_faults.py, a driver killed mid-run): the kill came between the
    manifest's creation and its write, and the resume failed on the empty file."""
    staging = stage(tmp_path / "out", [])
    FS.delete_file(f"{staging.path}/documents/part-x-00000.parquet")
    shard(staging, "s1", [("a1", "a.md")], {"a.md": 1})
    shard(staging, "s2", [("b1", "b.md")], {"b.md": 1})
    FS.open_output_stream(f"{staging.path}/_done/s2.json").close()  # s2's manifest: created, empty
    assert publish.resume_state(FS, staging.path, "zstd") == {"a.md"}
    assert not (tmp_path / staging.path / "chunks/s2.parquet").exists()
    assert not (tmp_path / staging.path / "_done/s2.json").exists()


def test_resume_finds_the_interrupted_run_and_refuses_a_changed_config(tmp_path):
    out = str(tmp_path / "out")
    first = publish.open_staging(FS, out, {"max_tokens": 200}, resume=False)
    again = publish.open_staging(FS, out, {"max_tokens": 200}, resume=True)
    assert again.resumed and again.path == first.path and again.attempt != first.attempt
    with pytest.raises(ConfigError, match="max_tokens changed"):
        publish.open_staging(FS, out, {"max_tokens": 300}, resume=True)
    fresh = publish.open_staging(FS, str(tmp_path / "other"), {"max_tokens": 200}, resume=True)
    assert not fresh.resumed


def test_documents_summary_streams_parts_and_lists_only_the_first_few(tmp_path):
    """The run report's document figures, read part by part, equal a plain count over all the rows;
    only the first ``first`` non-ok documents and warnings (by source) are listed, with totals."""
    import random

    rng = random.Random(7)
    rows = []
    for i in range(300):
        status = rng.choice(["ok", "ok", "ok", "failed", "empty", "duplicate"])
        rows.append(
            {
                "doc_id": f"h{i}",
                "source": f"s/{rng.randrange(10**6):06d}-{i}.md",
                "status": status,
                "doc_type": rng.choice(["prose", "manual"]) if status == "ok" else "",
                "reason": rng.choice(["", "", "odd table dropped"]) if status == "ok" else f"why {i}",
                "bytes": rng.randrange(1, 5000),
                "tokens": rng.randrange(0, 900) if status == "ok" else 0,
            }
        )
    originals = [r for r in rows if r["status"] != "duplicate"]
    for r in rows:  # a copy shares the kept document's doc_id (the hash of its bytes)
        if r["status"] == "duplicate":
            r["doc_id"] = rng.choice(originals)["doc_id"]
    folder = tmp_path / "documents"
    folder.mkdir()
    files = []
    for k in range(0, 300, 70):  # five parts, in no particular order of source
        path = folder / f"part-{k:03d}.parquet"
        pq.write_table(documents_table(rows[k : k + 70]), path)
        files.append(str(path))

    got = publish.documents_summary(FS, files, first=5)

    bad = sorted((r for r in rows if r["status"] != "ok"), key=lambda r: r["source"])
    warned = sorted((r for r in rows if r["status"] == "ok" and r["reason"]), key=lambda r: r["source"])
    kept = {r["doc_id"]: r["tokens"] for r in rows if r["status"] != "duplicate"}
    copies = [r for r in rows if r["status"] == "duplicate"]
    assert got["rows"] == 300
    assert got["by_status"] == dict(sorted(Counter(r["status"] for r in rows).items()))
    assert got["by_type"] == dict(sorted(Counter(r["doc_type"] for r in rows if r["status"] == "ok").items()))
    assert got["not_ok"] == [
        {"source": r["source"], "status": r["status"], "reason": r["reason"]} for r in bad[:5]
    ]
    assert got["not_ok_total"] == len(bad) > 5
    assert got["warnings"] == [{"source": r["source"], "reason": r["reason"]} for r in warned[:5]]
    assert got["warnings_total"] == len(warned) > 5
    assert got["duplicates"] == {
        "files": len(copies),
        "bytes_saved": sum(r["bytes"] for r in copies),
        "tokens_saved": sum(kept.get(r["doc_id"], 0) for r in copies),
    }
    assert got["duplicates"]["tokens_saved"] > 0
