"""The run job gives the same output however Ray spreads the work: 1 CPU, 2 CPUs, or 3 nodes.

Every chunk column (less the embedding: the job runs with embedding off) and every documents column
(less ``parse_seconds``) must be identical, read back with plain pyarrow and sorted by key. One file
per block, so the blocks really go to different tasks, workers and nodes.
"""

import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import ray

from raychunk.config import build_run_config, load_config

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"  # beside the repo
# A few small, varied real files: PDFs, markdown, HTML, text (one UTF-16), office documents.
CORPUS_FILES = [
    "pdf/google-doc-document.pdf",
    "pdf/layout-parser-paper-fast.pdf",
    "md/fastapi-tutorial-metadata.md",
    "md/otel-logs-data-model.md",
    "html/ideas-page.html",
    "html/readability-ietf-1.html",
    "txt/vostok1-en.txt",
    "txt/fake-text-utf-16.txt",
    "other/docx-tables.docx",
    "other/sample-presentation.pptx",
]
TIMING_COLUMNS = {"parse_seconds", "peak_rss_mb"}  # measurements, not results


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> list[str]:
    """The samples, plus (with the shared corpus beside the repo) a few corpus files and a
    byte-identical copy of a sample, so the duplicate path is covered too."""
    paths = [str(SAMPLES)]
    if CORPUS.is_dir():
        extra = tmp_path_factory.mktemp("corpus")
        for name in CORPUS_FILES:
            if (CORPUS / name).exists():
                shutil.copyfile(CORPUS / name, extra / Path(name).name)
        shutil.copyfile(SAMPLES / "billing-faq.txt", extra / "zz-copy-of-billing-faq.txt")
        paths.append(str(extra))
    return paths


def config(inputs, out: Path, num_cpus: int):
    return build_run_config(
        load_config(),
        {
            "input": inputs,
            "output": str(out),
            "embedder.enabled": False,
            "resources.num_cpus": num_cpus,
            "resources.files_per_block": 1,
        },
    )


def run_job(cfg) -> str:
    """Run the job; returns Ray Data's stats for it (which say how many nodes ran its tasks)."""
    from raychunk.jobs import run as run_module

    seen = []
    real = run_module._stage_stats

    def keep(ds):
        seen.append(real(ds))
        return seen[-1]

    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("RAY_ADDRESS", raising=False)  # a local run must start its own Ray
        mp.setattr(run_module, "_stage_stats", keep)
        run_module.run(cfg)
    return seen[0]


def read(out: Path) -> tuple[pa.Table, pa.Table]:
    chunks = pq.read_table(out / "chunks")
    docs = pq.read_table(out / "documents")
    assert "embedding" not in chunks.schema.names
    chunks = chunks.sort_by([("chunk_id", "ascending")])
    docs = docs.select([c for c in docs.schema.names if c not in TIMING_COLUMNS])
    return chunks, docs.sort_by([("source", "ascending")])


def _short(value, width: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def assert_same(expected: pa.Table, actual: pa.Table, key: str, what: str) -> None:
    """Exact equality, or a message naming the first differing key and column."""
    if expected.equals(actual):
        return
    assert expected.schema.names == actual.schema.names, f"{what}: columns differ"
    assert expected.schema.equals(actual.schema, check_metadata=False), (
        f"{what}: schemas differ:\n{expected.schema}\nvs\n{actual.schema}"
    )
    keys_a, keys_b = expected.column(key).to_pylist(), actual.column(key).to_pylist()
    assert len(set(keys_a)) == len(keys_a) and len(set(keys_b)) == len(keys_b), f"{what}: repeated {key}"
    missing, extra = sorted(set(keys_a) - set(keys_b)), sorted(set(keys_b) - set(keys_a))
    assert not missing and not extra, (
        f"{what}: {expected.num_rows} vs {actual.num_rows} rows; {len(missing)} {key}s missing "
        f"(first {_short(missing[:3])}), {len(extra)} extra (first {_short(extra[:3])})"
    )
    rows_a, rows_b = expected.to_pylist(), actual.to_pylist()
    for row_a, row_b in zip(rows_a, rows_b):
        for col in expected.schema.names:
            if row_a[col] != row_b[col]:
                n = sum(a != b for a, b in zip(rows_a, rows_b))
                pytest.fail(
                    f"{what}: {n} of {len(rows_a)} rows differ; first at {key}={row_a[key]!r} "
                    f"(source {row_a.get('source')!r}), column {col!r}:\n"
                    f"  expected {_short(row_a[col])}\n  actual   {_short(row_b[col])}"
                )
    pytest.fail(f"{what}: tables differ but no row does (chunk layout or types?)")


def nodes_used(stats: str) -> int:
    """The most nodes any Ray Data operator ran its tasks on."""
    return max((int(n) for n in re.findall(r"; (\d+) nodes used", stats)), default=0)


@pytest.fixture(scope="module")
def baseline(inputs, tmp_path_factory):
    """The reference output: a local Ray with one CPU, so every task runs one after another."""
    out = tmp_path_factory.mktemp("determinism") / "cpu1"
    ray.shutdown()
    try:
        run_job(config(inputs, out, num_cpus=1))
    finally:
        ray.shutdown()
    chunks, docs = read(out)
    assert chunks.num_rows > docs.num_rows > 0
    assert len(set(chunks.column("chunk_id").to_pylist())) == chunks.num_rows
    statuses = set(docs.column("status").to_pylist())
    assert "ok" in statuses and "failed" not in statuses, statuses
    if len(inputs) > 1:
        assert "duplicate" in statuses
    return chunks, docs


def check_matches(baseline, out: Path) -> None:
    chunks, docs = read(out)
    assert_same(baseline[1], docs, "source", "documents")
    assert_same(baseline[0], chunks, "chunk_id", "chunks")


def test_two_cpus_give_the_same_output_as_one(baseline, inputs, tmp_path, fresh_ray):
    run_job(config(inputs, tmp_path / "cpu2", num_cpus=2))
    check_matches(baseline, tmp_path / "cpu2")


def test_a_three_node_cluster_gives_the_same_output_as_one_cpu(baseline, inputs, tmp_path, fresh_ray):
    from ray.cluster_utils import Cluster

    cfg = config(inputs, tmp_path / "cluster", num_cpus=1)  # num_cpus is ignored on an existing Ray
    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False}
    )  # the head only drives
    try:
        cluster.add_node(num_cpus=1)
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address)  # run()'s init_ray keeps this connection
        assert len([n for n in ray.nodes() if n["Alive"]]) == 3
        stats = run_job(cfg)
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert nodes_used(stats) >= 2, f"the work never left one node:\n{stats}"
    check_matches(baseline, tmp_path / "cluster")
