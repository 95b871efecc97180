"""Incremental runs (``raychunk run --previous``) end to end on a real local Ray, read back with pyarrow.

One corpus (a copy of the text files of samples/) is run in full; then, in place, one section of one
document is edited, a file is added, one deleted and one renamed. The incremental run over that must
embed only the chunks whose texts are new to their source, equal a full rebuild of the changed
corpus, give a delta that turns the first output's table into the second's, count what
``raychunk price --previous`` counts, and resume to the same rows. A run with one type's
max_tokens changed is refused without --force-reuse, and with it equals a full rebuild.
"""

import dataclasses
import gzip
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
from raychunk.plan import resolve_plan
from tests.drivers import kill_run_after_shards

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
OFFICE = ("*.pdf", "*.docx", "*.pptx")  # their parsers' imports would only slow every run down
# Every type chunked with one setting, so that a price grid row can equal the run's setting too.
ONE_SETTING = {"strategy": "structure", "max_tokens": 200, "overlap": 0}
RESIZED = "manual"  # the edited document's type; its max_tokens changes for the --force-reuse run


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
    return {
        "edited": guide.name,
        "added": "new-note.md",
        "deleted": "billing-faq.txt",
        "renamed": "release-notes-renamed.txt",
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The first run, the changed corpus's incremental run and its full rebuild, and the price job's
    comparison of the changed corpus with the first run. One local Ray for all of them."""
    from raychunk.jobs.price import measure_corpus
    from raychunk.pricing import Setting, grid

    tmp = tmp_path_factory.mktemp("incremental")
    doc_types, resized = tmp / "doc_types.yaml", tmp / "resized.yaml"
    shipped = yaml.safe_load((ROOT / "configs" / "doc_types.yaml").read_text())
    shipped["types"] = {name: dict(ONE_SETTING) for name in shipped["types"]}
    doc_types.write_text(yaml.safe_dump(shipped))
    shipped["types"][RESIZED] = {**ONE_SETTING, "max_tokens": 120}
    resized.write_text(yaml.safe_dump(shipped))
    inputs = tmp / "corpus"  # changed in place after the first run: sources keep their paths
    shutil.copytree(SAMPLES, inputs, ignore=shutil.ignore_patterns(*OFFICE))
    # Two files whose name says less than their bytes: both must be reused unparsed when unchanged.
    (inputs / "NOTICE").write_text("Acme Cloud is a trademark.\n\nThe samples are made up for the tests.\n")
    (inputs / "runbook.md.gz").write_bytes(
        gzip.compress(b"# Runbook\n\n## Restarts\n\nDrain the node first, then restart its agent.\n", mtime=0)
    )
    opts = {"chunk.doc_types": str(doc_types)}
    if ray.is_initialized():
        ray.shutdown()
    from raychunk.jobs.run import run

    first = run(config(inputs, tmp / "first", **opts))
    what = change(inputs)
    second = run(config(inputs, tmp / "second", **opts, **{"incremental.previous": str(tmp / "first")}))
    full = run(config(inputs, tmp / "full", **opts))
    settings = [Setting("per-type profile"), *grid([200, 128], [0], ["structure"])]
    priced = measure_corpus(
        resolve_plan(config(inputs, tmp / "price", **opts)), settings, previous=str(tmp / "first")
    )
    # The changed corpus again, with one type's max_tokens changed since the first run.
    other = {"chunk.doc_types": str(resized), "incremental.previous": str(tmp / "first")}
    try:
        run(config(inputs, tmp / "refused", **other))
        refused = None
    except ConfigError as e:
        refused = str(e)
    forced = run(config(inputs, tmp / "forced", **other, **{"incremental.force_reuse": True}))
    forced_full = run(config(inputs, tmp / "forced-full", **{"chunk.doc_types": str(resized)}))
    ray.shutdown()
    yield {
        "tmp": tmp,
        "opts": opts,
        "what": what,
        "first": first,
        "second": second,
        "full": full,
        "priced": priced.delta,
        "inputs": inputs,
        "refused": refused,
        "forced": forced,
        "forced_full": forced_full,
    }


def old_texts(before: pa.Table, after: pa.Table) -> np.ndarray:
    """Which of ``after``'s chunks have a text that a chunk of ``before`` had at the same source or
    in the same bytes (doc_id): those whose vectors an incremental run reuses."""
    seen = set(zip(before.column("source").to_pylist(), before.column("text").to_pylist()))
    seen |= set(zip(before.column("doc_id").to_pylist(), before.column("text").to_pylist()))
    text = after.column("text").to_pylist()
    return np.array(
        [
            (s, t) in seen or (d, t) in seen
            for s, d, t in zip(after.column("source").to_pylist(), after.column("doc_id").to_pylist(), text)
        ]
    )


def embedded_by(run: dict, before: pa.Table, after: pa.Table) -> pa.Table:
    """The chunks of ``after`` that an incremental run over ``before`` must embed, checked against
    what its report says it embedded and reused."""
    inc = run["incremental"]
    ids = set(before.column("chunk_id").to_pylist())
    old = old_texts(before, after)
    by_id = np.array([i in ids for i in after.column("chunk_id").to_pylist()])
    assert not (by_id & ~old).any()  # a known chunk id always has its old text
    todo = after.filter(pa.array(~old))
    assert inc["vectors_embedded"] == todo.num_rows
    assert run["tokens_embedded"] == pc.sum(todo.column("n_tokens")).as_py()
    assert inc["vectors_reused_by_id"] == int(by_id.sum())
    assert inc["vectors_reused_by_text"] == int((old & ~by_id).sum())
    assert inc["vectors_reused"] == after.num_rows - todo.num_rows
    return todo


@pytest.mark.slow
def test_the_second_run_embeds_only_the_new_texts(runs):
    tmp = runs["tmp"]
    first = chunks_of(tmp / "first")
    before = set(first.column("chunk_id").to_pylist())
    after = chunks_of(tmp / "second")
    new = after.filter(pc.invert(pc.is_in(after.column("chunk_id"), pa.array(sorted(before)))))
    inc = runs["second"]["incremental"]
    assert inc["chunks"]["new"] == new.num_rows > 0
    assert inc["chunks"]["unchanged"] == after.num_rows - new.num_rows > new.num_rows
    assert inc["chunks"]["removed"] == len(before - set(after.column("chunk_id").to_pylist())) > 0
    todo = embedded_by(runs["second"], first, after)
    assert 0 < todo.num_rows < new.num_rows
    assert runs["second"]["tokens_embedded"] < runs["second"]["tokens_chunked"]
    assert runs["first"]["tokens_embedded"] == runs["first"]["tokens_chunked"]  # a full run embeds all
    # The edited, the added and the renamed document were parsed (a rename changes the ids, which
    # name the document's path); the others were reused unparsed.
    n_inputs = len(list(runs["inputs"].iterdir()))
    assert inc["documents_reused"] == n_inputs - 3
    # Chunk ids name the chunk, not the file's bytes: the edit gives new ids to the chunks whose
    # text it changed and to none other of the document; the renamed file's chunks all have new ids.
    sources = lambda t: {Path(s).name for s in t.column("source").to_pylist()}  # noqa: E731
    assert sources(new) == {runs["what"]["edited"], runs["what"]["added"], runs["what"]["renamed"]}
    edited = new.filter(pc.match_substring(new.column("source"), runs["what"]["edited"]))
    whole = pc.sum(pc.match_substring(after.column("source"), runs["what"]["edited"])).as_py()
    assert 0 < edited.num_rows < whole  # the edited heading is in each new chunk's header line
    assert all("Edited: " in t for t in edited.column("text").to_pylist())
    edited_todo = todo.filter(pc.match_substring(todo.column("source"), runs["what"]["edited"]))
    assert edited_todo.column("chunk_id").to_pylist() == edited.column("chunk_id").to_pylist()
    renamed = pc.match_substring(todo.column("source"), runs["what"]["renamed"])
    assert not pc.any(renamed).as_py()  # its vectors are reused by text
    saved = json.loads((tmp / "second" / "report.json").read_text())
    assert saved["incremental"] == inc
    assert "by text" in (tmp / "second" / "report.md").read_text()


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
    # An unchanged chunk (same id, same text, same source) is not upserted, so where an edit moved it
    # its position (index, offsets, pages) and its file's doc_id are the first run's; every other
    # column, vectors, parent and table ids included, is the second's.
    positional = ["doc_id", "chunk_index", "char_start", "char_end", "page_start", "page_end"]
    assert applied.drop_columns(positional).equals(second.drop_columns(positional))
    assert applied.column("chunk_id").equals(second.column("chunk_id"))
    # The renamed file's chunks have new ids (upserted, with their old vectors) and the old ones go.
    renamed = added.filter(pc.match_substring(added.column("source"), "release-notes-renamed"))
    assert renamed.num_rows and not set(renamed.column("chunk_id").to_pylist()) & set(
        first.column("chunk_id").to_pylist()
    )
    old_ids = first.filter(pc.match_substring(first.column("source"), "release-notes.txt")).column("chunk_id")
    assert set(old_ids.to_pylist()) <= set(removed.column("chunk_id").to_pylist())
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
def test_force_reuse_chunks_again_and_reuses_vectors_by_text(runs):
    """One type's max_tokens changed since the first run: without --force-reuse the run is refused,
    naming the field; with it every document is chunked again, the chunks of that type that kept
    their text keep their vectors, and the output equals a full rebuild with the new setting."""
    tmp = runs["tmp"]
    assert runs["refused"] and f"chunks.profiles.{RESIZED}" in runs["refused"]
    assert "--force-reuse" in runs["refused"] and not (tmp / "refused").exists()
    forced, full = chunks_of(tmp / "forced"), chunks_of(tmp / "forced-full")
    assert without_vectors(forced).equals(without_vectors(full))
    np.testing.assert_allclose(vectors(forced), vectors(full), atol=1e-5)
    assert documents_of(tmp / "forced").equals(documents_of(tmp / "forced-full"))
    inc = runs["forced"]["incremental"]
    assert inc["documents_reused"] == 0 and inc["documents_skip"] is False
    first = chunks_of(tmp / "first")
    todo = embedded_by(runs["forced"], first, forced)
    assert inc["vectors_reused_by_text"] > 0 and inc["vectors_reused_by_id"] > 0
    assert todo.num_rows < inc["chunks"]["new"]
    # The resized type's chunks have new ids; those whose text is unchanged were not embedded again.
    resized = forced.filter(pc.equal(forced.column("doc_type"), RESIZED))
    assert resized.num_rows and not set(resized.column("chunk_id").to_pylist()) & set(
        first.column("chunk_id").to_pylist()
    )
    assert old_texts(first, resized).any()
    # A reused vector is the previous output's, byte for byte (one of them, if a text repeats).
    old: dict[tuple, list] = {}
    for row in first.select(["source", "doc_id", "text", "embedding"]).to_pylist():
        for key in ((row["source"], row["text"]), (row["doc_id"], row["text"])):
            old.setdefault(key, []).append(row["embedding"])
    reused = forced.filter(pa.array(old_texts(first, forced))).to_pylist()
    assert len(reused) == forced.num_rows - todo.num_rows
    for row in reused:
        candidates = old.get((row["source"], row["text"]), []) + old.get((row["doc_id"], row["text"]), [])
        assert row["embedding"] in candidates, row["chunk_id"]


@pytest.mark.slow
def test_settings_are_recorded_and_a_change_is_refused_naming_it(runs):
    from raychunk.jobs.run import settings_fingerprint
    from raychunk.plan import resolve_plan
    from raychunk.step import EmbedPlan

    recorded = runs["first"]["settings"]
    assert recorded["vectors"]["model"] == "all-MiniLM-L6-v2" and recorded["vectors"]["dim"] == 384
    assert recorded["vectors"]["normalize"] is True and recorded["vectors"]["model_version"]
    assert recorded["chunks"]["profiles"]["manual"].startswith("structure|200|0")
    plan = EmbedPlan(1, 0.0, 1.0, 256, 384, 1)
    cfg = config(runs["inputs"], runs["tmp"] / "x", **runs["opts"])
    assert check_reuse(recorded, settings_fingerprint(resolve_plan(cfg), plan), force=False)

    words = settings_fingerprint(
        resolve_plan(dataclasses.replace(cfg, chunk=dataclasses.replace(cfg.chunk, tokenizer="words"))), plan
    )
    with pytest.raises(ConfigError, match=r"chunks\.tokenizer.*--force-reuse"):
        check_reuse(recorded, words, force=False)
    assert check_reuse(recorded, words, force=True) is False  # reuse vectors, chunk everything again

    raw = dataclasses.replace(cfg, embedder=dataclasses.replace(cfg.embedder, normalize=False))
    with pytest.raises(ConfigError, match=r"vectors\.normalize changed"):
        check_reuse(recorded, settings_fingerprint(resolve_plan(raw), plan), force=True)
    with pytest.raises(ConfigError, match="without embedding"):
        check_reuse({**recorded, "vectors": None}, settings_fingerprint(resolve_plan(cfg), plan), force=True)


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


def _join(previous: list[dict], new: list[dict], *, known=(), dim: int = 2) -> list[dict]:
    """The pipeline's join without Ray: the previous output's chunks and documents rows and the chunk
    stage's rows (dicts, missing keys null) keyed as ``merge.join_previous`` keys them, grouped by key and
    merged; ``known`` the previous output's documents as ``(doc_id, format)``."""
    from raychunk.merge import merge_previous, new_rows, previous_chunk_rows, previous_document_rows
    from raychunk.schema import CHUNK_COLUMNS, RUN_ROWS

    def table(rows, keys):
        return pa.Table.from_pylist([{k: r.get(k) for k in keys} for r in rows])

    chunk_keys = [*CHUNK_COLUMNS, "embedding"]
    docs = [r for r in previous if "chunk_id" not in r]
    rows = pa.concat_tables(
        [
            new_rows(
                pa.Table.from_pylist(new, schema=RUN_ROWS),
                dim=dim,
                known=DocIndex([doc_key(*k) for k in known]),
            ),
            previous_chunk_rows(table([r for r in previous if "chunk_id" in r], chunk_keys), dim=dim),
            previous_document_rows(pa.Table.from_pylist(docs), dim=dim),
        ]
    )
    out = []
    for key in sorted(set(rows.column("group").to_pylist())):
        out += merge_previous(rows.filter(pc.equal(rows.column("group"), key))).to_pylist()
    return out


def _chunk(chunk_id, source, text, doc_id="d", **more):
    return {"chunk_id": chunk_id, "doc_id": doc_id, "source": source, "text": text, **more}


def _doc(doc_id, source):
    return {"doc_id": doc_id, "source": source, "format": "markdown", "status": "ok"}


def _new_doc(doc_id, source):
    return {"row_type": "document", **_doc(doc_id, source)}


def test_merge_reuses_vectors_by_chunk_id_and_marks_the_upserts():
    """A document chunked again (as under --force-reuse): a chunk id the previous output holds keeps
    its vector, a new one waits for the embedder, and an id no longer made is not written."""
    previous = [
        _doc("d", "a.md"),
        _chunk("c1", "a.md", "one", embedding=[1.0, 0.0]),
        _chunk("c2", "a.md", "two", embedding=[0.0, 1.0]),
    ]
    new = [
        _new_doc("d", "a.md"),
        {"row_type": "chunk", **_chunk("c1", "a.md", "one")},
        {"row_type": "chunk", **_chunk("c3", "a.md", "three")},
    ]
    out = {r["chunk_id"] or "doc": r for r in _join(previous, new, known=[("d", "markdown")])}
    assert set(out) == {"doc", "c1", "c3"}
    assert out["c1"]["embedding"] == [1.0, 0.0] and out["c1"]["changed"] is False
    assert out["c1"]["reused"] == "id"
    assert out["c3"]["embedding"] is None and out["c3"]["changed"] is True and out["c3"]["reused"] is None
    assert out["doc"]["changed"] is None  # parsed in this run


def test_an_edited_document_takes_the_vectors_of_its_unchanged_texts_from_its_source():
    """New bytes at a.md (a new doc_id; here every chunk id new too): a chunk whose text a chunk of
    a.md's previous version had takes that vector (and is still upserted, under its new id); a text
    only another source had, or a changed one, waits for the embedder."""
    previous = [
        _doc("d1", "a.md"),
        _chunk("c1", "a.md", "# A\n\none", "d1", embedding=[1.0, 0.0]),
        _chunk("c2", "a.md", "# A\n\ntwo", "d1", embedding=[0.0, 1.0]),
        _doc("d9", "b.md"),
        _chunk("c9", "b.md", "# A\n\ntwo, edited", "d9", embedding=[0.5, 0.5]),
    ]
    new = [
        _new_doc("d2", "a.md"),
        {"row_type": "chunk", **_chunk("n1", "a.md", "# A\n\none", "d2")},
        {"row_type": "chunk", **_chunk("n2", "a.md", "# A\n\ntwo, edited", "d2")},
        {"row_type": "chunk", **_chunk("n3", "a.md", "# A\n\none ", "d2")},  # one space more
    ]
    out = {
        r["chunk_id"] or "doc": r
        for r in _join(previous, new, known=[("d1", "markdown"), ("d9", "markdown")])
    }
    assert set(out) == {"doc", "n1", "n2", "n3"}  # b.md is not in the input: nothing of it is written
    assert out["n1"]["embedding"] == [1.0, 0.0] and out["n1"]["reused"] == "text"
    assert out["n1"]["changed"] is True  # a new chunk id: the vector store still upserts it
    for key in ("n2", "n3"):
        assert out[key]["embedding"] is None and out[key]["reused"] is None and out[key]["changed"] is True


def test_a_renamed_document_chunked_again_keeps_its_vectors_by_id():
    """Under --force-reuse a renamed file is parsed again; its bytes (doc_id) still meet their
    previous chunks, so unchanged chunk ids keep their vectors, upserted for the new source."""
    previous = [_doc("d", "old.md"), _chunk("c1", "old.md", "one", embedding=[1.0, 0.0])]
    new = [_new_doc("d", "new.md"), {"row_type": "chunk", **_chunk("c1", "new.md", "one")}]
    out = {r["chunk_id"] or "doc": r for r in _join(previous, new, known=[("d", "markdown")])}
    assert out["c1"]["embedding"] == [1.0, 0.0] and out["c1"]["reused"] == "id"
    assert out["c1"]["changed"] is True and out["c1"]["source"] == "new.md"
    # Without the index (bytes the previous output lacks) the rows meet only what new.md held: none.
    alone = {r["chunk_id"] or "doc": r for r in _join(previous, new)}
    assert alone["c1"]["embedding"] is None


def test_merge_copies_an_unchanged_document_under_its_new_name():
    doc = {"doc_id": "d", "source": "old.md", "format": "markdown", "status": "ok", "title": "T"}
    previous = [doc, _chunk("c1", "old.md", "one", embedding=[1.0, 0.0])]
    rows = _join(previous, [{"row_type": "reuse", "doc_id": "d", "source": "new.md"}])
    assert [r["row_type"] for r in rows] == ["document", "chunk"]
    assert {r["source"] for r in rows} == {"new.md"}
    assert {k: rows[0][k] for k in doc} == {**doc, "source": "new.md"}
    assert rows[0]["source_bytes"] is None
    assert rows[0]["changed"] is False
    assert rows[1]["embedding"] == [1.0, 0.0] and rows[1]["changed"] is True  # upsert: its source moved
    assert rows[1]["reused"] == "id"
    assert _join(previous, []) == []  # the file is gone: nothing written


def test_a_moved_document_whose_name_is_not_utf8_keeps_its_new_name_bytes():
    """The documents row of a file reused under a new source carries the new name's bytes, not the
    old ones."""
    from raychunk.schema import documents_table

    doc = {"doc_id": "d", "source": "/old/caf\\xe9.md", "format": "markdown", "status": "ok"}
    previous = [
        {**doc, "source_bytes": b"/old/caf\xe9.md"},
        _chunk("c1", doc["source"], "one", embedding=[1.0, 0.0]),
    ]
    reuse = {
        "row_type": "reuse",
        "doc_id": "d",
        "source": "/new/caf\\xe9.md",
        "source_bytes": b"/new/caf\xe9.md",
    }
    rows = _join(previous, [reuse])
    written = documents_table([rows[0]]).to_pylist()[0]
    assert written["source"] == "/new/caf\\xe9.md" and written["source_bytes"] == b"/new/caf\xe9.md"
