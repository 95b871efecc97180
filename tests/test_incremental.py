"""Incremental runs (``raychunk run --previous``) end to end on a real local Ray, read back with pyarrow.

One corpus (a copy of the text files of samples/) is run in full; then one section of one document is edited, a file is
added, one deleted and one renamed. The incremental run over that must embed only the chunks whose
ids are new, equal a full rebuild of the changed corpus, give a delta that turns the first output's
table into the second's, count what ``raychunk price --previous`` counts, and resume to the same rows.
"""

import dataclasses
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
import ray
import yaml

from raychunk.config import ConfigError, build_run_config, load_config
from raychunk.incremental import DocIndex, changed_fields, check_reuse, doc_key
from tests.drivers import kill_run_after_shards

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
OFFICE = ("*.pdf", "*.docx", "*.pptx")  # their parsers' imports would only slow every run down
# Every type chunked with one setting, so that a price grid row can equal the run's setting too.
ONE_SETTING = {"strategy": "structure", "max_tokens": 200, "overlap": 0}


def config(inputs, out, **overrides):
    return build_run_config(
        load_config(),
        {"input": [str(inputs)], "output": str(out), "resources.num_cpus": 2, **overrides},
    )


def chunks_of(out: Path) -> pa.Table:
    return pq.read_table(out / "chunks").sort_by("chunk_id")


def documents_of(out: Path) -> pa.Table:
    docs = pq.read_table(out / "documents").sort_by("source")
    return docs.drop_columns(["parse_seconds", "peak_rss_mb"])


def without_vectors(t: pa.Table) -> pa.Table:
    return t.drop_columns(["embedding"])


def vectors(t: pa.Table) -> np.ndarray:
    return t.column("embedding").combine_chunks().flatten().to_numpy().reshape(t.num_rows, -1)


