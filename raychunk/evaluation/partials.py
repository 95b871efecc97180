"""The eval's work on the cluster, and the driver's merge, so the driver holds what the labelled set
needs and never the corpus: no document text, no chunk text, no vector.

- ``locate_labelled``: the check before any chunking, right after a labelled document is parsed:
  its questions' passages located in its text (``labels.locate_passages``), only the spans coming
  back;
- ``mark_document``: where a document's text is (the chunk stage): each of its chunks span-checked,
  matched against its questions' located passages, and expanded small-to-big over its family;
- ``retrieve_block``: each embedded block: per setting the top ``k`` chunks of every question (the
  chunks' small fields only), the span-check counts and first failures, and the pricing sums;
- ``collect_partials``: the driver's merge over blocks. The top ``k`` of the union of every block's
  top ``k`` is the top ``k`` of the corpus: the ranking is exact, ties going to the lower
  (source, chunk_index) as ``metrics.top_k`` has them.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from raychunk.evaluation.labels import locate_passages
from raychunk.evaluation.metrics import Hit, IndexedChunk, as_indexed, grow_within, scores, tokens_read
from raychunk.evaluation.spans import BadSpan, SpanCheck, check_chunk
from raychunk.render import squash

__all__ = [
    "PRICE_SUMS",
    "Partials",
    "Retrieval",
    "collect_partials",
    "inside_one_chunk",
    "locate_labelled",
    "mark_document",
    "retrieve",
    "retrieve_block",
]

PRICE_SUMS = ("chunks", "tokens", "header_tokens", "overlap_tokens", "over_limit", "text_bytes")
_SMALL = (
    "source",
    "chunk_index",
    "char_start",
    "char_end",
    "n_tokens",
    "parent_id",
    "header_tokens",
    "overlap_tokens",
    "table_part",
    "chunk_id",
)


def _schema():
    """The small rows a block becomes; ``row_type`` names the kind, and each kind's own figures are
    in the struct column of its name (``document``, ``candidate``, ``inside``, ``spans``, ``price``,
    ``embedding``)."""
    import pyarrow as pa

    ints = pa.list_(pa.int64())
    return pa.schema(
        [
            ("row_type", pa.string()),  # document | candidate | inside | spans | price | embedding
            ("setting", pa.string()),
            ("query", pa.int32()),
            ("score", pa.float64()),
            ("source", pa.string()),
            ("chunk_index", pa.int32()),
            ("char_start", pa.int64()),
            ("char_end", pa.int64()),
            ("n_tokens", pa.int32()),
            ("parent_id", pa.string()),
            ("header_tokens", pa.int32()),
            ("overlap_tokens", pa.int32()),
            ("table_part", pa.int32()),
            ("chunk_id", pa.string()),
            ("doc_id", pa.string()),
            (
                "document",
                pa.struct(
                    [
                        ("status", pa.string()),
                        ("reason", pa.string()),
                        ("doc_type", pa.string()),
                        ("bytes", pa.int64()),
                    ]
                ),
            ),
            # whether the candidate holds the question's quote, its small-to-big group (a list of
            # [chunk_index, start, end, n_tokens, header_tokens, overlap_tokens]) and whether that does
            (
                "candidate",
                pa.struct([("quoted", pa.bool_()), ("group", pa.list_(ints)), ("group_quoted", pa.bool_())]),
            ),
            ("inside", pa.list_(pa.int32())),  # the questions whose passages lie inside one chunk
            (
                "spans",
                pa.struct(
                    [
                        ("chunks", pa.int64()),
                        ("bad", pa.int64()),
                        (
                            "examples",
                            pa.list_(
                                pa.struct(
                                    [
                                        ("source", pa.string()),
                                        ("chunk_index", pa.int64()),
                                        ("start", pa.int64()),
                                        ("end", pa.int64()),
                                        ("why", pa.string()),
                                    ]
                                )
                            ),
                        ),
                    ]
                ),
            ),
            (
                "price",
                pa.struct(
                    [
                        ("doc_type", pa.string()),
                        *((key, pa.int64()) for key in PRICE_SUMS),
                        ("hist", pa.list_(ints)),
                    ]
                ),
            ),
            ("embedding", pa.struct([("embedded", pa.int64()), ("reused", pa.int64())])),
        ]
    )


@dataclass(frozen=True)
class Retrieval:
    """The eval job's questions, for the steps that score the corpus where it lies: ``labelled``
    (document source → ``[(index, passages)]``, located by ``locate_labelled``) for the chunk step;
    their ``vectors``, the ``k`` to keep per block and the small-to-big ``parent_budget``. The
    embedder embeds each distinct text once across the settings, and with ``cache`` (a folder)
    once across runs."""

    labelled: dict
    vectors: object
    k: int
    parent_budget: int
    cache: str | None = None


def retrieve(retrieval: Retrieval):
    """The step after the embedder: each embedded block becomes its questions' top k and its
    small sums (``retrieve_block``)."""
    from raychunk.step import Step

    return Step("retrieve", retrieve_block, kwargs={"query_vectors": retrieval.vectors, "k": retrieval.k})


def locate_labelled(row: dict, *, labelled: dict) -> list[dict]:
    """A parsed document (the parse stage's row) → one small row: its questions' passages located
    in its text (``labelled``: source → ``[(index, query)]``), as ``[{"query": i, "passages",
    "notes", "unlocated"}]`` (``schema.LOCATED_ROWS``); a document that did not parse leaves every
    passage unlocated."""
    from raychunk.evaluation.locate import TextWords

    parsed = row["parsed"]
    doc = parsed.document
    mine = labelled.get(doc.source, [])
    if doc.status != "ok":
        why = f"its document did not parse ({doc.status}: {doc.reason})"
        found = [{"query": i, "passages": [], "unlocated": [{"quote": None, "why": why}]} for i, _ in mine]
    else:
        words = TextWords(parsed.text) if parsed.text else None
        found = [{"query": i, **locate_passages(q, doc.source, parsed.text, words)} for i, q in mine]
    return [{"source": doc.source, "located": found}]


def mark_document(
    text: str, chunks: list[dict], labelled: list[tuple[int, list]], parent_budget: int
) -> list[dict]:
    """What the eval needs of each of one setting's chunks of a document, from the text: ``bad``
    (why its span fails the span check, or None), ``quoted`` (the questions one of whose located
    quotes its text holds; ``labelled``: ``[(index, [[start, end, located quote]]]``), ``group`` (its
    small-to-big expansion, as ``[chunk_index, start, end, n_tokens, header_tokens,
    overlap_tokens]``), ``group_quoted`` and ``text_bytes``."""
    indexed = [as_indexed(c) for c in chunks]
    families: dict[str, list[IndexedChunk]] = {}
    for c in indexed:
        families.setdefault(c.parent_id, []).append(c)
    position, whole = {}, {}  # expand_to_parent, with each family read once, not once per chunk
    for parent, fam in families.items():
        fam.sort(key=lambda c: c.chunk_index)
        position.update({c: i for i, c in enumerate(fam)})
        whole[parent] = tokens_read(fam) <= parent_budget
    quotes = [(i, [squash(p[2]) for p in passages if p[2] is not None]) for i, passages in labelled]
    quoted: dict[int, list[int]] = {}  # chunk_index → questions

    def holds(c: IndexedChunk) -> list[int]:
        if c.chunk_index not in quoted:
            t = squash(c.text)
            quoted[c.chunk_index] = [i for i, qs in quotes if any(x in t for x in qs)]
        return quoted[c.chunk_index]

    out = []
    for row, c in zip(chunks, indexed):
        fam = families[c.parent_id]
        group = fam if whole[c.parent_id] else grow_within(fam, position[c], parent_budget)
        out.append(
            {
                "bad": check_chunk(text, row),
                "quoted": holds(c),
                "group": [
                    [g.chunk_index, g.start, g.end, g.n_tokens, g.header_tokens, g.overlap_tokens]
                    for g in group
                ],
                "group_quoted": sorted({i for g in group for i in holds(g)}),
                "text_bytes": len((row.get("text") or "").encode()),
            }
        )
    if out:
        out[0]["inside"] = inside_one_chunk(chunks, labelled)
    return out


def inside_one_chunk(chunks: list[dict], labelled: list[tuple[int, list]]) -> list[int]:
    """The questions each of whose located passages lies whole inside one chunk's span: what the
    chunker lets a retriever find at all with one result (its own ceiling).

    >>> inside_one_chunk([{"char_start": 0, "char_end": 10}, {"char_start": 10, "char_end": 20}],
    ...                  [(0, [[2, 8, "q"]]), (1, [[8, 12, "q"]])])
    [0]
    """
    spans = [(int(c["char_start"]), int(c["char_end"])) for c in chunks]
    out = []
    for i, passages in labelled:
        located = [(p[0], p[1]) for p in passages if p[0] is not None]
        if located and all(any(a <= s and e <= b for a, b in spans) for s, e in located):
            out.append(i)
    return out


def retrieve_block(batch, *, query_vectors, k: int, examples: int = 5):
    """One embedded block (``document`` and ``chunk`` rows) → its small rows: the documents' facts,
    per setting each question's top ``k`` chunks (``candidate``), the span-check counts and first
    ``examples`` failures (``spans``), and the pricing sums per document type (``price``)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rows: list[dict] = []
    kinds = batch.column("row_type")
    docs = batch.filter(pc.equal(kinds, "document"))
    for d in docs.select(["source", "doc_id", "status", "reason", "doc_type", "bytes"]).to_pylist():
        facts = {"status": d["status"], "reason": d["reason"], "doc_type": d["doc_type"], "bytes": d["bytes"]}
        rows.append({"row_type": "document", "source": d["source"], "doc_id": d["doc_id"], "document": facts})
    chunk_t = batch.filter(pc.equal(kinds, "chunk"))
    if chunk_t.num_rows and "embedded" in chunk_t.column_names:
        embedded = int(pc.sum(chunk_t.column("embedded")).as_py() or 0)
        data = {"embedded": embedded, "reused": chunk_t.num_rows - embedded}
        rows.append({"row_type": "embedding", "embedding": data})
    if chunk_t.num_rows:
        small = chunk_t.select(["setting", *_SMALL, "over_limit", "doc_type", "eval"]).to_pylist()
        emb = chunk_t.column("embedding").combine_chunks()
        matrix = emb.flatten().to_numpy(zero_copy_only=False).reshape(-1, emb.type.list_size)
        by_setting: dict[str, list[int]] = {}
        for i in sorted(
            range(len(small)),
            key=lambda i: (small[i]["setting"], small[i]["source"], small[i]["chunk_index"]),
        ):
            by_setting.setdefault(small[i]["setting"], []).append(i)
        for setting, idx in by_setting.items():
            marks = [small[i]["eval"] for i in idx]
            inside = sorted({q for m in marks for q in m["inside"] or ()})
            rows.append({"row_type": "inside", "setting": setting, "inside": inside})
            rows.extend(_spans(setting, [small[i] for i in idx], marks, examples))
            rows.extend(_price(setting, [small[i] for i in idx], marks))
            s = scores(query_vectors, matrix[idx])
            for q, order in enumerate(np.argsort(-s, axis=1, kind="stable")[:, :k]):
                for j in order:
                    c, m = small[idx[j]], marks[j]
                    rows.append(
                        {
                            **{key: c[key] for key in _SMALL},
                            "row_type": "candidate",
                            "setting": setting,
                            "query": q,
                            "score": float(s[q, j]),
                            "candidate": {
                                "quoted": q in m["quoted"],
                                "group": m["group"],
                                "group_quoted": q in m["group_quoted"],
                            },
                        }
                    )
    return pa.Table.from_pylist(rows, schema=_schema())


def _spans(setting: str, chunks: list[dict], marks: list[dict], examples: int) -> list[dict]:
    bad = [(c, m["bad"]) for c, m in zip(chunks, marks) if m["bad"] is not None]
    named = [
        {
            "source": c["source"],
            "chunk_index": c["chunk_index"],
            "start": c["char_start"],
            "end": c["char_end"],
            "why": why,
        }
        for c, why in bad[:examples]
    ]
    data = {"chunks": len(chunks), "bad": len(bad), "examples": named}
    return [{"row_type": "spans", "setting": setting, "spans": data}]


def _price(setting: str, chunks: list[dict], marks: list[dict]) -> list[dict]:
    sums: dict[str, dict] = {}
    for c, m in zip(chunks, marks):
        t = c["doc_type"] or "ok"
        a = sums.setdefault(t, {"doc_type": t, **dict.fromkeys(PRICE_SUMS, 0), "hist": Counter()})
        a["chunks"] += 1
        a["tokens"] += c["n_tokens"]
        a["header_tokens"] += c["header_tokens"] or 0
        a["overlap_tokens"] += c["overlap_tokens"] or 0
        a["over_limit"] += bool(c["over_limit"])
        a["text_bytes"] += m["text_bytes"]
        a["hist"][c["n_tokens"]] += 1
    out = []
    for a in sums.values():
        a["hist"] = sorted(a["hist"].items())
        out.append({"row_type": "price", "setting": setting, "price": a})
    return out


@dataclass(frozen=True, slots=True)
class Partials:
    """What the driver keeps of the eval run: the documents' facts (no text), each setting's ranked
    hits per question, span checks, and pricing sums per (setting, document type)."""

    documents: dict[str, dict]
    hits: dict[str, list[list[Hit]]]  # setting → per question, best first
    checks: dict[str, SpanCheck]
    price: dict[tuple[str, str], dict]  # (setting, doc_type) → PRICE_SUMS and ``hist`` (a Counter)
    rows: int  # small rows received from the blocks
    inside: dict[str, set[int]] = field(default_factory=dict)  # setting → questions inside one chunk
    embedding: dict[str, int] = field(default_factory=dict)  # texts embedded, and reused from the cache


def collect_partials(batches: Iterable, *, queries: int, k: int, examples: int = 5) -> Partials:
    """Merge the blocks' small rows as they arrive, keeping each (setting, question)'s best ``k``:
    the driver holds O(settings x questions x k) candidates whatever the corpus."""
    documents: dict[str, dict] = {}
    best: dict[tuple[str, int], list] = {}
    spans: dict[str, list] = {}
    price: dict[tuple[str, str], dict] = {}
    inside: dict[str, set[int]] = {}
    embedding: dict[str, int] = {}
    n = 0
    for batch in batches:
        n += batch.num_rows
        for r in batch.to_pylist():
            kind = r["row_type"]
            data = r[kind]
            if kind == "document":
                documents[r["source"]] = {**data, "doc_id": r["doc_id"]}
            elif kind == "candidate":
                key = (-r["score"], r["source"], r["chunk_index"])
                best.setdefault((r["setting"], r["query"]), []).append((key, r, data))
            elif kind == "inside":
                inside.setdefault(r["setting"], set()).update(data)
            elif kind == "embedding":
                for key, v in data.items():
                    embedding[key] = embedding.get(key, 0) + v
            elif kind == "spans":
                got = spans.setdefault(r["setting"], [0, 0, []])
                got[0] += data["chunks"]
                got[1] += data["bad"]
                got[2] = sorted(
                    got[2] + [tuple(x.values()) for x in data["examples"]], key=lambda x: (x[0], x[1])
                )
                del got[2][examples:]
            elif kind == "price":
                a = price.setdefault(
                    (r["setting"], data["doc_type"]), {**dict.fromkeys(PRICE_SUMS, 0), "hist": Counter()}
                )
                for key in PRICE_SUMS:
                    a[key] += data[key]
                a["hist"].update(dict(tuple(x) for x in data["hist"]))
        for key, found in best.items():
            if len(found) > k:
                best[key] = heapq.nsmallest(k, found, key=lambda x: x[0])
    hits: dict[str, list[list[Hit]]] = {}
    for (setting, q), found in best.items():
        ranked = hits.setdefault(setting, [[] for _ in range(queries)])
        ranked[q] = [_hit(r, data) for _, r, data in sorted(found, key=lambda x: x[0])[:k]]
    checks = {
        setting: SpanCheck(setting, n_chunks, bad, tuple(BadSpan(*x) for x in named))
        for setting, (n_chunks, bad, named) in spans.items()
    }
    return Partials(documents, hits, checks, price, n, inside, embedding)


def _hit(r: Mapping, data: Mapping) -> Hit:
    chunk = as_indexed({**r, "text": ""})
    group = tuple(
        IndexedChunk(chunk.source, start, end, n, "", chunk.parent_id, index, header, overlap)
        for index, start, end, n, header, overlap in data["group"]
    )
    return Hit(chunk, group, data["quoted"], data["group_quoted"])
