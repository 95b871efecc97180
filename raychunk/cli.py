"""The ``raychunk`` command line: argument parsing only. Each command calls its job in ``raychunk.jobs``."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from raychunk.chunking.model import STRATEGIES
from raychunk.config import SAMPLE_CORPUS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="raychunk", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log the parsers' warnings and failures")
    # -v also after the subcommand (`raychunk parse FILE -v`); SUPPRESS keeps a top-level -v.
    verbose = argparse.ArgumentParser(add_help=False)
    verbose.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("parse", parents=[verbose], help="print the block stream a document parses into")
    p.add_argument("inputs", nargs="*", help="files, folders or globs (default: the shipped sample corpus)")
    p.add_argument("--json", action="store_true", help="one JSON object per line: documents and blocks")
    p.add_argument("--width", type=int, default=60, help="characters of block text to show (default 60)")
    p.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    p.add_argument(
        "--pdf-tables",
        choices=("auto", "always", "never"),
        help="when to run pymupdf's table finder (config default: auto, pages that look tabular)",
    )
    p.add_argument(
        "--timeout", type=float, help="seconds allowed to parse one file (limits.doc_timeout_s, default 300)"
    )
    p.set_defaults(func=cmd_parse)

    r = sub.add_parser(
        "run",
        parents=[verbose],
        help="the Ray Data job: parse, classify, chunk, embed, write Parquet and a report",
    )
    add_run_flags(r)
    r.set_defaults(func=cmd_run)

    pr = sub.add_parser(
        "price",
        parents=[verbose],
        help="price index builds: chunks, vectors and storage per size x overlap setting",
    )
    add_grid_flags(pr, sizes="128,256,512", overlaps="0,0.1,0.2", strategies="structure")
    pr.add_argument("--output", default="out/price", help="where report.json/.csv/.md and chart.png go")
    pr.add_argument("--dim", type=int, help="vector dimension (default: the embedder's)")
    pr.add_argument("--sample", type=float, default=1.0, help="price a hash-based sample of the documents")
    pr.add_argument("--previous", help="an earlier run's output: report unchanged/new/removed chunks")
    pr.add_argument("--tokens-per-second", type=float, help="embedding throughput of your hardware")
    pr.add_argument("--no-measure", action="store_true", help="don't measure embedding throughput here")
    pr.add_argument("--gpu-hour-usd", type=float, help="GPU price per hour, for the embedding cost")
    pr.add_argument("--storage-gb-month-usd", type=float, help="storage price per GB-month")
    pr.add_argument("--api-usd-per-1m-tokens", type=float, help="embedding API price per 1M tokens")
    pr.add_argument("--no-chart", action="store_true", help="skip chart.png")
    pr.set_defaults(func=cmd_price)

    ev = sub.add_parser(
        "eval",
        parents=[verbose],
        help="retrieval recall per chunking setting on labelled questions, with a recommendation",
    )
    add_grid_flags(ev, sizes="128,256", overlaps="0,0.1", strategies="structure,fixed,unstructured_by_title")
    ev.add_argument(
        "--queries",
        help="labelled questions, JSONL: query, source, passages [{quote} / {span}] "
        "(default: evals/samples.jsonl, written for samples/)",
    )
    ev.add_argument("--output", default="out/eval", help="where report.json, report.md and plot.png go")
    ev.add_argument("--no-profile", action="store_true", help="leave out the per-type profile row")
    ev.add_argument("--k", type=int, default=5, help="results retrieved per question (default 5)")
    ev.add_argument(
        "--parent-budget", type=int, default=512, help="small-to-big: at most this many tokens per hit"
    )
    ev.add_argument(
        "--read-budget",
        type=int,
        default=1000,
        help="report recall within this many tokens read from the ranked results (default 1000)",
    )
    ev.add_argument(
        "--read-depth",
        type=int,
        default=20,
        help="results retrieved per question for the reading budget, past --k (default 20)",
    )
    ev.add_argument(
        "--skip-unlocated",
        action="store_true",
        help="leave out the questions whose passages are not found in the parsed text, and list them "
        "in the report, instead of failing before any chunking",
    )
    ev.add_argument(
        "--compare",
        nargs=2,
        action="append",
        metavar=("A", "B"),
        help="report the paired difference A - B of hit@k and recall@k, overall and per tag (repeatable; "
        "default: each 'structure X' against 'fixed X')",
    )
    ev.add_argument(
        "--cache",
        metavar="DIR",
        help="keep the chunk vectors in DIR and reuse them in later evals (each distinct text is "
        "embedded once across the settings of a run in any case)",
    )
    ev.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    ev.add_argument("--no-plot", action="store_true", help="skip plot.png")
    ev.set_defaults(func=cmd_eval)

    tu = sub.add_parser(
        "tune",
        parents=[verbose],
        help="search each document type's chunk profile on labelled questions; write a doc-types file",
    )
    tu.add_argument("--input", required=True, help="the folder the labelled questions' sources are under")
    tu.add_argument("--queries", required=True, help="labelled questions, JSONL, as for eval")
    tu.add_argument("--doc-types", help="the doc-types file to start from (default: configs/doc_types.yaml)")
    tu.add_argument("--output", default="out/tune/doc_types.yaml", help="the doc-types file to write")
    tu.add_argument("--cache", metavar="DIR", help="embedding (and parse) cache, shared with eval --cache")
    tu.add_argument("--holdout", type=float, default=0.5, help="share of questions held out (default 0.5)")
    tu.add_argument(
        "--min-questions", type=int, default=20, help="tuning questions a type needs (default 20)"
    )
    tu.add_argument("--k", type=int, default=5, help="results retrieved per question (default 5)")
    tu.add_argument("--types", help="tune only these doc types, comma-separated")
    tu.add_argument(
        "--margin",
        type=float,
        default=0.02,
        help="a smaller index is kept within noise if it loses at most this much hit@k (default 0.02)",
    )
    tu.set_defaults(func=cmd_tune)

    se = sub.add_parser(
        "search",
        parents=[verbose],
        help="ask an output a question: its k nearest chunks, as the retriever sees them",
    )
    se.add_argument(
        "output", help="a `raychunk run` output (folder or URI), or a LanceDB folder it was exported to"
    )
    se.add_argument("query", help="the question, embedded with the output's embedder")
    se.add_argument("--k", type=int, default=5, help="hits to show (default 5)")
    se.add_argument("--json", action="store_true", help="one JSON object per hit")
    se.add_argument("--table", help="with a LanceDB folder: the table (default: chunks)")
    se.set_defaults(func=cmd_search)

    ex = sub.add_parser(
        "export",
        parents=[verbose],
        help="write an output's chunks and vectors into a vector store, or apply its delta",
    )
    ex.add_argument("output", help="a `raychunk run` output (folder or URI)")
    ex.add_argument("--lancedb", required=True, metavar="DIR", help="the LanceDB database folder (or URI)")
    ex.add_argument("--table", default="chunks", help="the table (default: chunks)")
    ex.add_argument(
        "--index-min-rows",
        type=int,
        help="build the vector index once the table has this many rows (default 100,000)",
    )
    ex.set_defaults(func=cmd_export)

    c = sub.add_parser("chunk", parents=[verbose], help="print the chunks exactly as the retriever sees them")
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
    from raychunk.progress import NativeNoise

    ray_was_up = _ray_up()
    try:
        with NativeNoise():
            return args.func(args)
    except (FileNotFoundError, ValueError) as e:
        print(f"raychunk: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    finally:
        if not ray_was_up and _ray_up():
            from raychunk.pipeline import stop_local_ray

            stop_local_ray()  # the Ray this command started, stopped before the interpreter's exit


def _ray_up() -> bool:
    ray = sys.modules.get("ray")
    return ray is not None and ray.is_initialized()


def add_corpus_flags(p: argparse.ArgumentParser) -> None:
    """What every corpus job reads: its inputs, and what under them it leaves out."""
    p.add_argument(
        "--input", nargs="+", help="folders, files, globs or s3:// / gs:// URIs (default: samples/)"
    )
    p.add_argument(
        "--exclude",
        action="append",
        metavar="PATTERN",
        help="files or folders under the inputs not to read, as .gitignore names them (repeatable): "
        "'*.css', 'node_modules/', 'docs/build/**'; each is a `skipped` documents row",
    )


def add_grid_flags(p: argparse.ArgumentParser, *, sizes: str, overlaps: str, strategies: str) -> None:
    """Flags shared by the grid jobs (price, eval): the corpus, the settings, the embedder, the index."""
    p.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    add_corpus_flags(p)
    p.add_argument("--sizes", default=sizes, help=f"max_tokens values, comma-separated (default {sizes})")
    p.add_argument("--overlaps", default=overlaps, help="overlaps: fractions (<1) or tokens (>=1)")
    p.add_argument(
        "--strategies",
        default=strategies,
        help="chunking strategies, comma-separated (fixed and unstructured_by_title are the baselines; "
        "langchain_markdown and chonkie_recursive run those libraries, pip install 'raychunk[peers]')",
    )
    p.add_argument(
        "--table-max-tokens",
        type=int,
        help="the table cap of the grid's structure settings (default: max_tokens): a bigger table is split by rows",
    )
    p.add_argument(
        "--embedder", help="sentence-transformers model name or folder (default: all-MiniLM-L6-v2)"
    )
    p.add_argument("--dtype", choices=("float32", "float16", "int8", "binary"), default="float32")
    p.add_argument("--index", default="flat", help="flat or hnsw[:M=16]")
    p.add_argument("--num-cpus", type=int, help="CPUs of the local Ray (ignored when joining a cluster)")
    p.add_argument("--doc-types", help="doc types YAML (default: configs/doc_types.yaml)")
    p.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="any config key, e.g. limits.doc_timeout_s=60"
    )


def add_run_flags(p: argparse.ArgumentParser) -> None:
    """Flags of the run job; every config key is also reachable with --set SECTION.KEY=VALUE."""
    p.add_argument("--config", help="YAML config (default: configs/default.yaml)")
    add_corpus_flags(p)
    p.add_argument("--output", help="output folder or URI (default: out/run)")
    p.add_argument("--overwrite", action="store_true", default=None, help="replace an existing output")
    p.add_argument(
        "--resume",
        action="store_true",
        default=None,
        help="continue an interrupted run into the same --output: keep what it wrote, do the rest",
    )
    p.add_argument(
        "--previous",
        metavar="OUTPUT",
        help="an earlier run's output (folder or URI): its unchanged documents and vectors are reused, only "
        "new chunks are embedded, and delta/added + delta/removed are written for vector-store upserts",
    )
    p.add_argument(
        "--force-reuse",
        action="store_true",
        default=None,
        help="with --previous: reuse vectors by chunk id though the chunk settings changed (never across "
        "embedder changes)",
    )
    p.add_argument(
        "--follow-symlinks",
        action="store_true",
        default=None,
        help="read symlinks that lead out of an input folder (default: a `skipped` documents row)",
    )
    p.add_argument(
        "--embedder", help="sentence-transformers model name or folder (default: all-MiniLM-L6-v2)"
    )
    p.add_argument("--no-embed", action="store_true", help="chunk only: no embedding column, no model load")
    p.add_argument("--batch-size", type=int, help="texts per embedding forward pass")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), help="embedding device (default auto)")
    p.add_argument(
        "--backend",
        choices=("torch", "onnx", "onnx-int8"),
        help="embedding runtime (default torch; onnx ones run on CPU, int8 faster with approximate vectors)",
    )
    p.add_argument(
        "--embed-actors",
        type=int,
        help="a fixed embedding actor pool size (default: derived from the cluster)",
    )
    p.add_argument(
        "--embed-actors-max",
        type=int,
        help="how far a GPU pool may grow as nodes join (default: the autoscaler's GPUs, else those present)",
    )
    p.add_argument(
        "--gpus-per-actor", type=float, help="GPUs per embedding actor (default: 1 if the cluster has GPUs)"
    )
    p.add_argument("--num-cpus", type=int, help="CPUs of the local Ray (ignored when joining a cluster)")
    p.add_argument("--num-gpus", type=int, help="GPUs the local Ray advertises")
    p.add_argument("--rows-per-shard", type=int, help="chunk rows per Parquet shard")
    p.add_argument("--doc-types", help="doc types YAML (default: configs/doc_types.yaml)")
    p.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="any config key, e.g. limits.doc_timeout_s=60"
    )


# Flags that set a config key, by argparse dest. `price` and `eval` take only the first five; their
# --output names the report folder, not the run's output.
_CONFIG_FLAGS = {
    "input": "input",
    "exclude": "exclude",
    "embedder": "embedder.model",
    "num_cpus": "resources.num_cpus",
    "doc_types": "chunk.doc_types",
    "output": "output",
    "overwrite": "output_files.overwrite",
    "resume": "output_files.resume",
    "follow_symlinks": "limits.follow_symlinks",
    "previous": "incremental.previous",
    "force_reuse": "incremental.force_reuse",
    "batch_size": "embedder.batch_size",
    "device": "embedder.device",
    "backend": "embedder.backend",
    "embed_actors": "resources.embed_actors",
    "embed_actors_max": "resources.embed_actors_max",
    "gpus_per_actor": "resources.gpus_per_embed_actor",
    "num_gpus": "resources.num_gpus",
    "rows_per_shard": "output_files.rows_per_shard",
}
_GRID_JOB_FLAGS = ("input", "exclude", "embedder", "num_cpus", "doc_types")


def _config_from(args, flags=tuple(_CONFIG_FLAGS)):
    """The run config: the YAML (--config), then --set KEY=VALUE, then the named flags given."""
    import dataclasses

    from raychunk.config import build_run_config, load_config, parse_set_flags

    overrides = parse_set_flags(args.set)
    overrides.update({_CONFIG_FLAGS[f]: getattr(args, f) for f in flags if getattr(args, f) is not None})
    if getattr(args, "no_embed", False):
        overrides["embedder.enabled"] = False
    cfg = build_run_config(load_config(args.config), overrides)
    if cfg.input == ("samples",) and not Path("samples").exists():
        cfg = dataclasses.replace(cfg, input=(str(SAMPLE_CORPUS),))
    return cfg


def cmd_run(args) -> int:
    from raychunk.jobs.run import run_job
    from raychunk.report import render_run_text

    print(render_run_text(run_job(_config_from(args))))
    return 0


def _numbers(text: str, name: str, cast) -> list:
    try:
        values = [cast(x) for x in text.split(",") if x.strip()]
    except ValueError as e:
        raise ValueError(f"--{name} {text!r}: expected comma-separated numbers") from e
    if not values:
        raise ValueError(f"--{name} is empty")
    return values


def _settings(args, *, profile: bool) -> list:
    from raychunk.pricing import Setting, grid

    strategies = [x.strip() for x in args.strategies.split(",") if x.strip()]
    return ([Setting("per-type profile")] if profile else []) + grid(
        _numbers(args.sizes, "sizes", int),
        _numbers(args.overlaps, "overlaps", float),
        strategies,
        table_max_tokens=args.table_max_tokens,
    )


def cmd_price(args) -> int:
    from raychunk.jobs.price import PriceOptions, price_job
    from raychunk.pricing import IndexSpec
    from raychunk.report import render_price_text

    cfg = _config_from(args, _GRID_JOB_FLAGS)
    opts = PriceOptions(
        output=args.output,
        dim=args.dim,
        dtype=args.dtype,
        index=IndexSpec.parse(args.index),
        sample=args.sample,
        previous=args.previous,
        tokens_per_second=args.tokens_per_second,
        measure_throughput=not args.no_measure,
        gpu_hour_usd=args.gpu_hour_usd,
        storage_gb_month_usd=args.storage_gb_month_usd,
        api_usd_per_1m_tokens=args.api_usd_per_1m_tokens,
        chart=not args.no_chart,
    )
    report = price_job(cfg, _settings(args, profile=True), opts)
    print(render_price_text(report))
    print(f"\nwrote {args.output}: {', '.join(report.written)}", file=sys.stderr)
    return 0


def cmd_eval(args) -> int:
    from raychunk.evaluation import load_queries
    from raychunk.jobs.eval import eval_job
    from raychunk.pricing import IndexSpec
    from raychunk.report import render_eval_text

    cfg = _config_from(args, _GRID_JOB_FLAGS)
    queries_path = args.queries
    if queries_path is None:
        queries_path = SAMPLE_CORPUS.parent / "evals" / "samples.jsonl"
        if cfg.input not in (("samples",), (str(SAMPLE_CORPUS),)):
            raise ValueError("--queries is required when --input is not the sample corpus")
    report = eval_job(
        cfg,
        _settings(args, profile=not args.no_profile),
        load_queries(queries_path),
        k=args.k,
        parent_budget=args.parent_budget,
        read_budget=args.read_budget,
        depth=args.read_depth,
        skip_unlocated=args.skip_unlocated,
        compare=[tuple(pair) for pair in args.compare] if args.compare else None,
        output=args.output,
        dtype=args.dtype,
        index=IndexSpec.parse(args.index),
        plot=not args.no_plot,
        seed=args.seed,
        cache=args.cache,
    )
    print(render_eval_text(report))
    print(f"\nwrote {', '.join(report.written)}", file=sys.stderr)
    return 0


def cmd_tune(args) -> int:
    from raychunk.jobs.tune import run_tune

    if not 0 <= args.holdout < 1:
        raise ValueError(f"--holdout must be in [0, 1), got {args.holdout}")
    run_tune(
        args.input,
        args.queries,
        doc_types=args.doc_types,
        output=args.output,
        cache=args.cache,
        holdout=args.holdout,
        min_questions=args.min_questions,
        k=args.k,
        only=args.types.split(",") if args.types else None,
        margin=args.margin,
    )
    return 0


def cmd_search(args) -> int:
    from raychunk.jobs.search import print_hits, search

    print_hits(search(args.output, args.query, k=args.k, table=args.table), as_json=args.json)
    return 0


def cmd_export(args) -> int:
    from raychunk.destinations.lancedb import LanceDBTable
    from raychunk.jobs.export import export, render_export_text

    report = export(args.output, LanceDBTable(args.lancedb, args.table), index_min_rows=args.index_min_rows)
    print(render_export_text(report))
    return 0


def cmd_parse(args) -> int:
    from raychunk.config import build_run_config, load_config
    from raychunk.jobs.preview import preview_parse

    cfg = build_run_config(
        load_config(args.config), {"parse.pdf_tables": args.pdf_tables, "limits.doc_timeout_s": args.timeout}
    )
    preview_parse(
        args.inputs or [str(SAMPLE_CORPUS)], cfg.parse, cfg.limits, as_json=args.json, width=args.width
    )
    return 0


def cmd_chunk(args) -> int:
    from raychunk.config import build_run_config, load_config, load_doc_types
    from raychunk.jobs.preview import preview_chunks
    from raychunk.tokens import DEFAULT_TOKENIZER, load_counter

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
    cfg = build_run_config(load_config(args.config))
    preview_chunks(
        args.inputs or [str(SAMPLE_CORPUS)],
        cfg.parse,
        load_doc_types(args.doc_types),
        load_counter(args.tokenizer or DEFAULT_TOKENIZER),
        cfg.limits,
        changes=changes,
        doc_type=args.doc_type,
        as_json=args.json,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
