"""Incremental runs: what an earlier output lets a new run reuse.

An output's ``report.json`` records its settings in two parts (``settings.chunks``: what shapes the
chunks, ``settings.vectors``: what shapes the vectors) and names its files. A run with ``--previous``
reads that report (never the old vectors: those are joined with the new rows on the cluster), checks
the settings and builds a ``DocIndex`` of the documents it need not parse again: those whose bytes
(``doc_id``) and format are unchanged, when the chunk settings are too.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from raychunk.config import ConfigError

if TYPE_CHECKING:
    import pyarrow.fs as pafs

__all__ = [
    "DocIndex",
    "Previous",
    "Reuse",
    "changed_fields",
    "check_reuse",
    "doc_key",
    "open_previous",
    "reuse_previous",
    "path_key",
    "unchanged_documents",
]

log = logging.getLogger(__name__)


def doc_key(doc_id: str, fmt: str, identity: str | None = None) -> bytes:
    """16 bytes naming a document's bytes and the format its name gives it (a renamed file keeps this
    key unless the rename changes its parser, ``a.md`` → ``a.txt``), and with ``identity`` its path
    relative to its input root too (what its chunk ids name: a renamed file is chunked again)."""
    key = f"{doc_id}|{fmt}" if identity is None else f"{doc_id}|{fmt}|{identity}"
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()[:16]


def path_key(identity: str) -> bytes:
    """16 bytes naming a path (relative to its input root) that held an ``ok`` document: known bytes
    that arrive at such a path meet the chunks the path held (``merge.new_rows``)."""
    return hashlib.sha256(f"path|{identity}".encode("utf-8", "surrogatepass")).digest()[:16]


class DocIndex:
    """``doc_key`` digests (16 bytes a document), held as two sorted ``uint64`` columns: what the parse
    tasks look up before parsing. It pickles as one bytes object, so it travels to the workers once.
    (Not numpy ``S16``: that drops a digest's trailing zero bytes.)

    >>> index = DocIndex([doc_key("ab", "markdown")])
    >>> doc_key("ab", "markdown") in index, doc_key("ab", "text") in index
    (True, False)
    """

    def __init__(self, keys):
        import numpy as np

        words = np.frombuffer(b"".join(keys), dtype=">u8").reshape(-1, 2).astype(np.uint64)
        words = words[np.lexsort((words[:, 1], words[:, 0]))]
        self._hi, self._lo = np.ascontiguousarray(words[:, 0]), np.ascontiguousarray(words[:, 1])

    def __len__(self) -> int:
        return len(self._hi)

    def __contains__(self, key: bytes) -> bool:
        import numpy as np

        hi, lo = np.frombuffer(key, dtype=">u8").astype(np.uint64)
        i, j = np.searchsorted(self._hi, hi, "left"), np.searchsorted(self._hi, hi, "right")
        return bool((self._lo[i:j] == lo).any())

    def __reduce__(self):
        import numpy as np

        words = np.stack([self._hi, self._lo], axis=1).astype(">u8")
        return (DocIndex, ([words.tobytes()],))


@dataclass(frozen=True)
class Previous:
    """An earlier run's output, as its ``report.json`` names it."""

    uri: str
    fs: pafs.FileSystem
    path: str
    report: dict

    @property
    def settings(self) -> dict:
        return self.report.get("settings") or {}

    def files(self, table: str) -> list[str]:
        """Full paths of the output's ``chunks`` or ``documents`` files."""
        return [f"{self.path}/{f}" for f in self.report["files"][table]]

    @property
    def root(self) -> str:
        """The input root its documents are named relative to ("" for an output written before it
        was recorded: its sources are their own identities)."""
        return (self.report.get("input") or {}).get("root") or ""

    @property
    def identity(self) -> str:
        """Names this exact output (a resumed run must reuse the same one)."""
        return hashlib.sha256(json.dumps(self.report["files"], sort_keys=True).encode()).hexdigest()[:16]


def open_previous(uri: str, *, what: str = "--previous") -> Previous:
    """The output at ``uri`` (a folder or object storage URI), checked to be a finished run; errors
    name it as ``what`` (the flag or argument it came from)."""
    from raychunk.io import resolve_output

    fs, path = resolve_output(uri)
    try:
        with fs.open_input_stream(f"{path}/report.json") as f:
            report = json.loads(f.read())
    except FileNotFoundError:
        raise ConfigError(
            f"{what} {uri}: no report.json there: point it at the output folder of a finished `raychunk run`"
        ) from None
    if not isinstance(report.get("files"), dict) or "chunks" not in report["files"]:
        raise ConfigError(f"{what} {uri}: its report.json names no files; is it a `raychunk run` output?")
    if not report.get("settings"):
        raise ConfigError(
            f"{what} {uri}: its report.json records no settings (written before incremental runs); "
            "run it once in full with this version, then use it as --previous"
        )
    return Previous(uri, fs, path, report)


def changed_fields(old: dict, new: dict, prefix: str = "") -> list[str]:
    """Dotted names of the leaves that differ between two nested settings dicts.

    >>> changed_fields({"a": {"b": 1, "c": 2}}, {"a": {"b": 1, "c": 3}, "d": 0})
    ['a.c', 'd']
    """
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += changed_fields(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key}")
    return out


def check_reuse(previous: dict, current: dict, *, force: bool, uri: str = "") -> bool:
    """Whether unchanged documents may skip parsing and chunking (the chunk settings are the same).
    A change in what shapes the vectors is refused always; one in what shapes the chunks unless
    ``force`` (then every document is chunked again, and only vectors are reused, by chunk id)."""
    if not previous.get("vectors"):
        raise ConfigError(
            f"--previous {uri}: it was built without embedding (--no-embed): it has no vectors to reuse"
        )
    vectors = changed_fields(previous["vectors"], current["vectors"], "vectors.")
    if vectors:
        raise ConfigError(
            f"--previous {uri}: its vectors were made with other settings ({', '.join(vectors)} changed), "
            "so none can be reused; run without --previous for a full rebuild"
        )
    chunks = changed_fields(previous.get("chunks") or {}, current["chunks"], "chunks.")
    if chunks and not force:
        raise ConfigError(
            f"--previous {uri}: the chunk settings changed ({', '.join(chunks)}); pass --force-reuse to "
            "chunk every document again and reuse the vectors of the chunks whose ids did not change, "
            "or run without --previous"
        )
    if chunks:
        log.warning("--force-reuse: %s changed; every document is chunked again", ", ".join(chunks))
    return not chunks


def unchanged_documents(prev: Previous) -> tuple[DocIndex, DocIndex]:
    """The previous output's ``ok`` documents as two ``DocIndex``: by bytes and format, and by path
    (``known``: where their old rows are), and by bytes, format and identity (``unchanged``: what
    need not be parsed again, its chunk ids being the same). Read a batch at a time (three short
    columns, 48 bytes a document kept)."""
    import pyarrow.parquet as pq

    from raychunk.io import identity_of
    from raychunk.parse.detect import format_from_name

    known, unchanged = [], []
    root = prev.root
    for path in prev.files("documents"):
        with prev.fs.open_input_file(path) as f:
            for batch in pq.ParquetFile(f).iter_batches(
                batch_size=65536, columns=["doc_id", "source", "status"]
            ):
                d = batch.to_pydict()
                for i, source, s in zip(d["doc_id"], d["source"], d["status"]):
                    if s == "ok":
                        # the format the name gives, as the lookups have it (the parse may have
                        # found another: an extension-less README is text)
                        fmt = format_from_name(source) or "unknown"
                        identity = identity_of(source, root)
                        known += (doc_key(i, fmt), path_key(identity))
                        unchanged.append(doc_key(i, fmt, identity))
    return DocIndex(known), DocIndex(unchanged)


@dataclass(frozen=True)
class Reuse:
    """What a run with ``--previous`` reuses: the earlier ``output``, the index of its ``ok``
    documents (``known``: where their old rows are) and the same index as the documents that need no
    parse (``unchanged``; None when the chunk settings changed: every document is chunked again)."""

    output: Previous
    known: DocIndex
    unchanged: DocIndex | None


def reuse_previous(uri: str | None, settings: dict, *, embedding: bool, force: bool) -> Reuse | None:
    """The earlier output at ``uri`` (``incremental.previous``), checked against this run's
    ``settings`` (``jobs.run.settings_fingerprint``); None without one."""
    if not uri:
        return None
    if not embedding:
        raise ConfigError(f"--previous {uri} reuses vectors: it needs the embedder (drop --no-embed)")
    previous = open_previous(uri)
    skip = check_reuse(previous.settings, settings, force=force, uri=uri)
    known, same = unchanged_documents(previous)
    unchanged = same if skip else None
    log.info("--previous %s: %s documents need no parse", uri, len(unchanged) if unchanged else 0)
    return Reuse(previous, known, unchanged)
