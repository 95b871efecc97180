"""The Ray Data job end to end on a real local Ray, read back with plain pyarrow."""

import dataclasses
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import ray

from raychunk.config import build_run_config, load_config
from raychunk.plan import resolve_plan
from raychunk.schema import DOCUMENT_SCHEMA, chunk_schema

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
N_SAMPLES = len([p for p in SAMPLES.iterdir() if p.is_file()])


def config(tmp_path, name="out", **overrides):
    return build_run_config(
        load_config(),
        {"input": [str(SAMPLES)], "output": str(tmp_path / name), "resources.num_cpus": 2, **overrides},
    )


def read(out: Path):
    return pq.read_table(out / "chunks"), pq.read_table(out / "documents")


def test_run_on_sample_corpus_then_again_with_identical_ids(tmp_path, fresh_ray):
    from raychunk.jobs.run import run

    report = run(config(tmp_path))
    out = tmp_path / "out"
    chunks, docs = read(out)

    assert chunks.schema.equals(chunk_schema(384), check_metadata=False)
    assert str(chunks.schema.field("embedding").type) == "fixed_size_list<element: float>[384]"
    assert docs.schema.equals(DOCUMENT_SCHEMA, check_metadata=False)

    assert docs.num_rows == N_SAMPLES
    assert sorted(Path(s).name for s in docs.column("source").to_pylist()) == sorted(
        p.name for p in SAMPLES.iterdir() if p.is_file()
    )
    assert set(docs.column("status").to_pylist()) == {"ok"}
    assert sum(docs.column("chunks").to_pylist()) == chunks.num_rows > N_SAMPLES
    for vec in chunks.column("embedding").to_pylist()[:50]:
        assert len(vec) == 384 and abs(sum(x * x for x in vec) - 1.0) < 1e-3  # normalized
    assert chunks.column("embedding").null_count == 0
    assert len(set(chunks.column("chunk_id").to_pylist())) == chunks.num_rows

    saved = json.loads((out / "report.json").read_text())
    assert saved["chunks"] == report["chunks"] == chunks.num_rows
    assert saved["vectors"] == chunks.num_rows
    assert saved["documents"]["by_status"] == {"ok": N_SAMPLES}
    assert saved["stages"], "per-stage times from Ray Data's stats"
    # the cluster plan's GPU rate reads a GPU run's report.json: here its actors held no GPU
    from raychunk.projection import gpu_rate_from_report

    assert gpu_rate_from_report(saved, "cpu run") is None
    on_gpu = {**saved, "embedder": {**saved["embedder"], "gpus_per_actor": 1.0}}
    embed_task_s = next(s["task_seconds"] for s in saved["stages"] if s["stage"] == "MapBatches(EmbedChunks)")
    assert gpu_rate_from_report(on_gpu, "x").value == round(saved["tokens_embedded"] / embed_task_s) > 0
    assert (out / "report.md").read_text().startswith("# raychunk run report")
    assert not (out / "_staging").exists()
    shards = list((out / "chunks").glob("*.parquet"))
    assert len(shards) == 1  # a small run is one shard, not a swarm of tiny files
    assert pq.ParquetFile(shards[0]).metadata.row_group(0).column(0).compression == "ZSTD"

    # Same input, second run: identical chunk ids.
    run(config(tmp_path, name="again", **{"embedder.enabled": False}))
    again, _ = read(tmp_path / "again")
    assert sorted(again.column("chunk_id").to_pylist()) == sorted(chunks.column("chunk_id").to_pylist())
    assert "embedding" not in again.schema.names


def test_existing_output_is_not_clobbered(tmp_path, fresh_ray):
    from raychunk.config import ConfigError
    from raychunk.jobs.run import run

    (tmp_path / "out" / "chunks").mkdir(parents=True)
    with pytest.raises(ConfigError, match="--overwrite"):
        run(config(tmp_path, **{"embedder.enabled": False}))


