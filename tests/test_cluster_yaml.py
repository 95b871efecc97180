"""cluster.yaml passes Ray's own cluster-launcher validation and launches what the job needs.

``ray up`` does ``validate_config(prepare_config(config))`` before it talks to the cloud
(``ray.autoscaler._private.commands._bootstrap_config``): ``prepare_config`` merges the provider's
``defaults.yaml`` shipped with Ray, merges ``setup_commands`` into the head and worker lists and
fills per-type worker bounds; ``validate_config`` checks the result against
``ray/autoscaler/ray-schema.json`` and the cross-field rules. Neither needs credentials or a network;
the fixture below makes sure of the latter.
"""

from __future__ import annotations

import copy
import socket
from pathlib import Path

import jsonschema
import pytest
import ray
import yaml
from ray.autoscaler._private.util import prepare_config, validate_config

ROOT = Path(__file__).resolve().parent.parent
CLUSTER_YAML = ROOT / "cluster.yaml"


@pytest.fixture(scope="module", autouse=True)
def no_network():
    """Module scope, autouse: in place before the module-scoped ``prepared`` runs Ray's code."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"the cluster config check tried to open a connection: {args}")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", refuse)
        mp.setattr(socket, "create_connection", refuse)
        yield


@pytest.fixture(scope="module")
def raw() -> dict:
    return yaml.safe_load(CLUSTER_YAML.read_text())


@pytest.fixture(scope="module")
def prepared(raw) -> dict:
    config = prepare_config(copy.deepcopy(raw))
    validate_config(config)
    return config


def _gpu_types(config: dict) -> dict:
    return {
        name: t
        for name, t in config["available_node_types"].items()
        if name != config["head_node_type"] and t.get("resources", {}).get("GPU", 0) >= 1
    }


def test_passes_rays_validator(prepared, raw):
    # Ray's defaults are merged one level deep: our node types replace the default ones entirely.
    assert set(prepared["available_node_types"]) == set(raw["available_node_types"])
    assert prepared["provider"]["type"] == "aws"


def test_validator_rejects_a_broken_config(raw):
    """The check has teeth: the same file with a misspelt key or a bad bound fails."""
    bad = copy.deepcopy(raw)
    bad["max_worker"] = bad.pop("max_workers")
    with pytest.raises(jsonschema.ValidationError):
        validate_config(prepare_config(bad))
    bad = copy.deepcopy(raw)
    bad["max_workers"] = 0  # below the GPU type's min_workers
    with pytest.raises(ValueError, match="min_workers"):
        validate_config(prepare_config(bad))


def test_head_is_cpu_and_gpu_workers_autoscale_from_one(prepared):
    head = prepared["available_node_types"][prepared["head_node_type"]]
    assert head.get("resources", {}).get("GPU", 0) == 0
    assert head["max_workers"] == 0

    gpu = _gpu_types(prepared)
    assert len(gpu) == 1, "expected exactly one GPU worker type"
    (node_type,) = gpu.values()
    # The job sizes its embedding pool from the GPUs present when it starts: one must be up already.
    assert node_type["min_workers"] >= 1
    assert node_type["max_workers"] > node_type["min_workers"]
    assert node_type["max_workers"] <= prepared["max_workers"]
    assert node_type["node_config"]["InstanceType"].split(".")[0][0] in "gp"  # an EC2 GPU family


def test_every_node_installs_this_checkout(prepared):
    mounts = {remote: (ROOT / local).resolve() for remote, local in prepared["file_mounts"].items()}
    remote = next((r for r, local in mounts.items() if local == ROOT), None)
    assert remote, f"file_mounts must sync the repo root, got {prepared['file_mounts']}"
    assert 'name = "raychunk"' in (ROOT / "pyproject.toml").read_text()
    for key in ("head_setup_commands", "worker_setup_commands"):
        installs = [c for c in prepared[key] if "pip install" in c and remote in c.split()]
        assert installs, f"{key} does not pip install {remote}: {prepared[key]}"


def test_images_carry_the_installed_ray_version(prepared):
    docker = prepared["docker"]
    for key in ("image", "head_image"):
        assert docker[key].startswith("rayproject/ray:")
        assert docker[key].split(":", 1)[1].startswith(ray.__version__ + "-"), (key, ray.__version__)
    assert docker["image"].endswith("-gpu")
