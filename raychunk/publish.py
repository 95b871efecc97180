"""Staging → final, and resume.

A run writes under ``OUTPUT/_staging/<run>/``: its config fingerprint (``run.json``), its shards, and
one manifest per shard in ``_done/`` written after the shard's files. A run that dies leaves the
staging folder; ``--resume`` reads the manifests, keeps every document whose rows are all written,
drops the rows of the few that are not, and runs only the rest.

Publishing never makes the previous output unreadable: the new shards (named by run, so they never
clobber old ones) are moved in beside the old, then ``report.json`` — naming every shard of the new
output — replaces the old one in one write, and only then are the old shards removed. Readers that
list the folder while a publish is under way may see both sets; ``report.json`` is the truth."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from raychunk.config import ConfigError
from raychunk.io import mark_output
from raychunk.schema import DOCUMENT_SCHEMA, documents_table

__all__ = [
    "Staging",
    "Staged",
    "check_every_input_accounted",
    "check_output",
    "check_unique_chunk_ids",
    "compact_documents",
    "documents_summary",
    "gather_staged",
    "move_in",
    "open_staging",
    "publish_output",
    "resume_state",
    "retire_old",
    "write_report",
    "shard_manifest",
    "shard_results",
    "staging_folder",
    "write_documents",
    "write_text",
]

log = logging.getLogger(__name__)

_OUTPUTS = ("chunks", "documents")
_DELTA = ("delta/added", "delta/removed")  # an incremental run's upserts and deleted ids
COMPACT_MAX_BYTES = 16 * 2**20  # parts up to this are gathered into one sorted file, in the driver
LISTED_DOCUMENTS = 20  # non-ok documents and warnings named in a report; the documents table has all
_DOCUMENT_FIELDS = [c for c in DOCUMENT_SCHEMA.names if c != "text"]
R = TypeVar("R")  # a job's report record: ``with_files(files)`` and ``as_json()``


@dataclass(frozen=True)
class Output:
    """Where a run writes: its filesystem and folder (``io.resolve_output`` of ``--output``)."""

    fs: pafs.FileSystem
    path: str


def open_output(uri: str, *, overwrite: bool) -> Output:
    """The run's output, checked before anything runs: an earlier run there is refused unless
    ``overwrite``."""
    from raychunk.io import resolve_output

    fs, path = resolve_output(uri)
    check_output(fs, path, overwrite)
    return Output(fs, path)


def check_output(fs: pafs.FileSystem, path: str, overwrite: bool) -> None:
    """Refuse to clobber an earlier run unless ``overwrite``."""
    existing = [
        p
        for p in (*_OUTPUTS, "report.json")
        if fs.get_file_info(f"{path}/{p}").type != pafs.FileType.NotFound
    ]
    if existing and not overwrite:
        raise ConfigError(
            f"output {path} already holds a run ({', '.join(existing)}): pass --overwrite "
            "(output_files.overwrite) or choose another --output"
        )


def staging_folder(out: str) -> str:
    return f"{out}/_staging/{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class Staging:
    path: str
    attempt: str  # names this attempt's shards; a resumed run is a new attempt in the same folder
    resumed: bool

    def sink(self, fs: pafs.FileSystem, *, dim: int | None, files):
        """The datasink that writes this attempt's shards here (``files``: ``config.OutputFiles``)."""
        from raychunk.sink import ShardSink

        return ShardSink(
            self.path,
            fs,
            attempt=self.attempt,
            dim=dim,
            rows_per_shard=files.rows_per_shard,
            compression=files.compression,
        )


