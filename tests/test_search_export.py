"""`raychunk search` and `raychunk export --lancedb` on real outputs: a run over the text files of
samples/ ("monday"), the same corpus edited (a section changed, a file added, one deleted, one
renamed) and run with `--previous monday` ("tuesday"). Search must return the labelled chunk first and exactly the brute-force top k;
export writes a real LanceDB table that equals the output's chunks/, applies tuesday's delta to
monday's table so that it equals tuesday's (itself equal to a rebuild: tests/test_incremental.py),
and an interrupted export, rerun, ends as the uninterrupted one.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq
import pytest
import ray

from raychunk.cli import main
from raychunk.config import build_run_config, load_config
from tests.test_incremental import change

lancedb = pytest.importorskip("lancedb", reason="export tests need lancedb: pip install 'raychunk[lancedb]'")

ROOT = Path(__file__).resolve().parent.parent
TEXT_ONLY = ("*.pdf", "*.docx", "*.pptx", "*.eml", "*.py")
QUESTIONS = {q["id"]: q for q in map(json.loads, (ROOT / "evals" / "samples.jsonl").read_text().splitlines())}


def config(inputs, out, **overrides):
    return build_run_config(
        load_config(),
        {
            "input": [str(inputs)],
            "output": str(out),
            "resources.num_cpus": 2,
            **overrides,
        },
    )


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    from raychunk.jobs.run import run

    tmp = tmp_path_factory.mktemp("search")
    inputs = tmp / "corpus"
    shutil.copytree(ROOT / "samples", inputs, ignore=shutil.ignore_patterns(*TEXT_ONLY))
    if ray.is_initialized():
        ray.shutdown()
    run(config(inputs, tmp / "monday"))
    change(inputs)
    run(config(inputs, tmp / "tuesday", **{"incremental.previous": str(tmp / "monday")}))
    ray.shutdown()
    return tmp


def chunks(out: Path) -> pa.Table:
    report = json.loads((out / "report.json").read_text())
    return pa.concat_tables(pq.read_table(out / f) for f in report["files"]["chunks"]).sort_by("chunk_id")


def search_json(*args) -> list[dict]:
    import io
    from contextlib import redirect_stdout

    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["search", *map(str, args), "--json"]) == 0
    return [json.loads(line) for line in buf.getvalue().splitlines()]


# --- search -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "run,qid",
    [("monday", "q01"), ("monday", "q18"), ("monday", "q31"), ("tuesday", "q09"), ("tuesday", "q37")],
)
def test_search_returns_the_labelled_chunk_first(outputs, run, qid):
    q = QUESTIONS[qid]
    hits = search_json(outputs / run, q["query"], "--k", 3)
    assert len(hits) == 3 and [h["rank"] for h in hits] == [1, 2, 3]
    first = hits[0]
    assert first["source"].endswith(q["source"]), (q["query"], first["source"])
    assert q["passages"][0]["quote"] in first["text"]
    if first["heading_path"]:  # the embedded text starts with its header line
        assert first["text"].startswith(" > ".join(first["heading_path"]))
    row = chunks(outputs / run).filter(pa.compute.equal(pa.compute.field("chunk_id"), first["chunk_id"]))
    assert row.column("text").to_pylist() == [first["text"]]
    assert hits[0]["score"] >= hits[1]["score"] >= hits[2]["score"]


def test_search_is_the_exact_top_k_streamed_over_every_shard(outputs):
    """Streaming three rows at a time gives the brute-force ranking over the whole
    table, on the incremental output (whose chunks/ hold every current row and no removed one)."""
    from raychunk.embed import QueryEncoder
    from raychunk.incremental import open_previous
    from raychunk.jobs import search as search_job

    out = open_previous(str(outputs / "tuesday"))
    table = chunks(outputs / "tuesday")
    removed = pq.read_table(outputs / "tuesday" / "delta" / "removed").column("chunk_id").to_pylist()
    assert removed and not set(removed) & set(table.column("chunk_id").to_pylist())
    encode = QueryEncoder(out.settings["vectors"])
    matrix = table.column("embedding").combine_chunks().flatten().to_numpy().reshape(table.num_rows, -1)
    for qid in ("q03", "q16", "q42"):
        v = encode([QUESTIONS[qid]["query"]])[0]
        exact = matrix @ v / np.linalg.norm(matrix, axis=1) / np.linalg.norm(v)
        order = np.argsort(-exact, kind="stable")[:7]
        batches = (b for path in out.files("chunks") for b in pq.ParquetFile(path).iter_batches(batch_size=3))
        scored, best = search_job.top_k(batches, v, 7)
        assert scored == table.num_rows
        assert [b["chunk_id"] for b in best] == table.column("chunk_id").take(pa.array(order)).to_pylist()
        assert np.allclose([b["score"] for b in best], exact[order], atol=1e-5)


def test_search_refuses_what_it_cannot_search(outputs, tmp_path, capsys):
    assert main(["search", str(tmp_path), "anything"]) == 2
    assert "no report.json there" in capsys.readouterr().err
    assert main(["search", str(outputs / "monday"), "anything", "--k", "0"]) == 2
    assert "--k 0" in capsys.readouterr().err


# --- export -------------------------------------------------------------------------------------


def table_rows(db: Path, name: str = "chunks") -> pa.Table:
    return lancedb.connect(str(db)).open_table(name).to_arrow().sort_by("chunk_id")


# A delta upserts only chunks whose id or text is new (issue 27): an unchanged chunk that an edit
# earlier in its file moved keeps the first run's position and file hash in a table fed deltas.
POSITIONAL = {"doc_id", "chunk_index", "char_start", "char_end", "page_start", "page_end"}


def same_rows(table: pa.Table, expected: pa.Table, *, delta: bool = False) -> None:
    assert table.num_rows == expected.num_rows
    assert table.column_names == expected.column_names
    for name in expected.column_names:
        if delta and name in POSITIONAL:
            continue
        assert table.column(name).combine_chunks().equals(expected.column(name).combine_chunks()), name


def export(out: Path, db: Path, *extra) -> str:
    import io
    from contextlib import redirect_stdout

    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["export", str(out), "--lancedb", str(db), *map(str, extra)]) == 0
    return buf.getvalue()


def test_full_export_then_the_delta_equals_the_new_output(outputs, tmp_path):
    db = tmp_path / "lance"
    printed = export(outputs / "monday", db)
    assert "full export" in printed
    same_rows(table_rows(db), chunks(outputs / "monday"))
    assert "nothing to do" in export(outputs / "monday", db)  # the table holds it already

    printed = export(outputs / "tuesday", db)
    tuesday = json.loads((outputs / "tuesday" / "report.json").read_text())["incremental"]["delta"]
    assert f"{tuesday['added']:,} rows upserted, {tuesday['removed']:,} ids deleted" in printed
    same_rows(table_rows(db), chunks(outputs / "tuesday"), delta=True)

    rebuilt = tmp_path / "rebuilt"  # the same output exported in full into a fresh table
    assert "full export" in export(outputs / "tuesday", rebuilt)
    same_rows(table_rows(db), table_rows(rebuilt), delta=True)

    # Search reads the exported table through LanceDB and finds what the Parquet search finds.
    q = QUESTIONS["q31"]["query"]
    from_table = search_json(db, q, "--k", 4)
    from_parquet = search_json(outputs / "tuesday", q, "--k", 4)
    assert [h["chunk_id"] for h in from_table] == [h["chunk_id"] for h in from_parquet]
    assert np.allclose([h["score"] for h in from_table], [h["score"] for h in from_parquet], atol=1e-5)

    # The vector store kept beside the documents is not read as documents by the next run.
    from raychunk.io import list_inputs

    (tmp_path / "notes.md").write_text("# Notes\n")
    _, _, files = list_inputs([str(tmp_path)])
    rows = {f.path: f.refused for f in files if not f.path.endswith("notes.md")}
    assert rows == {
        str(p): ("skipped", "a raychunk output folder: its files are not read as inputs")
        for p in (db, rebuilt)
    }


class Interrupted(Exception):
    pass


def test_an_interrupted_export_completes_on_a_rerun(outputs, tmp_path):
    """Stopped after a step was committed but before it was recorded (the worst moment), the rerun
    rolls the table back to the last recorded version and goes on: no row twice, none missing."""
    from raychunk.destinations.lancedb import LanceDBTable
    from raychunk.jobs.export import export as export_job

    class StopsAfterCommit(LanceDBTable):
        appends = 0

        def append(self, schema, batches):
            super().append(schema, batches)
            StopsAfterCommit.appends += 1
            if StopsAfterCommit.appends == 1:
                raise Interrupted

    db = tmp_path / "lance"
    with pytest.raises(Interrupted):
        export_job(str(outputs / "monday"), StopsAfterCommit(str(db)), out=None)
    state = json.loads((db / "chunks.raychunk.json").read_text())
    assert state["pending"]["done"] == 1  # the table's creation recorded; its first shard not
    first = json.loads((outputs / "monday" / "report.json").read_text())["files"]["chunks"][0]
    assert table_rows(db).num_rows == pq.read_metadata(outputs / "monday" / first).num_rows

    report = export_job(str(outputs / "monday"), LanceDBTable(str(db)), out=None)
    assert report["mode"] == "full" and report["resumed_at_step"] == 1
    same_rows(table_rows(db), chunks(outputs / "monday"))

    # The delta, stopped between its steps, resumes to the same table.
    def stop(i):
        if i == 0:
            raise Interrupted

    with pytest.raises(Interrupted):
        export_job(str(outputs / "tuesday"), LanceDBTable(str(db)), out=None, after_step=stop)
    report = export_job(str(outputs / "tuesday"), LanceDBTable(str(db)), out=None)
    assert report["mode"] == "delta" and report["resumed_at_step"] == 1
    same_rows(table_rows(db), chunks(outputs / "tuesday"), delta=True)


def test_export_refuses_a_table_of_another_embedder(outputs, tmp_path, capsys):
    db = tmp_path / "lance"
    export(outputs / "monday", db)
    other = tmp_path / "other"
    shutil.copytree(outputs / "monday", other)
    report = json.loads((other / "report.json").read_text())
    report["settings"]["vectors"].update(model="BAAI/bge-small-en-v1.5", model_version="abc")
    (other / "report.json").write_text(json.dumps(report))
    assert main(["export", str(other), "--lancedb", str(db)]) == 2
    err = capsys.readouterr().err
    assert "all-MiniLM-L6-v2" in err and "BAAI/bge-small-en-v1.5" in err
    assert "model, model_version differ" in err
    same_rows(table_rows(db), chunks(outputs / "monday"))  # untouched

    lancedb.connect(str(tmp_path / "foreign")).create_table("chunks", pa.table({"chunk_id": ["a"]}))
    assert main(["export", str(outputs / "monday"), "--lancedb", str(tmp_path / "foreign")]) == 2
    assert "not written by `raychunk export`" in capsys.readouterr().err


def test_a_large_enough_table_gets_a_vector_index(outputs, tmp_path):
    """With the threshold under the table's size the export builds IVF_PQ (cosine), and search
    through it still returns the exact top hits (refined on the full vectors)."""
    db = tmp_path / "lance"
    printed = export(outputs / "tuesday", db, "--index-min-rows", 10)
    assert "vector index: IvfPq (built now)" in printed
    indices = {
        i.columns[0]: i.index_type for i in lancedb.connect(str(db)).open_table("chunks").list_indices()
    }
    assert indices == {"embedding": "IvfPq", "chunk_id": "BTree"}
    q = QUESTIONS["q18"]["query"]
    assert [h["chunk_id"] for h in search_json(db, q, "--k", 2)] == [
        h["chunk_id"] for h in search_json(outputs / "tuesday", q, "--k", 2)
    ]
