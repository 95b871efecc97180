"""raychunk against the Ray reference pipeline, end to end, on the same PDFs with the same resources.

    python benchmarks/end_to_end.py [--pdfs DIR] [--limit N] [--num-cpus N] [--device auto|cpu|cuda]
                                    [--only reference|raychunk] [--work DIR] [--json PATH]

    (default: the text PDFs of ../shared/corpus/pdf, else samples/; all CPUs; into out/end_to_end)

The PDFs: those of the folder with a text layer, chosen deterministically (``text_pdfs``): at least
80% of pages give 20+ characters of ``get_text()``, and at most 100 pages (a 400-page scan-like
stress file would dominate both runs); sorted by name, ``--limit`` keeps the first N. They are
copied into ``WORK/input`` (raychunk refuses symlinks out of its input folder).

Each pipeline runs in its own subprocess, so each starts a fresh local Ray with the same
``--num-cpus``: the reference (``benchmarks/reference_pipeline.py``) and ``raychunk run --input
WORK/input --output WORK/raychunk --overwrite`` (embedding on). Wall time is the subprocess's, from
launch to exit, for both: interpreter start, imports, Ray start-up, the job, the writes. Ray
start-up is measured inside each run (raychunk's report.json ``throughput.ray_start_seconds``; a
raychunk that does not report it gets a probe process that starts the same local Ray). With
``--repeats N`` the pair runs N times, the order alternating (reference first, then raychunk first,
...), and each pipeline's fastest run is kept: other work on a shared machine only adds time.

Tokens are counted the same way for both, from the written chunks' ``text``, with MiniLM's own
tokenizer (``tokenizer.json``, [CLS] and [SEP] included, no truncation): a chunk of ``n`` tokens is
embedded as ``min(n, 256)`` (MiniLM's ``max_seq_length``) and the rest is silently dropped by
sentence-transformers. ``embedded tokens/s`` is embedded tokens over wall time.

Targets (issue 12): raychunk >= 1.5x the reference's embedded tokens/s, and no slower in wall time.
The script reports them; it exits non-zero on a miss only with ``--strict``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from summary import record

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MAX_SEQ_LENGTH = 256  # all-MiniLM-L6-v2's sentence_bert_config.json; read from the model when present
TARGET_TOKENS_PER_S = 1.5
TARGET_WALL = 1.0


def token_accounting(lengths: Iterable[int], max_len: int = MAX_SEQ_LENGTH) -> dict:
    """What an embedder that reads ``max_len`` tokens makes of chunks of ``lengths`` tokens.

    >>> token_accounting([100, 256, 300], 256)
    {'chunks': 3, 'tokens': 656, 'embedded': 612, 'dropped': 44, 'truncated_chunks': 1}
    """
    lengths = list(lengths)
    embedded = sum(min(n, max_len) for n in lengths)
    total = sum(lengths)
    return {
        "chunks": len(lengths),
        "tokens": total,
        "embedded": embedded,
        "dropped": total - embedded,
        "truncated_chunks": sum(1 for n in lengths if n > max_len),
    }


def minilm_tokenizer():
    """MiniLM's tokenizer with its truncation and padding off (its tokenizer.json pads and cuts at
    128), and the model's ``max_seq_length``."""
    from tokenizers import Tokenizer

    from raychunk.models import PACKAGED_MODEL, resolve_model

    path = Path(resolve_model(PACKAGED_MODEL))
    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    cfg = path / "sentence_bert_config.json"
    max_len = json.loads(cfg.read_text())["max_seq_length"] if cfg.exists() else MAX_SEQ_LENGTH
    return tok, int(max_len)


def token_lengths(tok, texts: list[str], batch: int = 1024) -> list[int]:
    out: list[int] = []
    for i in range(0, len(texts), batch):
        out.extend(len(e.ids) for e in tok.encode_batch(texts[i : i + batch]))
    return out