def test_bad_inputs_each_get_a_document_row(tmp_path, fresh_ray):
    from raychunk.jobs.run import run

    src = tmp_path / "in"
    src.mkdir()
    (src / "ok.md").write_text("# Title\n\nSome text.\n")
    (src / "empty.txt").write_bytes(b"")
    (src / "fake.pdf").write_text("<html><body>404 Not Found</body></html>")
    (src / "garbage.txt").write_bytes(bytes(range(256)) * 20)
    run(
        build_run_config(
            load_config(),
            {
                "input": [str(src)],
                "output": str(tmp_path / "out"),
                "resources.num_cpus": 2,
                "embedder.enabled": False,
            },
        )
    )
    named = {a["name"] for a in ray.util.list_named_actors(all_namespaces=True)}
    assert "ActorLocationTracker" not in named  # no actor pool without embedding: no tracker started
    docs = pq.read_table(tmp_path / "out" / "documents").to_pylist()
    status = {Path(d["source"]).name: (d["status"], d["reason"]) for d in docs}
    assert status["ok.md"][0] == "ok"
    assert status["empty.txt"] == ("empty", "zero-byte file")
    assert status["fake.pdf"][0] == "failed" and "HTML" in status["fake.pdf"][1]
    assert status["garbage.txt"][0] == "failed" and "binary" in status["garbage.txt"][1]


def test_embed_stage_on_a_fake_gpu_falls_back_to_cpu(tmp_path, fresh_ray):
    """A cluster that advertises a GPU without CUDA: the actor gets the GPU, torch runs on CPU."""
    from raychunk.jobs.run import run
    from raychunk.pipeline import plan_embedding

    cfg = config(tmp_path, **{"resources.num_gpus": 1, "input": [str(SAMPLES / "billing-faq.txt")]})
    ray.init(address="local", num_cpus=2, num_gpus=1, include_dashboard=False)
    plan = plan_embedding(resolve_plan(cfg), ray.cluster_resources())
    assert plan.gpus_per_actor == 1 and plan.actors == 1
    from raychunk.embed import EmbedChunks

    class Probe(EmbedChunks):
        def where(self):
            import torch

            return self.device, ray.get_gpu_ids(), torch.cuda.is_available()

    actor = ray.remote(num_gpus=1, num_cpus=1)(Probe).remote()
    assert ray.get(actor.where.remote()) == ("cpu", [0], False)
    ray.kill(actor)
    report = run(cfg)
    assert report["embedder"]["gpus_per_actor"] == 1
    chunks = pq.read_table(tmp_path / "out" / "chunks")
    assert chunks.num_rows == report["chunks"] > 0
    assert chunks.column("embedding").null_count == 0


def test_asking_for_a_missing_gpu_fails_fast_instead_of_hanging(tmp_path, fresh_ray):
    from raychunk.config import ConfigError
    from raychunk.pipeline import plan_embedding

    cfg = config(tmp_path, **{"resources.gpus_per_embed_actor": 1})
    with pytest.raises(ConfigError, match="wait forever"):
        plan_embedding(resolve_plan(cfg), {"CPU": 2.0})
    auto = plan_embedding(resolve_plan(config(tmp_path)), {"CPU": 2.0})
    assert auto.gpus_per_actor == 0 and auto.actors == 1  # one CPU left for read/parse tasks
    assert plan_embedding(resolve_plan(config(tmp_path)), {"CPU": 16.0}).actors == 8
    one_cpu = plan_embedding(resolve_plan(config(tmp_path)), {"CPU": 1.0})
    assert (one_cpu.actors, one_cpu.cpus_per_actor) == (1, 0.0)  # the parse task keeps the only CPU
    gpu_box = plan_embedding(resolve_plan(config(tmp_path)), {"CPU": 1.0, "GPU": 1.0})
    assert gpu_box.gpus_per_actor == 1 and gpu_box.cpus_per_actor == 0.0
    assert plan_embedding(resolve_plan(config(tmp_path)), {"CPU": 16.0, "GPU": 4.0}).actors == 4
    on_cpu = plan_embedding(
        resolve_plan(config(tmp_path, **{"embedder.device": "cpu"})), {"CPU": 16.0, "GPU": 1.0}
    )
    assert (on_cpu.gpus_per_actor, on_cpu.actors) == (0, 8)  # device cpu: no GPU held, a pool for 16 CPUs


