"""The arrows of raychunk's import graph point down only (scripts/import_graph.py holds the layers)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "import_graph", Path(__file__).resolve().parent.parent / "scripts" / "import_graph.py"
)
import_graph = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_graph)


def test_no_arrow_points_up():
    g = import_graph.graph()
    assert "raychunk.chunking" in g and "raychunk.jobs.run" in g
    assert import_graph.violations(g) == []


def test_pure_core_imports_neither_ray_nor_parse_nor_embed():
    g = import_graph.graph()
    core = [m for m in g if m.startswith("raychunk.chunking") or m == "raychunk.tokens"]
    assert len(core) >= 4
    for module in core:
        for target in g[module]:
            assert target != "ray" and not target.startswith(("raychunk.parse", "raychunk.embed")), (
                module,
                target,
            )


def test_the_checker_sees_lazy_and_upward_imports(tmp_path, monkeypatch):
    """A lazy import inside a function counts, and an upward one is reported."""
    pkg = tmp_path / "raychunk"
    (pkg / "chunking").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "chunking" / "__init__.py").write_text(
        "def f():\n    from raychunk.parse import x\n    import ray\n"
    )
    (pkg / "parse.py").write_text("from .chunking import f\n")
    (pkg / "cli.py").write_text("")
    monkeypatch.setattr(import_graph, "PACKAGE", pkg)
    bad = import_graph.violations(import_graph.graph())
    assert any("raychunk.chunking → raychunk.parse" in b for b in bad)
    assert any("raychunk.chunking → ray " in b for b in bad)
    assert any("raychunk.parse → raychunk.chunking" in b for b in bad)


def _private_imports(root: Path) -> list[str]:
    """``from raychunk.X import _name`` anywhere under ``root``: a room reaching into another's
    private helpers (what split the Packer's token accounting with tokens.py)."""
    import ast

    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("raychunk"):
                found += [
                    f"{path.relative_to(root.parent)}: {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    return found


def test_no_room_imports_another_rooms_private_names(tmp_path):
    root = Path(__file__).resolve().parent.parent / "raychunk"
    assert _private_imports(root) == []
    (tmp_path / "raychunk").mkdir()
    (tmp_path / "raychunk" / "a.py").write_text("def f():\n    from raychunk.tokens import _last_cut\n")
    assert _private_imports(tmp_path / "raychunk") == ["raychunk/a.py: raychunk.tokens._last_cut"]
