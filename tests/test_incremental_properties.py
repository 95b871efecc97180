"""Property: random edits (append, delete or change a section; rename a file; move the root) on
generated documents. The incremental output (``--previous``: unchanged files reused unparsed, the
rest parsed and joined with the previous output as ``merge.join_previous`` joins them, here
without Ray) equals a full rebuild, every vector is its own text's, nothing is embedded whose
(id, text) the previous output held, and the delta is the set difference of (id, text) pairs (plus
the chunks whose source moved, upserted for their new source). One small real-Ray case is
``tests/test_incremental.py``'s."""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from raychunk.config import build_run_config, load_config, load_doc_types
from raychunk.dedupe import duplicates_of
from raychunk.document import content_hash
from raychunk.document_steps import chunk, per_document
from raychunk.incremental import DocIndex, doc_key, path_key
from raychunk.io import identity_of
from raychunk.merge import merge_previous, new_rows, previous_chunk_rows, previous_document_rows
from raychunk.parse.detect import format_from_name
from raychunk.plan import resolve_plan
from raychunk.schema import CHUNK_COLUMNS, DOCUMENT_COLUMNS, RUN_ROWS

DIM = 4
WORDS = ["alpha", "beta", "gamma", "delta", "quota", "agent", "proxy", "token", "billing", "export"]
NAMES = ["guide.md", "faq.md", "notes/setup.md", "caf\\xe9 \\n odd.md"]  # shown forms, as sources are


def vector(text: str) -> list[float]:
    """A stand-in embedding: a function of the text alone, so a reused vector shows whose it was."""
    d = hashlib.sha256(text.encode()).digest()
    return [d[i] / 255 for i in range(DIM)]


@pytest.fixture(scope="module")
def steps():
    cfg = build_run_config(load_config(), {"input": ["/x"], "embedder.enabled": False})
    types = load_doc_types(cfg.chunk.doc_types_path)
    plan = resolve_plan(cfg)
    parse, classify, chunk_rows = (fn for _, fn in per_document(plan, scheme="", last=chunk(plan)))
    return types, parse, classify, chunk_rows


def render(doc: list[tuple[str, str]]) -> str:
    return "".join(f"## {h}\n\n{body}\n\n" for h, body in doc)


def process(steps, tree: dict[str, list], root: str, *, unchanged: DocIndex | None = None) -> list[dict]:
    """The chunk stage's rows for a tree, as ``document_steps.isolated`` makes them (without the sandbox):
    byte-identical files are ``duplicate`` documents of the smallest source, as the planner finds."""
    _, parse, classify, chunk = steps
    files = {f"{root}/{rel}": render(doc).encode() for rel, doc in tree.items()}
    duplicates = duplicates_of((source, content_hash(data)) for source, data in files.items())
    rows = []
    for source in sorted(files):
        data = files[source]
        doc_id = content_hash(data)
        fmt = format_from_name(source) or "unknown"
        if (
            unchanged is not None
            and source not in duplicates
            and doc_key(doc_id, fmt, identity_of(source, root)) in unchanged
        ):
            rows.append({"row_type": "reuse", "doc_id": doc_id, "source": source})
            continue
        parsed = parse.func(
            {"path": source, "bytes": data}, **{**parse.keywords, "root": root, "duplicates": duplicates}
        )
        rows += chunk(classify(parsed))
    return rows


