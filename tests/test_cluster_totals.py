"""On a 3-node cluster, `raychunk price` and `raychunk run` report the same totals as on one node:
partials merged from blocks that ran on other nodes add up to the same figures."""

import dataclasses
import json
import shutil
from pathlib import Path

import ray

from raychunk.config import build_run_config, load_config

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _corpus(tmp_path) -> Path:
    """The samples plus a byte-identical copy (duplicates cross blocks) and a broken file."""
    src = tmp_path / "in"
    shutil.copytree(SAMPLES, src)
    (src / "copies").mkdir()
    shutil.copy(SAMPLES / "billing-faq.txt", src / "copies" / "billing-faq.txt")
    (src / "broken.pdf").write_bytes(b"%PDF-1.7 not really")
    return src


def _jobs(src: Path, out: Path, cfg_overrides: dict) -> tuple[dict, dict]:
    from raychunk.jobs.price import PriceOptions, price
    from raychunk.jobs.run import run
    from raychunk.pricing import Setting, grid

    cfg = build_run_config(
        load_config(),
        {"input": [str(src)], "output": str(out / "run"), "embedder.enabled": False, **cfg_overrides},
    )
    settings = [Setting("per-type profile"), *grid([128, 256], [0, 0.2], ["structure"])]
    priced = price(
        dataclasses.replace(cfg, output=str(out / "unused")),
        settings,
        PriceOptions(output=str(out / "price"), sample=0.7, measure_throughput=False, chart=False),
    )
    ran = run(cfg)
    return priced, ran


def _price_figures(report: dict) -> list:
    keep = (
        "documents",
        "chunks",
        "tokens",
        "text_bytes",
        "total_bytes",
        "tokens_p50",
        "tokens_p95",
        "duplicates",
    )
    return [
        (
            s["setting"],
            {k: s[k] for k in keep},
            s.get("interval_95"),
            {t: x["chunks"] for t, x in s["by_type"].items()},
        )
        for s in report["settings"]
    ]


def _run_figures(report: dict) -> dict:
    keys = ("documents", "duplicates", "chunks", "tokens_chunked", "not_ok", "not_ok_total", "warnings_total")
    return {k: report[k] for k in keys}


def test_three_nodes_report_the_same_totals_as_one(tmp_path, fresh_ray):
    from ray.cluster_utils import Cluster

    src = _corpus(tmp_path)
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    one_price, one_run = _jobs(src, tmp_path / "one", {})
    ray.shutdown()

    cluster = Cluster(
        initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False}
    )  # the head only drives
    try:
        cluster.add_node(num_cpus=1)
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address)
        assert len([n for n in ray.nodes() if n["Alive"]]) == 3
        three_price, three_run = _jobs(src, tmp_path / "three", {})
    finally:
        ray.shutdown()
        cluster.shutdown()

    assert (
        one_price["estimate"] and one_price["settings"][0]["interval_95"]
    )  # the sampled path, intervals and all
    assert _price_figures(three_price) == _price_figures(one_price)
    assert _run_figures(three_run) == _run_figures(one_run)
    assert one_run["duplicates"]["files"] == 1 and one_run["not_ok_total"] == 2  # the copy and the broken PDF
    written = json.loads((tmp_path / "three" / "run" / "report.json").read_text())
    assert written["chunks"] == one_run["chunks"] > 0
