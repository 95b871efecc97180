"""The import graph of raychunk/, from the source (``ast``, lazy imports included), checked against
its layers: an arrow may point down or sideways, never up.

    python scripts/import_graph.py          # every arrow, grouped by layer; exits 1 on an upward one
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "raychunk"

# Lowest first. A module may import its own layer or any layer below it.
LAYERS: list[tuple[str, ...]] = [
    (
        "raychunk.document",
        "raychunk.render",
        "raychunk.models",
        "raychunk.onnx_encoder",
        "raychunk.bert_encoder",
        "raychunk.stats",
        "raychunk._unstructured",
        "raychunk.isolate",
        "raychunk.faults",
        "raychunk.step",
    ),
    ("raychunk.tokens", "raychunk.classify", "raychunk.parse", "raychunk.chunking"),
    (
        "raychunk.config",
        "raychunk.schema",
        "raychunk.io",
        "raychunk.dedupe",
        "raychunk.incremental",
        "raychunk.pricing",
        "raychunk.projection",
        "raychunk.embed",
        "raychunk.plan",
        "raychunk.merge",
    ),
    ("raychunk.evaluation", "raychunk.peers", "raychunk.document_steps"),
    (
        "raychunk.pipeline",
        "raychunk.corpus",
        "raychunk.blocks",
        "raychunk.listing",
        "raychunk.sink",
        "raychunk.publish",
        "raychunk.report",
        "raychunk.destinations",
        "raychunk.progress",
    ),
    ("raychunk.jobs",),
    ("raychunk.cli", "raychunk.__main__"),
]
# Peers that must not know each other, and modules that must stay free of the heavy runtime.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "raychunk.chunking": ("ray", "raychunk.parse", "raychunk.embed"),
    "raychunk.tokens": ("ray", "raychunk.parse", "raychunk.embed", "raychunk.chunking"),
    "raychunk.parse": ("ray", "raychunk.chunking", "raychunk.embed"),
    "raychunk.evaluation": ("ray", "raychunk.jobs", "raychunk.pipeline"),
    "raychunk.peers": ("ray", "raychunk.parse", "raychunk.embed", "raychunk.document_steps"),
    "raychunk.projection": ("ray", "raychunk.embed", "raychunk.parse", "raychunk.chunking"),
    "raychunk.destinations": ("ray", "raychunk.embed", "raychunk.parse", "raychunk.chunking"),
}
RAY_ALLOWED_FROM = 4  # only the layers that run the job import ray


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function, as absolute names."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.update(f"{base}.{a.name}" for a in node.names)
    return found


def graph() -> dict[str, set[str]]:
    """Module → the raychunk modules and top-level third-party packages it imports."""
    out = {}
    modules = {module_name(p) for p in PACKAGE.rglob("*.py")}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        edges = set()
        for imp in imports_of(path):
            if imp.startswith("raychunk"):
                while imp not in modules and "." in imp:
                    imp = imp.rpartition(".")[0]
                if imp != name:
                    edges.add(imp)
            else:
                edges.add(imp.split(".")[0])
        out[name] = edges
    return out


def layer_of(module: str) -> int | None:
    for i, layer in enumerate(LAYERS):
        if any(module == m or module.startswith(m + ".") for m in layer):
            return i
    return None


def violations(g: dict[str, set[str]]) -> list[str]:
    bad = []
    for src, targets in sorted(g.items()):
        ls = layer_of(src)
        if ls is None:
            if src != "raychunk" and not src.startswith("raychunk.configs"):
                bad.append(f"{src}: in no layer of scripts/import_graph.py")
            continue
        for t in sorted(targets):
            if t == "ray" and ls < RAY_ALLOWED_FROM:
                bad.append(f"{src} → ray (only layers {RAY_ALLOWED_FROM}+ run the job)")
            for prefix, banned in FORBIDDEN.items():
                if (src == prefix or src.startswith(prefix + ".")) and any(
                    t == b or t.startswith(b + ".") for b in banned
                ):
                    bad.append(f"{src} → {t} (forbidden for {prefix})")
            lt = layer_of(t) if t.startswith("raychunk") else None
            if lt is not None and lt > ls:
                bad.append(f"{src} (layer {ls}) → {t} (layer {lt}): upward")
    return bad


def main() -> int:
    g = graph()
    for i in range(len(LAYERS)):
        print(f"layer {i}")
        for src in sorted(m for m in g if layer_of(m) == i):
            inner = sorted(t for t in g[src] if t.startswith("raychunk"))
            print(f"  {src} → {', '.join(inner) if inner else '(nothing in raychunk)'}")
    bad = violations(g)
    print("\n" + ("\n".join(bad) if bad else "no arrow points up"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
