"""The embedding pool grows with the cluster: its ceiling comes from the autoscaler's limits (the
cluster launcher's config on the head) or ``resources.embed_actors_max``, and Ray Data adds actors
when a node with a GPU joins a running job."""

import shutil
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import ray
import yaml

from raychunk.config import build_run_config, load_config
from raychunk.pipeline import autoscaler_gpu_limit, plan_embedding
from raychunk.plan import resolve_plan

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"


def config(tmp_path, **overrides):
    return build_run_config(
        load_config(), {"input": [str(SAMPLES)], "output": str(tmp_path / "out"), **overrides}
    )


def test_the_gpu_ceiling_is_read_from_the_cluster_launchers_config(tmp_path):
    shipped = tmp_path / "ray_bootstrap_config.yaml"
    shipped.write_text((ROOT / "cluster.yaml").read_text())
    assert autoscaler_gpu_limit(str(shipped)) == 8  # worker.gpu: 1 GPU x max_workers 8; the head has none

    conf = yaml.safe_load(shipped.read_text())
    conf["max_workers"] = 5
    conf["available_node_types"]["worker.big"] = {"resources": {"CPU": 32, "GPU": 4}, "max_workers": 1}
    conf["available_node_types"]["head.cpu"]["resources"] = {"GPU": 1}
    capped = tmp_path / "capped.yaml"
    capped.write_text(yaml.safe_dump(conf))
    assert (
        autoscaler_gpu_limit(str(capped)) == 1 + 4 * 1 + 1 * 4
    )  # the cluster's max_workers caps the workers

    assert autoscaler_gpu_limit(str(tmp_path / "absent.yaml")) is None
    (tmp_path / "bad.yaml").write_text("available_node_types: [not, a, mapping]\n")
    assert autoscaler_gpu_limit(str(tmp_path / "bad.yaml")) is None


def test_the_pool_plan_min_initial_max(tmp_path, monkeypatch):
    import raychunk.pipeline as pipeline

    monkeypatch.setattr(pipeline, "autoscaler_gpu_limit", lambda path=None: 8)
    gpu = plan_embedding(resolve_plan(config(tmp_path)), {"CPU": 9.0, "GPU": 1.0})
    assert gpu.pool == (1, 1, 8)  # starts on the GPU it sees, grows to what the autoscaler may launch
    assert plan_embedding(resolve_plan(config(tmp_path)), {"CPU": 18.0, "GPU": 2.0}).pool == (1, 2, 8)
    assert plan_embedding(
        resolve_plan(config(tmp_path, **{"resources.embed_actors_max": 3})), {"CPU": 9.0, "GPU": 1.0}
    ).pool == (
        1,
        1,
        3,
    )
    fixed = plan_embedding(
        resolve_plan(config(tmp_path, **{"resources.embed_actors": 2})), {"CPU": 9.0, "GPU": 2.0}
    )
    assert fixed.pool == (2, 2, 2)  # a number means a fixed pool
    cpu = plan_embedding(resolve_plan(config(tmp_path)), {"CPU": 8.0})
    assert cpu.pool == (1, 4, 4)  # CPU actors do not multiply: their threads grow instead

    monkeypatch.setattr(pipeline, "autoscaler_gpu_limit", lambda path=None: None)
    assert plan_embedding(resolve_plan(config(tmp_path)), {"CPU": 9.0, "GPU": 1.0}).pool == (
        1,
        1,
        1,
    )  # nothing says more


def _embed_actors() -> list[dict]:
    """Every embedding actor of the job so far, from the GCS actor table (no dashboard needed)."""
    from ray._private import state

    return [a for a in state.actors().values() if "EmbedChunks" in a["ActorClassName"]]


def test_the_pool_grows_when_a_gpu_node_joins_mid_run(tmp_path, fresh_ray):
    """A 3-node cluster: the head, a CPU worker and a worker with one (simulated) GPU. The job starts
    with one embedding actor; a second GPU node joins while it runs, and Ray Data starts an actor
    there. The output is complete and equals the chunks of a single-node run."""
    from ray.cluster_utils import Cluster

    from raychunk.jobs.run import run

    # The samples and three edited copies of their text files: enough embedding to still be queued
    # when the node has joined, however busy the machine (copies with the same bytes would be skipped).
    inputs = tmp_path / "in"
    shutil.copytree(SAMPLES, inputs)
    for n in range(3):
        for f in sorted(SAMPLES.glob("*")):
            if f.suffix in (".md", ".txt"):
                (inputs / f"copy{n}-{f.name}").write_text(f.read_text() + f"\n\nCopy {n}.\n")
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    joined = {}
    try:
        cluster.add_node(num_cpus=1)
        cluster.add_node(num_cpus=1, num_gpus=1)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address)
        cfg = config(
            tmp_path,
            **{
                "input": [str(inputs)],
                "resources.embed_actors_max": 2,
                "embedder.batch_size": 2,  # many small batches: work stays queued while the node joins
            },
        )

        result = {}
        job = threading.Thread(target=lambda: result.update(report=run(cfg)), daemon=True)
        job.start()  # the job in a thread: Ray adds nodes only from the main thread
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and job.is_alive() and not _embed_actors():
            time.sleep(0.2)
        if job.is_alive():
            joined["node_id"] = cluster.add_node(num_cpus=1, num_gpus=1).node_id
        job.join(timeout=300)
        report = result["report"]
        actors = _embed_actors()
    finally:
        ray.shutdown()
        cluster.shutdown()

    assert report["embedder"]["actors"] == 1 and report["embedder"]["actors_max"] == 2
    assert "node_id" in joined, "the GPU node never joined"
    nodes = {a["Address"]["NodeID"] for a in actors}
    assert len(actors) >= 2, f"the pool never grew: {[(a['Address']['NodeID'], a['State']) for a in actors]}"
    assert joined["node_id"] in nodes, "no embedding actor ran on the node that joined"
    chunks = pq.read_table(tmp_path / "out" / "chunks")
    assert chunks.num_rows == report["chunks"] > 0 and chunks.column("embedding").null_count == 0


@pytest.mark.parametrize("key", ["resources.embed_actors_max"])
def test_a_bad_pool_ceiling_is_a_config_error(tmp_path, key):
    from raychunk.config import ConfigError

    with pytest.raises(ConfigError, match=key):
        config(tmp_path, **{key: 0})
