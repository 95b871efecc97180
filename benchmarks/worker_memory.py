"""Peak memory of the CPU workers against the largest files they handle, under the default limits.

    python benchmarks/worker_memory.py [--corpus DIR] [--no-worst] [--line-mb 20] [--pages 5000] [--bomb-mb 300]

Runs the real job (no embedding) twice on this machine: on generated worst cases (a single-line
text file, a many-page PDF, a zip bomb behind a .docx name) and on ``../shared/corpus`` (or
``--corpus``). For every document it prints the peak resident memory of the process that parsed,
classified and chunked it (the ``peak_rss_mb`` column of the documents table: the isolated document
process), its size and the multiple; and, sampled every 50 ms while the job runs, the largest
resident memory of any Ray worker process (the parents that hold the bytes and the rows).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def make_worst_cases(folder: Path, line_mb: int, pages: int, bomb_mb: int) -> None:
    import zipfile

    import pymupdf

    words = b"alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu "
    (folder / f"single-line-{line_mb}mb.txt").write_bytes(
        (words * (line_mb * 2**20 // len(words) + 1))[: line_mb * 2**20]
    )
    doc = pymupdf.open()
    for i in range(pages):
        page = doc.new_page()
        page.insert_text((72, 72), f"Page {i + 1}", fontsize=14)
        page.insert_text(
            (72, 100), f"Paragraph on page {i + 1}: the quick brown fox jumps over the lazy dog."
        )
    doc.save(folder / f"pages-{pages}.pdf", garbage=3, deflate=True)
    with zipfile.ZipFile(folder / f"zip-bomb-{bomb_mb}mb.docx", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        with z.open("word/document.xml", "w", force_zip64=True) as f:
            block = b"<w:t>" + b"A" * (2**20 - 12) + b"</w:t>"
            for _ in range(bomb_mb):
                f.write(block)


class RayWorkerWatch(threading.Thread):
    """The largest RSS of any process whose command line starts with ``ray::`` (a Ray worker)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak_kb = 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        if not f.read(5).startswith(b"ray::"):
                            continue
                    with open(f"/proc/{pid}/statm") as f:
                        self.peak_kb = max(
                            self.peak_kb, int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
                        )
                except (OSError, ValueError, IndexError):
                    continue
            time.sleep(0.05)


def run_job(inputs: list[str], out: Path) -> tuple[list[dict], float, int]:
    import pyarrow.parquet as pq
    import ray

    from raychunk.config import build_run_config, load_config
    from raychunk.jobs.run import run

    cfg = build_run_config(
        load_config(),
        {"input": inputs, "output": str(out), "embedder.enabled": False, "output_files.overwrite": True},
    )
    watch = RayWorkerWatch()
    watch.start()
    t = time.perf_counter()
    run(cfg)
    elapsed = time.perf_counter() - t
    watch.stop.set()
    watch.join()
    ray.shutdown()
    columns = ["source", "status", "reason", "bytes", "peak_rss_mb", "parse_seconds", "chunks"]
    return pq.read_table(out / "documents", columns=columns).to_pylist(), elapsed, watch.peak_kb // 1024


def report(title: str, rows: list[dict], elapsed: float, worker_mb: int, limit_mb: int, top: int) -> None:
    rows = sorted(rows, key=lambda r: -(r["bytes"] or 0))
    measured = [r for r in rows if r["peak_rss_mb"]]
    print(f"\n## {title}: {len(rows)} documents in {elapsed:.1f} s")
    print(f"{'file':<44} {'status':<8} {'MB':>8} {'peak RSS MB':>12} {'x size':>8} {'parse s':>8}")
    for r in rows[:top]:
        mb = (r["bytes"] or 0) / 2**20
        peak = r["peak_rss_mb"]
        multiple = f"{peak / mb:.1f}" if peak and mb >= 1 else "-"
        print(
            f"{Path(r['source']).name[:44]:<44} {r['status']:<8} {mb:>8.2f} {peak or '-':>12} {multiple:>8} "
            f"{r['parse_seconds'] or 0:>8.2f}"
        )
        if r["status"] != "ok":
            print(f"{'':<8}{r['reason'][:110]}")
    if measured:
        worst = max(measured, key=lambda r: r["peak_rss_mb"])
        print(
            f"largest document process peak: {worst['peak_rss_mb']} MB ({Path(worst['source']).name}); "
            f"limit {limit_mb} MB; over the limit: {sum(r['peak_rss_mb'] > limit_mb for r in measured)}"
        )
    print(f"largest Ray worker process RSS (sampled every 50 ms): {worker_mb} MB")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus"))
    ap.add_argument("--no-worst", action="store_true")
    ap.add_argument("--line-mb", type=int, default=20)
    ap.add_argument("--pages", type=int, default=5000)
    ap.add_argument("--bomb-mb", type=int, default=300)
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args(argv)

    from raychunk.isolate import Limits

    limit = Limits().doc_memory_mb
    print(
        f"machine: {os.cpu_count()} CPUs, {os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.0f} GiB"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if not args.no_worst:
            worst = tmp / "worst"
            worst.mkdir()
            make_worst_cases(worst, args.line_mb, args.pages, args.bomb_mb)
            rows, elapsed, worker = run_job([str(worst)], tmp / "out-worst")
            report("generated worst cases", rows, elapsed, worker, limit, args.top)
        if Path(args.corpus).is_dir():
            rows, elapsed, worker = run_job([args.corpus], tmp / "out-corpus")
            report(f"corpus {args.corpus}", rows, elapsed, worker, limit, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