def open_staging(fs: pafs.FileSystem, out: str, fingerprint: dict, *, resume: bool) -> Staging:
    """A new staging folder, or with ``resume`` the interrupted run's (same fingerprint) when there is one.
    Without ``resume``, an interrupted run is left alone and named in the log."""
    previous = _interrupted_runs(fs, out)
    attempt = uuid.uuid4().hex[:8]
    if resume:
        for path, recorded in previous:
            if recorded == fingerprint:
                log.info("resuming the interrupted run in %s", path)
                return Staging(path, attempt, True)
        if previous:
            path, recorded = previous[0]
            changed = sorted(
                k for k in set(recorded) | set(fingerprint) if recorded.get(k) != fingerprint.get(k)
            )
            raise ConfigError(
                f"--resume: the interrupted run in {path} used a different configuration "
                f"({', '.join(changed)} changed); run it with the same settings, or drop --resume to start over"
            )
        log.info("--resume: no interrupted run in %s/_staging; starting from the beginning", out)
    elif previous:
        log.warning(
            "an interrupted run is staged in %s: pass --resume to continue it instead of starting over",
            previous[0][0],
        )
    path = staging_folder(out)
    fs.create_dir(path, recursive=True)
    mark_output(fs, out)
    write_text(fs, f"{path}/run.json", json.dumps(fingerprint, sort_keys=True))
    return Staging(path, attempt, False)


def _interrupted_runs(fs: pafs.FileSystem, out: str) -> list[tuple[str, dict]]:
    """``(staging folder, fingerprint)`` of the runs left in ``out/_staging``, newest first."""
    found = []
    for info in fs.get_file_info(pafs.FileSelector(f"{out}/_staging", allow_not_found=True)):
        if info.type != pafs.FileType.Directory:
            continue
        try:
            with fs.open_input_stream(f"{info.path}/run.json") as f:
                found.append((info.path, json.loads(f.read())))
        except (OSError, ValueError):
            continue
    return sorted(found, key=lambda x: x[0], reverse=True)


def resume_state(fs: pafs.FileSystem, staging: str, compression: str) -> set[str]:
    """The sources whose rows are all in the staging folder. Files no manifest names (a write cut
    short) are deleted; shards holding rows of documents not wholly written are rewritten without them,
    so the resumed run can write those documents again."""
    manifests = _manifests(fs, staging)
    listed = {f"{staging}/{f}" for m in manifests.values() for f in m["files"]}
    for sub in (*_OUTPUTS, *_DELTA):
        for info in fs.get_file_info(pafs.FileSelector(f"{staging}/{sub}", allow_not_found=True)):
            if info.type == pafs.FileType.File and info.path not in listed:
                fs.delete_file(info.path)
    expected: dict[str, int] = {}
    written: Counter[str] = Counter()
    for m in manifests.values():
        expected.update(m["documents"])
        written.update(m["chunk_rows"])
    complete = {s for s, n in expected.items() if written[s] == n}
    partial = (set(expected) | set(written)) - complete
    for path, m in manifests.items():
        if partial & (set(m["documents"]) | set(m["chunk_rows"])):
            _drop_sources(fs, staging, path, m, partial, compression)
    return complete


def _manifests(fs: pafs.FileSystem, staging: str) -> dict[str, dict]:
    """The shards' manifests. One that does not read whole (the run died while writing it) is a
    write cut short like any other: deleted, so its shard's files are unlisted and written again."""
    found = {}
    for info in fs.get_file_info(pafs.FileSelector(f"{staging}/_done", allow_not_found=True)):
        if info.path.endswith(".json"):
            with fs.open_input_stream(info.path) as f:
                text = f.read()
            try:
                found[info.path] = json.loads(text)
            except ValueError:
                fs.delete_file(info.path)
    return found


