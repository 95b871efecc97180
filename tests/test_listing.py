"""The corpus listed and planned by the planner actor: the driver gets counts and one object ref per
block, and the blocks hold every readable file exactly once."""

from __future__ import annotations

import pytest

from raychunk.listing import Block, InputPlanner
from raychunk.plan import resolve_plan
from raychunk.pricing import in_sample


def corpus(folder, n: int, copies: int = 0):
    """``n`` files of one size and distinct bytes (all duplicate candidates), ``copies`` of the first."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        (folder / f"note-{i:05d}.txt").write_text(f"note number {i:05d}\n")
    for c in range(copies):
        (folder / f"copy-{c}.txt").write_text("note number 00000\n")
    (folder / "big.txt").write_text("x" * 3000)
    (folder / "empty.txt").write_text("")


def paths_of(blocks: tuple[Block, ...]) -> list[str]:
    import ray

    return [p for b in blocks for p in ray.get(b.ref).column("path").to_pylist()]


@pytest.fixture
def ray_local(fresh_ray):
    import ray

    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield


def test_blocks_hold_every_readable_file_once_and_the_driver_only_counts(tmp_path, ray_local):
    corpus(tmp_path / "in", 300, copies=2)
    planner = InputPlanner()
    listed = planner.list([str(tmp_path / "in")], max_file_mb=0.002)  # big.txt (3 kB) is refused
    assert listed["files"] == 304
    plan = planner.plan(cpus=2, max_files=16)

    assert [f.path.rsplit("/", 1)[1] for f in plan.refused] == ["big.txt"]
    assert plan.refused[0].refused[0] == "failed" and "over limits.max_file_mb" in plan.refused[0].refused[1]
    names = sorted(p.rsplit("/", 1)[1] for p in paths_of(plan.blocks))
    assert len(names) == len(set(names)) == plan.todo_files == 303
    assert "big.txt" not in names and "empty.txt" in names
    assert sum(b.files for b in plan.blocks) == 303 and all(b.files <= 16 for b in plan.blocks)
    assert plan.bytes == sum(p.stat().st_size for p in (tmp_path / "in").iterdir())
    from raychunk.config import build_run_config, load_config
    from raychunk.corpus import duplicates_of

    cfg = build_run_config(load_config(), {"input": [str(tmp_path / "in")], "embedder.enabled": False})
    kept = str(tmp_path / "in" / "copy-0.txt")
    expected = {str(tmp_path / "in" / "copy-1.txt"): kept, str(tmp_path / "in" / "note-00000.txt"): kept}
    # 302 local files of one size: the planner hashes them itself, no pass of Ray tasks
    assert plan.duplicates == expected and plan.digest_runs == ()
    assert duplicates_of(plan, resolve_plan(cfg)) == expected


def test_too_many_candidates_are_hashed_by_ray_tasks(tmp_path, ray_local, monkeypatch):
    from raychunk import dedupe
    from raychunk.config import build_run_config, load_config
    from raychunk.corpus import DriverPlanner, duplicates_of

    corpus(tmp_path / "in", 300, copies=2)
    monkeypatch.setattr(dedupe, "LOCAL_HASH_FILES", 256)  # as a remote filesystem's limit
    planner = DriverPlanner()
    planner.list([str(tmp_path / "in")], max_file_mb=0.002)
    plan = planner.plan(cpus=2, max_files=16)
    assert plan.duplicates is None and sum(r.files for r in plan.digest_runs) == 302
    cfg = build_run_config(load_config(), {"input": [str(tmp_path / "in")], "embedder.enabled": False})
    kept = str(tmp_path / "in" / "copy-0.txt")
    assert duplicates_of(plan, resolve_plan(cfg)) == {
        str(tmp_path / "in" / "copy-1.txt"): kept,
        str(tmp_path / "in" / "note-00000.txt"): kept,
    }


def test_a_sample_plans_the_files_in_sample_selects(tmp_path, ray_local):
    corpus(tmp_path / "in", 200)
    planner = InputPlanner()
    planner.list([str(tmp_path / "in")])
    plan = planner.plan(cpus=2, max_files=32, sample=0.25)
    want = sorted(str(p) for p in (tmp_path / "in").iterdir() if in_sample(str(p), 0.25))
    assert sorted(paths_of(plan.blocks)) == want and plan.todo_files == len(want)
    assert plan.files == 202  # the corpus's size comes from the whole listing, not the sample


def test_a_missing_input_fails_in_the_driver_as_the_listing_words_it(tmp_path, ray_local):
    planner = InputPlanner()
    with pytest.raises(FileNotFoundError, match="no such file, folder or glob match"):
        planner.list([str(tmp_path / "nope")])
    (tmp_path / "hollow").mkdir()
    with pytest.raises(ValueError, match="no input files found"):
        planner.list([str(tmp_path / "hollow")])
