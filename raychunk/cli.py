"""The ``raychunk`` command line. Argument parsing and printing only; the work lives in the stages."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path

STRATEGIES = ("structure", "records", "fixed", "code", "unstructured_by_title")
SAMPLE_CORPUS = Path(__file__).resolve().parent.parent / "samples"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="raychunk", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log warnings from the parsers")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("parse", help="print the block stream a document parses into")
    p.add_argument("inputs", nargs="*", help="files, folders or globs (default: the shipped sample corpus)")
    p.add_argument("--json", action="store_true", help="one JSON object per line: documents and blocks")
    p.add_argument("--width", type=int, default=60, help="characters of block text to show (default 60)")
    p.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    p.add_argument(
        "--pdf-tables",
        choices=("auto", "always", "never"),
        help="when to run pymupdf's table finder (config default: auto, pages that look tabular)",
    )
    p.add_argument("--timeout", type=float, help="seconds allowed to parse one file (config default: 300)")
    p.set_defaults(func=cmd_parse)

    r = sub.add_parser(
        "run", help="the Ray Data job: parse, classify, chunk, embed, write Parquet and a report"
    )
    add_run_flags(r)
    r.set_defaults(func=cmd_run)

    pr = sub.add_parser(
        "price", help="price index builds: chunks, vectors and storage per size x overlap setting"
    )
    pr.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    pr.add_argument(
        "--input", nargs="+", help="folders, files, globs or s3:// / gs:// URIs (default: samples/)"
    )
    pr.add_argument("--output", default="out/price", help="where report.json/.csv/.md and chart.png go")
    pr.add_argument("--sizes", default="128,256,512", help="max_tokens values, comma-separated")
    pr.add_argument("--overlaps", default="0,0.1,0.2", help="overlaps: fractions (<1) or tokens (>=1)")
    pr.add_argument("--strategies", default="structure", help="chunking strategies, comma-separated")
    pr.add_argument("--embedder", help="model whose tokenizer counts tokens and whose speed is measured")
    pr.add_argument("--dim", type=int, help="vector dimension (default: the embedder's)")
    pr.add_argument("--dtype", choices=("float32", "float16", "int8", "binary"), default="float32")
    pr.add_argument("--index", default="flat", help="flat or hnsw[:M=16]")
    pr.add_argument("--sample", type=float, default=1.0, help="price a hash-based sample of the documents")
    pr.add_argument("--previous", help="an earlier run's output: report unchanged/new/removed chunks")
    pr.add_argument("--tokens-per-second", type=float, help="embedding throughput of your hardware")
    pr.add_argument("--no-measure", action="store_true", help="don't measure embedding throughput here")
    pr.add_argument("--gpu-hour-usd", type=float, help="GPU price per hour, for the embedding cost")
    pr.add_argument("--storage-gb-month-usd", type=float, help="storage price per GB-month")
    pr.add_argument("--api-usd-per-1m-tokens", type=float, help="embedding API price per 1M tokens")
    pr.add_argument("--no-chart", action="store_true", help="skip chart.png")
    pr.add_argument("--num-cpus", type=int, help="CPUs of the local Ray (ignored when joining a cluster)")
    pr.add_argument("--doc-types", help="doc types YAML (default: configs/doc_types.yaml)")
    pr.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="any config key, e.g. parse.timeout_s=60"
    )
    pr.set_defaults(func=cmd_price)

    ev = sub.add_parser(
        "eval", help="retrieval recall per chunking setting on labelled questions, with a recommendation"
    )
    ev.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    ev.add_argument(
        "--input", nargs="+", help="folders, files, globs or s3:// / gs:// URIs (default: samples/)"
    )
    ev.add_argument(
        "--queries",
        help="labelled questions, JSONL: query, source, passages [{quote} / {span}] "
        "(default: evals/samples.jsonl, written for samples/)",
    )
    ev.add_argument("--output", default="out/eval", help="where report.json, report.md and plot.png go")
    ev.add_argument("--sizes", default="128,256", help="max_tokens values, comma-separated")
    ev.add_argument("--overlaps", default="0,0.1", help="overlaps: fractions (<1) or tokens (>=1)")
    ev.add_argument(
        "--strategies",
        default="structure,fixed,unstructured_by_title",
        help="chunking strategies, comma-separated (fixed and unstructured_by_title are the baselines)",
    )
    ev.add_argument("--no-profile", action="store_true", help="leave out the per-type profile row")
    ev.add_argument("--k", type=int, default=5, help="results retrieved per question (default 5)")
    ev.add_argument(
        "--parent-budget", type=int, default=512, help="small-to-big: at most this many tokens per hit"
    )
    ev.add_argument(
        "--embedder", help="sentence-transformers model name or folder (default: all-MiniLM-L6-v2)"
    )
    ev.add_argument("--dtype", choices=("float32", "float16", "int8", "binary"), default="float32")
    ev.add_argument("--index", default="flat", help="flat or hnsw[:M=16], for the storage column")
    ev.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    ev.add_argument("--no-plot", action="store_true", help="skip plot.png")
    ev.add_argument("--num-cpus", type=int, help="CPUs of the local Ray (ignored when joining a cluster)")
    ev.add_argument("--doc-types", help="doc types YAML (default: configs/doc_types.yaml)")
    ev.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="any config key, e.g. embedder.batch_size=32"
    )
    ev.set_defaults(func=cmd_eval)

    c = sub.add_parser("chunk", help="print the chunks exactly as the retriever sees them")
    c.add_argument("inputs", nargs="*", help="files, folders or globs (default: the shipped sample corpus)")
    c.add_argument("--json", action="store_true", help="one JSON object per chunk")
    c.add_argument("--strategy", choices=STRATEGIES, help="override the document type's strategy")
    c.add_argument("--max-tokens", type=int, help="override the type's max_tokens")
    c.add_argument("--overlap", type=float, help="overlap: a fraction of max_tokens (<1) or tokens (>=1)")
    c.add_argument("--min-tokens", type=int, help="let sections under this join their next sibling")
    c.add_argument("--table-max-tokens", type=int, help="the table cap")
    c.add_argument("--doc-type", help="force a document type for every input")
    c.add_argument(
        "--tokenizer",
        default=None,
        help="all-MiniLM-L6-v2 (default), a model folder, tiktoken:cl100k_base, or words",
    )
    c.add_argument("--doc-types", help="doc types YAML (default: configs/doc_types.yaml)")
    c.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    c.set_defaults(func=cmd_chunk)

    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR, format="%(levelname)s %(message)s"
    )
    try:
        return args.func(args)
    except (FileNotFoundError, ValueError) as e:
        print(f"raychunk: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


def add_run_flags(p: argparse.ArgumentParser) -> None:
    """Flags of the run job; every config key is also reachable with --set SECTION.KEY=VALUE."""
    p.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    p.add_argument(
        "--input", nargs="+", help="folders, files, globs or s3:// / gs:// URIs (default: samples/)"
    )
    p.add_argument("--output", help="output folder or URI (default: out/run)")
    p.add_argument("--overwrite", action="store_true", default=None, help="replace an existing output")
    p.add_argument(
        "--embedder", help="sentence-transformers model name or folder (default: all-MiniLM-L6-v2)"
    )
    p.add_argument("--no-embed", action="store_true", help="chunk only: no embedding column, no model load")
    p.add_argument("--batch-size", type=int, help="texts per embedding forward pass")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), help="embedding device (default auto)")
    p.add_argument(
        "--embed-actors", type=int, help="embedding actor pool size (default: derived from the cluster)"
    )
    p.add_argument(
        "--gpus-per-actor", type=float, help="GPUs per embedding actor (default: 1 if the cluster has GPUs)"
    )
    p.add_argument("--num-cpus", type=int, help="CPUs of the local Ray (ignored when joining a cluster)")
    p.add_argument("--num-gpus", type=int, help="GPUs the local Ray advertises")
    p.add_argument("--rows-per-shard", type=int, help="chunk rows per Parquet shard")
    p.add_argument("--doc-types", help="doc types YAML (default: configs/doc_types.yaml)")
    p.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="any config key, e.g. parse.timeout_s=60"
    )


def _config_from(args, flags: dict):
    """The run config: the YAML (--config), then --set KEY=VALUE, then the named flags given."""
    import dataclasses

    from raychunk.config import build_run_config, load_config, parse_set_flags

    overrides = parse_set_flags(args.set)
    overrides.update({k: v for k, v in flags.items() if v is not None})
    cfg = build_run_config(load_config(args.config), overrides)
    if cfg.input == ("samples",) and not Path("samples").exists():
        cfg = dataclasses.replace(cfg, input=(str(SAMPLE_CORPUS),))
    return cfg


def run_config_from_args(args):
    return _config_from(
        args,
        {
            "input": args.input,
            "output": args.output,
            "output_files.overwrite": args.overwrite,
            "embedder.model": args.embedder,
            "embedder.enabled": False if args.no_embed else None,
            "embedder.batch_size": args.batch_size,
            "embedder.device": args.device,
            "resources.embed_actors": args.embed_actors,
            "resources.gpus_per_embed_actor": args.gpus_per_actor,
            "resources.num_cpus": args.num_cpus,
            "resources.num_gpus": args.num_gpus,
            "output_files.rows_per_shard": args.rows_per_shard,
            "chunk.doc_types": args.doc_types,
        },
    )


def cmd_run(args) -> int:
    from raychunk.pipeline import run
    from raychunk.report import render_run_text

    cfg = run_config_from_args(args)
    report = run(cfg)
    print(render_run_text(report))
    return 0


def _numbers(text: str, name: str, cast) -> list:
    try:
        values = [cast(x) for x in text.split(",") if x.strip()]
    except ValueError as e:
        raise ValueError(f"--{name} {text!r}: expected comma-separated numbers") from e
    if not values:
        raise ValueError(f"--{name} is empty")
    return values


def _grid_job_config(args):
    """The run config of `price` and `eval`, which take only a few of the job's flags."""
    return _config_from(
        args,
        {
            "input": args.input,
            "embedder.model": args.embedder,
            "resources.num_cpus": args.num_cpus,
            "chunk.doc_types": args.doc_types,
        },
    )


