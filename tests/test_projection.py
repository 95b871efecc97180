"""raychunk.projection: the arithmetic on hand-checkable inputs, cluster.yaml read as Ray reads it,
and the README's plan section equal to what scripts/plan_cluster.py renders from the committed rates."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from raychunk.projection import (
    ClusterShape,
    Corpus,
    Rate,
    StageRates,
    corpus_from_profile,
    format_duration,
    gpu_rate_from_benchmark,
    gpu_rate_from_report,
    gpu_rate_from_run_log,
    project,
    projection_lines,
)

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("plan_cluster", ROOT / "scripts" / "plan_cluster.py")
plan_cluster = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plan_cluster)


def rate(value: float, unit: str = "MB/s per core") -> Rate:
    return Rate(value, unit, "test")


# parse 1 MB/s and chunk 2 MB/s per core; 1,000 tokens/s per GPU, 100 per CPU core; 50 PDF pages/s
RATES = StageRates(
    parse_mb_s={"all": rate(1.0), "text": rate(4.0)},
    pdf_pages_s=rate(50, "pages/s per core"),
    chunk_mb_s={"all": rate(2.0)},
    embed_tokens_s_gpu=rate(1000, "tokens/s per GPU"),
    embed_tokens_s_cpu=rate(100, "tokens/s per CPU core"),
)

# head: 4 CPUs; workers: 8 CPUs + 1 GPU each, 1..2 of them. At the limit: 20 CPUs, 2 GPUs, and
# 18 CPUs left for parse and chunk once each GPU's embed actor has its CPU.
TOY = {
    "cluster_name": "toy",
    "max_workers": 2,
    "head_node_type": "head",
    "available_node_types": {
        "head": {"resources": {"CPU": 4, "GPU": 0}, "node_config": {"InstanceType": "x.head"}},
        "gpu": {
            "resources": {"CPU": 8, "GPU": 1},
            "min_workers": 1,
            "max_workers": 2,
            "node_config": {"InstanceType": "x.gpu"},
        },
    },
}


def corpus(nbytes: float, tokens: float, **kw) -> Corpus:
    return Corpus(
        "c", documents=10, bytes_by_family={"all": nbytes}, tokens=tokens, vectors=tokens / 100, **kw
    )


def test_two_stages_known_seconds_and_bound():
    shape = ClusterShape.from_config(TOY)
    p = project(corpus(36e6, 100_000), RATES, shape)
    assert p.nodes == {"head": 1, "gpu": 2}
    assert (p.cpus, p.gpus) == (18, 2)
    assert p.stage("parse").seconds == pytest.approx(36 / 1 / 18)  # 2 s
    assert p.stage("chunk").seconds == pytest.approx(36 / 2 / 18)  # 1 s
    assert p.cpu_seconds == pytest.approx(3.0)
    assert p.embed_seconds == pytest.approx(100_000 / (1000 * 2))  # 50 s
    assert p.bound == "embed"
    assert p.wall_seconds == pytest.approx(50.0)  # streaming: the longer one
    assert p.serial_seconds == pytest.approx(53.0)  # one after another
    assert p.node_hours == pytest.approx({"head": 50 / 3600, "gpu": 2 * 50 / 3600})

    cpu_bound = project(corpus(36e6, 1000), RATES, shape)
    assert cpu_bound.embed_seconds == pytest.approx(0.5)
    assert cpu_bound.bound == "CPU stages (parse + chunk)"
    assert cpu_bound.wall_seconds == pytest.approx(3.0)


def test_families_pdf_by_pages_and_fewer_workers():
    shape = ClusterShape.from_config(TOY)
    c = Corpus("c", 3, {"pdf": 10e6, "text": 8e6}, tokens=0.0, vectors=0.0, pdf_pages=900)
    p = project(c, RATES, shape, workers={"gpu": 1})  # 4 + 8 CPUs, 1 GPU: 11 CPUs for parse/chunk
    assert p.cpus == 11
    # pdf by pages (900 / 50 = 18 core-s), text at its own rate (8 / 4 = 2), chunk at the mix rate (18 / 2 = 9)
    assert p.stage("parse").seconds == pytest.approx((18 + 2) / 11)
    assert p.stage("chunk").seconds == pytest.approx(9 / 11)
    without_pages = project(Corpus("c", 3, {"pdf": 10e6}, 0.0, 0.0), RATES, shape)
    assert without_pages.stage("parse").seconds == pytest.approx(10 / 1 / 18)  # the mix rate, by bytes
    with pytest.raises(ValueError, match="allows 1..2"):
        project(c, RATES, shape, workers={"gpu": 3})


def test_cpu_only_cluster_embeds_on_half_the_cpus():
    config = yaml.safe_load(yaml.safe_dump(TOY))
    config["available_node_types"]["gpu"]["resources"] = {"CPU": 8, "GPU": 0}
    p = project(corpus(36e6, 9_000), RATES, ClusterShape.from_config(config))
    assert p.gpus == 0
    assert p.stage("embed").workers == 10 and p.stage("embed").unit == "CPUs"
    assert p.embed_seconds == pytest.approx(9_000 / (100 * 10))
    assert p.cpus == 10
    assert p.stage("parse").seconds == pytest.approx(36 / 10)


def test_reads_the_real_cluster_yaml():
    raw = yaml.safe_load((ROOT / "cluster.yaml").read_text())
    shape = ClusterShape.from_yaml(ROOT / "cluster.yaml")
    assert shape.name == raw["cluster_name"]
    assert shape.head.name == raw["head_node_type"]
    assert (shape.head.cpus, shape.head.gpus) == (8, 0)  # m5.2xlarge, from INSTANCE_RESOURCES
    (gpu,) = shape.workers
    spec = raw["available_node_types"][gpu.name]
    assert (gpu.cpus, gpu.gpus) == (spec["resources"]["CPU"], spec["resources"]["GPU"])
    assert (gpu.min_workers, gpu.max_workers) == (spec["min_workers"], spec["max_workers"])
    assert gpu.instance_type == spec["node_config"]["InstanceType"]
    assert shape.max_workers == raw["max_workers"]
    nodes = shape.nodes()
    assert nodes == {shape.head.name: 1, gpu.name: min(gpu.max_workers, raw["max_workers"])}
    assert shape.totals(nodes) == (8 + 8 * 8, 8)


def test_unknown_instance_without_resources_says_how_to_fix():
    config = yaml.safe_load(yaml.safe_dump(TOY))
    config["available_node_types"]["head"] = {"resources": {}, "node_config": {"InstanceType": "z9.huge"}}
    with pytest.raises(ValueError, match=r"give resources: \{CPU: n, GPU: g\}"):
        ClusterShape.from_config(config)


def test_rates_must_be_positive_and_have_a_mix():
    with pytest.raises(ValueError, match="positive"):
        Rate(0.0, "MB/s per core", "test")
    with pytest.raises(ValueError, match="'all'"):
        StageRates({"text": rate(1)}, rate(1), {"all": rate(1)}, rate(1), rate(1))


def test_corpus_from_profile_scales_the_sample():
    profile = {
        "text": {"files": 3, "bytes": 3_000_000, "pages": 0, "tokens": 600_000, "chunks": 4_000},
        "pdf": {"files": 1, "bytes": 1_000_000, "pages": 50, "tokens": 100_000, "chunks": 600},
    }
    c = corpus_from_profile(profile, label="x", documents=1000, source="s")
    assert c.documents == pytest.approx(1000)
    assert c.bytes_by_family == pytest.approx({"text": 750e6, "pdf": 250e6})
    assert (c.tokens, c.vectors, c.pdf_pages) == pytest.approx((175e6, 1.15e6, 12_500))
    assert "pdf 25%" in c.assumptions[0] and "50.0 PDF pages per MB" in c.assumptions[0]
    by_bytes = corpus_from_profile(profile, label="y", total_bytes=1e12)
    assert by_bytes.documents == pytest.approx(1e6) and by_bytes.bytes == pytest.approx(1e12)
    with pytest.raises(ValueError):
        corpus_from_profile(profile, label="z", documents=1, total_bytes=1)


def test_gpu_benchmark_overrides_only_when_it_ran_on_a_gpu():
    rows = [
        {
            "model": "all-MiniLM-L6-v2",
            "device": "cuda",
            "dtype": "float16",
            "order": o,
            "batch_size": b,
            "tokens_per_s": t,
        }
        for o, b, t in (("sorted", 64, 500_000.0), ("sorted", 1024, 900_000.0), ("unsorted", 64, 300_000.0))
    ]
    report = {"device": "cuda", "gpu": "NVIDIA A10G", "rows": rows, "texts": {"mean_tokens": 150}}
    r = gpu_rate_from_benchmark(report, "out/gpu_embed.json")
    assert r.value == 500_000.0  # the batch the pipeline runs, not the best row
    assert "measured" in r.source and "NVIDIA A10G" in r.source and "batch 64" in r.source
    assert gpu_rate_from_benchmark({**report, "device": "cpu", "gpu": None}, "x") is None


def test_projection_lines_label_and_inputs():
    totals = {"documents": 1200, "bytes": 36e6, "tokens": 100_000, "vectors": 700}
    lines = projection_lines(totals, RATES, ClusterShape.from_config(TOY))
    assert lines[0].startswith("Projection (not measured): at 2 GPUs this corpus embeds in 50 s;")
    assert "the CPU stages (parse + chunk) take 3.0 s on 18 CPUs; bound: embed" in lines[0]
    assert "Wall about 50 s with the stages streaming (at most 53 s one after another)" in lines[0]
    assert "at its autoscaling limit" in lines[1]
    assert lines[1].startswith("Inputs: 1.2k documents, 36 MB")
    assert "as priced" in lines[1] and "1,000 tokens/s per GPU (test)" in lines[1]
    assert "x.gpu" in lines[1]


def test_format_duration():
    assert format_duration(0.016) == "under 0.1 s" and format_duration(0.25) == "0.2 s"
    assert [format_duration(s) for s in (42, 192, 5 * 3600, 3 * 86400)] == [
        "42 s",
        "3.2 min",
        "5.0 h",
        "3.0 days",
    ]


# ---------------------------------------------------------------------------------------------------
# the script and the README


def test_committed_rates_load_and_name_their_sources():
    doc = json.loads((ROOT / "benchmarks" / "stage_rates.json").read_text())
    rates = StageRates.from_dict(doc["rates"])
    assert {"markdown", "html", "text", "pdf", "all"} <= set(rates.parse_mb_s)
    for r in (
        rates.pdf_pages_s,
        rates.embed_tokens_s_gpu,
        rates.embed_tokens_s_cpu,
        *rates.chunk_mb_s.values(),
    ):
        assert r.source
    gpu = rates.embed_tokens_s_gpu.source
    assert gpu.startswith("measured") or "https://www.sbert.net/" in gpu
    assert doc["machine"]["cores"] and doc["date"]


def test_readme_plan_is_the_scripts_output():
    """Fails when someone edits the README's plan numbers by hand, or changes the rates, the cluster
    or the script without `python scripts/plan_cluster.py --write-readme`."""
    block = plan_cluster.render(*plan_cluster.load())
    assert plan_cluster.readme_block((ROOT / "README.md").read_text()) == block
    assert "| bound by |" in block and "1M documents" in block and "1 TB" in block


def test_check_catches_a_hand_edit(tmp_path):
    readme = tmp_path / "README.md"
    text = (ROOT / "README.md").read_text()
    readme.write_text(text)
    assert plan_cluster.main(["--check", "--readme", str(readme)]) == 0
    block = plan_cluster.readme_block(text)
    edited = block.replace("| documents | 1M |", "| documents | 2M |")
    assert edited != block
    readme.write_text(plan_cluster.with_block(text, edited))
    assert plan_cluster.main(["--check", "--readme", str(readme)]) == 1
    assert plan_cluster.main(["--write-readme", "--readme", str(readme)]) == 0
    assert readme.read_text() == text


def test_script_runs():
    out = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "plan_cluster.py")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.startswith("A projection, not a measurement")
    assert "| | 1M documents | 1 TB |" in out


def test_stage_rates_gpu_only_takes_a_gpu_benchmark(tmp_path):
    """``stage_rates.py --gpu-only``: a GPU run of gpu_embed.py replaces the published figure; a CPU
    run of it does not; a GPU run of the job (``--gpu-run-log``, by default the committed H200 run)
    comes before both. Nothing is measured (no model is loaded)."""
    spec = importlib.util.spec_from_file_location("stage_rates", ROOT / "benchmarks" / "stage_rates.py")
    stage_rates = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(stage_rates)
    out = tmp_path / "rates.json"
    out.write_text((ROOT / "benchmarks" / "stage_rates.json").read_text())
    row = {"model": "all-MiniLM-L6-v2", "device": "cuda", "dtype": "float16", "order": "sorted"}
    bench = {"device": "cuda", "gpu": "NVIDIA A10G", "rows": [{**row, "batch_size": 64, "tokens_per_s": 7e5}]}
    gpu_json = tmp_path / "gpu_embed.json"
    cpu_run = tmp_path / "run.txt"  # a run whose actors held no GPU
    committed = (ROOT / "benchmarks" / "gpu_h200" / "run_corpus_cuda.txt").read_text()
    cpu_run.write_text(committed.replace("1 GPU each", "0 GPU each"))
    args = ["--gpu-only", "--gpu-json", str(gpu_json), "--out", str(out)]
    gpu_json.write_text(json.dumps({**bench, "device": "cpu", "gpu": None}))
    assert stage_rates.main([*args, "--gpu-run-log", str(cpu_run)]) == 0
    assert json.loads(out.read_text())["rates"]["embed_tokens_s_gpu"] == stage_rates.PUBLISHED_GPU.to_dict()
    gpu_json.write_text(json.dumps(bench))
    assert stage_rates.main([*args, "--gpu-run-log", str(cpu_run)]) == 0
    doc = json.loads(out.read_text())
    assert doc["rates"]["embed_tokens_s_gpu"]["value"] == 7e5
    assert stage_rates.main(args) == 0  # the committed GPU run of the job comes first
    assert json.loads(out.read_text())["rates"]["embed_tokens_s_gpu"]["value"] == round(3_057_514 / 18.4)
    assert (
        doc["rates"]["parse_mb_s"]
        == json.loads((ROOT / "benchmarks" / "stage_rates.json").read_text())["rates"]["parse_mb_s"]
    )


def test_imports_nothing_heavy():
    code = (
        "import sys, raychunk.projection; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ray', 'torch', 'pyarrow', 'numpy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_gpu_batch_is_the_pipelines():
    from raychunk import embed, projection

    assert projection.CUDA_FORWARD_BATCH == embed.CUDA_FORWARD_BATCH


def test_the_gpu_figure_from_a_gpu_run_of_the_job():
    """The embed stage's rate in the summary `raychunk run --device cuda` printed on an H200: tokens
    embedded over the actors' task time, per GPU; a run whose actors held no GPU gives none."""
    text = (ROOT / "benchmarks" / "gpu_h200" / "run_corpus_cuda.txt").read_text()
    r = gpu_rate_from_run_log(text, "run_corpus_cuda.txt")
    assert (r.value, r.unit) == (round(3_057_514 / 18.4), "tokens/s per GPU")
    assert r.source.startswith("measured") and "run_corpus_cuda.txt" in r.source and "3,057,514" in r.source
    halves = text.replace("1 actor(s), 1 GPU each", "2 actor(s), 0.5 GPU each")
    assert gpu_rate_from_run_log(halves, "x").value == round(3_057_514 / 9.2)  # two actors on one GPU
    assert gpu_rate_from_run_log(text.replace("1 GPU each", "0 GPU each"), "x") is None
    assert gpu_rate_from_run_log(text.split("stage ")[0], "x") is None  # no embed stage line
    assert gpu_rate_from_run_log("", "x") is None