def _drop_sources(
    fs: pafs.FileSystem, staging: str, path: str, manifest: dict, drop: set[str], compression: str
) -> None:
    """Rewrite one shard without the rows of ``drop`` (its manifest first, so a crash here leaves
    files no manifest names, which the next resume deletes)."""
    tables = {}
    for f in manifest["files"]:
        t = pq.read_table(f"{staging}/{f}", filesystem=fs)
        tables[f.rsplit("/", 1)[0]] = t.filter(
            pc.invert(pc.is_in(t.column("source"), pa.array(sorted(drop))))
        )
    fs.delete_file(path)
    for f in manifest["files"]:
        fs.delete_file(f"{staging}/{f}")
    chunks = tables.get("chunks")
    docs = tables.get("documents")
    chunk_file = doc_file = None
    chunk_bytes = doc_bytes = 0
    if chunks is not None and chunks.num_rows:
        chunk_file = next(f for f in manifest["files"] if f.startswith("chunks/"))
        pq.write_table(chunks, f"{staging}/{chunk_file}", filesystem=fs, compression=_codec(compression))
        chunk_bytes = fs.get_file_info(f"{staging}/{chunk_file}").size
    doc_rows = docs.to_pylist() if docs is not None else []
    if doc_rows:
        doc_file = next(f for f in manifest["files"] if f.startswith("documents/"))
        pq.write_table(docs, f"{staging}/{doc_file}", filesystem=fs, compression=_codec(compression))
        doc_bytes = fs.get_file_info(f"{staging}/{doc_file}").size
    added = tables.get("delta/added")
    added_file = None
    if added is not None and added.num_rows:
        added_file = next(f for f in manifest["files"] if f.startswith("delta/added/"))
        pq.write_table(added, f"{staging}/{added_file}", filesystem=fs, compression=_codec(compression))
    if chunks is None:
        chunks = pa.table({"source": pa.array([], pa.string())})
    new = shard_manifest(
        chunk_file, doc_file, chunks, doc_rows, chunk_bytes, doc_bytes, added_file=added_file
    )
    if "embedded_rows" in manifest:  # an incremental shard: what its kept rows embedded and upsert
        new["embedded_rows"] = {k: n for k, n in manifest["embedded_rows"].items() if k not in drop}
        new["result"]["embedded"] = sum(new["embedded_rows"].values())
        if "embedded_tokens" in manifest:
            new["embedded_tokens"] = {k: n for k, n in manifest["embedded_tokens"].items() if k not in drop}
            new["result"]["tokens_embedded"] = sum(new["embedded_tokens"].values())
        if "reused_by_text_rows" in manifest:
            new["reused_by_text_rows"] = {
                k: n for k, n in manifest["reused_by_text_rows"].items() if k not in drop
            }
            new["result"]["reused_by_text"] = sum(new["reused_by_text_rows"].values())
        new["reused"] = [k for k in manifest.get("reused", []) if k not in drop]
        new["result"]["reused_documents"] = len(new["reused"])
        new["result"]["added"] = added.num_rows if added is not None else 0
    if new["files"]:
        write_text(fs, path, json.dumps(new))


def shard_results(fs: pafs.FileSystem, staging: str) -> list[dict]:
    """The totals of every shard in the staging folder (this attempt's and any resumed one's)."""
    return [m["result"] for m in _manifests(fs, staging).values()]


def write_documents(fs: pafs.FileSystem, staging: str, name: str, rows: list[dict], compression: str) -> None:
    """Documents rows made in the driver (inputs refused before reading), as a shard with a manifest."""
    if not rows:
        return
    fs.create_dir(f"{staging}/documents", recursive=True)
    fs.create_dir(f"{staging}/_done", recursive=True)
    doc_file = f"documents/{name}.parquet"
    pq.write_table(
        documents_table(rows),
        f"{staging}/{doc_file}",
        filesystem=fs,
        compression=_codec(compression),
    )
    size = fs.get_file_info(f"{staging}/{doc_file}").size
    empty = pa.table({"source": pa.array([], pa.string())})
    write_text(
        fs, f"{staging}/_done/{name}.json", json.dumps(shard_manifest(None, doc_file, empty, rows, 0, size))
    )


def compact_documents(
    fs: pafs.FileSystem, staging: Staging, compression: str, *, max_bytes: int = COMPACT_MAX_BYTES
) -> list[str]:
    """The staged files that hold the documents to publish: one file sorted by source (written to
    ``compact/``, the parts left for a resume) when the parts total at most ``max_bytes``; larger,
    the parts themselves, so the driver never holds a large corpus's documents."""
    folder = f"{staging.path}/documents"
    infos = [
        i
        for i in fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
        if i.path.endswith(".parquet")
    ]
    parts = sorted(i.path for i in infos)
    if sum(i.size for i in infos) > max_bytes:
        return parts
    docs = _concat([pq.read_table(p, filesystem=fs, schema=DOCUMENT_SCHEMA) for p in parts]).sort_by("source")
    fs.create_dir(f"{staging.path}/compact", recursive=True)
    compact = f"{staging.path}/compact/documents-{staging.attempt}.parquet"
    pq.write_table(docs, compact, filesystem=fs, compression=_codec(compression))
    return [compact]