def change(folder: Path) -> dict:
    """Edit one section of one document, add a file, delete one, rename one; what was done."""
    guide = folder / "acme-cloud-admin-guide.md"
    text = guide.read_text()
    head = text.index("\n## ", text.index("\n## ") + 1)  # the second section
    guide.write_text(text[: head + 4] + "Edited: " + text[head + 4 :])
    (folder / "new-note.md").write_text(
        "# Quota note\n\nProjects over 80% of their quota get a warning e-mail.\n\n"
        "## Raising a quota\n\nOpen a ticket with the project id and the new limit.\n"
    )
    (folder / "billing-faq.txt").unlink()
    (folder / "release-notes.txt").rename(folder / "release-notes-renamed.txt")
    return {"edited": guide.name, "added": "new-note.md", "deleted": "billing-faq.txt"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The first run, the changed corpus's incremental run and its full rebuild, and the price job's
    comparison of the changed corpus with the first run. One local Ray for all of them."""
    from raychunk.jobs.price import measure_corpus
    from raychunk.pricing import Setting, grid

    tmp = tmp_path_factory.mktemp("incremental")
    doc_types = tmp / "doc_types.yaml"
    shipped = yaml.safe_load((ROOT / "configs" / "doc_types.yaml").read_text())
    shipped["types"] = {name: dict(ONE_SETTING) for name in shipped["types"]}
    doc_types.write_text(yaml.safe_dump(shipped))
    first_in, second_in = tmp / "v1", tmp / "v2"
    shutil.copytree(SAMPLES, first_in, ignore=shutil.ignore_patterns(*OFFICE))
    shutil.copytree(SAMPLES, second_in, ignore=shutil.ignore_patterns(*OFFICE))
    what = change(second_in)
    opts = {"chunk.doc_types": str(doc_types)}
    if ray.is_initialized():
        ray.shutdown()
    from raychunk.jobs.run import run

    first = run(config(first_in, tmp / "first", **opts))
    second = run(config(second_in, tmp / "second", **opts, **{"incremental.previous": str(tmp / "first")}))
    full = run(config(second_in, tmp / "full", **opts))
    settings = [Setting("per-type profile"), *grid([200, 128], [0], ["structure"])]
    priced = measure_corpus(config(second_in, tmp / "price", **opts), settings, previous=str(tmp / "first"))
    ray.shutdown()
    yield {
        "tmp": tmp,
        "opts": opts,
        "what": what,
        "first": first,
        "second": second,
        "full": full,
        "priced": priced.delta,
        "inputs": second_in,
    }


@pytest.mark.slow
def test_the_second_run_embeds_only_the_new_chunks(runs):
    tmp = runs["tmp"]
    before = set(chunks_of(tmp / "first").column("chunk_id").to_pylist())
    after = chunks_of(tmp / "second")
    new = [i for i in after.column("chunk_id").to_pylist() if i not in before]
    inc = runs["second"]["incremental"]
    assert inc["vectors_embedded"] == len(new) == inc["chunks"]["new"] > 0
    new_tokens = pc.sum(after.filter(pc.is_in(after.column("chunk_id"), pa.array(new))).column("n_tokens"))
    assert runs["second"]["tokens_embedded"] == new_tokens.as_py() < runs["second"]["tokens_chunked"]
    assert runs["first"]["tokens_embedded"] == runs["first"]["tokens_chunked"]  # a full run embeds all
    assert inc["vectors_reused"] == after.num_rows - len(new) == inc["chunks"]["unchanged"] > len(new)
    assert inc["chunks"]["removed"] == len(before - set(after.column("chunk_id").to_pylist())) > 0
    # Only the edited and the added document were parsed; the renamed one was reused unparsed.
    n_inputs = len(list(runs["inputs"].iterdir()))
    assert inc["documents_reused"] == n_inputs - 2
    # An edit changes the document's bytes, so every chunk of it is new; no other document's is.
    new_sources = set(
        after.filter(pc.is_in(after.column("chunk_id"), pa.array(new))).column("source").to_pylist()
    )
    assert {Path(s).name for s in new_sources} == {runs["what"]["edited"], runs["what"]["added"]}
    saved = json.loads((tmp / "second" / "report.json").read_text())
    assert saved["incremental"] == inc
    assert "## Incremental run" in (tmp / "second" / "report.md").read_text()


@pytest.mark.slow
def test_the_incremental_output_equals_a_full_rebuild(runs):
    tmp = runs["tmp"]
    second, full = chunks_of(tmp / "second"), chunks_of(tmp / "full")
    assert without_vectors(second).equals(without_vectors(full))  # ids, texts, spans, sources, ...
    assert second.schema.equals(full.schema)
    np.testing.assert_allclose(vectors(second), vectors(full), atol=1e-5)  # reused vs re-embedded
    assert documents_of(tmp / "second").equals(documents_of(tmp / "full"))
    assert runs["second"]["settings"] == runs["full"]["settings"] == runs["first"]["settings"]
    assert "delta" not in runs["full"]["files"]


@pytest.mark.slow
def test_the_delta_turns_the_first_table_into_the_second(runs):
    tmp = runs["tmp"]
    first, second = chunks_of(tmp / "first"), chunks_of(tmp / "second")
    added = pq.read_table(tmp / "second" / "delta" / "added")
    removed = pq.read_table(tmp / "second" / "delta" / "removed")
    assert removed.column_names == ["chunk_id"]
    assert added.num_rows == runs["second"]["incremental"]["delta"]["added"]
    assert removed.num_rows == runs["second"]["incremental"]["delta"]["removed"]
    # Upsert by chunk id, then delete: what a vector store does with the delta.
    gone = pc.is_in(
        first.column("chunk_id"),
        pa.concat_arrays([*added.column("chunk_id").chunks, *removed.column("chunk_id").chunks]),
    )
    applied = pa.concat_tables([first.filter(pc.invert(gone)), added]).sort_by("chunk_id")
    assert applied.equals(second)
    # The renamed file's chunks kept their ids and vectors; they are upserted for their new source.
    renamed = added.filter(pc.match_substring(added.column("source"), "release-notes-renamed"))
    assert renamed.num_rows and set(renamed.column("chunk_id").to_pylist()) <= set(
        first.column("chunk_id").to_pylist()
    )
    files = runs["second"]["files"]
    assert files["delta/added"] and files["delta/removed"]


@pytest.mark.slow
def test_price_previous_counts_what_run_previous_does(runs):
    inc = runs["second"]["incremental"]["chunks"]
    priced = runs["priced"]
    for label in ("per-type profile", "structure 200 o0"):  # the run's setting, as profile and grid row
        assert {k: priced[label][k] for k in ("unchanged", "new", "removed")} == inc, label
    assert priced["structure 128 o0"]["unchanged"] == 0  # another setting shares no chunk ids


@pytest.mark.slow
def test_settings_are_recorded_and_a_change_is_refused_naming_it(runs):
    from raychunk.jobs.run import settings_fingerprint
    from raychunk.pipeline import EmbedPlan

    recorded = runs["first"]["settings"]
    assert recorded["vectors"]["model"] == "all-MiniLM-L6-v2" and recorded["vectors"]["dim"] == 384
    assert recorded["vectors"]["normalize"] is True and recorded["vectors"]["model_version"]
    assert recorded["chunks"]["profiles"]["manual"].startswith("structure|200|0")
    plan = EmbedPlan(1, 0.0, 1.0, 256, 384, 1)
    cfg = config(runs["inputs"], runs["tmp"] / "x", **runs["opts"])
    assert check_reuse(recorded, settings_fingerprint(cfg, plan), force=False)

    words = settings_fingerprint(
        dataclasses.replace(cfg, chunk=dataclasses.replace(cfg.chunk, tokenizer="words")), plan
    )
    with pytest.raises(ConfigError, match=r"chunks\.tokenizer.*--force-reuse"):
        check_reuse(recorded, words, force=False)
    assert check_reuse(recorded, words, force=True) is False  # reuse vectors, chunk everything again

    raw = dataclasses.replace(cfg, embedder=dataclasses.replace(cfg.embedder, normalize=False))
    with pytest.raises(ConfigError, match=r"vectors\.normalize changed"):
        check_reuse(recorded, settings_fingerprint(raw, plan), force=True)
    with pytest.raises(ConfigError, match="without embedding"):
        check_reuse({**recorded, "vectors": None}, settings_fingerprint(cfg, plan), force=True)


@pytest.mark.slow
def test_an_interrupted_incremental_run_resumes_to_the_same_rows(runs):
    from raychunk.jobs.run import run

    tmp = runs["tmp"]
    out = tmp / "resumed"
    flags = ["--previous", str(tmp / "first"), "--doc-types", runs["opts"]["chunk.doc_types"]]
    flags += ["--set", "output_files.rows_per_shard=1", "--batch-size", "1"]
    # Every embed batch (4 rows at --batch-size 1) takes 2 s, so the run is killed with part of it written.
    env = dict(os.environ, RAYCHUNK_TEST_FAULTS="slow:embed", RAY_ADDRESS="")
    args = ["--input", str(runs["inputs"]), "--output", str(out), *flags]
    kill_run_after_shards(args, out, shards=2, seconds=240, env=env)
    assert not (out / "report.json").exists()

    cfg = config(runs["inputs"], out, **runs["opts"], **{"embedder.batch_size": 1})
    cfg = dataclasses.replace(
        cfg,
        output_files=dataclasses.replace(cfg.output_files, resume=True),
        incremental=dataclasses.replace(cfg.incremental, previous=str(tmp / "first")),
    )
    try:
        report = run(cfg)
    finally:
        ray.shutdown()
    assert report["resumed"]["inputs_already_done"] >= 1
    second = chunks_of(tmp / "second")
    resumed = chunks_of(out)
    assert without_vectors(resumed).equals(without_vectors(second))
    np.testing.assert_allclose(vectors(resumed), vectors(second), atol=1e-5)
    assert documents_of(out).equals(documents_of(tmp / "second"))
    assert report["incremental"] == runs["second"]["incremental"]
    for name in ("added", "removed"):
        a = pq.read_table(out / "delta" / name).sort_by("chunk_id")
        b = pq.read_table(tmp / "second" / "delta" / name).sort_by("chunk_id")
        assert a.column("chunk_id").equals(b.column("chunk_id")), name
    assert not (out / "_staging").exists()


def test_doc_index_finds_what_it_holds_and_travels_as_bytes():
    import pickle

    keys = [doc_key(f"{i:032x}", "markdown") for i in range(1000)]
    index = pickle.loads(pickle.dumps(DocIndex(keys)))
    assert len(index) == 1000 and all(k in index for k in keys)
    assert doc_key(f"{5:032x}", "text") not in index and doc_key("f" * 32, "markdown") not in index
    assert len(pickle.dumps(index)) < 1000 * 16 + 200


def test_changed_fields_names_the_nested_leaves():
    old = {"chunks": {"profiles": {"faq": "a", "code": "b"}, "tokenizer": "t"}}
    new = {"chunks": {"profiles": {"faq": "a", "code": "c"}, "tokenizer": "t"}, "x": 1}
    assert changed_fields(old, new) == ["chunks.profiles.code", "x"]


def test_previous_without_a_report_fails_before_anything_runs(tmp_path):
    from raychunk.incremental import open_previous

    (tmp_path / "chunks").mkdir()
    with pytest.raises(ConfigError, match="no report.json there"):
        open_previous(str(tmp_path))


def _group(rows: list[dict], dim: int = 2) -> pa.Table:
    """Rows of one doc_id in ``row_schema``, from dicts (missing keys null)."""
    from raychunk.schema import row_schema

    schema = row_schema(dim)
    return pa.Table.from_pylist([{f.name: r.get(f.name) for f in schema} for r in rows], schema=schema)


def _chunk(chunk_id, source, text, **more):
    return {"chunk_id": chunk_id, "doc_id": "d", "source": source, "text": text, **more}


def test_merge_reuses_vectors_by_chunk_id_and_marks_the_upserts():
    """A document chunked again (as under --force-reuse): a chunk id the previous output holds keeps
    its vector, a new one waits for the embedder, and an id no longer made is not written."""
    from raychunk.stages import merge_previous

    doc = json.dumps({"doc_id": "d", "source": "a", "status": "ok"})
    group = _group(
        [
            {"row_type": "previous_document", "doc_id": "d", "source": "a", "document": doc},
            {"row_type": "previous_chunk", **_chunk("c1", "a", "one"), "embedding": [1.0, 0.0]},
            {"row_type": "previous_chunk", **_chunk("c2", "a", "two"), "embedding": [0.0, 1.0]},
            {"row_type": "document", "doc_id": "d", "source": "a", "document": doc},
            {"row_type": "chunk", **_chunk("c1", "a", "one")},
            {"row_type": "chunk", **_chunk("c3", "a", "three")},
        ]
    )
    out = {r["chunk_id"] or "doc": r for r in merge_previous(group).to_pylist()}
    assert set(out) == {"doc", "c1", "c3"}
    assert out["c1"]["embedding"] == [1.0, 0.0] and out["c1"]["changed"] is False
    assert out["c3"]["embedding"] is None and out["c3"]["changed"] is True
    assert out["doc"]["changed"] is None  # parsed in this run


def test_merge_copies_an_unchanged_document_under_its_new_name():
    from raychunk.stages import merge_previous

    doc = {"doc_id": "d", "source": "old.md", "status": "ok", "title": "T"}
    previous = [
        {"row_type": "previous_document", "doc_id": "d", "source": "old.md", "document": json.dumps(doc)},
        {"row_type": "previous_chunk", **_chunk("c1", "old.md", "one"), "embedding": [1.0, 0.0]},
    ]
    moved = merge_previous(_group([*previous, {"row_type": "reuse", "doc_id": "d", "source": "new.md"}]))
    rows = moved.to_pylist()
    assert [r["row_type"] for r in rows] == ["document", "chunk"]
    assert {r["source"] for r in rows} == {"new.md"}
    assert json.loads(rows[0]["document"]) == {**doc, "source": "new.md"} and rows[0]["changed"] is False
    assert rows[1]["embedding"] == [1.0, 0.0] and rows[1]["changed"] is True  # upsert: its source moved
    assert merge_previous(_group(previous)).num_rows == 0  # the file is gone: nothing written