def text_pdfs(
    folder: Path, *, max_pages: int = 100, min_text_fraction: float = 0.8
) -> list[tuple[Path, int]]:
    """``(path, pages)`` of the PDFs in ``folder`` with a text layer, sorted by name: at least
    ``min_text_fraction`` of their pages give 20+ characters of text, and at most ``max_pages`` pages.
    Encrypted or unreadable files are left out."""
    import pymupdf

    chosen = []
    for path in sorted(folder.glob("*.pdf")):
        try:
            with pymupdf.open(path) as doc:
                if doc.needs_pass or doc.page_count == 0 or doc.page_count > max_pages:
                    continue
                with_text = sum(1 for page in doc if len(page.get_text().strip()) >= 20)
                if with_text >= min_text_fraction * doc.page_count:
                    chosen.append((path, doc.page_count))
        except Exception:  # a broken file is simply not a text PDF; pymupdf raises several types
            continue
    return chosen


def timed(cmd: list[str], log: Path, env: dict) -> float:
    """Run ``cmd`` to completion with its output in ``log``; the wall seconds, launch to exit."""
    t = time.perf_counter()
    with log.open("w") as f:
        proc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
    seconds = time.perf_counter() - t
    if proc.returncode:
        tail = "".join(log.read_text(errors="replace").splitlines(keepends=True)[-30:])
        raise SystemExit(f"end_to_end: {' '.join(cmd)} failed ({proc.returncode}); see {log}:\n{tail}")
    return seconds


def ray_start_probe(num_cpus: int, env: dict, work: Path) -> float:
    """Seconds to start (and stop) a fresh local Ray like the pipelines', from a warm interpreter."""
    code = (
        "import time, ray; t = time.perf_counter(); "
        f"ray.init(address='local', num_cpus={num_cpus}, include_dashboard=False, log_to_driver=False); "
        "print(time.perf_counter() - t); ray.shutdown()"
    )
    out = work / "ray_probe.log"
    timed([sys.executable, "-c", code], out, env)
    return float(out.read_text().strip().splitlines()[-1])


def read_texts(files: list[Path]) -> list[str]:
    import pyarrow.parquet as pq

    texts: list[str] = []
    for f in files:
        texts.extend(t for t in pq.read_table(f, columns=["text"]).column("text").to_pylist() if t)
    return texts


def run_reference(inputs: Path, work: Path, num_cpus: int, device: str, env: dict) -> dict:
    out, js = work / "reference", work / "reference.json"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "reference_pipeline.py"), "--input", str(inputs)]
    cmd += ["--output", str(out), "--num-cpus", str(num_cpus), "--device", device, "--json", str(js)]
    wall = timed(cmd, work / "reference.log", env)
    inner = json.loads(js.read_text())
    return {
        "wall_s": round(wall, 2),
        "ray_start_s": inner["ray_start_s"],
        "job_s": inner["pipeline_s"],
        "vectors": inner["vectors"],
        "device": inner["device"],
        "texts": read_texts(sorted(out.glob("*.parquet"))),
    }


def run_raychunk(
    inputs: Path, work: Path, num_cpus: int, device: str, env: dict, backend: str = "torch"
) -> dict:
    out = work / "raychunk"
    exe = Path(sys.executable).with_name("raychunk")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "raychunk"]
    cmd += ["run", "--input", str(inputs), "--output", str(out), "--overwrite", "--num-cpus", str(num_cpus)]
    cmd += ["--device", device, "--backend", backend]
    wall = timed(cmd, work / "raychunk.log", env)
    report = json.loads((out / "report.json").read_text())
    not_ok = report.get("not_ok") or []
    return {
        "wall_s": round(wall, 2),
        "ray_start_s": report["throughput"].get("ray_start_seconds"),
        "job_s": report["throughput"]["wall_seconds"],
        "vectors": report["vectors"],
        "device": device,
        "texts": read_texts([out / f for f in report["files"]["chunks"]]),
        "reported_tokens_embedded": report["tokens_embedded"],
        "documents_not_ok": len(not_ok),
    }