def output(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """``chunks/`` (with vectors) and ``documents/`` of a full run's rows."""
    chunks = [{**r, "embedding": vector(r["text"])} for r in rows if r["row_type"] == "chunk"]
    docs = [{k: r.get(k) for k in DOCUMENT_COLUMNS} for r in rows if r["row_type"] == "document"]
    return [{k: c.get(k) for k in (*CHUNK_COLUMNS, "embedding")} for c in chunks], docs


def join(prev_chunks, prev_docs, new, *, root: str, prev_root: str) -> list[dict]:
    ok = [d for d in prev_docs if d["status"] == "ok"]  # as incremental.unchanged_documents keys them
    known = DocIndex(
        [doc_key(d["doc_id"], d["format"]) for d in ok]
        + [path_key(identity_of(d["source"], prev_root)) for d in ok]
    )

    def table(rows, keys):
        return pa.Table.from_pylist([{k: r.get(k) for k in keys} for r in rows])

    rows = pa.concat_tables(
        [
            new_rows(pa.Table.from_pylist(new, schema=RUN_ROWS), dim=DIM, known=known, root=root),
            previous_chunk_rows(table(prev_chunks, [*CHUNK_COLUMNS, "embedding"]), dim=DIM, root=prev_root),
            previous_document_rows(pa.Table.from_pylist(prev_docs), dim=DIM),
        ]
    )
    out = []
    for key in sorted(set(rows.column("group").to_pylist())):
        out += merge_previous(rows.filter(pc.equal(rows.column("group"), key))).to_pylist()
    return out


sections = st.tuples(
    st.sampled_from(WORDS), st.lists(st.sampled_from(WORDS), min_size=3, max_size=30).map(" ".join)
)
trees = st.dictionaries(
    st.sampled_from(NAMES), st.lists(sections, min_size=1, max_size=6), min_size=1, max_size=3
)
edits = st.lists(
    st.tuples(
        st.sampled_from(["append", "delete", "change", "rename", "move"]),
        st.integers(0, 10),
        st.integers(0, 10),
        sections,
    ),
    min_size=1,
    max_size=3,
)


def edit(tree: dict, root: str, ops) -> tuple[dict, str]:
    tree = {k: list(v) for k, v in tree.items()}
    for op, i, j, section in ops:
        name = sorted(tree)[i % len(tree)]
        doc = tree[name]
        if op == "append":
            doc.append(section)
        elif op == "delete" and len(doc) > 1:
            del doc[j % len(doc)]
        elif op == "change":
            doc[j % len(doc)] = (doc[j % len(doc)][0], section[1])
        elif op == "rename":
            free = [n for n in NAMES if n not in tree]
            if free:
                tree[free[j % len(free)]] = tree.pop(name)
        elif op == "move":
            root = root + "/moved" if not root.endswith("moved") else "/mnt/snapshot-2"
    return tree, root


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # shrinking a failure takes minutes here
)
@given(tree=trees, ops=edits)
@example(  # two identical files, one edited: the copy left is no longer a duplicate
    tree={"guide.md": [("alpha", "alpha alpha alpha")], "faq.md": [("alpha", "alpha alpha alpha")]},
    ops=[("append", 0, 0, ("alpha", "alpha alpha alpha"))],
)
@example(tree={"guide.md": [("alpha", "one two three")] * 3}, ops=[("move", 0, 0, ("beta", "x y z"))])
@example(  # CI, 2026-12-06: two files swap names; each path's chunks it had are no upsert
    tree={
        "caf\\xe9 \\n odd.md": [
            ("billing", "alpha export"),
            ("alpha", "beta agent alpha"),
            ("token", "beta delta"),
        ],
        "guide.md": [("billing", "alpha export"), ("alpha", "beta agent billing"), ("token", "beta delta")],
    },
    ops=[
        ("rename", 1, 1, ("proxy", "quota")),
        ("rename", 0, 1, ("token", "gamma")),
        ("rename", 1, 1, ("proxy", "quota")),
    ],
)
def test_an_incremental_run_equals_a_full_rebuild_and_its_delta_the_pairs_that_changed(steps, tree, ops):
    root = "/data/corpus"
    first = process(steps, tree, root)
    prev_chunks, prev_docs = output(first)
    ids = [c["chunk_id"] for c in prev_chunks]
    assert len(ids) == len(set(ids))  # unique ids, repeated sections and all

    tree2, root2 = edit(tree, root, ops)
    unchanged = DocIndex(
        [
            doc_key(d["doc_id"], d["format"], identity_of(d["source"], root))
            for d in prev_docs
            if d["status"] == "ok"
        ]
    )
    merged = join(
        prev_chunks, prev_docs, process(steps, tree2, root2, unchanged=unchanged), root=root2, prev_root=root
    )
    chunks = [r for r in merged if r["row_type"] == "chunk"]
    rebuilt, _ = output(process(steps, tree2, root2))

    # the incremental output is the full rebuild's, row for row
    key = lambda c: (c["chunk_id"], c["source"], c["text"], c["char_start"], c["char_end"])  # noqa: E731
    assert sorted(map(key, chunks)) == sorted(map(key, rebuilt))
    # a reused vector is always its own text's; only texts new to the output wait for the embedder
    old_pairs = {(c["chunk_id"], c["text"]) for c in prev_chunks}
    old_texts = {c["text"] for c in prev_chunks}
    for c in chunks:
        if c["embedding"] is not None:
            assert list(c["embedding"]) == pytest.approx(vector(c["text"]))
        else:
            assert c["text"] not in old_texts or (c["chunk_id"], c["text"]) not in old_pairs
    new_pairs = {(c["chunk_id"], c["text"]) for c in rebuilt}
    assert sum(c["embedding"] is None for c in chunks) <= len(new_pairs - old_pairs)
    # the delta: upsert what is new as (id, text), or whose source moved; delete the ids that are gone
    old_source = {c["chunk_id"]: c["source"] for c in prev_chunks}
    want = {i for i, t in new_pairs - old_pairs} | {
        c["chunk_id"]
        for c in rebuilt
        if (c["chunk_id"], c["text"]) in old_pairs and old_source[c["chunk_id"]] != c["source"]
    }
    assert {c["chunk_id"] for c in chunks if c["changed"]} == want
    if tree2 == tree:  # only the root moved: nothing to embed, nothing to delete
        assert all(c["embedding"] is not None for c in chunks)
        assert {c["chunk_id"] for c in chunks} == set(old_source)


def test_one_appended_section_upserts_one_chunk_and_deletes_none(steps):
    tree = {"guide.md": [(w, " ".join(WORDS[i:] + WORDS[:i]) * 3) for i, w in enumerate(WORDS[:5])]}
    prev_chunks, prev_docs = output(process(steps, tree, "/a"))
    tree2 = {"guide.md": [*tree["guide.md"], ("appendix", "audit logs are exported daily")]}
    merged = join(
        prev_chunks, prev_docs, process(steps, tree2, "/b", unchanged=DocIndex([])), root="/b", prev_root="/a"
    )
    chunks = [r for r in merged if r["row_type"] == "chunk"]
    moved = {c["chunk_id"] for c in prev_chunks}
    assert len(chunks) == len(prev_chunks) + 1 and moved < {c["chunk_id"] for c in chunks}
    assert [c["text"].splitlines()[-1] for c in chunks if c["embedding"] is None] == [
        "audit logs are exported daily"
    ]