def cmd_price(args) -> int:
    import json as json_

    from raychunk.embed import embedding_dim, measure_throughput
    from raychunk.io import resolve_output
    from raychunk.pipeline import run_price
    from raychunk.pricing import IndexSpec, Rates, Setting, grid, summarize
    from raychunk.report import plot_price, render_price_markdown, render_price_text, write_price_csv

    cfg = _grid_job_config(args)
    index = IndexSpec.parse(args.index)
    if not 0 < args.sample <= 1:
        raise ValueError(f"--sample {args.sample}: expected a fraction in (0, 1]")
    strategies = [x.strip() for x in args.strategies.split(",") if x.strip()]
    settings = [Setting("per-type profile")] + grid(
        _numbers(args.sizes, "sizes", int), _numbers(args.overlaps, "overlaps", float), strategies
    )
    dim = args.dim or embedding_dim(cfg.embedder.model)
    previous = _previous_ids(args.previous) if args.previous else None
    rows, listing = run_price(cfg, settings, sample=args.sample, keep_ids=previous is not None)

    throughput = None
    tps = args.tokens_per_second
    if not tps and not args.no_measure:
        ok = [r for r in rows if r["setting"] == settings[0].label and r["chunks"]]
        mean = sum(r["tokens"] for r in ok) / max(1, sum(r["chunks"] for r in ok))
        throughput = measure_throughput(cfg.embedder.model, tokens_per_text=max(16, int(mean)))
        tps = throughput["tokens_per_second"]
    rates = Rates(args.gpu_hour_usd, args.storage_gb_month_usd, args.api_usd_per_1m_tokens, tps)
    report = summarize(
        rows,
        settings,
        dim=dim,
        dtype=args.dtype,
        index=index,
        corpus_files=listing["files"],
        corpus_bytes=listing["bytes"],
        sample=args.sample,
        rates=rates,
        previous=previous,
    )
    report["notes"] = _price_notes(report, index, throughput, rates, args, cfg, listing)
    report["throughput"] = throughput

    import tempfile

    out_fs, out_dir = resolve_output(args.output)
    out_fs.create_dir(out_dir, recursive=True)
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(tmp)
        (local / "report.json").write_text(json_.dumps(report, indent=2, ensure_ascii=False))
        (local / "report.md").write_text(render_price_markdown(report))
        write_price_csv(report, local / "report.csv")
        if not args.no_chart:
            plot_price(report, local / "chart.png")
        for f in sorted(local.iterdir()):  # the output may be an s3:// or gs:// folder
            with out_fs.open_output_stream(f"{out_dir}/{f.name}") as dst:
                dst.write(f.read_bytes())
    print(render_price_text(report))
    print(
        f"\nwrote {args.output}: report.json, report.csv, report.md"
        + ("" if args.no_chart else ", chart.png"),
        file=sys.stderr,
    )
    return 0


