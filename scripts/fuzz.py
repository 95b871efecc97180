"""Fuzz the run job: mutated copies of real documents must each cost one row, never the run.

    python scripts/fuzz.py                      # one batch of 200 mutants of samples/
    python scripts/fuzz.py DIR --minutes 10 --batch 300 --seed 7 --keep /tmp/fuzz-failures
    python scripts/fuzz.py --seed 7 --only 12,40 --keep /tmp/m   # rebuild two mutants of batch seed 7
    python scripts/fuzz.py --direct --minutes 5  # pre-screen: no Ray, every mutant in a child process

Every file of the folder is the parent of an equal share of mutants: bit flips, interesting bytes,
truncations (to 0, 1 byte, half, a prefix, a suffix, a hole), splices (the head of one file and the
tail of another, across formats), duplicated and shuffled ranges, inserted tokens (markup, magic
numbers, deep nesting), numbers replaced (PDF offsets and lengths), members of a zip package
mutated or dropped, and wrong extensions (a PDF named .docx, a docx named .md). Mutant ``i`` of a
batch with seed ``s`` depends only on ``s``, ``i`` and the folder's files, so ``--seed s --only i``
rebuilds it.

Each batch is written to a temporary folder and run through the real job
(``raychunk.jobs.run.run``, embedding off) under a wall-clock guard; the output is read back with
plain pyarrow and checked: one documents row per mutant, a known status, a non-empty one-line
reason on every row that is not ``ok``, chunk rows only for ``ok`` documents (as many as the row
says), and a job that neither raised nor hung. When the job raised or hung, each mutant of the batch
is run through the same stages in a killable child process to name the culprits.

A ``failed`` row that reports a bug the job contained rather than a bad input it recognised (a
parser exception behind "the parser failed on this file", a document killed for time or memory, a
crashed worker) is printed as a CONTAINED line; ``--strict`` counts those as violations too.
``--direct`` runs the stages without Ray and without the job's isolation, in one child process
(restarted after a crash or a hang), so there a crash or a hang is itself a violation and a parser
exception comes with its type and line.

One line per batch, a summary, and exit status 1 on any violation. Only the standard library,
pyarrow and raychunk are used, so ``tests/test_fuzz.py`` imports the mutators from here.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import logging
import os
import queue
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FOLDER = ROOT / "samples"
MAX_MUTANT_BYTES = 4 * 2**20  # duplicated ranges stop growing a file here

# Extensions a mutant may be renamed to: every parser, a few detectors' edge cases, and none at all.
EXTENSIONS = (
    ".pdf",
    ".docx",
    ".pptx",
    ".xlsx",
    ".epub",
    ".odt",
    ".md",
    ".txt",
    ".html",
    ".csv",
    ".tsv",
    ".jsonl",
    ".py",
    ".eml",
    ".rtf",
    ".rst",
    ".org",
    ".msg",
    ".xls",
    ".doc",
    ".xyz",
    "",
)
INTERESTING_BYTES = (0x00, 0x01, 0x0A, 0x0D, 0x1F, 0x20, 0x3C, 0x7F, 0x80, 0xC0, 0xFE, 0xFF)
INTERESTING_NUMBERS = (
    b"0",
    b"1",
    b"-1",
    b"255",
    b"65535",
    b"65536",
    b"2147483647",
    b"-2147483648",
    b"4294967296",
    b"99999999999999999999",
    b"1e308",
    b"0.000001",
    b"NaN",
)
# Markup, magic numbers and encodings' edge cases; inserted once, scattered, or as one long run
# (deep nesting: "[" x 20000 in a JSON line, "<div>" x 20000 in HTML, "> " x 20000 in Markdown).
TOKENS = (
    b"\x00",
    b"\xff",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"\xfe\xff",
    b"\xc3",
    b"\xe2\x80",
    b"\xf0\x9f\x98",
    b"\xed\xa0\x80",
    b"\r",
    b"\r\n",
    b"\n\n",
    b"\t",
    b"\x0c",
    b"\x08",
    b"\x1b[31m",
    b"\xe2\x80\xae",
    b"<",
    b">",
    b"&",
    b"<div>",
    b"</div>",
    b"<table><tr><td>",
    b"</td></tr></table>",
    b"<td colspan=99999 rowspan=99999>",
    b"<h1>",
    b"<ul><li>",
    b"<!--",
    b"<![CDATA[",
    b"<script>",
    b"<?xml version='1.0'?>",
    b"<!DOCTYPE html>",
    b"&#0;",
    b"&#xD800;",
    b"&#99999999;",
    b"|",
    b"| a | b |\n|---|---|\n",
    b"#",
    b"####### ",
    b"```",
    b"> ",
    b"- ",
    b"1. ",
    b"    ",
    b"[x]: <",
    b"[",
    b"]",
    b"{",
    b"}",
    b'"',
    b",",
    b";",
    b"\\",
    b"=",
    b"== Title ==\n",
    b"Q: ",
    b"A: ",
    b"Speaker 1: ",
    b"obj",
    b"endobj",
    b"stream\n",
    b"endstream",
    b"xref",
    b"trailer",
    b"startxref",
    b"<<",
    b">>",
    b"%%EOF",
    b"/Length 999999999",
    b"/Count -1",
    b"/Type /Pages",
    b"/Kids [1 0 R]",
    b"1 0 R",
    b"PK\x03\x04",
    b"PK\x05\x06",
    b"%PDF-1.7\n",
    b"{\\rtf1",
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
    b"\x1f\x8b",
    b"\x89PNG\r\n\x1a\n",
    b"From: a@b\nSubject: ",
    b"Content-Type: multipart/mixed; boundary=x\n\n--x\n",
    b"Content-Transfer-Encoding: base64\n\n",
    b"=?utf-8?b?",
    b"def f(:\n",
    b'"""',
)
_DIGITS = re.compile(rb"\d+")