def documents_summary(fs: pafs.FileSystem, files: list[str], *, first: int = LISTED_DOCUMENTS) -> dict:
    """What the run report says of the documents, read from their files a batch at a time (no text
    column): counts by status and type, duplicates and what they saved, and the first ``first``
    non-ok documents and warnings by source, with how many there are in all."""
    import heapq

    cols = ["doc_id", "source", "status", "doc_type", "reason", "bytes", "tokens"]
    ocr_cols = ["ocr", "ocr_engine", "ocr_pages", "ocr_seconds"]

    def batches(extra=()):
        for path in files:
            with fs.open_input_file(path) as f:
                pf = pq.ParquetFile(f)
                have = [c for c in extra if c in pf.schema_arrow.names]  # rows written before OCR
                yield from pf.iter_batches(batch_size=8192, columns=cols + have)

    rows = 0
    by_status: Counter = Counter()
    by_type: Counter = Counter()
    not_ok: list[tuple] = []  # at most a few times ``first`` rows: pruned to the smallest sources
    warnings: list[tuple] = []
    n_warnings = 0
    copies: Counter = Counter()  # doc_id → byte-identical copies skipped
    copy_bytes = 0

    def keep(rows: list, row: tuple) -> None:
        rows.append(row)
        if len(rows) > 4 * first + 64:
            rows[:] = heapq.nsmallest(first, rows)

    ocr = {"documents": 0, "pages": 0, "seconds": 0.0, "engines": Counter()}
    ocr_missing = ""
    for batch in batches(ocr_cols):
        rows += batch.num_rows
        d = batch.to_pydict()
        for used, engine, pages, seconds in zip(*(d.get(c) or [None] * batch.num_rows for c in ocr_cols)):
            ocr["seconds"] += seconds or 0.0
            if used:
                ocr["documents"] += 1
                ocr["pages"] += len(pages or ())
                ocr["engines"][engine] += 1
        for doc_id, source, status, doc_type, reason, size in zip(
            d["doc_id"], d["source"], d["status"], d["doc_type"], d["reason"], d["bytes"]
        ):
            by_status[status] += 1
            if not ocr_missing and reason and "the OCR engine" in reason:
                ocr_missing = _ocr_missing(reason)
            if status == "ok":
                by_type[doc_type] += 1
                if reason:
                    n_warnings += 1
                    keep(warnings, (source, reason))
            else:
                keep(not_ok, (source, status, reason))
            if status == "duplicate":
                copies[doc_id] += 1
                copy_bytes += size or 0
    tokens_saved = 0
    if copies:  # a copy shares its doc_id (the hash of its bytes) with the kept one
        for batch in batches():
            d = batch.to_pydict()
            for doc_id, status, tokens in zip(d["doc_id"], d["status"], d["tokens"]):
                if status != "duplicate" and doc_id in copies:
                    tokens_saved += (tokens or 0) * copies[doc_id]
    return {
        "rows": rows,
        "by_status": dict(sorted(by_status.items())),
        "by_type": dict(sorted(by_type.items())),
        "duplicates": {
            "files": sum(copies.values()),
            "bytes_saved": copy_bytes,
            "tokens_saved": tokens_saved,
        },
        "not_ok": [{"source": s, "status": st, "reason": r} for s, st, r in heapq.nsmallest(first, not_ok)],
        "not_ok_total": sum(n for status, n in by_status.items() if status != "ok"),
        "warnings": [{"source": s, "reason": r} for s, r in heapq.nsmallest(first, warnings)],
        "warnings_total": n_warnings,
        "ocr": {
            "documents": ocr["documents"],
            "pages": ocr["pages"],
            "cpu_seconds": round(ocr["seconds"], 2),
            "engines": sorted(e for e in ocr["engines"] if e),
            "missing": ocr_missing,
        },
    }


