"""reStructuredText parse cost: raychunk's (``parse_document``: pandoc in its sandbox with
``sphinx.lua``, then the HTML parser) against unstructured's ``partition_rst`` (pandoc, then its HTML
partitioner: what raychunk called before, and what a user of unstructured runs), the same files
side by side in one process, passes alternating, CPU seconds of the process and of the pandoc
processes it waits for.

    python benchmarks/rst_parse.py                        # evals/cmake/*.rst
    python benchmarks/rst_parse.py --corpus /usr/share/cmake-3.25/Help --limit 300 --rounds 3

Also printed, from the same files, what each gives a reader: version notes in words (``Added in
version 3.20``, against a bare ``3.20``) and the numbered list items that keep their numbers.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_BARE_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?")


def _cpu() -> float:
    """CPU seconds of this process and of the children it has waited for, to the microsecond
    (``os.times`` counts in clock ticks: a pass over one small file could read 0)."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _raychunk(files):
    from raychunk.parse import parse_document

    return [parse_document(data, name) for name, data in files]


def _unstructured(files):
    from raychunk._unstructured import prepare_unstructured

    prepare_unstructured()
    from unstructured.partition.rst import partition_rst

    return [partition_rst(file=io.BytesIO(data), languages=[""]) for _, data in files]


def _version_notes(docs, elements) -> tuple[int, int, int]:
    """Version notes in words in raychunk's blocks, bare version numbers there and in unstructured's
    elements (headings aside: CMake's release notes are headed by their version)."""
    words = sum(
        len(re.findall(r"(?:Added|Changed) in version|Deprecated since version", b.text))
        for d in docs
        for b in d.blocks
    )
    ours = sum(1 for d in docs for b in d.blocks if b.kind != "heading" and _BARE_VERSION.fullmatch(b.text))
    theirs = sum(
        1
        for els in elements
        for e in els
        if e.category != "Title" and _BARE_VERSION.fullmatch(e.text.strip())
    )
    return words, ours, theirs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(ROOT / "evals" / "cmake"))
    ap.add_argument("--limit", type=int, default=0, help="the first N .rst files only")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    paths = sorted(Path(args.corpus).rglob("*.rst"))
    if args.limit:
        paths = paths[: args.limit]
    files = [(str(p), p.read_bytes()) for p in paths]
    if not files:
        print(f"{args.corpus}: no .rst files")
        return 1
    size = sum(len(d) for _, d in files)
    _raychunk(files[:1]), _unstructured(files[:1])  # imports and first loads outside the timing
    best = {"raychunk": float("inf"), "unstructured partition_rst": float("inf")}
    out = {}
    for _ in range(args.rounds):
        for name, fn in (("raychunk", _raychunk), ("unstructured partition_rst", _unstructured)):
            t = _cpu()
            out[name] = fn(files)
            best[name] = min(best[name], max(_cpu() - t, 1e-6))
    print(
        f"{len(files)} .rst files, {size / 1e6:.2f} MB, best of {args.rounds} alternating passes, CPU with pandoc's"
    )
    for name, s in best.items():
        print(f"  {name:28} {1000 * s / len(files):8.1f} ms a file  {size / 1e6 / s:6.2f} MB/s")
    ratio = best["unstructured partition_rst"] / best["raychunk"]
    print(f"  raychunk is {ratio:.2f}x unstructured's speed")
    words, bare_ours, bare_theirs = _version_notes(out["raychunk"], out["unstructured partition_rst"])
    numbered = sum(
        1 for d in out["raychunk"] for b in d.blocks if b.kind == "list_item" and b.marker[:1].isalnum()
    )
    print(
        f"  version notes: raychunk {words} in words, {bare_ours} bare; unstructured {bare_theirs} bare numbers"
    )
    print(
        f"  numbered list items with their numbers: raychunk {numbered}; unstructured's elements carry none"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
