"""Fidelity: does the parser hand the chunker what the author wrote? Known answers, section by section.

    python benchmarks/fidelity.py                      # every section at full size
    python benchmarks/fidelity.py --fast               # the CI size (seconds; tests/test_fidelity.py)
    python benchmarks/fidelity.py --sections lists,quotes --json after.json
    python benchmarks/fidelity.py --compare before.json   # these figures and their change since

Every case is a document made here (or a hand-labelled real one) whose truth is known exactly: the
tables' cells, the lists' items with their markers and depth, the block quotes. A case is parsed
with ``parse_document`` as the job parses it and chunked by the structure strategy with room for a
whole case in one chunk, so what is scored is what the parser gives and the chunk text carries.

Figures (each ``ok / total``, per section and per format):
- ``cells``: truth cells found with the same text at the same (row, column) of the table matched to
  theirs (each found table matched once, to the truth table it shares most cells with); text is
  compared with whitespace collapsed and ``;`` ignored (a line break in a cell may read as one);
- ``rows``: truth rows whose every cell is right; ``header rows``: tables with the right count;
- ``list items``: items whose line, as the author wrote it (``ListItem.line``: indent two spaces
  per level, the marker, the text), is a line of a chunk text;
- ``quotes``: block quotes whose text is in one chunk, whole and in order;
- ``markup-free chunks``: chunks whose embedded text holds no HTML tag.

Sections live in modules of their own (``SECTION_MODULES``), one per concern, each a mapping
``SECTIONS = {name: function(fast: bool) -> Section}`` built from the helpers here (``Section``,
``score_tables``, ``score_lists``, ``score_quotes``, ``parse_and_chunk``). A new section is a new
module and one line in ``SECTION_MODULES``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import random
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # this checkout's raychunk, not an installed one (as the other benchmarks)
sys.path.insert(0, str(HERE))
if __name__ == "__main__":
    sys.modules.setdefault("fidelity", sys.modules["__main__"])  # the section modules import these helpers

# One line per section module (text formats, PDF tables, OCR, office files, legacy Word, books, XML);
# each defines SECTIONS.
SECTION_MODULES = (
    "fidelity_text",
    "fidelity_ocr",
    "fidelity_pdf",
    "fidelity_code",
    "fidelity_layout",
    "fidelity_slides",
    "fidelity_docx",
    "fidelity_legacy",
    "fidelity_sheets",
    "fidelity_books",
    "fidelity_xml",
    "fidelity_markup",
    "fidelity_man",
)

Grid = tuple[tuple[str, ...], ...]
_ITEM_START = re.compile(r"\s*(?:[-*+]|\d+[.)]|[a-zA-Z][.)]|[ivxlcdmIVXLCDM]+[.)])(?:\s|$)")
_TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]*)?/?>|<!--")


@dataclass(frozen=True, slots=True)
class TruthTable:
    """A table as a reader reads it: every cell at its (row, column), a spanning cell's text in each
    column and row it covers; ``header_rows`` leading rows are headers."""

    rows: Grid
    header_rows: int = 1


@dataclass(frozen=True, slots=True)
class ListItem:
    """One list item as the author wrote it: ``marker`` is ``-`` for any bullet, the number as the
    reader sees it (``7.``, ``b)``, ``iv.``), with a task box after it (``- [x]``); a definition is
    ``Term: definition`` with an empty marker."""

    text: str
    marker: str = "-"
    level: int = 0

    @property
    def line(self) -> str:
        return "  " * self.level + (f"{self.marker} {self.text}" if self.marker else self.text)


@dataclass(slots=True)
class Tally:
    ok: int = 0
    total: int = 0

    def add(self, ok: int, total: int) -> None:
        self.ok += ok
        self.total += total

    @property
    def accuracy(self) -> float | None:
        return self.ok / self.total if self.total else None


@dataclass(slots=True)
class Section:
    """A section's figures: ``figures[figure][format]`` tallies, and the first misses, named."""

    name: str
    cases: int = 0
    figures: dict[str, dict[str, Tally]] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, figure: str, fmt: str, ok: int, total: int) -> None:
        self.figures.setdefault(figure, {}).setdefault(fmt, Tally()).add(ok, total)

    def miss(self, text: str) -> None:
        if len(self.misses) < 40:
            self.misses.append(text)

    def total(self, figure: str) -> Tally:
        t = Tally()
        for x in self.figures.get(figure, {}).values():
            t.add(x.ok, x.total)
        return t

    def to_dict(self) -> dict:
        return {
            "cases": self.cases,
            "seconds": round(self.seconds, 2),
            "figures": {
                fig: {
                    "all": _tally_dict(self.total(fig)),
                    **{fmt: _tally_dict(t) for fmt, t in sorted(by.items())},
                }
                for fig, by in self.figures.items()
            },
            "misses": self.misses,
        }


