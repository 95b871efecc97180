"""A canonical dump of what raychunk produces, to show that a change leaves behaviour as it was
(or exactly how it moved it).

It runs the jobs the way a user does (``raychunk.cli.main``, the Ray jobs in this process on one
local Ray): ``run --no-embed`` and ``price`` on the samples and on a fixed part of the shared
corpus; ``eval`` on the samples; ``run`` with vectors on the samples, then ``run --previous`` and
``price --previous`` on an edited copy of them; and ``raychunk chunk`` (cl100k_base) on corpus
files. It writes, sorted and with timings, paths and random names taken out: every chunk (id, text,
span, heading path, token counts, flags; whether it has a vector), every documents row, every
report.json, the text each command printed, the markdown and CSV it wrote; then ``DIGEST`` (one
SHA-256 per file and one of them all).

    python scripts/golden_dump.py DIR                   # dump into DIR (a few minutes)
    python scripts/golden_dump.py DIR --compare BASE    # dump, then print what differs from BASE
    python scripts/golden_dump.py --diff BASE DIR       # only compare two dumps

Exit status 1 when a comparison finds a difference.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("RAYCHUNK_CORPUS", ROOT.parent / "shared" / "corpus"))  # beside the checkout
# The corpus part: every document of these folders but the few slowest to parse (seconds each
# here), so the dump takes minutes. Fixed by name: the same inputs for every checkout.
FOLDERS = ("bad", "html", "md", "other", "pdf", "txt")
LEFT_OUT = {
    "other/handbook-872p.docx",
    "pdf/pdf2image-memory-error-test-400p.pdf",
    "txt/book-war-and-peace-1225p.txt",
    "pdf/GeoTopo-komprimiert.pdf",
    "pdf/bashref.pdf",
    "html/example-10k.html",
    "bad/fake-power-point-malformed.pptx",
}
# Fields that measure time or memory, or name a random folder: left out of every dump.
TIMING_KEYS = {
    "generated",
    "throughput",
    "stages",
    "parse_seconds",
    "ocr_seconds",
    "cpu_seconds",
    "peak_rss_mb",
    "seconds",
    "wall_seconds",
    "ray",
    "written",
}
# Lines of printed text and markdown that report timings: their numbers are masked.
TIMED_LINE = re.compile(r"wall|throughput|generated|/s\b|Ray start|located in|\bin [\d.]+ s\b|CPU s\b")
# Lines naming Ray Data's operators (named for the functions the job maps): left out.
OPERATOR_LINE = re.compile(
    r"^\s*(\| )?stage\b|^\|?\s*`?(ReadInputFiles|MapBatches|FlatMap|HashShuffle|Write)"
)


def corpus_files() -> list[str]:
    out = []
    for folder in FOLDERS:
        for p in sorted((CORPUS / folder).iterdir()):
            if p.is_file() and f"{folder}/{p.name}" not in LEFT_OUT:
                out.append(str(p))
    return out


class Dump:
    """The dump folder: each ``put`` writes one canonical file."""

    def __init__(self, out: Path, work: Path):
        self.out, self.work = out, work
        out.mkdir(parents=True, exist_ok=True)

    def clean(self, text: str) -> str:
        text = text.replace(str(self.work), "<work>").replace(str(ROOT), "<repo>")
        return re.sub(r"part-[0-9a-f]{8}-", "part-<attempt>-", text)

    def put(self, name: str, text: str) -> None:
        (self.out / name).write_text(self.clean(text))

    def put_json(self, name: str, value) -> None:
        self.put(
            name, json.dumps(strip(value), indent=1, sort_keys=True, ensure_ascii=False, default=str) + "\n"
        )

    def put_rows(self, name: str, rows: list[dict], key) -> None:
        rows = sorted((strip(r) for r in rows), key=key)
        self.put(
            name, "".join(json.dumps(r, sort_keys=True, ensure_ascii=False, default=str) + "\n" for r in rows)
        )

    def put_text(self, name: str, text: str) -> None:
        self.put(name, mask(text))


def strip(value):
    """``value`` without timing keys, at any depth; floats rounded to 9 digits."""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list | tuple):
        return [strip(v) for v in value]
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, bytes):
        return value.hex()
    return value


def mask(text: str) -> str:
    lines = [line for line in text.split("\n") if not OPERATOR_LINE.search(line)]
    return "\n".join(re.sub(r"\d[\d.,]*", "#", line) if TIMED_LINE.search(line) else line for line in lines)


def cli(*argv: str) -> str:
    """``raychunk ARGV`` in this process; what it printed on stdout (its logs and warnings go to
    stderr as they come)."""
    from raychunk.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(list(argv))
    if code:
        raise SystemExit(f"raychunk {' '.join(argv)} exited {code}:\n{buf.getvalue()}")
    return buf.getvalue()


def read_table(folder: Path) -> list[dict]:
    import pyarrow.parquet as pq

    rows = []
    for f in sorted(folder.rglob("*.parquet")):
        rows += pq.read_table(f).to_pylist()
    return rows


def chunk_rows(rows: list[dict]) -> list[dict]:
    for r in rows:
        vector = r.pop("embedding", None)
        r["has_vector"] = vector is not None
    return rows


def by_chunk(r: dict):
    return (r.get("source") or "", r.get("chunk_index") or 0, r.get("chunk_id") or "")


def document_rows(rows: list[dict]) -> list[dict]:
    """Documents rows with their text as its length and SHA-256 (the chunks carry the texts)."""
    for r in rows:
        text = r.pop("text", None)
        r["text"] = None if text is None else [len(text), hashlib.sha256(text.encode()).hexdigest()]
    return rows


def by_source(r: dict):
    return (r.get("source") or "", r.get("doc_id") or "")


def dump_run(d: Dump, name: str, out: Path, printed: str) -> None:
    d.put_text(f"{name}.printed.txt", printed)
    d.put_rows(f"{name}.chunks.jsonl", chunk_rows(read_table(out / "chunks")), by_chunk)
    d.put_rows(f"{name}.documents.jsonl", document_rows(read_table(out / "documents")), by_source)
    report = json.loads((out / "report.json").read_text())
    report["files"] = {k: len(v) for k, v in report.get("files", {}).items()}
    d.put_json(f"{name}.report.json", report)
    d.put_text(f"{name}.report.md", (out / "report.md").read_text())
    for sub in ("delta/added", "delta/removed"):
        if (out / sub).is_dir():
            d.put_rows(f"{name}.{sub.replace('/', '-')}.jsonl", chunk_rows(read_table(out / sub)), by_chunk)


def dump_grid(d: Dump, name: str, out: Path, printed: str) -> None:
    d.put_text(f"{name}.printed.txt", printed)
    d.put_json(f"{name}.report.json", json.loads((out / "report.json").read_text()))
    for f in ("report.md", "report.csv"):
        if (out / f).is_file():
            d.put_text(f"{name}.{f}", (out / f).read_text())


def edit_samples(dst: Path) -> None:
    """The samples edited in place: one file changed, one removed, one added, one renamed."""
    guide = dst / "acme-cloud-admin-guide.md"
    guide.write_text(
        guide.read_text().replace("24 hours", "48 hours") + "\n## Added\n\nA new closing section.\n"
    )
    (dst / "release-notes.txt").unlink()
    (dst / "billing-faq.txt").rename(dst / "billing-questions.txt")
    (dst / "new-note.md").write_text("# New note\n\nA document the first run did not have.\n")


def run_all(out: Path) -> None:
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        work = Path(tmp)
        d = Dump(out, work)
        samples = work / "samples"
        shutil.copytree(ROOT / "samples", samples)
        corpus = corpus_files()
        # raychunk chunk: in its own process (no Ray), BPE counts (cl100k_base), on the corpus part
        # but its PDFs and damaged files (the run parses those).
        prose = [f for f in corpus if Path(f).parent.name not in ("pdf", "bad")]
        chunked = subprocess.run(
            [
                sys.executable,
                "-m",
                "raychunk",
                "chunk",
                "--json",
                "--tokenizer",
                "tiktoken:cl100k_base",
                *prose,
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        d.put_rows(
            "chunk-corpus-cl100k.jsonl", [json.loads(x) for x in chunked.stdout.splitlines()], by_chunk
        )
        d.put_text("chunk-corpus-cl100k.stderr.txt", chunked.stderr)

        try:
            for name, inputs in (("samples", [str(samples)]), ("corpus", corpus)):
                o = work / f"run-{name}"
                cpus = ("--num-cpus", "2")  # the local Ray the first job starts, and every job joins
                printed = cli("run", "--no-embed", "--input", *inputs, "--output", str(o), *cpus)
                dump_run(d, f"run-{name}", o, printed)
                o = work / f"price-{name}"
                grid = ("--sizes", "128,512", "--overlaps", "0,0.2", "--strategies", "structure,fixed")
                printed = cli(
                    "price",
                    "--input",
                    *inputs,
                    "--output",
                    str(o),
                    *grid,
                    "--tokens-per-second",
                    "1000",
                    "--no-chart",
                )
                dump_grid(d, f"price-{name}", o, printed)
            o = work / "eval-samples"
            printed = cli(
                "eval", "--input", str(samples), "--queries", str(ROOT / "evals" / "samples.jsonl"),
                "--output", str(o), "--no-plot",
            )  # fmt: skip
            dump_grid(d, "eval-samples", o, printed)
            first, edited = work / "run-embed", work / "incremental"
            shutil.copytree(samples, edited)
            dump_run(d, "run-embed", first, cli("run", "--input", str(edited), "--output", str(first)))
            edit_samples(edited)
            o = work / "run-previous"
            printed = cli("run", "--input", str(edited), "--output", str(o), "--previous", str(first))
            dump_run(d, "run-previous", o, printed)
            o = work / "price-previous"
            printed = cli(
                "price", "--input", str(edited), "--output", str(o), "--previous", str(first),
                "--sizes", "256", "--overlaps", "0", "--tokens-per-second", "1000", "--no-chart",
            )  # fmt: skip
            dump_grid(d, "price-previous", o, printed)
        finally:
            import ray

            ray.shutdown()
        write_digest(out)


def write_digest(out: Path) -> None:
    lines = []
    for f in sorted(out.iterdir()):
        if f.name != "DIGEST":
            lines.append(f"{hashlib.sha256(f.read_bytes()).hexdigest()}  {f.name}")
    whole = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    (out / "DIGEST").write_text("\n".join(lines) + f"\n{whole}  (all)\n")
    print(f"{out}: {len(lines)} files, digest {whole[:16]}")


def _digests(folder: Path) -> dict[str, str]:
    out = {}
    for line in (folder / "DIGEST").read_text().splitlines():
        digest, name = line.split("  ", 1)
        out[name] = digest
    return out


def _paths(a, b, prefix: str = "") -> list[str]:
    """Dotted paths where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            out += _paths(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{prefix}{k}.")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in _paths(x, y, f"{prefix}{i}.")]
    return [] if a == b else [f"{prefix.rstrip('.')}: {_short(a)} -> {_short(b)}"]


def _short(v) -> str:
    s = json.dumps(v, ensure_ascii=False, default=str)
    return s if len(s) <= 120 else s[:117] + "..."


def _rows_diff(a: Path, b: Path, limit: int) -> list[str]:
    def load(p):
        rows = {}
        for line in p.read_text().splitlines():
            r = json.loads(line)
            rows.setdefault((r.get("source"), r.get("chunk_index", r.get("doc_id"))), []).append(r)
        return rows

    old, new = load(a), load(b)
    out = []
    gone = sorted(set(old) - set(new), key=str)
    came = sorted(set(new) - set(old), key=str)
    changed = [k for k in sorted(set(old) & set(new), key=str) if old[k] != new[k]]
    sources = sorted({k[0] or "" for k in [*gone, *came, *changed]})
    out.append(
        f"    {len(changed)} rows changed, {len(gone)} gone, {len(came)} new, in {len(sources)} sources: "
        + ", ".join(s.rsplit("/", 1)[-1] for s in sources[:12])
        + (" ..." if len(sources) > 12 else "")
    )
    for k in changed[:limit]:
        a, b = old[k], new[k]
        for p in (_paths(a[0], b[0]) if len(a) == len(b) == 1 else _paths(a, b))[:6]:
            out.append(f"    {k[0]} #{k[1]}: {p}")
    for k in gone[: max(0, limit // 2)]:
        out.append(f"    gone: {k[0]} #{k[1]}")
    for k in came[: max(0, limit // 2)]:
        out.append(f"    new:  {k[0]} #{k[1]}")
    return out


def compare(base: Path, new: Path, *, limit: int = 8) -> int:
    """Print what differs between two dumps; 1 when anything does."""
    a, b = _digests(base), _digests(new)
    names = sorted((set(a) | set(b)) - {"(all)"})
    differ = [n for n in names if a.get(n) != b.get(n)]
    if not differ:
        print(f"identical: {len(names)} files, digest {b.get('(all)', '')[:16]}")
        return 0
    for n in differ:
        print(
            f"{n}: {'only in ' + str(new) if n not in a else 'only in ' + str(base) if n not in b else 'differs'}"
        )
        if n not in a or n not in b:
            continue
        pa_, pb_ = base / n, new / n
        if n.endswith(".jsonl"):
            print("\n".join(_rows_diff(pa_, pb_, limit)))
        elif n.endswith(".json"):
            paths = _paths(json.loads(pa_.read_text()), json.loads(pb_.read_text()))
            print("\n".join(f"    {p}" for p in paths[: limit * 3]))
            if len(paths) > limit * 3:
                print(f"    ... {len(paths) - limit * 3} more")
        else:
            import difflib

            lines = list(
                difflib.unified_diff(
                    pa_.read_text().splitlines(), pb_.read_text().splitlines(), lineterm="", n=0
                )
            )
            print("\n".join(f"    {x}" for x in lines[2 : 2 + limit * 3]))
    print(f"{len(differ)} of {len(names)} files differ")
    return 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out", nargs="?", type=Path, help="folder to dump into")
    p.add_argument("--compare", type=Path, help="an earlier dump: print what differs from it")
    p.add_argument("--diff", nargs=2, type=Path, metavar=("BASE", "NEW"), help="compare two dumps only")
    p.add_argument("--limit", type=int, default=8, help="differences shown per file (default 8)")
    args = p.parse_args()
    if args.diff:
        return compare(*args.diff, limit=args.limit)
    if args.out is None:
        p.error("give a folder to dump into, or --diff BASE NEW")
    if args.out.exists():
        shutil.rmtree(args.out)
    run_all(args.out)
    return compare(args.compare, args.out, limit=args.limit) if args.compare else 0


if __name__ == "__main__":
    sys.exit(main())