def test_multi_node_cluster_gives_the_same_chunks(tmp_path, fresh_ray):
    from ray.cluster_utils import Cluster

    from raychunk.jobs.run import run

    single = config(tmp_path, name="single", **{"embedder.enabled": False})
    run(single)
    ray.shutdown()

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.add_node(num_cpus=1, num_gpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address)
        assert len([n for n in ray.nodes() if n["Alive"]]) == 3
        multi = dataclasses.replace(single, output=str(tmp_path / "multi"))
        run(multi)
    finally:
        ray.shutdown()
        cluster.shutdown()
    a, _ = read(tmp_path / "single")
    b, _ = read(tmp_path / "multi")
    cols = ["chunk_id", "text", "char_start", "char_end", "n_tokens"]
    key = [("chunk_id", "ascending")]
    assert a.select(cols).sort_by(key).equals(b.select(cols).sort_by(key))


def test_links_out_of_the_input_folder_and_oversized_files_are_rows_not_reads(tmp_path, fresh_ray):
    from raychunk.io import list_inputs
    from raychunk.jobs.run import run

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("Not part of the corpus.\n")
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    (src / "ok.md").write_text("# Title\n\nSome text.\n")
    (src / "big.txt").write_text("word " * 300_000)  # 1.5 MB
    (src / "leak.txt").symlink_to(outside / "secret.txt")
    (src / "linked-folder").symlink_to(outside)
    (src / "sub" / "inside.md").symlink_to(src / "ok.md")  # stays inside: followed
    (src / "dangling.txt").symlink_to(tmp_path / "gone.txt")

    _, _, files = list_inputs([str(src)], follow_symlinks=True)
    assert {Path(f.path).name for f in files if f.refused is None} >= {"leak.txt", "secret.txt"}

    run(config(tmp_path, input=[str(src)], **{"embedder.enabled": False, "limits.max_file_mb": 1}))
    docs = {Path(r["source"]).name: r for r in pq.read_table(tmp_path / "out" / "documents").to_pylist()}
    assert docs["leak.txt"]["status"] == "skipped"
    assert docs["leak.txt"]["reason"].startswith(
        f"symlink to {outside / 'secret.txt'}, outside the input folder"
    )
    assert "--follow-symlinks" in docs["leak.txt"]["reason"]
    assert docs["linked-folder"]["status"] == "skipped"
    assert (
        docs["dangling.txt"]["status"] == "failed" and "not a readable file" in docs["dangling.txt"]["reason"]
    )
    assert docs["big.txt"]["status"] == "failed"
    assert docs["big.txt"]["reason"] == "file is 1.4 MiB, over limits.max_file_mb=1: not read"
    assert docs["ok.md"]["status"] == "ok" and docs["inside.md"]["status"] == "duplicate"
    assert "secret.txt" not in docs
    chunks = pq.read_table(tmp_path / "out" / "chunks", columns=["text"]).column("text").to_pylist()
    assert not any("Not part of the corpus" in t for t in chunks)


