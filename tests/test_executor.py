"""One executor: ``pipeline`` is the only room that puts work on Ray Data (map, flat_map,
map_batches, map_groups, a datasource or a datasink), and a step says how it runs in words that
``step.Step`` checks."""

import ast
from pathlib import Path

import pytest

from raychunk.step import EmbedPlan, Step

PACKAGE = Path(__file__).resolve().parent.parent / "raychunk"
RAY_DATA_CALLS = {"map", "flat_map", "map_batches", "map_groups", "read_datasource", "write_datasink"}


def ray_data_calls(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        call = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        if call and node.func.attr in RAY_DATA_CALLS:
            found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} .{node.func.attr}(")
    return found


def test_only_the_executor_calls_ray_data():
    calls = {p.name: ray_data_calls(p) for p in sorted(PACKAGE.rglob("*.py"))}
    assert calls["pipeline.py"], "the executor itself maps over Ray Data"
    elsewhere = [c for name, found in calls.items() if name != "pipeline.py" for c in found]
    assert elsewhere == []
    assert not (PACKAGE / "stages.py").exists()


def test_a_step_names_how_it_runs_and_is_checked():
    def fn(batch):
        return batch

    assert Step("x", fn).runs_as == "task" and Step("x", fn).each == "batch"
    assert Step("x", fn, each="rows").each == "rows"  # a block's rows in one call (the document step)
    with pytest.raises(ValueError, match="each='items'"):
        Step("x", fn, each="items")
    with pytest.raises(ValueError, match="runs_as='gpu'"):
        Step("x", fn, runs_as="gpu")
    with pytest.raises(ValueError, match="needs its pool"):
        Step("x", fn, runs_as="pool")
    with pytest.raises(ValueError, match="needs its pool"):
        Step("x", fn, pool=EmbedPlan(1, 0.0, 1.0, 256, 384, 1))
    with pytest.raises(ValueError, match="needs its key"):
        Step("x", fn, each="group")
    with pytest.raises(ValueError, match="needs its key"):
        Step("x", fn, key="chunk_id")


def test_a_local_ray_gives_ray_data_its_whole_size_without_a_coordinator_actor(fresh_ray):
    """Ray Data budgets a dataset by what its autoscaling coordinator actor has reserved, nothing
    until that actor's first answer: one task at a time for the first second or more of a job, and
    a worker process of its own. On the local Ray that ``init_ray`` starts, the coordinator is the
    driver's own and reserves the whole Ray from the first ask; a Ray that ``init_ray`` did not start
    keeps Ray's coordinator actor."""
    import ray
    from ray.data._internal.cluster_autoscaler import (
        default_cluster_autoscaler_v2,
        rate_based_cluster_autoscaler,
    )
    from ray.data._internal.cluster_autoscaler.default_autoscaling_coordinator import (
        DefaultAutoscalingCoordinator,
    )
    from ray.data._internal.cluster_autoscaler.rate_based_cluster_autoscaler import RateBasedClusterAutoscaler

    from raychunk import pipeline
    from raychunk.config import build_run_config, load_config

    def coordinator_actors():
        named = {a["name"] for a in ray.util.list_named_actors(all_namespaces=True)}
        return {n for n in named if "autoscaling" in n.lower() or "coordinator" in n.lower()}

    budgets = []
    seen = RateBasedClusterAutoscaler.get_total_resources

    def recording(self):
        budgets.append(seen(self))
        return budgets[-1]

    RateBasedClusterAutoscaler.get_total_resources = recording
    try:
        cfg = build_run_config(load_config(), {"input": ["samples"], "resources.num_cpus": 2})
        assert pipeline.init_ray(cfg) == "local"
        pipeline.warm_ray_data()
        for module in (rate_based_cluster_autoscaler, default_cluster_autoscaler_v2):
            made = module.DefaultAutoscalingCoordinator(requester_id="data-test")
            assert isinstance(made, pipeline.WholeLocalRay)
            (reserved,) = made.get_reserved_resources().values()
            assert reserved["CPU"] == 2 and reserved["memory"] > 0 and "GPU" not in reserved
        rows = ray.data.range(8, override_num_blocks=4).map_batches(lambda b: b).take_all()
        assert sorted(r["id"] for r in rows) == list(range(8))
        assert budgets and all(b.cpu == 2 for b in budgets)  # the whole Ray from the executor's first look
        assert not coordinator_actors()

        assert pipeline.init_ray(cfg) == "existing"  # already up: nothing installed twice
        wrapped = rate_based_cluster_autoscaler.DefaultAutoscalingCoordinator
        pipeline.size_local_ray_data()
        assert rate_based_cluster_autoscaler.DefaultAutoscalingCoordinator is wrapped

        ray.shutdown()  # a Ray someone else started (a notebook's, a test's): Ray's coordinator
        ray.init(address="local", num_cpus=2, include_dashboard=False)
        assert pipeline.init_ray(cfg) == "existing"
        made = rate_based_cluster_autoscaler.DefaultAutoscalingCoordinator(requester_id="data-test")
        assert isinstance(made, DefaultAutoscalingCoordinator)
        budgets.clear()
        rows = ray.data.range(8, override_num_blocks=4).map_batches(lambda b: b).take_all()
        assert sorted(r["id"] for r in rows) == list(range(8))
        assert budgets[0].cpu in (0, None)  # nothing reserved until Ray's actor answers
        assert coordinator_actors()
    finally:
        RateBasedClusterAutoscaler.get_total_resources = seen


def test_ray_data_wakes_when_a_task_finishes_on_the_local_ray(fresh_ray, monkeypatch):
    """Ray Data's scheduling loop waits for all its running tasks up to 0.1 s before it looks again,
    so each task's core idled 0.1-0.2 s before the next task. On the local Ray that ``init_ray``
    starts, the loop's wait returns as soon as one task is ready; a Ray someone else started first is
    left as it is. The wait is the one the loop itself calls, so a Ray whose loop stops calling it
    fails here."""
    import time

    import ray
    from ray.data._internal.execution import streaming_executor_state as state

    from raychunk import pipeline
    from raychunk.config import build_run_config, load_config
    from raychunk.plan import resolve_plan

    monkeypatch.setattr(state, "ray", ray)  # as Ray ships it; put back after the test
    cfg = build_run_config(load_config(), {"input": ["samples"], "resources.num_cpus": 2})
    ray.init(address="local", num_cpus=2, include_dashboard=False)
    assert pipeline.init_ray(cfg) == "existing"
    assert state.ray is ray
    ray.shutdown()

    assert pipeline.init_ray(cfg) == "local"
    assert isinstance(state.ray, pipeline.WakeOnFirst)

    @ray.remote(num_cpus=0)
    def pause(seconds):
        time.sleep(seconds)
        return seconds

    late = pause.remote(120)
    done = pause.remote(0)
    ray.get(done)
    t = time.perf_counter()
    assert state.ray.wait([late, done], num_returns=2, timeout=60, fetch_local=False) == ([done], [late])
    soon = pause.remote(0.5)  # ends while the loop waits
    assert state.ray.wait([late, soon], num_returns=2, timeout=60, fetch_local=False) == ([soon], [late])
    assert time.perf_counter() - t < 30  # Ray's own wait would have taken the whole 60 s, twice
    other = pause.remote(120)
    ready, rest = state.ray.wait([late, other], num_returns=2, timeout=0.3, fetch_local=False)
    assert ready == [] and sorted(rest, key=lambda r: r.hex()) == sorted([late, other], key=lambda r: r.hex())
    for ref in (late, other):
        ray.cancel(ref, force=True)

    waits = []
    wake_on_first = pipeline.WakeOnFirst.wait

    def recording(self, refs, **kwargs):
        waits.append((len(refs), kwargs.get("num_returns"), kwargs.get("timeout")))
        return wake_on_first(self, refs, **kwargs)

    monkeypatch.setattr(pipeline.WakeOnFirst, "wait", recording)
    step = Step("double", lambda batch: {"id": [2 * i for i in batch["id"].to_pylist()]}, batch_size=None)
    ds = pipeline.execute(ray.data.range(8, override_num_blocks=4), [step], resolve_plan(cfg))
    assert sorted(r["id"] for r in ds.take_all()) == [2 * i for i in range(8)]
    # the loop's wait for all its running tasks, with Ray's timeout, went through WakeOnFirst
    assert any(n == len_ and timeout for len_, n, timeout in waits)


def _agent_command(node) -> str:
    """The command the raylet of ``node`` (a ``ray._private.node.Node``) starts its dashboard agent
    with (the agent itself renames its process)."""
    from ray._private import ray_constants

    raylet = node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid
    args = Path(f"/proc/{raylet}/cmdline").read_bytes().decode().split("\0")
    return next(a for a in args if a.startswith("--dashboard_agent_command="))


def test_the_local_ray_starts_lean_and_only_that_one(fresh_ray, monkeypatch):
    """The local Ray that ``init_ray`` starts: no API server (Ray's head starts one even with
    ``include_dashboard=False``, to serve only usage statistics, and waits for it before the
    raylet), the minimal dashboard agent (no web server or metrics export, and no import of their
    libraries in the driver to choose it), and ``ray.init`` back once the raylet has registered
    (Ray asks 0.1 s after starting it, then once a second: Ray's own look took 1.0-2.0 s here, and
    finds it at once now). It runs a dataset; Ray's own start is as Ray ships it afterwards, so a Ray
    started by anyone else has its server and full agent. If Ray stops doing any of the three
    through the functions replaced, an assertion here fails."""
    import time

    import ray
    from ray._private import ray_constants, services, utils
    from ray._private import worker as ray_worker
    from ray._private.node import Node

    from raychunk import pipeline
    from raychunk.config import build_run_config, load_config
    from raychunk.plan import resolve_plan

    looks = []
    get_node = services.get_node

    def timed(gcs_address, node_id):
        t = time.monotonic()
        try:
            return get_node(gcs_address, node_id)
        finally:
            looks.append(time.monotonic() - t)

    monkeypatch.setattr(services, "get_node", timed)
    originals = (Node.start_api_server, utils.get_dashboard_dependency_error, services.get_node)
    cfg = build_run_config(load_config(), {"input": ["samples"], "resources.num_cpus": 2})
    assert pipeline.init_ray(cfg) == "local"
    node = ray_worker._global_node
    assert ray_constants.PROCESS_TYPE_DASHBOARD not in node.all_processes
    assert "--minimal" in _agent_command(node)
    assert looks and looks[0] < 0.9  # found at its first look (Ray sleeps 1 s before a second one)
    assert (Node.start_api_server, utils.get_dashboard_dependency_error, services.get_node) == originals
    step = Step("double", lambda batch: {"id": [2 * i for i in batch["id"].to_pylist()]}, batch_size=None)
    ds = pipeline.execute(ray.data.range(8, override_num_blocks=4), [step], resolve_plan(cfg))
    assert sorted(r["id"] for r in ds.take_all()) == [2 * i for i in range(8)]
    ray.shutdown()

    ray.init(address="local", num_cpus=1, include_dashboard=False)
    node = ray_worker._global_node
    assert ray_constants.PROCESS_TYPE_DASHBOARD in node.all_processes
    assert "--minimal" not in _agent_command(node)


def test_a_ray_that_asks_for_the_dashboard_or_leaves_it_to_ray_still_gets_it(monkeypatch):
    from ray._private import utils
    from ray._private.node import Node

    from raychunk import pipeline

    asked = []
    monkeypatch.setattr(Node, "start_api_server", lambda self, **kw: asked.append(kw))
    monkeypatch.setattr(utils, "get_dashboard_dependency_error", lambda: None)  # ray[default] installed
    recorder = Node.start_api_server
    agents = []
    with pipeline.lean_local_ray():
        assert Node.start_api_server is not recorder
        for include_dashboard in (False, None, True):
            Node.start_api_server(object(), include_dashboard=include_dashboard, raise_on_failure=False)
            agents.append(utils.get_dashboard_dependency_error() is None)  # None: the full agent
    assert asked == [
        {"include_dashboard": None, "raise_on_failure": False},
        {"include_dashboard": True, "raise_on_failure": False},
    ]
    assert agents == [False, True, True]
    assert Node.start_api_server is recorder and utils.get_dashboard_dependency_error() is None


def test_the_local_ray_is_stopped_with_its_monitor_killed_first_and_only_that_one(fresh_ray, monkeypatch):
    """Ray's exit hook sleeps 0.5 s, then gives each of its processes up to 1 s to go after a
    SIGTERM, and the autoscaler monitor takes the whole second. ``stop_local_ray`` kills the monitor
    before Ray's shutdown comes to it, and stops only the Ray that ``init_ray`` started."""
    import ray
    from ray._private import ray_constants
    from ray._private.node import Node

    from raychunk import pipeline
    from raychunk.config import build_run_config, load_config

    alive_when_stopped = {}
    kill = Node._kill_process_impl

    def recording(self, process_type, **kwargs):
        infos = self.all_processes.get(process_type, [])
        alive_when_stopped[process_type] = any(i.process.poll() is None for i in infos)
        return kill(self, process_type, **kwargs)

    monkeypatch.setattr(Node, "_kill_process_impl", recording)
    ray.init(address="local", num_cpus=1, include_dashboard=False)
    pipeline.stop_local_ray()  # someone else's Ray
    assert ray.is_initialized() and alive_when_stopped == {}
    ray.shutdown()
    assert alive_when_stopped[ray_constants.PROCESS_TYPE_MONITOR] is True  # as Ray stops it

    alive_when_stopped.clear()
    cfg = build_run_config(load_config(), {"input": ["samples"], "resources.num_cpus": 2})
    assert pipeline.init_ray(cfg) == "local"
    pipeline.stop_local_ray()
    assert not ray.is_initialized()
    assert alive_when_stopped[ray_constants.PROCESS_TYPE_MONITOR] is False
    assert alive_when_stopped[ray_constants.PROCESS_TYPE_RAYLET] is True  # the rest as Ray stops them


def test_a_command_stops_the_ray_it_started_and_leaves_one_it_found(fresh_ray, tmp_path):
    import ray

    from raychunk import cli

    doc = tmp_path / "in" / "note.md"
    doc.parent.mkdir()
    doc.write_text("# Note\n\nOne paragraph of text to chunk.\n")
    args = ["run", "--input", str(doc.parent), "--no-embed", "--set", "resources.num_cpus=1"]
    assert cli.main([*args, "--output", str(tmp_path / "a")]) == 0
    assert not ray.is_initialized()
    assert (tmp_path / "a" / "report.json").is_file()

    ray.init(address="local", num_cpus=1, include_dashboard=False)
    assert cli.main([*args, "--output", str(tmp_path / "b")]) == 0
    assert ray.is_initialized()
