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
