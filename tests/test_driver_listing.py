"""A small local corpus is listed and planned in the driver (no planner actor, no Ray worker for it),
with the plan the planner actor makes of the same files; anything else still goes to the actor."""

from __future__ import annotations

import pytest

from raychunk import corpus
from raychunk.corpus import DriverPlanner, list_corpus, small_local_inputs
from raychunk.listing import InputPlanner


def make_corpus(folder, n: int):
    """``n`` distinct notes of one size, two byte-identical copies, an empty file, one too big, and
    a file whose name is not UTF-8, in a nested folder."""
    (folder / "sub").mkdir(parents=True)
    for i in range(n):
        (folder / ("sub" if i % 2 else "") / f"note-{i:03d}.txt").write_text(f"note number {i:03d}\n")
    (folder / "copy-a.txt").write_text("note number 000\n")
    (folder / "sub" / "copy-b.txt").write_text("note number 000\n")
    (folder / "empty.txt").write_text("")
    (folder / "big.txt").write_text("x" * 3000)
    (folder / "sub").joinpath(b"caf\xe9.txt".decode("utf-8", "surrogateescape")).write_bytes(
        b"latin-1 name\n"
    )


def test_small_means_local_and_counted_under_the_cap(tmp_path):
    make_corpus(tmp_path / "in", 20)  # 26 entries: 25 files and the subfolder
    inputs = [str(tmp_path / "in")]
    assert small_local_inputs(inputs, most=26)
    assert not small_local_inputs(inputs, most=25)
    assert small_local_inputs([str(tmp_path / "in" / "empty.txt")], most=1)
    assert not small_local_inputs([str(tmp_path / "in" / "*.txt")])  # a glob: the actor expands it
    assert not small_local_inputs(["s3://bucket/docs"])
    assert not small_local_inputs([str(tmp_path / "missing")])  # the actor words the error
    (tmp_path / "in" / "elsewhere").symlink_to(tmp_path / "in" / "sub")  # 12 entries more, if followed
    assert small_local_inputs(inputs, most=27)
    assert not small_local_inputs(inputs, most=27, follow_symlinks=True)
    assert small_local_inputs(inputs, most=40, follow_symlinks=True)


@pytest.fixture
def ray_local(fresh_ray):
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield


def plan_of(planner, folder):
    import ray

    planner.list([str(folder)], max_file_mb=0.002)  # big.txt (3 kB) is refused
    plan = planner.plan(cpus=2, max_files=8)
    blocks = [ray.get(b.ref).to_pylist() for b in plan.blocks]
    return plan, blocks


def test_the_driver_plans_as_the_planner_actor_does(tmp_path, ray_local):
    make_corpus(tmp_path / "in", 30)
    by_actor, actor_blocks = plan_of(InputPlanner(), tmp_path / "in")
    by_driver, driver_blocks = plan_of(DriverPlanner(), tmp_path / "in")

    assert driver_blocks == actor_blocks and sum(len(b) for b in driver_blocks) == by_driver.todo_files == 34
    assert [(b.files, b.bytes) for b in by_driver.blocks] == [(b.files, b.bytes) for b in by_actor.blocks]
    assert [f.path.rsplit("/", 1)[1] for f in by_driver.refused] == ["big.txt"]
    assert by_driver.refused == by_actor.refused
    kept = str(tmp_path / "in" / "copy-a.txt")
    assert by_driver.duplicates == by_actor.duplicates
    assert by_driver.duplicates[str(tmp_path / "in" / "sub" / "copy-b.txt")] == kept
    for key in ("scheme", "files", "bytes", "todo_bytes", "done"):
        assert getattr(by_driver, key) == getattr(by_actor, key), key
    assert by_driver.planner is None  # the driver owns the blocks' objects


def test_list_corpus_lists_in_the_driver_only_under_the_cap(tmp_path, ray_local, monkeypatch):
    from raychunk.config import build_run_config, load_config
    from raychunk.plan import resolve_plan

    make_corpus(tmp_path / "in", 10)
    cfg = build_run_config(load_config(), {"input": [str(tmp_path / "in")], "embedder.enabled": False})
    job = resolve_plan(cfg)
    assert isinstance(list_corpus(job), DriverPlanner)
    monkeypatch.setattr(corpus, "DRIVER_LISTING_MAX_FILES", 5)
    assert isinstance(list_corpus(job), InputPlanner)
    with pytest.raises(FileNotFoundError, match="no such file, folder or glob match"):
        list_corpus(resolve_plan(build_run_config(load_config(), {"input": [str(tmp_path / "nope")]})))


def test_a_link_into_another_input_folder_is_an_input(tmp_path):
    """``--input man2 man3``, where ``man3/x.3`` links to ``man2/y.2``: the link leads to an input,
    read (and found byte-identical to its target), not refused as leaving its folder; given alone,
    ``man3`` still refuses it."""
    from pathlib import Path

    from raychunk.io import list_inputs

    man2, man3 = tmp_path / "man2", tmp_path / "man3"
    (man2 / "sub").mkdir(parents=True)
    man3.mkdir()
    (man2 / "select.2").write_text(".TH SELECT 2\n")
    (man2 / "sub" / "poll.2").write_text(".TH POLL 2\n")
    (man3 / "pselect.3").symlink_to(man2 / "select.2")
    (man3 / "sub").symlink_to(man2 / "sub")  # a folder of another input: walked there, once
    (man3 / "own.3").write_text(".TH OWN 3\n")

    _, _, both = list_inputs([str(man3), str(man2)])
    by_name = {Path(f.path).name: f for f in both}
    assert by_name["pselect.3"].refused is None
    assert sorted(by_name) == ["own.3", "poll.2", "pselect.3", "select.2"]
    assert all(f.refused is None for f in both)
    assert [f.path for f in both if f.path.endswith("poll.2")] == [str(man2 / "sub" / "poll.2")]

    _, _, alone = list_inputs([str(man3)])
    refused = {Path(f.path).name: f.refused for f in alone if f.refused}
    assert refused["pselect.3"][0] == "skipped" and "outside the input folder" in refused["pselect.3"][1]
    assert refused["sub"][0] == "skipped"
