"""The cluster plan: time and node-hours for 1M documents and for 1 TB on cluster.yaml's cluster.

    python scripts/plan_cluster.py                  # print the plan (markdown)
    python scripts/plan_cluster.py --write-readme   # rewrite README.md between the plan markers
    python scripts/plan_cluster.py --check          # exit 1 when README.md's plan is not this one

A projection from per-core rates measured by ``benchmarks/stage_rates.py`` (its JSON, committed)
and the node types and limits of ``cluster.yaml``; the arithmetic is ``raychunk.projection``. The
two corpora are shaped like the sample that stage_rates.py measured (type mix, bytes per document,
pages and tokens per byte). To put a measured GPU figure in: run ``scripts/gpu_check.sh`` and a
``raychunk run --device cuda`` on a GPU machine (``benchmarks/gpu_h200/`` holds the last such run),
then ``python benchmarks/stage_rates.py --gpu-only --gpu-json out/gpu_check/gpu_embed.json
--gpu-run-log RUN.txt`` and ``--write-readme`` here.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from raychunk.projection import (  # noqa: E402
    ClusterShape,
    Projection,
    StageRates,
    corpus_from_profile,
    format_count,
    format_duration,
    project,
)

RATES = ROOT / "benchmarks" / "stage_rates.json"
CLUSTER = ROOT / "cluster.yaml"
README = ROOT / "README.md"
START, END = "<!-- plan:start -->", "<!-- plan:end -->"
DOCUMENTS, BYTES = 1_000_000, 1e12


def plans(rates_doc: dict, shape: ClusterShape) -> list[tuple[str, Projection]]:
    rates = StageRates.from_dict(rates_doc["rates"])
    profile = rates_doc["corpus_profile"]
    source = f"{_sample_name(rates_doc)}/{{md,html,txt,pdf}} as benchmarks/stage_rates.py measured it"
    by_docs = corpus_from_profile(profile, label="1M documents", documents=DOCUMENTS, source=source)
    by_bytes = corpus_from_profile(profile, label="1 TB", total_bytes=BYTES, source=source)
    return [(c.label, project(c, rates, shape)) for c in (by_docs, by_bytes)]


def _sample_name(rates_doc: dict) -> str:
    src = rates_doc["rates"]["parse_mb_s"]["all"]["source"]
    return src.rsplit("the mix of ", 1)[-1]


def render(rates_doc: dict, shape: ClusterShape) -> str:
    """The plan as markdown: the README's section between the markers, and what the script prints."""
    rates = StageRates.from_dict(rates_doc["rates"])
    cases = plans(rates_doc, shape)
    first = cases[0][1]
    all_cpus, gpus = shape.totals(first.nodes)
    date = rates_doc["date"][:10]
    m = rates_doc["machine"]
    lines = [
        "A projection, not a measurement: `scripts/plan_cluster.py` computes it from the per-core rates "
        f"in `benchmarks/stage_rates.json` (measured {date} by `benchmarks/stage_rates.py`, one core of "
        f"this {m['cores']}-core {m['machine']} machine; the GPU figure as its line says) and the node "
        "types of `cluster.yaml`; "
        "`python scripts/plan_cluster.py --write-readme` rewrites this section and a test checks it.",
        "",
        f"The cluster at its autoscaling limit: {shape.describe(first.nodes)}, {all_cpus} CPUs and {gpus} GPUs. "
        f"Each GPU's embed actor takes one CPU; parse and chunk run on the other {first.cpus}.",
        "",
        "| | " + " | ".join(label for label, _ in cases) + " |",
        "|---|" + "---:|" * len(cases),
    ]

    def row(name: str, cells) -> None:
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    row("documents", (format_count(p.corpus.documents) for _, p in cases))
    row("source bytes", (_bytes(p.corpus.bytes) for _, p in cases))
    row("PDF pages", (format_count(p.corpus.pdf_pages or 0) for _, p in cases))
    row("MiniLM tokens to embed", (format_count(p.corpus.tokens) for _, p in cases))
    row("vectors", (format_count(p.corpus.vectors) for _, p in cases))
    for stage, what in (("parse", "parse"), ("chunk", "classify + chunk")):
        s = first.stage(stage)
        row(f"{what}, {s.workers} {s.unit}", (format_duration(p.stage(stage).seconds) for _, p in cases))
    e = first.stage("embed")
    row(f"embed, {e.workers} {e.unit}", (format_duration(p.embed_seconds) for _, p in cases))
    row(
        "**wall, stages streaming** (the longer of parse + chunk and embed)",
        (f"**{format_duration(p.wall_seconds)}**" for _, p in cases),
    )
    row("wall, one stage after another (upper bound)", (format_duration(p.serial_seconds) for _, p in cases))
    row(
        "bound by",
        (
            f"{p.bound} ({p.embed_seconds / p.cpu_seconds:.1f}× the CPU stages)"
            if p.bound == "embed"
            else f"{p.bound} ({p.cpu_seconds / p.embed_seconds:.1f}× embed)"
            for _, p in cases
        ),
    )
    by_name = {t.name: t for t in (shape.head, *shape.workers)}
    for name, count in first.nodes.items():
        if count:
            t = by_name[name]
            row(
                f"node-hours, {count} × {name} ({t.instance_type})",
                (f"{p.node_hours[name]:,.1f}" for _, p in cases),
            )
    row("node-hours, all", (f"{sum(p.node_hours.values()):,.1f}" for _, p in cases))

    r = rates
    lines += [
        "",
        "Inputs:",
        "",
        f"- corpus: {first.corpus.assumptions[0]}; the 1 TB column scales the same sample to 1 TB."
        + _not_ok(rates_doc["corpus_profile"]),
        "- parse, per core: "
        + ", ".join(f"{f} {r.parse_mb_s[f].value:.2f} MB/s" for f in r.parse_mb_s if f != "all")
        + f" (PDFs timed by pages: {r.pdf_pages_s.value:.0f} pages/s); mix {r.parse_mb_s['all'].value:.2f} MB/s. "
        f"Source: {r.parse_mb_s['all'].source.rsplit(':', 1)[0]}.",
        "- classify + chunk, per core, MB/s of source bytes (per-type profiles, MiniLM tokenizer): "
        + ", ".join(f"{f} {r.chunk_mb_s[f].value:.2f}" for f in r.chunk_mb_s if f != "all")
        + f"; mix {r.chunk_mb_s['all'].value:.2f} MB/s.",
        f"- embed, per GPU: {r.embed_tokens_s_gpu.value:,.0f} tokens/s: {r.embed_tokens_s_gpu.source}. "
        + (
            f"Our chunks average {first.corpus.tokens / first.corpus.vectors:.0f} tokens and run in fp16, which "
            "fills a GPU better than short sentences: until "
            "`benchmarks/gpu_embed.py` has run on a GPU, read the embed row as a cautious figure."
            if r.embed_tokens_s_gpu.source.startswith("published")
            else "The job's rate, not the benchmark's, since the job is what is projected. The actor's "
            "host side bounds it, not the GPU: the GPU's forward pass alone ran many times faster there. "
            "On a g5 the actor's one CPU does the same host work, so the figure is taken as-is for its "
            "A10G, which has a small part of an H200's fp16 matrix rate: to be measured on one."
        ),
        f"- embed, per CPU core: {r.embed_tokens_s_cpu.value:,.0f} tokens/s ({r.embed_tokens_s_cpu.source}); "
        "not used here (the cluster has GPUs). On this cluster one GPU does the work of "
        f"{r.embed_tokens_s_gpu.value / r.embed_tokens_s_cpu.value:,.0f} CPU cores.",
        "- model: parse and chunk share the CPUs (one task per document does both), embed runs on the "
        "GPUs, and Ray Data streams the two, so the wall time is about the longer one; node-hours are "
        "node count × that wall time, every node up from the start.",
        "- not included: Ray start-up and node boot, reading the input and writing Parquet, the "
        "per-document child process (about 1.1× a plain loop in `benchmarks/cpu_stage.py`), stragglers.",
    ]
    return "\n".join(_wrap(line) for line in lines) + "\n"