def _previous_ids(output: str) -> dict[str, int]:
    import pyarrow.parquet as pq

    from raychunk.io import resolve_output

    fs, path = resolve_output(output)
    try:
        table = pq.read_table(f"{path}/chunks", filesystem=fs, columns=["chunk_id", "n_tokens"])
    except (FileNotFoundError, OSError) as e:
        raise ValueError(f"--previous {output}: no chunks/ table there ({e})") from e
    return dict(zip(table.column("chunk_id").to_pylist(), table.column("n_tokens").to_pylist()))


def _price_notes(report, index, throughput, rates, args, cfg, listing) -> list[str]:
    from raychunk.pricing import vector_bytes

    notes = [
        f"Tokens are counted with {cfg.tokenizer_spec}'s tokenizer; each setting chunks the same parse.",
        "'per-type profile' applies configs/doc_types.yaml (what `raychunk run` builds); the other rows apply "
        "one strategy, size and overlap to every document.",
        f"Vector bytes = vectors x ceil(dim x bits / 8) = vectors x {vector_bytes(1, report['dim'], report['dtype']):.0f} B "
        f"({report['dtype']}, dim {report['dim']}).",
        "Index bytes: flat = the vectors."
        if index.kind == "flat"
        else f"Index bytes (HNSW, M={index.m}) = vectors + vectors x 4 B x (2M + M/(M-1)) graph links "
        f"= vectors + vectors x {4 * (2 * index.m + index.m / (index.m - 1)):.1f} B.",
        "Total = chunk text (UTF-8, stored beside each vector) + index bytes.",
        "hdr% and ovl% are the shares of embedded tokens spent on header lines and on overlap.",
        ">limit counts chunks longer than the embedder reads; the embedder would silently truncate them.",
    ]
    if report["estimate"]:
        notes.append(
            f"ESTIMATE: {listing['sampled_files']:,} of {listing['files']:,} files were parsed "
            f"(hash sample {args.sample:g}); totals are scaled by corpus bytes / sampled bytes, with 95% "
            "intervals from 1,000 bootstrap resamples of documents. File count and bytes come from the listing."
        )
    if throughput:
        notes.append(
            f"Embedding time uses {throughput['tokens_per_second']:,.0f} tokens/s measured here "
            f"({throughput['device']}, {throughput['texts']} texts of {throughput['tokens_per_text']} tokens)."
        )
    elif rates.tokens_per_second:
        notes.append(f"Embedding time uses the given {rates.tokens_per_second:,.0f} tokens/s.")
    if (
        rates.gpu_hour_usd is None
        and rates.api_usd_per_1m_tokens is None
        and rates.storage_gb_month_usd is None
    ):
        notes.append(
            "No prices were configured, so no money is shown (--gpu-hour-usd, --storage-gb-month-usd, "
            "--api-usd-per-1m-tokens)."
        )
    return notes


