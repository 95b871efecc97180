"""Input blocks sized by expected cost, their reads, and the embedder's share of idle cores."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from raychunk.blocks import _read_group, estimated_seconds, plan_blocks
from raychunk.embed import SpareCores
from raychunk.io import InputFile

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def corpus(n_small: int = 200) -> list[InputFile]:
    rng = random.Random(7)
    files = [InputFile(f"notes/{i:04d}.md", rng.randint(200, 20_000)) for i in range(n_small)]
    files += [InputFile("big/manual.pdf", 40_000_000), InputFile("big/report.pdf", 9_000_000)]
    files += [InputFile(f"same/{i}.txt", 5_000) for i in range(30)]  # identical sizes
    files += [InputFile("empty.txt", 0)]
    return files


@pytest.mark.parametrize("cpus", [1, 2, 16])
def test_every_file_once_costliest_first_and_enough_blocks_for_every_cpu(cpus):
    files = corpus()
    groups = plan_blocks(files, cpus=cpus, max_files=32)
    flat = [f for g in groups for f in g]
    assert sorted(flat, key=lambda f: f.path) == sorted(files, key=lambda f: f.path)
    assert len(groups) >= 4 * cpus
    assert all(len(g) <= 32 for g in groups)
    # the large PDFs are blocks of their own, and first
    assert groups[0] == [InputFile("big/manual.pdf", 40_000_000)]
    assert groups[1] == [InputFile("big/report.pdf", 9_000_000)]
    costs = [max(estimated_seconds(f) for f in g) for g in groups]
    assert costs == sorted(costs, reverse=True)
    # no block but the lone large ones costs more than an even share of the run
    share = sum(map(estimated_seconds, files)) / min(len(files), max(-(-len(files) // 32), 4 * cpus))
    assert all(sum(map(estimated_seconds, g)) <= share for g in groups if len(g) > 1)


def test_the_plan_depends_on_the_files_not_their_order():
    files = corpus()
    shuffled = files[:]
    random.Random(1).shuffle(shuffled)
    assert plan_blocks(files, cpus=2, max_files=32) == plan_blocks(shuffled, cpus=2, max_files=32)


def test_max_files_caps_blocks_of_tiny_files_and_one_file_is_one_block():
    tiny = [InputFile(f"t/{i:05d}.txt", 10) for i in range(1000)]
    groups = plan_blocks(tiny, cpus=2, max_files=8)
    assert len(groups) == 125 and all(len(g) == 8 for g in groups)
    assert plan_blocks(tiny[:1], cpus=16, max_files=8) == [tiny[:1]]
    assert plan_blocks([], cpus=2, max_files=8) == []


@pytest.mark.parametrize("cpus", [1, 2, 4])
def test_a_small_input_is_not_cut_into_blocks_of_task_overhead(cpus):
    """The samples are ~0.45 estimated seconds: 8 blocks on 2 CPUs were 8 tasks run one after another
    beside the embed actor; a block now holds at least MIN_BLOCK_SECONDS, and every CPU one."""
    from raychunk.blocks import BLOCKS_PER_CPU, MIN_BLOCK_SECONDS

    files = [InputFile(str(p), p.stat().st_size) for p in sorted(SAMPLES.iterdir())]
    total = sum(map(estimated_seconds, files))
    groups = plan_blocks(files, cpus=cpus, max_files=1024)
    assert sorted(f.path for g in groups for f in g) == sorted(f.path for f in files)
    assert cpus <= len(groups) < BLOCKS_PER_CPU * max(cpus, 2)
    assert len(groups) <= max(cpus, -(-total // MIN_BLOCK_SECONDS)) + 1  # the share rounds up by one
    # a large input keeps BLOCKS_PER_CPU a CPU
    assert len(plan_blocks(corpus(), cpus=cpus, max_files=32)) >= BLOCKS_PER_CPU * cpus


def test_a_huge_corpus_makes_at_most_max_blocks_blocks_of_more_files(monkeypatch):
    import raychunk.blocks as blocks

    monkeypatch.setattr(blocks, "MAX_BLOCKS", 50)
    tiny = [InputFile(f"t/{i:05d}.txt", 10) for i in range(1000)]
    groups = plan_blocks(tiny, cpus=2, max_files=8)  # 125 blocks of 8 without the cap
    assert len(groups) == 50 and all(len(g) == 20 for g in groups)
    assert sorted((f for g in groups for f in g), key=lambda f: f.path) == tiny
    pages = [InputFile(f"t/{i:05d}.md", 200_000) for i in range(1000)]  # too much work for MIN_BLOCK_SECONDS
    assert len(plan_blocks(pages, cpus=32, max_files=8)) >= 125  # 4 blocks per CPU outrank the cap


def test_a_file_that_cannot_be_read_is_a_row_with_its_reason(tmp_path):
    (table,) = _read_group(
        (str(SAMPLES / "billing-faq.txt"), str(tmp_path / "gone.txt")), pafs.LocalFileSystem()
    )
    rows = table.to_pylist()
    assert rows[0]["bytes"] == (SAMPLES / "billing-faq.txt").read_bytes() and rows[0]["read_error"] is None
    assert rows[1]["bytes"] is None
    assert rows[1]["read_error"].startswith("could not read the file: FileNotFoundError")


@pytest.mark.slow
def test_a_file_gone_between_listing_and_reading_is_a_failed_row(tmp_path, fresh_ray, monkeypatch):
    import pyarrow.parquet as pq
    import ray

    import raychunk.jobs.run as job
    from raychunk.config import build_run_config, load_config
    from raychunk.listing import Block, block_table

    planned = job.plan_inputs

    def plan_and_lose_one(planner, *args, **how):  # listed, then deleted before its block is read
        plan = planned(planner, *args, **how)
        gone = InputFile(str(tmp_path / "deleted.md"), 120)
        return dataclasses.replace(
            plan,
            files=plan.files + 1,
            todo_files=plan.todo_files + 1,
            blocks=(*plan.blocks, Block(ray.put(block_table([gone])), 1, 120)),
        )

    monkeypatch.setattr(job, "plan_inputs", plan_and_lose_one)
    cfg = build_run_config(
        load_config(),
        {
            "input": [str(SAMPLES)],
            "output": str(tmp_path / "out"),
            "embedder.enabled": False,
            "resources.num_cpus": 2,
        },
    )
    report = job.run(cfg)
    docs = {Path(r["source"]).name: r for r in pq.read_table(tmp_path / "out" / "documents").to_pylist()}
    assert len(docs) == 13 and report["documents"]["by_status"] == {"failed": 1, "ok": 12}
    assert docs["deleted.md"]["status"] == "failed"
    assert docs["deleted.md"]["reason"].startswith("could not read the file: FileNotFoundError")


class FakeClock:
    def __init__(self):
        self.wall = self.cpu = self.node = 0.0

    def monotonic(self):
        return self.wall

    def process_time(self):
        return self.cpu


def test_the_embedder_takes_idle_cores_and_gives_them_back(monkeypatch):
    import raychunk.embed as embed

    clock = FakeClock()
    monkeypatch.setattr(embed, "time", clock)
    monkeypatch.setattr(embed, "_node_busy_seconds", lambda: clock.node)
    spare = SpareCores(share=1, most=4)
    spare.cores = 4

    def batch(seconds: float, own_cores: float, other_cores: float) -> int:
        clock.wall += seconds
        clock.cpu += seconds * own_cores
        clock.node += seconds * (own_cores + other_cores)
        return spare.wanted()

    assert spare.wanted() == 1  # nothing measured yet: its share
    assert batch(2.0, 1.0, 3.0) == 1  # parsing keeps the other three cores busy
    assert batch(2.0, 1.0, 1.0) == 3  # two tasks left: it grows into the two idle cores
    assert batch(2.0, 3.0, 0.0) == 4  # parsing done: the whole node
    assert batch(2.0, 4.0, 2.0) == 2  # other work returns: it gives cores back
    assert batch(2.0, 2.0, 9.0) == 1  # never under its share
    capped = SpareCores(share=1, most=2)
    capped.cores = 16
    capped.wanted()
    clock.wall += 1.0
    assert capped.wanted() == 2  # one of eight actors on a 16-core node: its fair part at most
    fresh = SpareCores(share=1, most=4)
    fresh.cores = 4
    clock.wall += 3.0  # the model loads on one core of an otherwise idle node
    clock.cpu += 3.0
    clock.node += 3.0
    assert fresh.wanted() == 4  # the first batch already uses the idle cores
