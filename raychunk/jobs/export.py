"""The export job, in this process and without Ray: an output's chunks and vectors into a vector
store table (``raychunk.destinations``), kept equal to the output.

- A table that holds nothing of raychunk's, or another output than this one's previous: a **full
  export** (the table is created anew, then every ``chunks/`` shard appended).
- A table that holds the output this one was made from with ``run --previous`` (its
  ``report.json`` names it: ``incremental.previous_identity``): its **delta** is applied, the rows
  of ``delta/added`` upserted by ``chunk_id`` and the ids of ``delta/removed`` deleted, which leaves
  the table equal to a full export of this output.
- A table that already holds this output: nothing to do.

Each shard, upsert or delete is a step. Before the first step and after each, the job records in the
destination's state which output it is exporting, how many steps are done and a checkpoint of the
table; a rerun after an interruption rolls the table back to the last checkpoint (undoing a step
half done) and goes on from there, so the result is the uninterrupted export's. A table whose
vectors came from another embedder, or have another dimension, is refused, naming both.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import TextIO

from raychunk.destinations import Destination
from raychunk.incremental import Previous, changed_fields, open_previous

__all__ = ["export", "render_export_text"]

log = logging.getLogger(__name__)

_BATCH_ROWS = 8192


def export(
    uri: str,
    destination: Destination,
    *,
    index_min_rows: int | None = None,
    out: TextIO | None = sys.stderr,
    after_step=None,
) -> dict:
    """Export the output at ``uri`` into ``destination``; returns what was done. ``after_step(i)``
    is called after step ``i`` is recorded (a seam for the interruption test)."""
    t0 = time.perf_counter()
    output = open_previous(uri, what="export")
    vectors = output.settings.get("vectors")
    if not vectors:
        raise ValueError(
            f"export {uri}: the output has no vectors (it was run with --no-embed); nothing to export"
        )
    identity = output.identity
    state = destination.read_state()
    if state is None and destination.exists():
        raise ValueError(
            f"{destination.describe()} exists and was not written by `raychunk export` (no record of its "
            "embedder); export to another --table or folder"
        )
    if state is not None:
        _check_vectors(state.get("vectors") or {}, vectors, destination, uri)
    dim = destination.vector_dim()
    if dim is not None and dim != vectors["dim"]:
        raise ValueError(
            f"{destination.describe()} holds {dim}-dimensional vectors; {uri}'s have {vectors['dim']}: "
            "export to another --table or folder"
        )
    pending = (state or {}).get("pending")
    held = (state or {}).get("output")
    previous_identity = (output.report.get("incremental") or {}).get("previous_identity")
    if pending and pending["output"] == identity:
        mode, start = pending["mode"], pending["done"]
        destination.rollback(pending["token"])
        _say(out, f"resuming the {mode} export of {uri}: {start} of {pending['steps']} steps were done")
    elif not pending and held == identity and destination.exists():
        mode, start = "none", 0
    elif not pending and held and previous_identity == held and destination.exists():
        mode, start = "delta", 0
    else:
        mode, start = "full", 0
    steps = _steps(output, mode)
    record = {
        "vectors": vectors,
        "output": held if mode != "full" else None,
        "uri": (state or {}).get("uri"),
        "pending": None,
    }
    if mode != "none":
        # A full export starts from no table: its checkpoint is None, and a rollback drops the table.
        token = destination.checkpoint() if start or mode == "delta" else None
        pending = {
            "output": identity,
            "uri": uri,
            "mode": mode,
            "steps": len(steps),
            "done": start,
            "token": token,
        }
        destination.write_state({**record, "pending": pending})
    schema = _schema(output)
    rows = {"appended": 0, "upserted": 0, "deleted": 0}
    for i in range(start, len(steps)):
        op, path = steps[i]
        rows[_NOUN[op]] += _apply(destination, output, op, path, schema)
        pending = {**pending, "done": i + 1, "token": destination.checkpoint()}
        destination.write_state({**record, "pending": pending})
        _say(
            out,
            f"  step {i + 1}/{len(steps)}: {op} {path[len(output.path) + 1 :] if path else destination.describe()}",
        )
        if after_step is not None:
            after_step(i)
    index = destination.finish(index_min_rows) if index_min_rows is not None else destination.finish()
    destination.write_state({"vectors": vectors, "output": identity, "uri": uri, "pending": None})
    return {
        "output": uri,
        "destination": destination.describe(),
        "mode": mode,
        "resumed_at_step": start if start else None,
        "steps": len(steps),
        "rows": rows,
        "table_rows": index["rows"],
        "vector_index": index["vector_index"],
        "index_built": index["built"],
        "seconds": round(time.perf_counter() - t0, 2),
    }


_NOUN = {"create": "appended", "append": "appended", "upsert": "upserted", "delete": "deleted"}


def _steps(output: Previous, mode: str) -> list[tuple[str, str | None]]:
    if mode == "full":
        return [("create", None)] + [("append", p) for p in output.files("chunks")]
    if mode == "delta":
        files = output.report["files"]
        added = [f"{output.path}/{f}" for f in files.get("delta/added", [])]
        removed = [f"{output.path}/{f}" for f in files.get("delta/removed", [])]
        return [("upsert", p) for p in added] + [("delete", p) for p in removed]
    return []


def _schema(output: Previous):
    """The chunks/ schema, as the writer casts every shard and delta/added to it."""
    from raychunk.schema import chunk_schema

    return chunk_schema(output.settings["vectors"]["dim"])


def _apply(destination: Destination, output: Previous, op: str, path: str | None, schema) -> int:
    """One step; the rows it wrote or deleted. A shard is streamed a batch at a time."""
    import pyarrow.parquet as pq

    if op == "create":
        destination.create(schema)
        return 0
    with output.fs.open_input_file(path) as f:
        parquet = pq.ParquetFile(f)
        if op == "delete":
            ids = parquet.read(columns=["chunk_id"]).column("chunk_id").to_pylist()
            destination.delete(ids)
            return len(ids)
        n = parquet.metadata.num_rows
        batches = (b.cast(schema) for b in parquet.iter_batches(batch_size=_BATCH_ROWS))
        (destination.append if op == "append" else destination.upsert)(schema, batches)
        return n


def _check_vectors(held: dict, ours: dict, destination: Destination, uri: str) -> None:
    changed = changed_fields(held, ours)
    if changed:
        raise ValueError(
            f"{destination.describe()} holds vectors of {_embedder(held)}; {uri}'s are of {_embedder(ours)} "
            f"({', '.join(changed)} differ): export to another --table or folder"
        )


def _embedder(v: dict) -> str:
    return (
        f"{v.get('model')} (dim {v.get('dim')}, {v.get('backend')}, {v.get('precision')}, "
        f"weights {v.get('model_version')}, normalize={v.get('normalize')})"
    )


def _say(out: TextIO | None, line: str) -> None:
    if out is not None:
        print(line, file=out, flush=True)


def render_export_text(report: dict) -> str:
    rows = report["rows"]
    what = {
        "full": f"full export: {rows['appended']:,} rows",
        "delta": f"delta applied: {rows['upserted']:,} rows upserted, {rows['deleted']:,} ids deleted",
        "none": "already holds this output: nothing to do",
    }[report["mode"]]
    index = report["vector_index"] or "none (exact search)"
    if report["index_built"]:
        index += " (built now)"
    lines = [
        f"raychunk export {report['output']} → {report['destination']}",
        f"  {what}"
        + (f" (resumed at step {report['resumed_at_step'] + 1})" if report["resumed_at_step"] else ""),
        f"  table      {report['table_rows']:,} rows; vector index: {index}",
        f"  time       {report['seconds']:.1f} s",
    ]
    return "\n".join(lines)