def test_outputs_inside_the_input_folder_are_never_read_as_documents(tmp_path, fresh_ray):
    """``--input docs --output docs/index``, run twice, then a price and a second output beside it:
    each output folder (its shards, reports, chart, staging) is one ``skipped`` row, never documents;
    an output written before the mark existed is left out by name (the job's own and ``--previous``,
    as ``corpus.list_corpus`` names them)."""
    from raychunk.io import OUTPUT_MARK, list_inputs
    from raychunk.jobs.price import PriceOptions, price
    from raychunk.jobs.run import run
    from raychunk.pricing import Setting

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\n## Install\n\nRun the installer.\n")
    (docs / "faq.txt").write_text("Q: Is it free?\nA: Yes.\n")
    index = docs / "index"

    def rows(out):
        return {r["source"]: r for r in pq.read_table(out / "documents").to_pylist()}

    def cfg(out, **kw):
        return config(tmp_path, input=[str(docs)], output=str(out), **{"embedder.enabled": False, **kw})

    run(cfg(index))
    assert (index / OUTPUT_MARK).exists()
    first = rows(index)
    assert sorted(Path(s).name for s in first) == ["faq.txt", "guide.md", "index"]
    assert first[str(index)]["status"] == "skipped"  # its staging folder existed while it was listed
    assert first[str(index)]["reason"] == "a raychunk output folder: its files are not read as inputs"
    run(cfg(index, **{"output_files.overwrite": True}))  # its shards and reports are there now
    status = lambda rs: {s: (r["status"], r["reason"], r["chunks"]) for s, r in rs.items()}  # noqa: E731
    assert status(rows(index)) == status(first)
    price(
        cfg(tmp_path / "unused"),
        [Setting("per-type profile")],
        PriceOptions(output=str(docs / "price"), dim=384, measure_throughput=False, chart=True),
    )
    assert (docs / "price" / "chart.png").exists()  # an image, which OCR would read as a page
    run(cfg(docs / "second"))
    second = rows(docs / "second")
    assert {Path(s).name: r["status"] for s, r in second.items()} == {
        "faq.txt": "ok",
        "guide.md": "ok",
        "index": "skipped",
        "price": "skipped",
        "second": "skipped",
    }
    texts = pq.read_table(docs / "second" / "chunks", columns=["text"]).column("text").to_pylist()
    assert len(texts) == 2 and not any("raychunk run" in t or "chunks" in t for t in texts)

    # Written before the mark: left out by name when it is the job's output or its --previous.
    (index / OUTPUT_MARK).unlink()
    _, _, files = list_inputs([str(docs)], outputs=(str(index),))
    left = {Path(f.path).name: f.refused for f in files}
    assert left["index"] == (
        "skipped",
        "a raychunk output folder (this job's output, or a previous run's): its 4 files are not read as inputs",
    )
    assert not any(f.path.startswith(str(index) + "/") for f in files)
    _, _, files = list_inputs([str(docs)])  # not named: its files are listed as any others
    assert any(f.path.endswith("index/report.json") for f in files)
    (docs / "guide.md").unlink()
    (docs / "faq.txt").unlink()
    with pytest.raises(ValueError, match="only raychunk's own output folders"):
        list_inputs([str(docs)], outputs=(str(index),))
    _, _, files = list_inputs([str(docs / "price")])  # an output named as the input itself is read
    assert sorted(Path(f.path).name for f in files) == ["chart.png", "report.csv", "report.json", "report.md"]


def test_an_output_folder_that_holds_the_inputs_leaves_them_listed(tmp_path, monkeypatch):
    """``--output .`` over ``--input docs``: the output folder holds the input, not the other way
    round, so nothing is left out (its old reports beside the input folder are not in it)."""
    from raychunk.io import list_inputs

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nText.\n")
    (tmp_path / "report.json").write_text("{}")
    monkeypatch.chdir(tmp_path)
    for inputs, exclude in ((["docs"], "."), ([str(tmp_path / "docs" / "*.md")], str(tmp_path))):
        _, _, files = list_inputs(inputs, outputs=(exclude,))
        assert [(Path(f.path).name, f.refused) for f in files] == [("a.md", None)]
    _, _, files = list_inputs(["."], outputs=("docs",))  # an input holding the output: left out
    assert [(Path(f.path).name, f.refused and f.refused[0]) for f in files] == [
        ("docs", "skipped"),
        ("report.json", None),
    ]