def _ocr_missing(reason: str) -> str:
    """``the OCR engine X is not installed: pip install ...`` out of a reason that holds it."""
    return reason[reason.index("the OCR engine") :].split(")")[0].split(";")[0]


def _codec(compression: str) -> str | None:
    return None if compression == "none" else compression


def _concat(tables: list[pa.Table]) -> pa.Table:
    return pa.concat_tables(tables) if tables else DOCUMENT_SCHEMA.empty_table()


@dataclass(frozen=True)
class Staged:
    """What a run staged, gathered for its report: the documents files to publish, their summary
    (``documents_summary``) and every shard's totals (``shard_results``)."""

    document_files: list[str]
    documents: dict
    shards: list[dict]


def gather_staged(fs: pafs.FileSystem, staging: Staging, compression: str, *, files: int) -> Staged:
    """The run's end, first step: the documents compacted, summed up and checked (every one of the
    ``files`` inputs has its row), and the shards' totals, each read in a task on the driver's node:
    Arrow's default allocator (mimalloc) keeps what streaming 200,000 rows touched, +73 MB at 200,000
    documents in the driver, where the system allocator keeps 18."""
    from raychunk.pipeline import on_driver_node

    document_files = on_driver_node(compact_documents, fs, staging, compression)
    documents = on_driver_node(documents_summary, fs, document_files)
    check_every_input_accounted(documents["rows"], files)
    return Staged(document_files, documents, on_driver_node(shard_results, fs, staging.path))


