"""Slides and e-mail parse cost: raychunk's own readers (``parse_document``: ``parse/slides.py``,
``parse/mail.py``) against unstructured's ``partition_pptx`` and ``partition_email`` (what raychunk
called before, with the same options: tables inferred, slide notes, no language detection), on the
same files side by side.

    python benchmarks/office_parse.py                      # samples/ and ../shared/corpus/other
    python benchmarks/office_parse.py --corpus DIR --rounds 5

Two figures each:
- **first file, cold**: a fresh interpreter that imports what it needs and parses one deck and one
  e-mail, wall seconds, best of ``--rounds`` (what a job's document process pays before its first
  slide or e-mail: the cost that sits on a small run's path);
- **warm**: every file parsed again in this process, passes alternating, CPU ms a file, best of
  ``--rounds``.
Then what each gives a reader over the same files: headings and list items.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_COLD = """
import io, sys
sys.path.insert(0, {root!r})
who, paths = sys.argv[1], sys.argv[2:]
if who == "raychunk":
    from raychunk.parse import parse_document
    for p in paths:
        parse_document(open(p, "rb").read(), p)
else:
    from raychunk._unstructured import prepare_unstructured
    prepare_unstructured()
    for p in paths:
        data = io.BytesIO(open(p, "rb").read())
        if p.endswith(".pptx"):
            from unstructured.partition.pptx import partition_pptx
            partition_pptx(file=data, languages=[""], infer_table_structure=True, include_slide_notes=True)
        else:
            from unstructured.partition.email import partition_email
            partition_email(file=data, languages=[""], process_attachments=False)
"""


def _cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _raychunk(files):
    from raychunk.parse import parse_document

    return [parse_document(data, name) for name, data in files]


def _readers(files):
    """raychunk's readers alone, as ``_unstructured`` calls the partitioners alone: no package checks."""
    from raychunk.document import Document
    from raychunk.parse.mail import read_eml
    from raychunk.parse.slides import read_pptx

    out = []
    for name, data in files:
        fmt = "pptx" if name.endswith(".pptx") else "eml"
        out.append((read_pptx if fmt == "pptx" else read_eml)(data, Document("id", name, fmt, "ok")))
    return out


def _unstructured(files):
    from raychunk._unstructured import prepare_unstructured

    prepare_unstructured()
    from unstructured.partition.email import partition_email
    from unstructured.partition.pptx import partition_pptx

    out = []
    for name, data in files:
        if name.endswith(".pptx"):
            out.append(
                partition_pptx(
                    file=io.BytesIO(data),
                    languages=[""],
                    infer_table_structure=True,
                    include_slide_notes=True,
                )
            )
        else:
            out.append(partition_email(file=io.BytesIO(data), languages=[""], process_attachments=False))
    return out


def _cold(who: str, paths: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", _COLD.format(root=str(ROOT)), who, *paths], check=True)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", default=[])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    folders = args.corpus or [str(ROOT / "samples"), str(ROOT.parent / "shared" / "corpus" / "other")]
    paths = sorted(str(p) for d in folders for p in Path(d).glob("*") if p.suffix in (".pptx", ".eml"))
    if not paths:
        print(f"{', '.join(folders)}: no .pptx or .eml files")
        return 1
    files = [(p, Path(p).read_bytes()) for p in paths]
    first = [
        next(p for p in paths if p.endswith(ext))
        for ext in (".pptx", ".eml")
        if any(x.endswith(ext) for x in paths)
    ]
    cold = {"raychunk": float("inf"), "unstructured": float("inf")}
    for _ in range(args.rounds):
        for who in cold:
            cold[who] = min(cold[who], _cold(who, first))
    _raychunk(files), _readers(files), _unstructured(files)  # imports outside the warm timing
    warm = {"raychunk": float("inf"), "raychunk's readers alone": float("inf"), "unstructured": float("inf")}
    out = {}
    for _ in range(args.rounds):
        for who, fn in (
            ("raychunk", _raychunk),
            ("raychunk's readers alone", _readers),
            ("unstructured", _unstructured),
        ):
            t = _cpu()
            out[who] = fn(files)
            warm[who] = min(warm[who], max(_cpu() - t, 1e-6))
    size = sum(len(d) for _, d in files)
    print(
        f"{len(files)} files (.pptx and .eml), {size / 1e6:.2f} MB, best of {args.rounds}, the two alternating"
    )
    print(f"  first deck and e-mail in a fresh interpreter ({len(first)} files), wall:")
    for who, s in cold.items():
        print(f"    {who:26} {s:6.2f} s")
    print(f"    raychunk is {cold['unstructured'] / cold['raychunk']:.2f}x unstructured's speed")
    print("  every file again, warm, CPU (raychunk: parse_document, with the package checks every office")
    print("  file gets, the zip bomb and DOCTYPE checks and the package's title; the other two alone):")
    for who, s in warm.items():
        print(f"    {who:26} {1000 * s / len(files):8.1f} ms a file")
    alone = warm["raychunk's readers alone"]
    print(f"    raychunk's readers are {warm['unstructured'] / alone:.2f}x unstructured's speed")
    ours = [b for d in out["raychunk"] for b in d.blocks]
    theirs = [e for els in out["unstructured"] for e in els]
    print(
        f"  headings: raychunk {sum(b.kind == 'heading' for b in ours)}, unstructured "
        f"{sum(e.category == 'Title' for e in theirs)}; list items: raychunk "
        f"{sum(b.kind == 'list_item' for b in ours)}, unstructured {sum(e.category == 'ListItem' for e in theirs)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