def _tally_dict(t: Tally) -> dict:
    acc = t.accuracy
    return {"ok": t.ok, "total": t.total, "accuracy": None if acc is None else round(acc, 4)}


# -- parsing and chunking a case ---------------------------------------------------------------------

_COUNTER = None


def counter():
    """The embedder's tokenizer, loaded once (from the installed model package: nothing downloaded)."""
    global _COUNTER
    if _COUNTER is None:
        from raychunk.tokens import DEFAULT_TOKENIZER, load_counter

        _COUNTER = load_counter(DEFAULT_TOKENIZER)
    return _COUNTER


_ROMAN = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL")]
_ROMAN += [(10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def roman(n: int) -> str:
    """``n`` in upper-case roman numerals, as a truth writes a list's number (the sections' own, not
    raychunk's)."""
    out = []
    for v, s in _ROMAN:
        while n >= v:
            out.append(s)
            n -= v
    return "".join(out)


def parse_and_chunk(data: bytes, name: str, *, max_tokens: int = 2048, table_max_tokens: int | None = None):
    """``(parsed, chunks)`` of one case: parsed as the job parses it, chunked by the structure
    strategy (a cap large enough that a case's list or table is one chunk unless asked otherwise)."""
    from raychunk.chunking import chunk_document
    from raychunk.chunking.model import Profile
    from raychunk.parse import parse_document

    parsed = parse_document(data, name)
    profile = Profile(strategy="structure", max_tokens=max_tokens, table_max_tokens=table_max_tokens)
    return parsed, chunk_document(parsed, profile, counter())


def body(chunk) -> str:
    """A chunk's embedded text less its header line."""
    text = chunk.text
    return text[len(chunk.header) + 2 :] if chunk.header and text.startswith(chunk.header + "\n\n") else text


# -- scoring ------------------------------------------------------------------------------------------


def norm_cell(s: str) -> str:
    """A cell's text for comparison: whitespace collapsed, ``;`` (a line break read as one) ignored."""
    return " ".join(s.replace(";", " ").split())


def score_tables(
    section: Section, case: str, fmt: str, truth: Sequence[TruthTable], found: Sequence[tuple[Grid, int]]
) -> None:
    """Cells, rows and header-row counts of ``truth`` against the tables ``found`` (rows, header
    rows), each found table matched to at most one truth table: the one it shares most cells with."""
    free = list(found)
    for k, t in enumerate(truth):
        cells = sum(len(r) for r in t.rows)
        best, best_ok = None, -1
        for cand in free:
            ok = _cells_ok(t.rows, cand[0])
            if ok > best_ok:
                best, best_ok = cand, ok
        if best is not None and best_ok > 0:
            free.remove(best)
        else:
            best, best_ok = None, 0
        rows_ok = 0
        for i, row in enumerate(t.rows):
            got = best[0][i] if best is not None and i < len(best[0]) else None
            if got is not None and len(got) == len(row) and all(map(_same, row, got)):
                rows_ok += 1
        heads = int(best is not None and best[1] == t.header_rows)
        section.add("cells", fmt, best_ok, cells)
        section.add("rows", fmt, rows_ok, len(t.rows))
        section.add("header rows", fmt, heads, 1)
        if best is None:
            section.miss(f"{case} table {k}: not found; want {t.rows[:3]}")
        elif best_ok < cells or not heads:
            wrong = next(
                (
                    (i, j, cell, best[0][i][j] if i < len(best[0]) and j < len(best[0][i]) else None)
                    for i, row in enumerate(t.rows)
                    for j, cell in enumerate(row)
                    if not (i < len(best[0]) and j < len(best[0][i]) and _same(cell, best[0][i][j]))
                ),
                None,
            )
            where = f"first wrong cell {wrong[:2]}: want {wrong[2]!r} got {wrong[3]!r}" if wrong else ""
            section.miss(
                f"{case} table {k}: {best_ok}/{cells} cells, header rows {best[1]} (want {t.header_rows}); {where}"
            )


def _same(a: str, b: str) -> bool:
    return norm_cell(a) == norm_cell(b)


def _cells_ok(truth: Grid, got: Grid) -> int:
    return sum(
        1
        for i, row in enumerate(truth)
        for j, cell in enumerate(row)
        if i < len(got) and j < len(got[i]) and _same(cell, got[i][j])
    )


def score_lists(section: Section, case: str, fmt: str, truth: Sequence[ListItem], chunks: Iterable) -> None:
    """Each truth item whose line is a line of some chunk's text, or the line with the lines that
    go on its text (a wrapped item's lazy continuation, as Markdown and AsciiDoc keep it)."""
    lines = set()
    for c in chunks:
        rows = [line.rstrip() for line in body(c).split("\n")]
        lines.update(rows)
        for i, row in enumerate(rows):
            joined = row
            for more in rows[i + 1 : i + 4]:
                if not more.strip() or _ITEM_START.match(more):
                    break
                joined += " " + more.strip()
                lines.add(joined)
    ok = 0
    for item in truth:
        if item.line in lines:
            ok += 1
        else:
            near = [x for x in lines if item.text and item.text in x]
            section.miss(f"{case}: want {item.line!r}, found {near[:2]!r}")
    section.add("list items", fmt, ok, len(truth))


def score_quotes(section: Section, case: str, fmt: str, truth: Sequence[str], chunks: Iterable) -> None:
    """Each quote whose text (whitespace collapsed) is in one chunk's text, whole."""
    bodies = [" ".join(body(c).split()) for c in chunks]
    ok = 0
    for q in truth:
        want = " ".join(q.split())
        if any(want in b for b in bodies):
            ok += 1
        else:
            section.miss(f"{case}: quote {want[:60]!r} not whole in any chunk")
    section.add("quotes", fmt, ok, len(truth))


def score_markup(section: Section, case: str, fmt: str, chunks: Sequence) -> None:
    """Chunks whose embedded text holds no HTML tag (code chunks excepted: a tag there is code)."""
    chunks = [c for c in chunks if "code" not in c.block_kinds]
    clean = [c for c in chunks if not _TAG.search(c.text)]
    for c in chunks:
        if c not in clean:
            tag = _TAG.search(c.text)
            section.miss(f"{case}: a chunk holds {c.text[max(0, tag.start() - 20) : tag.end() + 20]!r}")
            break
    section.add("markup-free chunks", fmt, len(clean), len(chunks))


def squash(s: str) -> str:
    return " ".join(s.split())


class Fresh:
    """Texts no other text of the case holds or is held by (any case), so ``find`` is exact."""

    def __init__(self, rng: random.Random, words: Sequence[str]):
        self.rng = rng
        self.words = words
        self.used: list[str] = []

    def __call__(self, k: int, words: Sequence[str] | None = None, cap: bool = True) -> str:
        words = words or self.words
        while True:
            t = " ".join(self.rng.choice(words) for _ in range(k))
            t = f"{t.capitalize() if cap else t} {self.rng.randint(100, 999)}"
            low = t.lower()
            if not any(low in u or u in low for u in self.used):
                self.used.append(low)
                return t


def new_truth() -> dict:
    return {
        "headings": [],  # (text, level; None where levels are not consistent)
        "under": [],  # (text, heading; None before any heading)
        "items": [],
        "tables": [],
        "quotes": [],
        "order": [],
        "title": "",
    }


# -- scoring a document's structure, every generated markup alike ---------------------------------------------------------------------


def score_document(section: Section, case: str, fmt: str, parsed, chunks, t: dict) -> None:
    blocks = [b for b in parsed.blocks if b.kind != "page_break"]
    heads: dict[str, int] = {}
    for b in blocks:
        if b.kind == "heading":
            heads.setdefault(squash(b.text), b.level)
    ok = 0
    for text, level in t["headings"]:
        got = heads.get(squash(text))
        if got is not None and (level is None or got == level):
            ok += 1
        else:
            section.miss(f"{case}: heading {text!r} level {level}: got {got if got else 'no heading'}")
    if t["headings"]:
        section.add("headings", fmt, ok, len(t["headings"]))
    ok = 0
    for text, heading in t["under"]:
        b = next((b for b in blocks if b.kind != "heading" and text in squash(b.text)), None)
        path = b.heading_path if b is not None else None
        if path is not None and (path[-1:] == (heading,) if heading else not path):
            ok += 1
        else:
            section.miss(f"{case}: {text[:40]!r} under {path!r}, want under {heading!r}")
    section.add("under their heading", fmt, ok, len(t["under"]))
    if t["items"]:
        score_lists(section, case, fmt, t["items"], chunks)
    if t["tables"]:
        found = [(b.rows, b.header_rows) for b in blocks if b.kind == "table"]
        score_tables(section, case, fmt, t["tables"], found)
    if t["quotes"]:
        score_quotes(section, case, fmt, t["quotes"], chunks)
    text = squash(parsed.text)
    at = [text.find(squash(x)) for x in t["order"]]
    ok = sum(1 for a, b in zip(at, at[1:]) if 0 <= a < b)
    if ok < len(at) - 1:
        k = next(i for i, (a, b) in enumerate(zip(at, at[1:])) if not 0 <= a < b)
        section.miss(f"{case}: {ok}/{len(at) - 1} in order; first out: {t['order'][k + 1][:40]!r}")
    section.add("read in order", fmt, ok, len(at) - 1)
    if t["title"]:
        good = parsed.document.title == t["title"] or t["title"] in parsed.text
        if not good:
            section.miss(f"{case}: title {t['title']!r}: got {parsed.document.title!r}")
        section.add("title", fmt, int(good), 1)
    section.cases += 1


def score_code(section: Section, case: str, fmt: str, parsed, code: Sequence[str]) -> None:
    """``code kept as code``: each truth code block a code block of the parse with the code exactly."""
    codes = [b.text.rstrip("\n") for b in parsed.blocks if b.kind == "code"]
    ok = 0
    for c in code:
        if c in codes:
            ok += 1
        else:
            first = c.split("\n")[0]
            got = next((b for b in parsed.blocks if first in b.text), None)
            section.miss(
                f"{case}: code {first!r}: got {got.kind if got else 'nothing'} {got.text[:60] if got else ''!r}"
            )
    if code:
        section.add("code kept as code", fmt, ok, len(code))


def present(section: Section, case: str, fmt: str, figure: str, texts, text: str) -> None:
    """``figure``: each of ``texts`` is in the document's ``text`` exactly."""
    ok = 0
    for x in texts:
        if x in text:
            ok += 1
        else:
            near = next((w for w in x.split() if len(w) > 3 and w in text), "")
            at = text.find(near) if near else -1
            got = text[max(0, at - 20) : at + len(x) + 20] if at >= 0 else "nothing like it"
            section.miss(f"{case}: {figure}: {x!r} not in the text; near: {got!r}")
    if texts:
        section.add(figure, fmt, ok, len(texts))


# -- the run ------------------------------------------------------------------------------------------


def sections() -> dict[str, Callable[[bool], Section]]:
    out: dict[str, Callable[[bool], Section]] = {}
    for name in SECTION_MODULES:
        out.update(importlib.import_module(name).SECTIONS)
    return out


def run(names: Sequence[str] | None = None, *, fast: bool = False) -> dict[str, Section]:
    known = sections()
    unknown = [n for n in names or () if n not in known]
    if unknown:
        raise SystemExit(f"unknown section(s) {', '.join(unknown)}; known: {', '.join(known)}")
    out = {}
    for name in names or known:
        t0 = time.perf_counter()
        s = known[name](fast)
        s.seconds = time.perf_counter() - t0
        out[name] = s
    return out


def report(results: dict[str, Section], previous: dict | None = None) -> str:
    lines = []
    for name, s in results.items():
        lines.append(f"{name}  ({s.cases} cases, {s.seconds:.1f} s)")
        before = (previous or {}).get("sections", {}).get(name, {}).get("figures", {})
        for fig, by in s.figures.items():
            for fmt in ["all", *sorted(by)] if len(by) > 1 else ["all"]:
                t = s.total(fig) if fmt == "all" else by[fmt]
                acc = t.accuracy
                line = (
                    f"  {fig:<20} {fmt:<10} {t.ok:>5}/{t.total:<5} {'-' if acc is None else f'{acc:.3f}':>6}"
                )
                was = before.get(fig, {}).get(fmt, {}).get("accuracy")
                if was is not None and acc is not None:
                    line += f"   was {was:.3f} ({acc - was:+.3f})"
                lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fast", action="store_true", help="the CI size: fewer generated cases")
    ap.add_argument("--sections", default="", help="comma-separated section names (default: all)")
    ap.add_argument("--json", help="write the figures (and the first misses) here")
    ap.add_argument("--compare", help="a --json file of an earlier run: print the change")
    ap.add_argument("--misses", type=int, default=0, help="print up to N misses per section")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.sections.split(",") if n.strip()] or None
    results = run(names, fast=args.fast)
    previous = json.loads(Path(args.compare).read_text()) if args.compare else None
    print(report(results, previous))
    if args.misses:
        for name, s in results.items():
            for m in s.misses[: args.misses]:
                print(f"  miss {name}: {m}")
    if args.json:
        out = {
            "fast": args.fast,
            "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores, Python {platform.python_version()}",
            "sections": {name: s.to_dict() for name, s in results.items()},
        }
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