@dataclass(frozen=True)
class Source:
    """One file of the folder being fuzzed."""

    name: str
    data: bytes


@dataclass(frozen=True)
class Mutant:
    """Mutant ``index`` of the batch with seed ``seed``: its file name, bytes, and how it was made."""

    seed: int
    index: int
    name: str
    data: bytes
    recipe: str

    def label(self) -> str:
        return f"{self.name} (seed {self.seed}, index {self.index}: {self.recipe})"


# -- the mutators: (rng, data, corpus) -> (new bytes, what was done) -----------------------------


def _pos(rng: random.Random, data: bytes) -> int:
    return rng.randrange(len(data) + 1)


def _span(rng: random.Random, data: bytes, most: int | None = None) -> tuple[int, int]:
    a = rng.randrange(len(data) + 1)
    longest = len(data) - a if most is None else min(most, len(data) - a)
    return a, a + rng.randint(0, longest)


def bit_flip(rng: random.Random, data: bytes, corpus=()) -> tuple[bytes, str]:
    if not data:
        return b"\x01", "bitflip(empty -> 01)"
    n = rng.choice((1, 1, 2, 4, 8, 32, 128))
    head = rng.random() < 0.3  # headers and magic numbers live in the first KB
    out = bytearray(data)
    where = []
    for _ in range(n):
        i = rng.randrange(min(len(out), 1024) if head else len(out))
        out[i] ^= 1 << rng.randrange(8)
        where.append(i)
    if bytes(out) == data:  # flips that cancel out
        out[where[0]] ^= 0x80
    shown = ",".join(map(str, sorted(where)[:4])) + ("..." if n > 4 else "")
    return bytes(out), f"bitflip({n} bits @ {shown})"


def set_bytes(rng: random.Random, data: bytes, corpus=()) -> tuple[bytes, str]:
    if not data:
        return bytes([rng.choice(INTERESTING_BYTES)]), "setbytes(empty)"
    out = bytearray(data)
    n = rng.choice((1, 2, 8, 64))
    value = rng.choice(INTERESTING_BYTES)
    a, b = _span(rng, data, n)
    if a == len(out):
        a = len(out) - 1
    b = max(b, a + 1)
    out[a:b] = bytes([value]) * (b - a)
    if bytes(out) == data:
        out[a] ^= 0xFF
    return bytes(out), f"setbytes([{a}:{b}] = {value:#04x})"


