"""Office, book and e-mail parse cost: raychunk's own readers (``parse_document``: ``parse/word.py``,
``parse/sheets.py``, ``parse/slides.py``, ``parse/mail.py``, ``parse/book.py``, ``parse/pandoc.py``)
against unstructured's ``partition_docx``, ``partition_xlsx``, ``partition_pptx``,
``partition_email``, ``partition_msg``, ``partition_epub``, ``partition_rtf``, ``partition_org``,
``partition_doc`` and ``partition_ppt`` (what raychunk called before, with the same options: tables
inferred, slide notes, no attachments, no language detection, no narrative-text model in a docx; a
``.doc`` or ``.ppt`` is converted by LibreOffice first, and is left out of the run where ``soffice``
is not installed), on the same files side by side.

    python benchmarks/office_parse.py                      # samples/ and ../shared/corpus/other
    python benchmarks/office_parse.py --corpus DIR --rounds 5

Two figures each:
- **first files, cold**: a fresh interpreter that imports what it needs and parses the first file
  of each format (a Word document, a deck, an e-mail, a book, ...), wall seconds, best of ``--rounds`` (what a
  job's document process pays before its first office file: the cost that sits on a small run's
  path);
- **warm**: every file parsed again in this process, passes alternating, CPU ms a file (pandoc's
  included, a process of its own on both sides), best of
  ``--rounds``, for all files and for each format.
Then what each gives a reader over the same files: headings, list items and tables.
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# extension: (raychunk's reader as module.function, format, unstructured's partitioner, its options)
FORMATS = {
    ".docx": ("word.read_docx", "docx", "docx.partition_docx", {"infer_table_structure": True}),
    ".xlsx": ("sheets.read_xlsx", "xlsx", "xlsx.partition_xlsx", {"infer_table_structure": True}),
    ".pptx": ("slides.read_pptx", "pptx", "pptx.partition_pptx",
              {"infer_table_structure": True, "include_slide_notes": True}),
    ".eml": ("mail.read_eml", "eml", "email.partition_email", {"process_attachments": False}),
    ".msg": ("mail.read_msg", "msg", "msg.partition_msg", {"process_attachments": False}),
    ".epub": ("book.read_epub", "epub", "epub.partition_epub", {}),
    ".rtf": ("pandoc.read_rtf", "rtf", "rtf.partition_rtf", {}),
    ".org": ("pandoc.read_org", "org", "org.partition_org", {}),
    ".doc": ("word.read_doc", "doc", "doc.partition_doc", {"infer_table_structure": True}),
    ".ppt": ("slides.read_ppt", "ppt", "ppt.partition_ppt",
             {"infer_table_structure": True, "include_slide_notes": True}),
}  # fmt: skip

_COLD = """
import sys
sys.path[:0] = [{root!r}, {here!r}]
from office_parse import parse_with
parse_with(sys.argv[1], [(p, open(p, "rb").read()) for p in sys.argv[2:]])
"""


def _never_narrative(text: str, *args, **kwargs) -> bool:
    return False


def _cpu() -> float:
    """This process's CPU seconds and its finished children's (pandoc, which both sides run)."""
    import resource

    return sum(
        r.ru_utime + r.ru_stime
        for r in (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
    )


def parse_with(who: str, files: list[tuple[str, bytes]]) -> list:
    """Each file parsed by ``who``: "raychunk" (``parse_document``, with the package checks every
    office file gets), "readers" (raychunk's readers alone) or "unstructured" (its partitioners, as
    raychunk called them: no language detection)."""
    import importlib

    if who == "raychunk":
        from raychunk.parse import parse_document

        return [parse_document(data, name) for name, data in files]
    out = []
    if who == "unstructured":
        from raychunk._unstructured import prepare_unstructured

        prepare_unstructured()
        # as raychunk called it: without the spaCy narrative-text model it had no use for in a docx
        # (a .doc is partitioned as the docx LibreOffice makes of it)
        importlib.import_module("unstructured.partition.docx").is_possible_narrative_text = _never_narrative
    from raychunk.document import Document

    for name, data in files:
        reader, fmt, partitioner, options = FORMATS[Path(name).suffix]
        if who == "readers":
            module, func = reader.rsplit(".", 1)
            read = getattr(importlib.import_module(f"raychunk.parse.{module}"), func)
            out.append(read(data, Document("id", name, fmt, "ok")))
        else:
            module, func = partitioner.rsplit(".", 1)
            partition = getattr(importlib.import_module(f"unstructured.partition.{module}"), func)
            out.append(partition(file=io.BytesIO(data), languages=[""], **options))
    return out


def _cold(who: str, paths: list[str]) -> float:
    t = time.perf_counter()
    code = _COLD.format(root=str(ROOT), here=str(ROOT / "benchmarks"))
    subprocess.run([sys.executable, "-c", code, who, *paths], check=True, cwd=ROOT)
    return time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", action="append", default=[])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    folders = args.corpus or [str(ROOT / "samples"), str(ROOT.parent / "shared" / "corpus" / "other")]
    paths = sorted(str(p) for d in folders for p in Path(d).glob("*") if p.suffix in FORMATS)
    if shutil.which("soffice") is None and any(p.endswith((".doc", ".ppt")) for p in paths):
        print("soffice (LibreOffice) is not installed: unstructured cannot read .doc or .ppt, left out")
        paths = [p for p in paths if not p.endswith((".doc", ".ppt"))]
    if not paths:
        print(f"{', '.join(folders)}: no {', '.join(FORMATS)} files")
        return 1
    files = [(p, Path(p).read_bytes()) for p in paths]
    first = [
        next(p for p in paths if p.endswith(ext)) for ext in FORMATS if any(x.endswith(ext) for x in paths)
    ]
    names = {"raychunk": "raychunk", "readers": "raychunk's readers alone", "unstructured": "unstructured"}
    cold = {"raychunk": float("inf"), "unstructured": float("inf")}
    for _ in range(args.rounds):
        for who in cold:
            cold[who] = min(cold[who], _cold(who, first))
    groups = {"all": files, **{ext: [f for f in files if f[0].endswith(ext)] for ext in FORMATS}}
    groups = {k: v for k, v in groups.items() if v}
    for who in names:
        parse_with(who, files)  # imports outside the warm timing
    warm = {(who, g): float("inf") for who in names for g in groups}
    out = {}
    for _ in range(args.rounds):
        for g, group in groups.items():
            for who in names:
                t = _cpu()
                parsed = parse_with(who, group)
                warm[who, g] = min(warm[who, g], max(_cpu() - t, 1e-6))
                if g == "all":
                    out[who] = parsed
    size = sum(len(d) for _, d in files)
    kinds = ", ".join(f"{len(v)} {k}" for k, v in groups.items() if k != "all")
    print(
        f"{len(files)} files ({kinds}), {size / 1e6:.2f} MB, best of {args.rounds}, the parsers alternating"
    )
    print(
        f"  the first file of each format in a fresh interpreter ({', '.join(Path(p).name for p in first)}), wall:"
    )
    for who, s in cold.items():
        print(f"    {names[who]:26} {s:6.2f} s")
    print(f"    raychunk is {cold['unstructured'] / cold['raychunk']:.2f}x unstructured's speed")
    print("  every file again, warm, CPU ms a file (raychunk: parse_document, with the package checks every")
    print(
        "  office file gets, the zip bomb and DOCTYPE checks and the package's title; the other two alone):"
    )
    print(f"    {'':26} " + " ".join(f"{g:>9}" for g in groups))
    for who in names:
        print(
            f"    {names[who]:26} "
            + " ".join(f"{1000 * warm[who, g] / len(v):9.1f}" for g, v in groups.items())
        )
    print(
        "    raychunk's readers, x unstructured's speed: "
        + ", ".join(f"{g} {warm['unstructured', g] / warm['readers', g]:.2f}x" for g in groups)
    )
    ours = [b for d in out["raychunk"] for b in d.blocks]
    theirs = [e for els in out["unstructured"] for e in els]
    print(
        f"  headings: raychunk {sum(b.kind == 'heading' for b in ours)}, unstructured "
        f"{sum(e.category == 'Title' for e in theirs)}; list items: raychunk "
        f"{sum(b.kind == 'list_item' for b in ours)}, unstructured {sum(e.category == 'ListItem' for e in theirs)}; "
        f"tables: raychunk {sum(b.kind == 'table' for b in ours)}, unstructured "
        f"{sum(e.category == 'Table' for e in theirs)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
