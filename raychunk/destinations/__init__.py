"""Where ``raychunk export`` writes an output's chunks and vectors: one module per vector store.

A destination is a table keyed by ``chunk_id`` that the export job (``raychunk.jobs.export``) fills
and keeps in step with an output; the job owns the plan (a full export, or an incremental output's
delta), the settings check and the progress record, and a destination gives it these operations:

- ``exists()``, ``count()``, ``vector_dim()``: what the table is now;
- ``read_state()`` / ``write_state(state)``: a small JSON record kept beside the table (which output
  it holds, with what embedder, and an export in progress);
- ``create(schema)`` (drop and create empty), ``append(batches)``, ``upsert(batches)`` (by
  ``chunk_id``), ``delete(ids)``: each a unit of work the job records when done;
- ``checkpoint()`` / ``rollback(token)``: a token for the table as it is, and the way back to it, so
  that a step that an interruption may have half applied is undone before it is run again (a store
  whose writes are all idempotent returns ``None`` and does nothing);
- ``finish(index_min_rows)``: indexes once the table is big enough to need them;
- ``nearest(vector, k, columns)``: the rows nearest a vector, for ``raychunk search``.

Another store (Qdrant, pgvector) is another module with the same methods.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

import pyarrow as pa

__all__ = ["Destination"]


class Destination(Protocol):
    def describe(self) -> str: ...

    def exists(self) -> bool: ...

    def count(self) -> int: ...

    def vector_dim(self) -> int | None: ...

    def read_state(self) -> dict | None: ...

    def write_state(self, state: dict) -> None: ...

    def create(self, schema: pa.Schema) -> None: ...

    def append(self, schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> None: ...

    def upsert(self, schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> None: ...

    def delete(self, ids: list[str]) -> None: ...

    def checkpoint(self) -> Any: ...

    def rollback(self, token: Any) -> None: ...

    def finish(self, index_min_rows: int) -> dict: ...

    def nearest(self, vector, k: int, columns: list[str]) -> list[dict]: ...