def test_the_gpu_figure_from_a_gpu_runs_report_json():
    """The same rate read from the run's report.json (the figures of the committed H200 run), and
    through ``gpu_rate_from_run_log`` when the file given is that JSON."""
    report = {
        "embedder": {"model": "all-MiniLM-L6-v2", "actors": 1, "gpus_per_actor": 1.0},
        "tokens_embedded": 3_057_514,
        "stages": [
            {
                "stage": "ReadInputFiles->MapBatches(isolated)",
                "tasks": 9,
                "seconds": 9.0,
                "task_seconds": 15.0,
            },
            {"stage": "MapBatches(EmbedChunks)", "tasks": 1, "seconds": 19.1, "task_seconds": 18.4},
        ],
    }
    r = gpu_rate_from_report(report, "report_corpus_cuda.json")
    assert (r.value, r.unit) == (round(3_057_514 / 18.4), "tokens/s per GPU")
    assert "report_corpus_cuda.json" in r.source and "3,057,514 all-MiniLM-L6-v2 tokens" in r.source
    assert gpu_rate_from_run_log(json.dumps(report), "x").value == r.value
    halves = {**report, "embedder": {**report["embedder"], "actors": 2, "gpus_per_actor": 0.5}}
    assert gpu_rate_from_report(halves, "x").value == round(3_057_514 / 9.2)
    assert gpu_rate_from_report({**report, "embedder": {"gpus_per_actor": 0.0}}, "x") is None
    assert gpu_rate_from_report({**report, "stages": report["stages"][:1]}, "x") is None
    assert gpu_rate_from_run_log("{not json", "x") is None