def compare(results: dict, max_len: int) -> dict:
    """Token accounting and ratios, from each pipeline's written texts."""
    tok, _ = minilm_tokenizer()
    for r in results.values():
        r.update(token_accounting(token_lengths(tok, r.pop("texts")), max_len))
        r["embedded_tokens_per_s"] = round(r["embedded"] / r["wall_s"], 1)
    if {"reference", "raychunk"} <= results.keys():
        ref, rc = results["reference"], results["raychunk"]
        results["ratios"] = {
            "wall": round(rc["wall_s"] / ref["wall_s"], 3),
            "embedded_tokens_per_s": round(rc["embedded_tokens_per_s"] / ref["embedded_tokens_per_s"], 3),
            "embedded_tokens": round(rc["embedded"] / ref["embedded"], 3) if ref["embedded"] else None,
            "vectors": round(rc["vectors"] / ref["vectors"], 3) if ref["vectors"] else None,
        }
        results["targets"] = {
            "embedded_tokens_per_s_at_least_1.5x": results["ratios"]["embedded_tokens_per_s"]
            >= TARGET_TOKENS_PER_S,
            "wall_no_slower": results["ratios"]["wall"] <= TARGET_WALL,
        }
    return results


def render(results: dict, meta: dict) -> str:
    names = [n for n in ("reference", "raychunk") if n in results]
    both = len(names) == 2

    def num(v, fmt="{:,.0f}"):
        return "-" if v is None else fmt.format(v)

    def pct(r):
        return f"{100 * r['dropped'] / r['tokens']:.0f}%" if r["tokens"] else "-"

    lines_spec = [
        ("wall time, s", lambda r: num(r["wall_s"], "{:,.1f}"), "wall"),
        ("  Ray start-up, s", lambda r: num(r["ray_start_s"], "{:,.1f}"), None),
        ("  job (in-process), s", lambda r: num(r["job_s"], "{:,.1f}"), None),
        ("vectors", lambda r: num(r["vectors"]), "vectors"),
        ("tokens in chunks", lambda r: num(r["tokens"]), None),
        ("tokens embedded (<=256/chunk)", lambda r: num(r["embedded"]), "embedded_tokens"),
        ("tokens silently dropped", lambda r: f"{num(r['dropped'])} ({pct(r)})", None),
        ("chunks truncated", lambda r: num(r["truncated_chunks"]), None),
        ("embedded tokens/s", lambda r: num(r["embedded_tokens_per_s"], "{:,.1f}"), "embedded_tokens_per_s"),
    ]
    head = ["", *names] + (["raychunk/reference"] if both else [])
    rows = []
    for label, cell, ratio in lines_spec:
        row = [label, *(cell(results[n]) for n in names)]
        if both:
            row.append(num(results["ratios"].get(ratio), "{:.2f}x") if ratio else "")
        rows.append(row)
    widths = [max(len(x) for x in col) for col in zip(head, *rows)]

    def fmt(cells):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    out = [
        f"end to end: {meta['pdfs']} PDFs, {meta['pages']} pages, local Ray with {meta['num_cpus']} CPUs, "
        f"device {meta['device']}, raychunk backend {meta.get('raychunk_backend', 'torch')}; load average at start {meta['load_average']}",
        *(
            [
                f"fastest of {len(next(iter(meta['walls_s'].values())))} runs each, order alternating: {meta['walls_s']}"
            ]
            if max(len(v) for v in meta["walls_s"].values()) > 1
            else []
        ),
        fmt(head),
        fmt(["-" * w for w in widths]),
        *(fmt(r) for r in rows),
    ]
    if meta.get("ray_probe_s") is not None:
        out.append(f"Ray start-up probe (fresh local Ray, same flags): {meta['ray_probe_s']:.1f} s")
    if "raychunk" in results:
        rc = results["raychunk"]
        out.append(
            f"raychunk's own report: {rc['reported_tokens_embedded']:,} tokens embedded, "
            f"{rc['documents_not_ok']} documents not ok"
        )
    if both:
        t = results["targets"]
        out.append(
            f"targets: embedded tokens/s >= {TARGET_TOKENS_PER_S}x: "
            f"{'met' if t['embedded_tokens_per_s_at_least_1.5x'] else 'MISSED'}; wall time no slower: "
            f"{'met' if t['wall_no_slower'] else 'MISSED'}"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    shared = ROOT.parent / "shared" / "corpus" / "pdf"
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--pdfs", default=str(shared if shared.is_dir() else ROOT / "samples"), help="folder of PDFs"
    )
    p.add_argument("--limit", type=int, help="only the first N chosen PDFs")
    p.add_argument(
        "--num-cpus", type=int, default=os.cpu_count(), help="CPUs of each local Ray (default: all)"
    )
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="embedding device, both")
    p.add_argument("--only", choices=("reference", "raychunk"), help="run one pipeline")
    p.add_argument(
        "--backend",
        choices=("torch", "onnx", "onnx-int8"),
        default="torch",
        help="raychunk's embedder.backend (onnx: the same vectors as torch, fused on onnxruntime)",
    )
    p.add_argument(
        "--work", default=str(ROOT / "out" / "end_to_end"), help="inputs, outputs and logs (replaced)"
    )
    p.add_argument("--repeats", type=int, default=1, help="runs of each, order alternating; fastest kept")
    p.add_argument("--json", help="write the figures here as JSON")
    p.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = p.parse_args(argv)

    chosen = text_pdfs(Path(args.pdfs))[: args.limit]
    if not chosen:
        raise SystemExit(f"end_to_end: no text PDFs in {args.pdfs}")
    work = Path(args.work)
    if work.exists():
        shutil.rmtree(work)
    inputs = work / "input"
    inputs.mkdir(parents=True)
    for path, _ in chosen:
        shutil.copy2(path, inputs / path.name)
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    meta = {
        "pdfs": len(chosen),
        "pages": sum(n for _, n in chosen),
        "files": [path.name for path, _ in chosen],
        "num_cpus": args.num_cpus,
        "device": args.device,
        "raychunk_backend": args.backend,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    print(f"{meta['pdfs']} PDFs, {meta['pages']} pages from {args.pdfs} -> {inputs}", file=sys.stderr)

    results: dict = {}
    runners = {"reference": run_reference, "raychunk": run_raychunk}
    names = [args.only] if args.only else list(runners)
    walls: dict[str, list[float]] = {n: [] for n in names}
    for i in range(max(1, args.repeats)):
        for name in names if i % 2 == 0 else names[::-1]:
            print(f"running {name} ({i + 1}/{args.repeats}) ...", file=sys.stderr)
            extra = {"backend": args.backend} if name == "raychunk" else {}
            r = runners[name](inputs, work, args.num_cpus, args.device, env, **extra)
            walls[name].append(r["wall_s"])
            print(f"  {name}: {r['wall_s']:.1f} s", file=sys.stderr)
            if name not in results or r["wall_s"] < results[name]["wall_s"]:
                results[name] = r
    meta["walls_s"] = walls
    if "raychunk" in results and results["raychunk"]["ray_start_s"] is None:
        meta["ray_probe_s"] = round(ray_start_probe(args.num_cpus, env, work), 2)
        results["raychunk"]["ray_start_s"] = meta["ray_probe_s"]
    _, max_len = minilm_tokenizer()
    results = compare(results, max_len)
    print(render(results, meta))
    if "ratios" in results:
        tps, wall = results["ratios"]["embedded_tokens_per_s"], results["ratios"]["wall"]
        how = f"end to end ({args.backend})"
        record(f"{how}, embedded tokens/s vs reference", tps, target=">= 1.5", before="0.72", met=tps >= 1.5)
        record(f"{how}, wall vs reference", wall, target="<= 1.0", before="2.9", met=wall <= 1.0)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"meta": meta, **results}, indent=2))
        print(f"wrote {args.json}", file=sys.stderr)
    missed = "targets" in results and not all(results["targets"].values())
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