def truncate(rng: random.Random, data: bytes, corpus=()) -> tuple[bytes, str]:
    n = len(data)
    mode = rng.choice(("zero", "one", "half", "prefix", "prefix", "suffix", "hole", "hole"))
    if mode == "zero":
        return b"", "truncate(to 0 bytes)"
    if mode == "one":
        return data[:1], "truncate(to 1 byte)"
    if mode == "half":
        return data[: n // 2], f"truncate(to half, {n // 2} bytes)"
    if mode == "prefix":
        k = rng.randrange(n) if n else 0
        return data[:k], f"truncate(keep [0:{k}])"
    if mode == "suffix":
        k = rng.randint(1, n) if n else 0
        return data[k:], f"truncate(keep [{k}:{n}])"
    a, b = _span(rng, data)
    if a == b and n:
        b = min(n, a + 1) if a < n else a
        a = b - 1
    return data[:a] + data[b:], f"truncate(cut [{a}:{b}])"


def splice(rng: random.Random, data: bytes, corpus=()) -> tuple[bytes, str]:
    other = rng.choice(corpus) if corpus else Source("self", data)
    a = rng.randrange(len(data) + 1)
    b = rng.randrange(len(other.data) + 1)
    out = data[:a] + other.data[b:]
    if out == data:  # the other file's tail is this one's: drop a byte at the seam instead
        a = max(0, a - 1)
        out = data[:a] + data[a + 1 :] if data else b"\n"
        return out, f"splice(head [0:{a}] + own tail [{a + 1}:])"
    return out, f"splice(head [0:{a}] + {other.name}[{b}:])"


def duplicate_range(rng: random.Random, data: bytes, corpus=()) -> tuple[bytes, str]:
    if not data:
        return b"\n", "duplicate(empty -> newline)"
    a, b = _span(rng, data, rng.choice((16, 256, 4096, len(data))))
    b = max(b, min(len(data), a + 1))
    a = min(a, b - 1)
    piece = data[a:b]
    times = rng.choice((1, 1, 2, 10, 100, 1000))
    times = max(1, min(times, (MAX_MUTANT_BYTES - len(data)) // max(1, len(piece))))
    at = _pos(rng, data)
    return data[:at] + piece * times + data[at:], f"duplicate([{a}:{b}] x{times} @ {at})"


def shuffle_ranges(rng: random.Random, data: bytes, corpus=()) -> tuple[bytes, str]:
    k = rng.choice((2, 3, 4, 8, 16))
    cuts = sorted(rng.randrange(len(data) + 1) for _ in range(k - 1))
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
    order = list(range(len(pieces)))
    rng.shuffle(order)
    out = b"".join(pieces[i] for i in order)
    if out == data and len(pieces) > 1:  # the shuffle kept the order, or the pieces were alike
        order = order[1:] + order[:1]
        out = b"".join(pieces[i] for i in order)
    return out, f"shuffle(cuts {cuts[:6]}{'...' if len(cuts) > 6 else ''}, order {order[:8]})"


def insert_tokens(rng: random.Random, data: bytes, corpus=()) -> tuple[bytes, str]:
    token = rng.choice(TOKENS)
    if rng.random() < 0.5:  # one run: deep nesting, long lines
        times = rng.choice((1, 2, 50, 1000, 20000))
        times = max(1, min(times, MAX_MUTANT_BYTES // len(token)))
        at = _pos(rng, data)
        return data[:at] + token * times + data[at:], f"insert({token!r} x{times} @ {at})"
    times = rng.choice((2, 8, 64))
    spots = sorted(_pos(rng, data) for _ in range(times))
    out, last = [], 0
    for s in spots:
        out += [data[last:s], token]
        last = s
    out.append(data[last:])
    return b"".join(out), f"scatter({token!r} x{times} from {spots[0]})"


def replace_number(rng: random.Random, data: bytes, corpus=()) -> tuple[bytes, str]:
    found = list(_DIGITS.finditer(data[: 2 * 2**20]))
    if not found:
        return insert_tokens(rng, data)
    out = data
    n = rng.choice((1, 1, 4, 16))
    shown = []
    for m in sorted(rng.sample(found, min(n, len(found))), key=lambda m: -m.start()):
        value = rng.choice(INTERESTING_NUMBERS)
        if value == m.group():
            value = b"-" + value
        out = out[: m.start()] + value + out[m.end() :]
        shown.append(f"{m.group().decode()}@{m.start()}->{value.decode()}")
    return out, f"numbers({', '.join(shown[-3:])}{'...' if len(shown) > 3 else ''})"


# Byte-level mutations that zip_member applies to one part of a package.
_MEMBER_OPS = ("bitflip", "setbytes", "truncate", "duplicate", "insert", "numbers", "shuffle")


def _is_zip(data: bytes) -> bool:
    if not data.startswith(b"PK\x03\x04"):
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return bool(zf.infolist()) and zf.testzip() is None
    except Exception:
        return False


def _rezip(members: list[tuple[zipfile.ZipInfo, bytes]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for info, payload in members:
            zf.writestr(info, payload)
    return buf.getvalue()


def zip_member(rng: random.Random, data: bytes, corpus=()) -> tuple[bytes, str]:
    """Mutate one part inside a zip package (docx, pptx, xlsx, epub, odt), or drop or duplicate one:
    a package that still opens, with damaged XML inside. Other bytes get a bit flip."""
    if not _is_zip(data):
        return bit_flip(rng, data)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        members = [(info, zf.read(info)) for info in zf.infolist()]
    xml = [i for i, (info, _) in enumerate(members) if info.filename.endswith((".xml", ".rels"))]
    i = rng.choice(xml or range(len(members)))
    info, payload = members[i]
    what = rng.choice(("mutate", "mutate", "mutate", "mutate", "drop", "empty"))
    if what == "drop":
        del members[i]
        return _rezip(members), f"zip(drop {info.filename})"
    if what == "empty":
        members[i] = (info, b"")
        return _rezip(members), f"zip(empty {info.filename})"
    op = rng.choice(_MEMBER_OPS)
    new, how = MUTATORS[op](rng, payload, ())
    members[i] = (info, new)
    return _rezip(members), f"zip({info.filename}: {how})"


MUTATORS = {
    "bitflip": bit_flip,
    "setbytes": set_bytes,
    "truncate": truncate,
    "splice": splice,
    "duplicate": duplicate_range,
    "shuffle": shuffle_ranges,
    "insert": insert_tokens,
    "numbers": replace_number,
    "zip": zip_member,
}
_WEIGHTS = {
    "bitflip": 5,
    "setbytes": 2,
    "truncate": 4,
    "splice": 3,
    "duplicate": 2,
    "shuffle": 2,
    "insert": 3,
    "numbers": 3,
    "zip": 4,
}


def wrong_extension(rng: random.Random, name: str) -> str:
    """Another extension than the file's own (or none, or an unknown one)."""
    own = Path(name).suffix.lower()
    return rng.choice([e for e in EXTENSIONS if e != own])


def make_mutant(corpus: list[Source], seed: int, index: int) -> Mutant:
    """Mutant ``index`` of the batch with seed ``seed``: a function of the seed, the index and the corpus."""
    rng = random.Random(f"raychunk-fuzz/{seed}/{index}")
    src = corpus[index % len(corpus)]
    data = src.data
    steps = []
    rename_only = rng.random() < 0.06
    if not rename_only:
        names = list(_WEIGHTS)
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            op = rng.choices(names, weights=[_WEIGHTS[n] for n in names])[0]
            if op == "zip" and not _is_zip(data):
                op = "bitflip"
            data, how = MUTATORS[op](rng, data, corpus)
            steps.append(how)
            data = data[:MAX_MUTANT_BYTES]
    ext = Path(src.name).suffix
    if rename_only or rng.random() < 0.2:
        ext = wrong_extension(rng, src.name)
        steps.append(f"renamed to {ext or '(no extension)'}")
    stem = Path(src.name).stem
    return Mutant(seed, index, f"{index:05d}-{stem}{ext}", data, f"{src.name}: " + " | ".join(steps))


def make_batch(corpus: list[Source], seed: int, n: int) -> list[Mutant]:
    return [make_mutant(corpus, seed, i) for i in range(n)]


def load_corpus(folder: str | Path) -> list[Source]:
    """Every non-hidden file under ``folder``, by relative path (so the mutants don't depend on listing order)."""
    root = Path(folder)
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(s.startswith(".") for s in p.relative_to(root).parts)
    )
    if not files:
        raise SystemExit(f"fuzz: no files in {root}")
    return [Source(str(p.relative_to(root)), p.read_bytes()) for p in files]


def write_mutants(mutants: list[Mutant], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for m in mutants:
        (folder / m.name).write_bytes(m.data)
    (folder / ".recipes.jsonl").write_text(
        "".join(
            json.dumps({"name": m.name, "seed": m.seed, "index": m.index, "recipe": m.recipe}) + "\n"
            for m in mutants
        )
    )


# -- the invariants ------------------------------------------------------------------------------


def valid_statuses() -> frozenset[str]:
    """The statuses a documents row may hold (raychunk.document.STATUSES)."""
    from raychunk.document import STATUSES

    return frozenset(STATUSES)


def read_output(out: Path) -> tuple[list[dict], list[dict]]:
    """``(documents rows, chunk rows' source and doc_id)`` from a finished run, with plain pyarrow."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def table(sub: str, columns: list[str]) -> list[dict]:
        parts = sorted((out / sub).glob("*.parquet"))
        if not parts:
            return []
        return pa.concat_tables([pq.read_table(p, columns=columns) for p in parts]).to_pylist()

    docs = table("documents", ["source", "doc_id", "status", "reason", "chunks"])
    chunks = table("chunks", ["source", "doc_id"])
    return docs, chunks


def check_rows(mutants: list[Mutant], docs: list[dict], chunks: list[dict]) -> list[str]:
    """Violations of the per-document invariants, each naming the mutant and its recipe."""
    statuses = valid_statuses()
    by_name = {m.name: m for m in mutants}
    rows = collections.defaultdict(list)
    problems = []
    for d in docs:
        name = Path(d["source"]).name
        if name not in by_name:
            problems.append(f"documents row for an unknown source {d['source']!r}")
        rows[name].append(d)
    chunk_count = collections.Counter(Path(c["source"]).name for c in chunks)
    for m in mutants:
        found = rows.get(m.name, [])
        if len(found) != 1:
            problems.append(f"{m.label()}: {len(found)} documents rows, expected exactly 1")
            continue
        d = found[0]
        status, reason = d["status"], d["reason"]
        if status not in statuses:
            problems.append(f"{m.label()}: status {status!r} is not one of {sorted(statuses)}")
        if status != "ok" and (not isinstance(reason, str) or not reason.strip()):
            problems.append(f"{m.label()}: status {status!r} without a reason")
        elif isinstance(reason, str) and ("\n" in reason or "\r" in reason):
            problems.append(f"{m.label()}: reason is not one line: {reason!r}")
        n = chunk_count.get(m.name, 0)
        if status != "ok" and n:
            problems.append(f"{m.label()}: {n} chunk rows for a {status!r} document")
        if n != (d["chunks"] or 0):
            problems.append(f"{m.label()}: the documents row says {d['chunks']} chunks, chunks/ holds {n}")
    for name in sorted(set(chunk_count) - set(by_name)):
        problems.append(f"chunk rows for an unknown source {name!r}")
    return problems


# Failed rows that mean a bug was contained rather than a bad input recognised: a parser raised (the
# dispatcher turned it into a `failed` row), or the isolation killed or caught a document's worker.
_CONTAINED = (
    ("parser exception", re.compile(r"the parser failed on this file")),
    ("worker crash", re.compile(r"worker crashed")),
    ("timeout", re.compile(r"took longer than|timed out")),
    ("memory", re.compile(r"needed more than|out of memory", re.I)),
    ("stage error", re.compile(r"^(?:parse|classify|chunk) failed with ")),
)


def contained(reason: str | None) -> str | None:
    """The kind of contained bug a ``failed`` row's reason reports, or None for a recognised bad input."""
    for kind, pattern in _CONTAINED:
        if reason and pattern.search(reason):
            return kind
    return None


def find_contained(mutants: list[Mutant], docs: list[dict], details: dict | None = None) -> list[str]:
    """One line per mutant whose row reports a contained bug (see ``contained``)."""
    by_name = {Path(d["source"]).name: d for d in docs}
    out = []
    for m in mutants:
        d = by_name.get(m.name)
        kind = contained(d["reason"]) if d and d["status"] == "failed" else None
        if kind:
            extra = f" [{'; '.join(details[m.name])}]" if details and details.get(m.name) else ""
            out.append(f"{kind}: {m.label()}: {d['reason']}{extra}")
    return out


# -- running the job -----------------------------------------------------------------------------


def job_config(input_dir: Path, output: Path, *, num_cpus: int | None = None, doc_timeout: float = 60):
    """The run job's config as the CLI builds it for ``raychunk run --no-embed``."""
    import dataclasses

    from raychunk.config import RunConfig, build_run_config, load_config

    # The per-document time limit: limits.doc_timeout_s with the isolation, parse.timeout_s before it.
    fields = {f.name for f in dataclasses.fields(RunConfig)}
    timeout_key = "limits.doc_timeout_s" if "limits" in fields else "parse.timeout_s"
    return build_run_config(
        load_config(None),
        {
            "input": [str(input_dir)],
            "output": str(output),
            "embedder.enabled": False,
            "resources.num_cpus": num_cpus or os.cpu_count() or 2,
            timeout_key: doc_timeout,
        },
    )


def run_guarded(cfg, timeout_s: float) -> tuple[str, object]:
    """``run(cfg)`` in a daemon thread: ``("ok", report)``, ``("raised", exception)`` or ``("hung", None)``.
    Ray must already be initialised in the calling (main) thread."""
    from raychunk.jobs.run import run

    result: dict = {}

    def target():
        try:
            result["report"] = run(cfg)
        except BaseException as e:  # noqa: BLE001 - reported as a violation
            result["error"] = e

    thread = threading.Thread(target=target, name="raychunk-fuzz-job", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        return "hung", None
    if "error" in result:
        return "raised", result["error"]
    return "ok", result["report"]


def init_ray(num_cpus: int | None) -> None:
    """A local Ray started in the main thread, quiet, for every batch to share."""
    import ray
    import ray.data

    if ray.is_initialized():
        return
    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)  # one line per batch is ours to print
    ray.init(
        address="local",
        num_cpus=num_cpus or os.cpu_count() or 2,
        include_dashboard=False,
        log_to_driver=False,
        logging_level="ERROR",
    )


def fuzz_job(
    mutants: list[Mutant], workdir: Path, *, num_cpus: int | None, timeout_s: float, doc_timeout: float
) -> tuple[list[str], collections.Counter, str, list[str]]:
    """Write the mutants, run the job on them, check the output:
    ``(violations, statuses, outcome, contained bugs)``."""
    src, out = workdir / "in", workdir / "out"
    write_mutants(mutants, src)
    cfg = job_config(src, out, num_cpus=num_cpus, doc_timeout=doc_timeout)
    outcome, value = run_guarded(cfg, timeout_s)
    if outcome == "hung":
        return [f"the job did not finish within {timeout_s:g} s"], collections.Counter(), outcome, []
    if outcome == "raised":
        what = " ".join(f"{type(value).__name__}: {value}".split())
        if len(what) > 900:  # a RayTaskError: the task's name first, the error itself last
            what = f"{what[:200]} ... {what[-700:]}"
        return [f"the job raised {what}"], collections.Counter(), outcome, []
    docs, chunks = read_output(out)
    statuses = collections.Counter(d["status"] for d in docs)
    return check_rows(mutants, docs, chunks), statuses, outcome, find_contained(mutants, docs)


# -- one mutant at a time, in a killable child (localising a crash or hang; --direct) -------------


def _worker(doc_timeout: float) -> int:
    """``--worker``: read paths on stdin; run each through the job's stages; one JSON line per path."""
    from raychunk.config import load_doc_types
    from raychunk.document_steps import chunk_rows, classify_document, parse_file

    cfg = job_config(Path("."), Path("."), doc_timeout=doc_timeout)
    types = load_doc_types(cfg.chunk.doc_types_path)
    caught = _ExceptionTap()
    logging.getLogger("raychunk").addHandler(caught)
    logging.getLogger("raychunk").setLevel(logging.INFO)
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # libraries that print must not corrupt the JSON lines
    out.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        path = line.rstrip("\n")
        t = time.perf_counter()
        caught.seen.clear()
        try:
            row = parse_file({"path": path, "bytes": Path(path).read_bytes()}, options=cfg.parse)
            row = classify_document(row, thresholds=types.thresholds, overrides=types.overrides)
            rows = chunk_rows(row, profiles=types.profiles, tokenizer=cfg.tokenizer_spec)
            doc = rows[0]
            result = {
                "status": doc["status"],
                "reason": doc["reason"],
                "chunks": doc["chunks"],
                "chunk_rows": len(rows) - 1,
            }
        except BaseException as e:  # noqa: BLE001 - a stage raising is what we look for
            result = {"raised": " ".join(f"{type(e).__name__}: {e}".split())[:400]}
        result["seconds"] = round(time.perf_counter() - t, 3)
        if caught.seen:
            result["exceptions"] = caught.seen[:3]
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
    return 0


class _ExceptionTap(logging.Handler):
    """Collects the exceptions the parsers log while turning them into ``failed`` rows (a parser
    bug hides behind "the parser failed on this file"): type, message and the innermost frames."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.seen: list[str] = []

    def emit(self, record):
        if record.exc_info and record.exc_info[1] is not None:
            self.seen.append(describe_exception(record.exc_info[1]))


def describe_exception(e: BaseException) -> str:
    """``Type: message @ file:line in function`` of the innermost raychunk frame (else the innermost)."""
    import traceback

    frames = traceback.extract_tb(e.__traceback__)
    ours = [f for f in frames if f"{os.sep}raychunk{os.sep}" in f.filename] or frames
    where = f" @ {Path(ours[-1].filename).name}:{ours[-1].lineno} in {ours[-1].name}" if ours else ""
    inner = (
        f" <- {Path(frames[-1].filename).name}:{frames[-1].lineno}"
        if frames and ours[-1] is not frames[-1]
        else ""
    )
    return " ".join(f"{type(e).__name__}: {e}".split())[:200] + where + inner


class Child:
    """A ``--worker`` process with a memory limit; ``ask`` a path, get its result or what killed it."""

    def __init__(self, doc_timeout: float, memory_gb: float):
        def limit():
            import resource

            cap = int(memory_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

        env = {**os.environ, "RAY_AUTH_MODE": "disabled", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--worker",
                "--doc-timeout",
                str(doc_timeout),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
            preexec_fn=limit if memory_gb else None,
            start_new_session=True,  # its own process group: close() kills pandoc and the table finder too
        )
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        ready = self._next(120)
        if not (isinstance(ready, dict) and ready.get("ready")):
            self.close()
            raise RuntimeError(f"fuzz worker did not start: {ready}")

    def _pump(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _next(self, timeout: float):
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return "hang"
        if line is None:
            self.proc.wait()
            return f"crash (exit {self.proc.returncode})"
        return json.loads(line)

    def ask(self, path: Path, timeout: float):
        """A dict (the stages' result, or ``raised``) or a string: ``hang`` or ``crash (exit N)``."""
        self.proc.stdin.write(f"{path}\n")
        self.proc.stdin.flush()
        return self._next(timeout)

    def close(self):
        import signal

        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # the worker and anything it started
        self.proc.wait()


def check_direct(m: Mutant, result) -> list[str]:
    """The invariants on one mutant's in-child result."""
    if isinstance(result, str):
        return [f"{m.label()}: the parse/chunk stages {result}"]
    if "raised" in result:
        return [f"{m.label()}: the stages raised {result['raised']}"]
    doc = {"source": m.name, "doc_id": "", **{k: result[k] for k in ("status", "reason", "chunks")}}
    return check_rows([m], [doc], [{"source": m.name, "doc_id": ""}] * result["chunk_rows"])


def run_direct(
    mutants: list[Mutant], folder: Path, *, doc_timeout: float, memory_gb: float, hard_timeout: float
) -> tuple[list[str], collections.Counter, list[str]]:
    """Each mutant through the job's stages in a killable child process (restarted after a crash or
    hang): ``(violations, statuses, contained bugs)``. A crash or hang of the child is a violation."""
    write_mutants(mutants, folder)
    problems, statuses, docs, details = [], collections.Counter(), [], {}
    child = None
    try:
        for m in mutants:
            if child is None:
                child = Child(doc_timeout, memory_gb)
            result = child.ask(folder / m.name, hard_timeout)
            if isinstance(result, str):
                statuses[result.split()[0]] += 1
                child.close()
                child = None
            elif "raised" in result:
                statuses["raised"] += 1
            else:
                statuses[result["status"]] += 1
                docs.append({"source": m.name, "status": result["status"], "reason": result["reason"]})
                details[m.name] = result.get("exceptions", [])
            problems += check_direct(m, result)
    finally:
        if child is not None:
            child.close()
    return problems, statuses, find_contained(mutants, docs, details)


# -- the command line ----------------------------------------------------------------------------


def _keep(mutants: list[Mutant], keep: str | None, seed: int) -> str:
    if not keep:
        return ""
    dest = Path(keep) / f"seed-{seed}"
    if dest.exists():
        shutil.rmtree(dest)
    write_mutants(mutants, dest)
    return f" (mutants kept in {dest})"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "folder", nargs="?", default=str(DEFAULT_FOLDER), help="files to mutate (default samples/)"
    )
    p.add_argument("--minutes", type=float, default=0.0, help="keep running batches this long (default: one)")
    p.add_argument("--batch", type=int, default=200, help="mutants per batch (default 200)")
    p.add_argument("--seed", type=int, default=None, help="seed of the first batch; batch k has seed+k")
    p.add_argument("--keep", help="save the mutants of a failing batch under DIR/seed-N/")
    p.add_argument(
        "--only", help="with --seed: write these mutant indexes (comma-separated) to --keep, run none"
    )
    p.add_argument("--num-cpus", type=int, help="CPUs of the local Ray (default: all)")
    p.add_argument(
        "--timeout", type=float, help="seconds a batch's job may take (default 120 + 2 s a mutant)"
    )
    p.add_argument(
        "--doc-timeout",
        type=float,
        default=60.0,
        help="seconds one document may take: limits.doc_timeout_s of the job; with --direct, the child's "
        "limit, plus 30 s for its imports (default 60)",
    )
    p.add_argument(
        "--direct",
        action="store_true",
        help="skip Ray: each mutant through the job's stages in a killable child (a quick pre-screen)",
    )
    p.add_argument("--memory-gb", type=float, default=8.0, help="address-space cap of a child (default 8)")
    p.add_argument(
        "--no-localise", action="store_true", help="when a job raises or hangs, don't look for the culprit"
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="count contained bugs (a parser exception, a worker killed by the isolation) as violations",
    )
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)

    if args.worker:
        return _worker(args.doc_timeout)
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    corpus = load_corpus(args.folder)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)

    if args.only:
        if not args.keep:
            p.error("--only needs --keep DIR (where to write the mutants)")
        picked = [make_mutant(corpus, seed, int(i)) for i in args.only.split(",")]
        write_mutants(picked, Path(args.keep))
        for m in picked:
            print(f"{Path(args.keep) / m.name}: {m.recipe}")
        return 0

    hard_timeout = args.doc_timeout + 30
    job_timeout = args.timeout or 120 + 2 * args.batch
    if not args.direct:
        init_ray(args.num_cpus)
    t_start = time.monotonic()
    total, batches, all_status, failures, all_found = 0, 0, collections.Counter(), [], []
    print(
        f"fuzz: {len(corpus)} files from {args.folder}, batches of {args.batch}, first seed {seed}",
        flush=True,
    )
    while True:
        batch_seed = seed + batches
        mutants = make_batch(corpus, batch_seed, args.batch)
        t = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="raychunk-fuzz-") as tmp:
            if args.direct:
                problems, statuses, found = run_direct(
                    mutants,
                    Path(tmp) / "in",
                    doc_timeout=args.doc_timeout,
                    memory_gb=args.memory_gb,
                    hard_timeout=hard_timeout,
                )
                outcome = "direct"
            else:
                problems, statuses, outcome, found = fuzz_job(
                    mutants,
                    Path(tmp),
                    num_cpus=args.num_cpus,
                    timeout_s=job_timeout,
                    doc_timeout=args.doc_timeout,
                )
                if outcome != "ok" and not args.no_localise:
                    print(
                        f"  batch seed {batch_seed}: the job {outcome}; localising, one mutant at a time",
                        flush=True,
                    )
                    culprits, _, more = run_direct(
                        mutants,
                        Path(tmp) / "direct",
                        doc_timeout=args.doc_timeout,
                        memory_gb=args.memory_gb,
                        hard_timeout=hard_timeout,
                    )
                    problems += culprits or ["no single mutant reproduces it in a child process"]
                    found += more
        secs = time.monotonic() - t
        batches += 1
        total += len(mutants)
        all_status.update(statuses)
        shown = " ".join(f"{k}={v}" for k, v in sorted(statuses.items()))
        print(
            f"batch {batches} seed={batch_seed} mutants={len(mutants)} {shown} {secs:.1f}s"
            + (f" contained={len(found)}" if found else "")
            + (f" VIOLATIONS={len(problems)}" if problems else ""),
            flush=True,
        )
        for line in found:
            print(f"  CONTAINED {line}", flush=True)
        all_found += found
        if args.strict:
            problems += [f"(--strict) {line}" for line in found]
        if problems:
            kept = _keep(mutants, args.keep, batch_seed)
            for line in problems:
                print(f"  VIOLATION {line}", flush=True)
            print(
                f"  reproduce one: python scripts/fuzz.py --seed {batch_seed} --only INDEX --keep DIR{kept}"
            )
            failures += [(batch_seed, line) for line in problems]
        if outcome == "hung":
            break  # the job's thread and its Ray tasks are stuck: stop here
        if time.monotonic() - t_start >= args.minutes * 60:
            break
    wall = time.monotonic() - t_start
    shown = " ".join(f"{k}={v}" for k, v in sorted(all_status.items()))
    print(
        f"fuzz: {total} mutants in {batches} batches, {wall:.0f} s; {shown}; "
        f"{len(all_found)} contained bugs, {len(failures)} violations"
        + (f" in batches {sorted({s for s, _ in failures})}" if failures else ""),
        flush=True,
    )
    code = 1 if failures else 0
    if outcome == "hung":
        sys.stdout.flush()
        os._exit(code)  # the stuck job thread would keep Ray's shutdown waiting
    return code


if __name__ == "__main__":
    raise SystemExit(main())