def publish_output(
    fs: pafs.FileSystem,
    staging: Staging,
    out: str,
    staged: Staged,
    report: R,
    render_markdown: Callable[[R], str],
    *,
    overwrite: bool,
) -> R:
    """The run's end, last step: the staged shards moved in beside the old output (in a task on the
    driver's node: its chunk-id check reads every id), ``report.md``, then ``report.json`` naming the
    new output's files (``report.with_files(files).as_json()``), then the old shards retired.
    Returns the report as written."""
    from raychunk.pipeline import on_driver_node

    files = on_driver_node(move_in, fs, staging, out, staged.document_files, overwrite)
    report = report.with_files(files)
    write_report(fs, out, "report.md", render_markdown(report))
    write_report(fs, out, "report.json", json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    retire_old(fs, staging, out, files)
    return report


def check_every_input_accounted(document_rows: int, files: int) -> None:
    if document_rows != files:
        raise RuntimeError(f"{files} input files but {document_rows} document rows: refusing to publish")


def check_unique_chunk_ids(fs: pafs.FileSystem, staging: str) -> None:
    """A bug guard: a chunk id held twice in the staged ``chunks/`` stops the publish, naming the id
    and its sources; the staging folder stays for inspection."""
    folder = f"{staging}/chunks"
    infos = fs.get_file_info(pafs.FileSelector(folder, allow_not_found=True))
    parts = sorted(i.path for i in infos if i.path.endswith(".parquet"))
    if not parts:
        return
    columns = [pq.read_table(p, filesystem=fs, columns=["chunk_id"]).column(0) for p in parts]
    ids = pa.chunked_array([a for c in columns for a in c.chunks], type=pa.string())
    counts = pc.value_counts(ids)
    repeated = counts.filter(pc.greater(counts.field("counts"), 1))
    if not len(repeated):
        return
    chunk_id = repeated.field("values")[0].as_py()
    sources = []
    for p in parts:
        t = pq.read_table(p, filesystem=fs, columns=["chunk_id", "source"])
        sources += t.filter(pc.equal(t.column("chunk_id"), chunk_id)).column("source").to_pylist()
    more = f" (and {len(repeated) - 1} more repeated ids)" if len(repeated) > 1 else ""
    raise RuntimeError(
        f"chunk_id {chunk_id} is written {len(sources)} times, from {sources[0]} and {sources[1]}{more}: "
        f"refusing to publish; the output stays in {staging}"
    )


def move_in(
    fs: pafs.FileSystem, staging: Staging, out: str, document_files: list[str], overwrite: bool
) -> dict[str, list[str]]:
    """Move the staged shards into ``out/chunks`` and ``out/documents`` beside any previous output's,
    once the chunk ids are known to be unique. Returns the new output's files (relative to ``out``),
    for ``report.json``; nothing old is touched yet."""
    check_unique_chunk_ids(fs, staging.path)
    if not overwrite:
        for name in _OUTPUTS:
            if fs.get_file_info(f"{out}/{name}").type != pafs.FileType.NotFound:
                raise RuntimeError(
                    f"{out}/{name} appeared during the run; the new output stays in {staging.path}"
                )

    def staged(name: str) -> list[str]:
        folder = pafs.FileSelector(f"{staging.path}/{name}", allow_not_found=True)
        return sorted(i.path for i in fs.get_file_info(folder) if i.path.endswith(".parquet"))

    files: dict[str, list[str]] = {}
    tables = [("chunks", staged("chunks")), ("documents", sorted(document_files))]
    tables += [(name, found) for name in _DELTA if (found := staged(name))]
    for name, staged_files in tables:
        fs.create_dir(f"{out}/{name}", recursive=True)
        files[name] = []
        for path in staged_files:
            rel = f"{name}/{path.rsplit('/', 1)[-1]}"
            fs.move(path, f"{out}/{rel}")  # a rename on local disks; copy + delete on object stores
            files[name].append(rel)
    return files


def write_report(fs: pafs.FileSystem, out: str, name: str, text: str) -> None:
    """Replace ``out/name`` in one step: written beside it, then renamed (a single PUT on object stores)."""
    if fs.type_name == "local":
        write_text(fs, f"{out}/.{name}.tmp", text)
        fs.move(f"{out}/.{name}.tmp", f"{out}/{name}")
    else:
        write_text(fs, f"{out}/{name}", text)


def retire_old(fs: pafs.FileSystem, staging: Staging, out: str, files: dict[str, list[str]]) -> None:
    """After the new ``report.json`` is written: remove the previous output's shards (whatever the
    new one does not name) and the staging folder."""
    for name in (*_OUTPUTS, *_DELTA):
        keep = set(files.get(name, ()))
        for info in fs.get_file_info(
            pafs.FileSelector(f"{out}/{name}", allow_not_found=True, recursive=True)
        ):
            if info.type == pafs.FileType.File and info.path[len(out) + 1 :] not in keep:
                fs.delete_file(info.path)
    fs.delete_dir(staging.path)
    if not fs.get_file_info(pafs.FileSelector(f"{out}/_staging", allow_not_found=True)):
        fs.delete_dir(f"{out}/_staging")


def write_text(fs: pafs.FileSystem, path: str, text: str) -> None:
    with fs.open_output_stream(path) as f:
        f.write(text.encode())


def shard_manifest(
    chunk_file: str | None,
    doc_file: str | None,
    chunks: pa.Table,
    doc_rows: list[dict],
    chunk_bytes: int,
    doc_bytes: int,
    *,
    added_file: str | None = None,
) -> dict:
    """What one shard holds: its files (``added_file``: its rows in an incremental run's
    ``delta/added``), each document's expected chunk count, the chunk rows per source, and the
    totals the run report adds up."""
    per_source = {}
    if chunks.num_rows:
        counts = pc.value_counts(chunks.column("source"))
        per_source = dict(
            zip(counts.field("values").to_pylist(), counts.field("counts").to_pylist(), strict=True)
        )
    result = {
        "chunks": chunks.num_rows,
        "documents": len(doc_rows),
        "chunk_bytes": chunk_bytes,
        "document_bytes": doc_bytes,
        "tokens": 0,
        "text_bytes": 0,
        "over_limit": 0,
    }
    if chunks.num_rows:
        result["tokens"] = int(pc.sum(chunks.column("n_tokens")).as_py() or 0)
        result["text_bytes"] = int(pc.sum(pc.binary_length(chunks.column("text"))).as_py() or 0)
        result["over_limit"] = int(pc.sum(pc.cast(chunks.column("over_limit"), "int64")).as_py() or 0)
    return {
        "files": [f for f in (chunk_file, doc_file, added_file) if f],
        "documents": {r["source"]: r["chunks"] for r in doc_rows},
        "chunk_rows": per_source,
        "result": result,
    }