def cmd_eval(args) -> int:

    from raychunk.evaluate import load_queries
    from raychunk.jobs.eval import run_eval
    from raychunk.pricing import IndexSpec, Setting, grid
    from raychunk.report import render_eval_text

    cfg = _grid_job_config(args)
    queries_path = args.queries
    if queries_path is None:
        queries_path = SAMPLE_CORPUS.parent / "evals" / "samples.jsonl"
        if cfg.input not in (("samples",), (str(SAMPLE_CORPUS),)):
            raise ValueError("--queries is required when --input is not the sample corpus")
    queries = load_queries(queries_path)
    index = IndexSpec.parse(args.index)
    strategies = [x.strip() for x in args.strategies.split(",") if x.strip()]
    settings = ([] if args.no_profile else [Setting("per-type profile")]) + grid(
        _numbers(args.sizes, "sizes", int), _numbers(args.overlaps, "overlaps", float), strategies
    )
    report = run_eval(
        cfg,
        settings,
        queries,
        k=args.k,
        parent_budget=args.parent_budget,
        output=args.output,
        dtype=args.dtype,
        index=index,
        plot=not args.no_plot,
        seed=args.seed,
    )
    print(render_eval_text(report))
    print(f"\nwrote {', '.join(report['written'])}", file=sys.stderr)
    return 0


