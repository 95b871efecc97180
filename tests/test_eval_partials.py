"""The eval's work where the blocks are (``evaluation.partials``) gives the report that the all-on-the-
driver computation gives (``evaluate`` on every text, chunk and vector): same figures, same ties.

No Ray: the stages run here, one embedding of the sample corpus feeds both computations, and the
blocks are cut so that documents and parent sections straddle them."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from raychunk.config import build_run_config, load_config
from raychunk.document_steps import for_eval, per_document
from raychunk.evaluation import LabelledQuery, evaluate, load_queries, match_source, resolve_queries
from raychunk.evaluation.partials import Retrieval, collect_partials, retrieve_block
from raychunk.evaluation.report import evaluate_partials
from raychunk.io import list_inputs, readable
from raychunk.plan import resolve_plan
from raychunk.pricing import Setting, grid
from raychunk.schema import EVAL_ROWS, LOCATED_ROWS

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
QUERIES = ROOT / "evals" / "samples.jsonl"
K, BUDGET, DEPTH = 5, 512, 8

pytestmark = pytest.mark.slow


def run_stages(cfg, settings, queries, files):
    """The eval's CPU stage over ``files`` in this process: the rows it emits, each document's text
    (which the old computation needed on the driver), and the questions with their passages located
    in those texts (what the job's check before chunking gives)."""
    parsed = []
    for f in files:
        value = {"path": f.path, "bytes": Path(f.path).read_bytes()}
        for _, fn in per_document(resolve_plan(cfg), scheme="", last=None)[:2]:  # parse, classify
            value = fn(value)
        parsed.append(value)
    texts = {v["source"]: v["parsed"].text for v in parsed}
    resolved = resolve_queries(queries, texts)
    labelled = {}
    for i, q in enumerate(resolved):
        labelled.setdefault(q.source, []).append((i, [[p.start, p.end, p.quote] for p in q.passages]))
    plan = resolve_plan(cfg)
    steps = per_document(plan, scheme="", last=for_eval(plan, settings, Retrieval(labelled, None, K, BUDGET)))
    rows = [row for v in parsed for row in steps[-1][1](v)]
    return rows, texts, resolved


def old_inputs(table, texts):
    """What the eval job used to collect on the driver: every document's text, every chunk and its
    vector, sorted by (setting, source, chunk_index)."""
    docs_t = table.filter(pc.equal(table.column("row_type"), "document"))
    documents = {}
    for d in docs_t.select(["source", "doc_id", "status", "reason", "doc_type", "bytes"]).to_pylist():
        documents[d["source"]] = {**d, "text": texts.get(d["source"], "")}
    chunk_t = table.filter(pc.equal(table.column("row_type"), "chunk"))
    rows = chunk_t.drop_columns(["embedding"]).to_pylist()
    emb = chunk_t.column("embedding").combine_chunks()
    matrix = emb.flatten().to_numpy(zero_copy_only=False).reshape(-1, emb.type.list_size)
    order = sorted(
        range(len(rows)), key=lambda i: (rows[i]["setting"], rows[i]["source"], rows[i]["chunk_index"])
    )
    chunks, picks = {}, {}
    for i in order:
        chunks.setdefault(rows[i]["setting"], []).append(rows[i])
        picks.setdefault(rows[i]["setting"], []).append(i)
    vectors = {label: matrix[idx] for label, idx in picks.items()}
    return documents, chunks, vectors


def blocks(table, cuts):
    edges = [0, *cuts, table.num_rows]
    return [table.slice(a, b - a) for a, b in zip(edges, edges[1:])]


@pytest.fixture(scope="module")
def embedded():
    from raychunk.embed import EmbedChunks
    from raychunk.jobs.eval import embed_queries

    cfg = build_run_config(load_config(), {"input": [str(SAMPLES)]})
    settings = [Setting("per-type profile"), *grid([128], [0.1], ["structure"]), *grid([256], [0], ["fixed"])]
    _, _, files = list_inputs(cfg.input)
    files = readable(files)
    listed = [f.path for f in files]
    queries = [dataclasses.replace(q, source=match_source(q.source, listed)) for q in load_queries(QUERIES)]
    rows, texts, resolved = run_stages(cfg, settings, queries, files)
    table = EmbedChunks(cfg.embedder.model, device="cpu")(pa.Table.from_pylist(rows, schema=EVAL_ROWS))
    qv = embed_queries(cfg.embedder.model, [q.query for q in queries], device="cpu")
    sizes = {f.path: f.size for f in files}
    return settings, resolved, table, texts, qv, sizes


def both_reports(embedded, table):
    settings, resolved, _, texts, qv, sizes = embedded
    args = dict(k=K, parent_budget=BUDGET, dim=qv.shape[1], file_sizes=sizes, read_budget=300)
    documents, chunks, vectors = old_inputs(table, texts)
    old = evaluate(resolved, qv, documents, chunks, vectors, settings, depth=DEPTH, **args)
    parts = [
        retrieve_block(b, query_vectors=qv, k=DEPTH)
        for b in blocks(table, [7, table.num_rows // 3, table.num_rows // 3 + 1, 2 * table.num_rows // 3])
    ]
    partials = collect_partials(parts, queries=len(resolved), k=DEPTH)
    new = evaluate_partials(resolved, partials, settings, **args)
    return old, new, partials


def test_the_report_from_block_partials_is_the_all_on_driver_report(embedded):
    settings, queries, table, *_ = embedded
    old, new, partials = both_reports(embedded, table)
    assert json.dumps(new, sort_keys=True) == json.dumps(old, sort_keys=True)
    # What came back is the labelled set's worth: no text, no vector.
    n_chunks = sum(r["vectors"] for r in old["settings"])
    assert partials.rows < len(partials.documents) + len(settings) * (4 + len(queries) * DEPTH * 5)
    assert n_chunks > 3 * len(settings) * K  # more chunks than any question keeps


def test_ties_go_to_the_lower_source_and_chunk_index_across_blocks(embedded):
    """Every chunk the same vector: every score ties, and the ranking is (source, chunk_index)."""
    table = embedded[2]
    dim = table.column("embedding").type.list_size
    one = np.zeros((table.num_rows, dim), dtype=np.float32)
    one[:, 0] = 1.0
    column = pa.FixedSizeListArray.from_arrays(
        pa.array(one.reshape(-1)),
        dim,
        mask=pc.invert(pc.equal(table.column("row_type"), "chunk")).combine_chunks(),
    )
    tied = table.set_column(table.schema.get_field_index("embedding"), "embedding", column)
    old, new, _ = both_reports(embedded, tied)
    assert json.dumps(new, sort_keys=True) == json.dumps(old, sort_keys=True)
    first = new["per_query"][0]["results"]["fixed 256 o0"]["top"]
    assert first == sorted(first)  # by source name, then by position


def test_the_check_before_chunking_locates_where_the_text_is_and_names_what_did_not_parse(tmp_path):
    """``locate_labelled``, the step after parse in the job's first pass, gives what
    ``locate_passages`` gives on the text; a document that did not parse leaves its passages
    unlocated, with the reason, and ``apply_locations`` lists them all. Its rows are
    ``schema.LOCATED_ROWS`` rows, read back through Arrow as the job reads them."""
    from raychunk.document_steps import parse_file
    from raychunk.evaluation.labels import UnlocatedQuotes, apply_locations, locate_passages
    from raychunk.evaluation.partials import locate_labelled

    cfg = build_run_config(load_config(), {"input": [str(tmp_path)]})
    (tmp_path / "guide.md").write_text("# Guide\n\nRefunds are **paid** within 10 days.\n")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    guide, broken = str(tmp_path / "guide.md"), str(tmp_path / "broken.pdf")
    found = LabelledQuery("r1", "Refunds?", guide, ({"quote": "paid within 10 days"},))
    missing = LabelledQuery("r2", "Refund window?", guide, ({"quote": "30 days"},))
    lost = LabelledQuery("b1", "?", broken, ({"quote": "x"},))
    labelled = {guide: [(0, found), (1, missing)], broken: [(2, lost)]}
    located = {}
    for path in (guide, broken):
        row = parse_file({"path": path, "bytes": Path(path).read_bytes()}, options=cfg.parse)
        (out,) = locate_labelled(row, labelled=labelled)
        assert set(out) == {"source", "located"}  # no text comes back
        (back,) = pa.Table.from_pylist([out], schema=LOCATED_ROWS).to_pylist()
        located.update({r["query"]: r for r in back["located"]})
        if path == guide:
            text = row["parsed"].text
    assert located[0] == {"query": 0, **locate_passages(found, guide, text)}
    assert located[0]["passages"][0]["quote"] == "**paid** within 10 days"
    assert located[1]["unlocated"][0]["why"] == "quote '30 days' is not in the text"
    with pytest.raises(UnlocatedQuotes) as e:
        apply_locations([found, missing, lost], [guide, guide, broken], located)
    assert [m["id"] for m in e.value.missing] == ["r2", "b1"]
    assert "query b1 ('?'), broken.pdf: its document did not parse (failed: " in str(e.value)
