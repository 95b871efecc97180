"""The incremental merge, and the one chunk-id comparison.

An incremental run (``run --previous``) joins the document step's rows with the previous output's
on the cluster (``join_previous``: two steps) and merges each group (``merge_previous``): unchanged
documents take their old rows, chunks whose id or text the old output holds take their old vectors,
and the embedder embeds only the rest.

Old against new chunk ids is counted in one way, for ``price --previous`` (each setting's ids) and
``run --previous`` (the new output's ids, which also writes the removed ones): rows of
``(chunk_id, setting, n_tokens)``, setting -1 for the previous output, grouped by id
(``compare_chunk_id``) and counted (``count_comparison``, summed by ``comparison_totals``);
``compare_ids`` runs the same functions over rows at hand. Plain functions; the steps that put them
on Ray are declared here and run by ``pipeline.execute``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from raychunk.incremental import DocIndex, Previous, doc_key, path_key
from raychunk.io import identity_of
from raychunk.parse.detect import format_from_name
from raychunk.plan import JobPlan
from raychunk.step import Parquet, Step

__all__ = [
    "as_rows",
    "compare_chunk_id",
    "compare_ids",
    "compare_outputs",
    "compare_settings",
    "comparison_totals",
    "count_comparison",
    "current_chunk_ids",
    "join_previous",
    "merge_previous",
    "new_rows",
    "output_chunk_ids",
    "COUNT",
    "REMOVED",
    "partitions",
    "previous_chunk_rows",
    "previous_document_rows",
    "removed_ids",
    "text_sha256",
]


def partitions(previous: Previous) -> int:
    """Shuffle partitions for a join with the previous output: two per shard of its chunks (a shard
    holds ``rows_per_shard`` rows), so each partition stays a few tens of MB however large it is."""
    return max(1, 2 * len(previous.files("chunks")))


def join_previous(previous: Previous, known: DocIndex, job: JobPlan, dim: int) -> list[Step]:
    """The document step's rows and the previous output's, grouped on the cluster and merged per
    group (``merge_previous``): the previous rows of a doc_id meet the new rows of the same bytes
    (``known``: the previous output's documents), and its chunks' texts and vectors meet the new
    rows of their source. Its partitions grow with the previous output."""
    sources = []
    for table, fn, kwargs in (
        ("chunks", previous_chunk_rows, {"dim": dim, "root": previous.root}),
        ("documents", previous_document_rows, {"dim": dim}),
    ):
        files = previous.files(table)
        if files:
            step = Step(f"previous {table}", fn, kwargs=kwargs, retries=False)
            sources.append(Parquet(tuple(files), previous.fs, steps=(step,)))
    return [
        Step("keyed", new_rows, kwargs={"dim": dim, "known": known, "root": job.root}, retries=False),
        Step(
            "merge previous",
            merge_previous,
            each="group",
            key="group",
            partitions=partitions(previous),
            sources=tuple(sources),
            retries=False,
        ),
    ]


# How the rows are keyed for the join:
#
# Each row travels under one ``group`` key. The previous output's documents and chunks go under
# ``id:`` + their doc_id, and each previous chunk once more, as a short ``previous_text`` row (its
# id, source, text hash and vector), under ``src:`` + its source. A new row goes under ``id:`` when
# its bytes are a document of the previous output (a ``reuse`` row; or, under --force-reuse, a
# document chunked again), else under ``src:``: a file whose bytes changed meets the vectors of what
# its path held before. Known bytes that arrive at a path which held other bytes go under ``src:``
# too: there they meet the ids the path held, so that a chunk whose id and text the path had is no
# upsert (texts new to the path are embedded again).


def as_rows(batch, *, dim: int):
    """The chunk stage's rows (``schema.RUN_ROWS``) → ``schema.row_schema``: embedding and changed
    null."""
    import pyarrow as pa

    from raychunk.schema import row_schema

    schema = row_schema(dim)
    n = batch.num_rows
    columns = [
        batch.column(f.name).cast(f.type) if f.name in batch.column_names else pa.nulls(n, f.type)
        for f in schema
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def new_rows(batch, *, dim: int, known: DocIndex, root: str = ""):
    """The chunk stage's rows → ``row_schema`` rows keyed for the join: ``id:`` + doc_id for a
    ``reuse`` row and for a document whose bytes and format ``known`` (the previous output's ``ok``
    documents) holds at a path it does not hold, ``src:`` + its identity (source relative to
    ``root``) for the rest."""
    import pyarrow as pa

    rows = as_rows(batch, dim=dim)
    keys = []
    seen: dict[tuple, str] = {}
    for kind, doc_id, source in zip(
        rows.column("row_type").to_pylist(),
        rows.column("doc_id").to_pylist(),
        rows.column("source").to_pylist(),
        strict=True,
    ):
        if (doc_id, source) not in seen:
            fmt = format_from_name(source or "") or "unknown"
            identity = identity_of(source or "", root)
            by_id = doc_id is not None and (
                kind == "reuse" or (doc_key(doc_id, fmt) in known and path_key(identity) not in known)
            )
            seen[doc_id, source] = f"id:{doc_id}" if by_id else f"src:{identity}"
        keys.append(seen[doc_id, source])
    return rows.set_column(rows.schema.get_field_index("group"), "group", pa.array(keys, pa.string()))


def text_sha256(texts) -> list[bytes | None]:
    """SHA-256 of each text's UTF-8 bytes (what decides that a new chunk's text is an old one's)."""
    import hashlib

    return [None if t is None else hashlib.sha256(t.encode()).digest() for t in texts]


def previous_chunk_rows(batch, *, dim: int, root: str = ""):
    """The previous output's ``chunks/`` rows → ``row_schema`` rows: each whole, as ``previous_chunk``
    under its doc_id, and again as ``previous_text`` (id, source, text hash, vector) under its
    document's identity (its source relative to ``root``, the previous run's input root)."""
    import pyarrow as pa

    rows = as_rows(batch, dim=dim)
    n = rows.num_rows
    digests = pa.array(text_sha256(rows.column("text").to_pylist()), pa.binary(32))
    ids, sources = rows.column("doc_id"), rows.column("source")
    whole = rows.set_column(0, "row_type", pa.array(["previous_chunk"] * n, pa.string()))
    whole = whole.set_column(
        whole.schema.get_field_index("group"), "group", pa.array([f"id:{d}" for d in ids.to_pylist()])
    )
    whole = whole.set_column(whole.schema.get_field_index("text_sha256"), "text_sha256", digests)
    short = {
        "row_type": pa.array(["previous_text"] * n, pa.string()),
        "chunk_id": rows.column("chunk_id"),
        "source": sources,
        "embedding": rows.column("embedding"),
        "group": pa.array([f"src:{identity_of(s, root)}" for s in sources.to_pylist()], pa.string()),
        "text_sha256": digests,
    }
    return pa.concat_tables([whole, as_rows(pa.table(short), dim=dim)])


def previous_document_rows(batch, *, dim: int):
    """The previous output's ``documents/`` rows → ``row_schema`` rows of type ``previous_document``
    under their doc_id, the documents row's columns as they are."""
    import pyarrow as pa

    n = batch.num_rows
    rows = as_rows(batch, dim=dim)
    rows = rows.set_column(0, "row_type", pa.array(["previous_document"] * n, pa.string()))
    group = pa.array([f"id:{d}" for d in batch.column("doc_id").to_pylist()], pa.string())
    return rows.set_column(rows.schema.get_field_index("group"), "group", group)


def merge_previous(group):
    """All rows of one ``group`` key, new and previous (``row_schema``) → the rows to write.

    A ``reuse`` row (the document's bytes are unchanged) becomes the previous output's documents and
    chunk rows under its new source. Rows the chunk stage made keep their own, and a chunk takes the
    vector of a previous chunk of the group with the same id and text (``reused`` = ``id``), else of
    one with the same text (``text``: the same source, or the same bytes chunked again), else waits
    for the embedder. Previous rows no new row asked for are dropped. ``changed`` marks what a
    vector store must upsert: a chunk id the previous output lacks, or a chunk whose source or text
    differs; on a documents row, false marks one copied from the previous output (null: parsed in
    this run)."""
    import pyarrow as pa

    kind = group.column("row_type").to_pylist()
    at = {k: [i for i, x in enumerate(kind) if x == k] for k in set(kind)}
    previous = at.get("previous_chunk", [])
    ids = group.column("chunk_id").to_pylist()
    sources = group.column("source").to_pylist()
    digests = group.column("text_sha256").to_pylist()
    status = group.column("status").to_pylist()
    parts = []
    for r in at.get("reuse", []):
        ok = [i for i in at.get("previous_document", []) if status[i] == "ok"]
        if not ok:
            raise RuntimeError(
                f"{sources[r]}: its document is not in the previous output, which the index said it was"
            )
        rows = group.take(pa.array([ok[0], *previous], pa.int64()))
        moved = [sources[i] != sources[r] for i in previous]
        rows = rows.set_column(0, "row_type", pa.array(["document"] + ["chunk"] * len(previous), pa.string()))
        raw = group.column("source_bytes")[r].as_py()
        rows = rows.set_column(
            rows.schema.get_field_index("source_bytes"),
            "source_bytes",
            pa.array([raw] + [None] * len(previous), pa.binary()),
        )
        rows = rows.set_column(
            rows.schema.get_field_index("source"),
            "source",
            pa.array([sources[r]] * rows.num_rows, pa.string()),
        )
        rows = rows.set_column(
            rows.schema.get_field_index("changed"), "changed", pa.array([False, *moved], pa.bool_())
        )
        rows = rows.set_column(
            rows.schema.get_field_index("reused"),
            "reused",
            pa.array([None] + ["id"] * len(previous), pa.string()),
        )
        parts.append(rows)
    new = sorted(at.get("document", []) + at.get("chunk", []))
    if new:
        old = previous + at.get("previous_text", [])
        by_id = {ids[j]: j for j in old}
        by_text: dict[bytes, int] = {}
        for j in old:
            by_text.setdefault(digests[j], j)
        chunks = [i for i in new if kind[i] == "chunk"]  # a document row's text is its whole document's
        digest_of = dict(
            zip(chunks, text_sha256(group.column("text").take(pa.array(chunks, pa.int64())).to_pylist()))
        )
        mine = [digest_of.get(i) for i in new]
        match, how, changed = [], [], []
        for i, digest in zip(new, mine, strict=True):
            j = by_id.get(ids[i])
            if kind[i] != "chunk":
                j, reused, upsert = None, None, None
            elif j is not None and digests[j] == digest:
                reused, upsert = "id", sources[j] != sources[i]
            else:
                j = by_text.get(digest)
                reused, upsert = (None if j is None else "text"), True
            match.append(j)
            how.append(reused)
            changed.append(upsert)
        rows = group.take(pa.array(new, pa.int64()))
        reused = group.column("embedding").take(pa.array(match, pa.int64()))
        rows = rows.set_column(rows.schema.get_field_index("embedding"), "embedding", reused)
        rows = rows.set_column(
            rows.schema.get_field_index("changed"), "changed", pa.array(changed, pa.bool_())
        )
        rows = rows.set_column(rows.schema.get_field_index("reused"), "reused", pa.array(how, pa.string()))
        parts.append(rows)
    return pa.concat_tables(parts) if parts else group.slice(0, 0)


_ID_FIELDS = (("chunk_id", "string"), ("setting", "int32"), ("n_tokens", "int64"))


def _id_table(ids: list, settings: list, tokens: list):
    import pyarrow as pa

    schema = pa.schema([(name, kind) for name, kind in _ID_FIELDS])
    return pa.table([ids, settings, tokens], schema=schema)


def current_chunk_ids(batch, *, labels: list[str]):
    """``measure_settings`` rows (kept with ``keep_ids``) → one ``(chunk_id, setting, n_tokens)`` row
    per chunk, the setting as its index in ``labels``."""
    import pyarrow.compute as pc

    index = {label: i for i, label in enumerate(labels)}
    per_row = batch.column("chunk_ids")
    chunks = pc.list_flatten(per_row)
    at = [index[label] for label in batch.column("setting").to_pylist()]
    settings = [
        s for s, n in zip(at, pc.fill_null(pc.list_value_length(per_row), 0).to_pylist()) for _ in range(n)
    ]
    if not len(chunks):
        return _id_table([], [], [])
    return _id_table(pc.struct_field(chunks, "chunk_id"), settings, pc.struct_field(chunks, "n_tokens"))


def output_chunk_ids(batch, *, setting: int):
    """An output's ``chunks/`` rows → ``(chunk_id, setting, 0)``: setting -1 marks the previous
    output, 0 the new output of an incremental run."""
    n = batch.num_rows
    return _id_table(batch.column("chunk_id").to_pylist(), [setting] * n, [0] * n)


def compare_chunk_id(group: dict) -> dict:
    """All rows of one chunk id (current and previous) → a row per setting that has it, with whether
    the previous run has it too and its tokens, plus a setting -1 row when the previous run has it
    (``in_current``: whether any setting has it)."""
    import numpy as np

    in_previous = bool((group["setting"] < 0).any())
    tokens = {int(s): int(n) for s, n in zip(group["setting"], group["n_tokens"]) if s >= 0}
    settings = list(tokens) + ([-1] if in_previous else [])
    return {
        "chunk_id": np.repeat(group["chunk_id"][:1], len(settings)),
        "setting": np.array(settings, dtype=np.int32),
        "in_previous": np.full(len(settings), int(in_previous), dtype=np.int64),
        "in_current": np.full(len(settings), bool(tokens)),
        "n_tokens": np.array([tokens.get(s, 0) for s in settings], dtype=np.int64),
    }


def removed_ids(batch: dict) -> dict:
    """``compare_chunk_id`` rows → the ids only the previous output holds (``delta/removed``)."""
    return {"chunk_id": batch["chunk_id"][(batch["setting"] < 0) & ~batch["in_current"]]}


def count_comparison(batch: dict) -> dict:
    """``compare_chunk_id`` rows → per setting: unchanged, new, the new chunks' tokens; and for
    setting -1 the previous run's distinct chunk ids (in ``unchanged``)."""
    import numpy as np

    settings = np.unique(batch["setting"])
    out = {"setting": [], "unchanged": [], "new": [], "tokens_to_embed": []}
    for s in settings:
        mine = batch["setting"] == s
        prev = batch["in_previous"][mine] > 0
        out["setting"].append(int(s))
        out["unchanged"].append(int(prev.sum()))
        out["new"].append(int((~prev).sum()))
        out["tokens_to_embed"].append(int(batch["n_tokens"][mine][~prev].sum()))
    return {k: np.array(v, dtype=np.int64) for k, v in out.items()}


def _compare(partitions: int, sources: tuple[Parquet, ...] = ()) -> Step:
    return Step(
        "compare ids",
        compare_chunk_id,
        each="group",
        key="chunk_id",
        partitions=partitions,
        sources=sources,
        format="numpy",
        retries=False,
    )


def _output_ids(files, fs, setting: int) -> Parquet:
    ids = Step("output ids", output_chunk_ids, kwargs={"setting": setting}, retries=False)
    return Parquet(tuple(files), fs, steps=(ids,), columns=("chunk_id",))


def compare_settings(labels: list[str], previous_chunks: str, fs, *, partitions: int) -> list[Step]:
    """``price --previous``: each setting's chunk ids (``measure_settings`` rows kept with
    ``keep_ids``, the setting as its index in ``labels``) grouped by id with an earlier output's
    (``previous_chunks``: its ``chunks/`` folder on ``fs``); ``COUNT`` after them counts."""
    ids = Step("setting ids", current_chunk_ids, kwargs={"labels": labels}, retries=False)
    return [ids, _compare(partitions, (_output_ids([previous_chunks], fs, -1),))]


def compare_outputs(new_chunks: list[str], fs, previous: Previous) -> tuple[Parquet, list[Step]] | None:
    """``run --previous``: the new output's chunk ids (``new_chunks`` on ``fs``, setting 0) and
    the previous output's, as the first side and the steps that group them by id; None when neither
    has a chunk. ``COUNT`` after them counts, ``REMOVED`` keeps the ids to delete."""
    sides = [_output_ids(new_chunks, fs, 0)] if new_chunks else []
    if previous.files("chunks"):
        sides.append(_output_ids(previous.files("chunks"), previous.fs, -1))
    if not sides:
        return None
    return sides[0], [_compare(partitions(previous), tuple(sides[1:]))]


COUNT = Step("count ids", count_comparison, format="numpy", retries=False)
REMOVED = Step("removed ids", removed_ids, format="numpy", retries=False)


def comparison_totals(rows: Iterable[dict], labels: list[str]) -> tuple[dict, int]:
    """``count_comparison`` rows summed per setting: ``{label: {unchanged, new, removed,
    tokens_to_embed}}`` (a setting's index in ``labels``), and how many rows were summed."""
    sums: dict[int, list[int]] = {}
    received = 0
    for row in rows:
        received += 1
        acc = sums.setdefault(int(row["setting"]), [0, 0, 0])
        for i, key in enumerate(("unchanged", "new", "tokens_to_embed")):
            acc[i] += int(row[key])
    previous_ids = sums.get(-1, [0])[0]  # setting -1 counts the previous run's distinct ids
    out = {}
    for i, label in enumerate(labels):
        unchanged, new, tokens = sums.get(i, [0, 0, 0])
        out[label] = {
            "unchanged": unchanged,
            "new": new,
            "removed": previous_ids - unchanged,
            "tokens_to_embed": tokens,
        }
    return out, received


def compare_ids(rows: list[dict], previous: Collection[str], labels: list[str]) -> dict[str, dict]:
    """Per setting, chunks unchanged, new and removed against an earlier run's chunk ids, and the
    new chunks' tokens: the cluster's comparison, on ``measure_settings`` rows at hand."""
    import numpy as np
    import pyarrow as pa

    from raychunk.schema import MEASURE_ROWS

    table = pa.concat_tables(
        [
            current_chunk_ids(
                pa.Table.from_pylist(
                    [{"setting": r["setting"], "chunk_ids": r["chunk_ids"]} for r in rows],
                    schema=pa.schema([MEASURE_ROWS.field("setting"), MEASURE_ROWS.field("chunk_ids")]),
                ),
                labels=labels,
            )
            if rows
            else _id_table([], [], []),
            output_chunk_ids(pa.table({"chunk_id": pa.array(list(previous), pa.string())}), setting=-1),
        ]
    ).sort_by("chunk_id")
    ids = table.column("chunk_id").to_numpy(zero_copy_only=False)
    columns = {name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names}
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]]) if len(ids) else np.array([], dtype=np.int64)
    groups = [
        compare_chunk_id({k: v[a:b] for k, v in columns.items()})
        for a, b in zip(starts, [*starts[1:], len(ids)])
    ]
    counted = (
        [count_comparison({k: np.concatenate([g[k] for g in groups]) for k in groups[0]})] if groups else []
    )
    rows_out = [dict(zip(c, values)) for c in counted for values in zip(*c.values())]
    return comparison_totals(rows_out, labels)[0]