def cmd_parse(args) -> int:
    from raychunk.config import load_config, parse_options_from
    from raychunk.parse import iter_input_files, parse_path

    config = load_config(args.config)
    options = parse_options_from(config.get("parse"), pdf_tables=args.pdf_tables, timeout_s=args.timeout)
    inputs = args.inputs or [SAMPLE_CORPUS]
    statuses: Counter[str] = Counter()
    n_blocks = 0
    t0 = time.perf_counter()
    out = sys.stdout
    for path in iter_input_files(inputs):
        t = time.perf_counter()
        parsed = parse_path(path, options=options)
        elapsed = time.perf_counter() - t
        doc = parsed.document
        statuses[doc.status] += 1
        n_blocks += len(parsed.blocks)
        if args.json:
            out.write(
                json.dumps(
                    {
                        "type": "document",
                        **doc.to_dict(),
                        "blocks": len(parsed.blocks),
                        "seconds": round(elapsed, 3),
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
            for i, b in enumerate(parsed.blocks):
                out.write(
                    json.dumps(
                        {"type": "block", "doc_id": doc.doc_id, "index": i, **b.to_dict()}, ensure_ascii=False
                    )
                    + "\n"
                )
            continue
        _print_document(out, parsed, elapsed, args.width)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
    print(
        f"parsed {sum(statuses.values())} files into {n_blocks} blocks in {time.perf_counter() - t0:.1f} s: "
        f"{summary}",
        file=sys.stderr,
    )
    return 0


def cmd_chunk(args) -> int:
    import dataclasses

    from raychunk.chunking import chunk_document
    from raychunk.classify import DOC_TYPES, classify
    from raychunk.config import ConfigError, load_config, load_doc_types, parse_options_from
    from raychunk.parse import iter_input_files, parse_path
    from raychunk.tokens import DEFAULT_TOKENIZER, load_counter

    config = load_config(args.config)
    options = parse_options_from(config.get("parse"))
    types = load_doc_types(args.doc_types)
    if args.doc_type and args.doc_type not in DOC_TYPES:
        raise ConfigError(f"--doc-type {args.doc_type!r}: accepted values are {', '.join(DOC_TYPES)}")
    counter = load_counter(args.tokenizer or DEFAULT_TOKENIZER)
    changes = {
        k: v
        for k, v in (
            ("strategy", args.strategy),
            ("max_tokens", args.max_tokens),
            ("overlap", args.overlap),
            ("min_tokens", args.min_tokens),
            ("table_max_tokens", args.table_max_tokens),
        )
        if v is not None
    }
    out = sys.stdout
    totals: Counter[str] = Counter()
    for path in iter_input_files(args.inputs or [SAMPLE_CORPUS]):
        parsed = parse_path(path, options=options)
        doc = parsed.document
        if args.doc_type:
            doc_type, why = args.doc_type, "forced by --doc-type"
        else:
            cls = classify(parsed, types.thresholds, types.overrides)
            doc_type, why = cls.doc_type, cls.reason
        try:
            profile = dataclasses.replace(types.profiles[doc_type], **changes)
        except ValueError as e:
            raise ConfigError(str(e)) from e
        chunks = chunk_document(parsed, profile, counter, doc_type=doc_type)
        totals["documents"] += 1
        totals["chunks"] += len(chunks)
        totals["over_limit"] += sum(c.over_limit for c in chunks)
        if args.json:
            for ch in chunks:
                out.write(json.dumps(ch.to_dict(), ensure_ascii=False) + "\n")
            continue
        out.write(
            f"\n=== {doc.source}  [{doc.status}] type={doc_type} ({why})  {profile.label}  "
            f"{len(chunks)} chunks\n"
        )
        if doc.status != "ok":
            out.write(f"    {doc.reason}\n")
        for ch in chunks:
            facts = [f"#{ch.chunk_index}", f"{ch.n_tokens} tokens"]
            if ch.page_start:
                facts.append(
                    f"p{ch.page_start}" + (f"-{ch.page_end}" if ch.page_end != ch.page_start else "")
                )
            facts.append(",".join(ch.block_kinds))
            if ch.overlap_tokens:
                facts.append(f"overlap {ch.overlap_tokens}")
            if ch.table_part is not None:
                facts.append(f"table part {ch.table_part}")
            if ch.continuation:
                facts.append("continued")
            if ch.over_limit:
                facts.append(f"OVER EMBEDDER LIMIT ({counter.max_input}): would be truncated")
            out.write(f"--- {' · '.join(facts)} ---\n{ch.text}\n")
    print(
        f"chunked {totals['documents']} files into {totals['chunks']} chunks "
        f"({totals['over_limit']} over the embedder's input limit) with {counter.name}",
        file=sys.stderr,
    )
    return 0


def _print_document(out, parsed, elapsed: float, width: int) -> None:
    doc = parsed.document
    kinds = Counter(b.kind for b in parsed.blocks)
    facts = [doc.format, doc.status, f"{len(parsed.blocks)} blocks"]
    if doc.pages:
        facts.append(f"{doc.pages} pages")
    facts.append(f"{elapsed:.2f} s")
    out.write(f"\n== {doc.source}  [{' | '.join(facts)}]\n")
    if doc.title:
        out.write(f"   title: {doc.title}\n")
    if doc.reason:
        out.write(f"   reason: {doc.reason}\n")
    if kinds:
        out.write("   kinds: " + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) + "\n")
    for b in parsed.blocks:
        if b.kind == "heading":
            tag = f"h{b.level}"
        elif b.kind == "list_item":
            tag = f"li{b.level}"
        elif b.kind == "table":
            tag = f"{len(b.rows)}x{max((len(r) for r in b.rows), default=0)} hdr{b.header_rows}"
        elif b.kind == "code":
            tag = b.language or ""
        else:
            tag = ""
        page = "p" + "-".join(str(p) for p in (b.pages[0], b.pages[-1]) if True) if b.pages else ""
        if b.pages and b.pages[0] == b.pages[-1]:
            page = f"p{b.pages[0]}"
        path = " > ".join(b.heading_path)
        text = " ".join(b.text.split())
        if len(text) > width:
            text = text[: width - 1] + "…"
        indent = "  " * b.level if b.kind == "list_item" else ""
        out.write(
            f"   {b.kind:<10} {tag:<11} {page:<6} {b.char_start:>7}-{b.char_end:<7} "
            f"{_clip(path, 40):<40} {indent}{text}\n"
        )


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else "…" + s[-(n - 1) :]


if __name__ == "__main__":
    raise SystemExit(main())