def _wrap(line: str, width: int = 100) -> str:
    """Prose and list items wrapped as the rest of the README is; table rows as they are. No
    continuation line may start like a list item or a heading (it would render as one)."""
    if line.startswith("|") or len(line) <= width:
        return line
    indent = "  " if line.startswith("- ") else ""
    for w in range(width, width - 20, -1):
        text = textwrap.fill(
            line, w, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
        )
        if not any(re.match(r"\s*([-*+#]\s|\d+[.)]\s)", rest) for rest in text.splitlines()[1:]):
            return text
    return line


def _not_ok(profile: dict) -> str:
    """The sample's documents that gave no chunks, by status (they stay in the mix as they are)."""
    why = {
        "no_text": "no text layer: measured before OCR was on; `raychunk price` measures a corpus's OCR time and adds it"
    }
    parts = [
        f"{n} of its {p['files']} {family} files are {status}"
        + (f" ({why[status]})" if status in why else "")
        for family, p in profile.items()
        for status, n in sorted(p.get("statuses", {}).items())
        if status != "ok"
    ]
    return f" In the sample, {'; '.join(parts)}." if parts else ""


def _bytes(n: float) -> str:
    n = round(n)
    for div, unit in ((1e12, "TB"), (1e9, "GB"), (1e6, "MB")):
        if n >= div:
            return f"{n / div:,.3g} {unit}"
    return f"{n:,.0f} B"


def load(rates_path: Path = RATES, cluster_path: Path = CLUSTER) -> tuple[dict, ClusterShape]:
    return json.loads(rates_path.read_text()), ClusterShape.from_yaml(cluster_path)


def readme_block(text: str) -> str:
    """What README.md holds between the plan markers."""
    if START not in text or END not in text:
        raise ValueError(f"README.md has no {START} ... {END} markers: add them where the plan goes")
    return text.split(START, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def with_block(text: str, block: str) -> str:
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    return f"{head}{START}\n{block}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", type=Path, default=RATES)
    ap.add_argument("--cluster", type=Path, default=CLUSTER)
    ap.add_argument("--readme", type=Path, default=README)
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--write-readme", action="store_true", help="rewrite the plan section of --readme")
    what.add_argument("--check", action="store_true", help="exit 1 when --readme's plan section differs")
    args = ap.parse_args(argv)
    block = render(*load(args.rates, args.cluster))
    if args.write_readme:
        text = args.readme.read_text()
        readme_block(text)  # the markers are there
        args.readme.write_text(with_block(text, block))
        print(f"wrote the plan into {args.readme}", file=sys.stderr)
    elif args.check:
        if readme_block(args.readme.read_text()) != block:
            print(
                f"{args.readme}: the plan section is stale; run scripts/plan_cluster.py --write-readme",
                file=sys.stderr,
            )
            return 1
    else:
        print(block, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
