"""Fidelity sections ``doc`` and ``ppt``: the ``docx`` and ``slides`` sections' documents saved in
the Word and PowerPoint 97-2003 formats.

The documents and their truths are ``fidelity_docx.py``'s and ``fidelity_slides.py``'s (the same
seeds, the same order); each was saved by LibreOffice (``soffice --convert-to doc`` / ``ppt``) and is
kept in ``benchmarks/legacy/``, since LibreOffice is not part of the set-up (with ``unicode.doc`` and
``unicode.ppt``, text beyond one code page, for the tests).
``benchmarks/legacy/MANIFEST.json`` holds a hash of each document's truth: a change to a generator
that changes a truth stops the section until the files are written again (``python
benchmarks/fidelity_legacy.py --write``, which needs soffice).

Scored as the ``docx`` and ``slides`` sections score. What LibreOffice's export itself loses counts
as a miss here, reader or not:

- ``doc``: a list whose numbers run on from an earlier list is written as a list of its own, which
  starts again at 1 (LibreOffice reads its own ``.doc`` back so too); and the text boxes' story is
  not one msdoc2docx can place, so raychunk reads it at the end of the document (the row's reason
  says so): a text box counts when its text is read once, wherever;
- ``ppt``: a table is written as a group of text boxes and lines, not as a table.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fidelity import Section

FIXTURES = Path(__file__).resolve().parent / "legacy"
MANIFEST = FIXTURES / "MANIFEST.json"
COUNT = 30


def _word(rng):
    from fidelity_docx import document

    return document(rng)


def _deck(rng):
    from fidelity_slides import deck

    return deck(rng)


def _score_doc(s, case, data, truth):
    from fidelity_docx import score_document

    score_document(s, case, data, truth, fmt="doc")


def _score_ppt(s, case, data, truth):
    from fidelity_slides import score_deck

    score_deck(s, case, data, truth, fmt="ppt")


# section: (case prefix, the generator's seed, draw one, score one, LibreOffice's filter)
_KINDS = {
    "doc": ("doc", 1, _word, _score_doc, "doc:MS Word 97"),
    "ppt": ("deck", 11, _deck, _score_ppt, "ppt:MS PowerPoint 97"),
}


def _truth_hash(truth) -> str:
    return hashlib.sha256(json.dumps(truth, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def _section(name: str, fast: bool) -> Section:
    prefix, seed, draw, score, _ = _KINDS[name]
    s = Section(name)
    manifest = json.loads(MANIFEST.read_text())
    rng = random.Random(seed)
    for i in range(3 if fast else COUNT):
        _, truth = draw(rng)
        case = f"{prefix}-{i}"
        if manifest.get(f"{case}.{name}") != _truth_hash(truth):
            raise SystemExit(
                f"{MANIFEST}: {case}'s truth changed since its .{name} was written; run "
                "python benchmarks/fidelity_legacy.py --write (needs LibreOffice's soffice)"
            )
        score(s, case, (FIXTURES / f"{case}.{name}").read_bytes(), truth)
    return s


SECTIONS = {"doc": lambda fast: _section("doc", fast), "ppt": lambda fast: _section("ppt", fast)}


# Text beyond one code page, for the tests (``tests/test_parse_legacy.py``): a heading, a paragraph
# and a table's cells; a deck's title and bullets.
UNICODE = {
    "heading": "Überblick — 東京 Ω",
    "paragraph": "Naïve café, Привет мир, नमस्ते दुनिया, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢.",
    "cells": (("Größe", "値"), ("Ærø", "Ünïcødé")),
    "bullets": ("Привет мир", "東京タワー"),
}


def _unicode_docx() -> bytes:
    import io

    import docx

    d = docx.Document()
    d.add_heading(UNICODE["heading"], 1)
    d.add_paragraph(UNICODE["paragraph"])
    table = d.add_table(rows=2, cols=2)
    for r, row in enumerate(UNICODE["cells"]):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    out = io.BytesIO()
    d.save(out)
    return out.getvalue()


def _unicode_pptx() -> bytes:
    import io

    import pptx

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = UNICODE["heading"]
    frame = slide.placeholders[1].text_frame
    frame.text = UNICODE["bullets"][0]
    frame.add_paragraph().text = UNICODE["bullets"][1]
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def write() -> None:
    """Save the generators' documents with LibreOffice, and their truths' hashes."""
    soffice = shutil.which("soffice")
    if soffice is None:
        raise SystemExit("writing the legacy files needs LibreOffice (soffice)")
    FIXTURES.mkdir(exist_ok=True)
    manifest = {}
    for name, (prefix, seed, draw, _, target) in _KINDS.items():
        rng = random.Random(seed)
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for i in range(COUNT):
                data, truth = draw(rng)
                case = f"{prefix}-{i}"
                path = Path(tmp, f"{case}.{name}x")
                path.write_bytes(data)
                manifest[f"{case}.{name}"] = _truth_hash(truth)
                paths.append(str(path))
            subprocess.run(
                [soffice, "--headless", "--convert-to", target, "--outdir", str(FIXTURES), *paths],
                check=True,
                capture_output=True,
            )
    with tempfile.TemporaryDirectory() as tmp:
        for name, data, target in (
            ("unicode.docx", _unicode_docx(), "doc:MS Word 97"),
            ("unicode.pptx", _unicode_pptx(), "ppt:MS PowerPoint 97"),
        ):
            Path(tmp, name).write_bytes(data)
            subprocess.run(
                [
                    soffice,
                    "--headless",
                    "--convert-to",
                    target,
                    "--outdir",
                    str(FIXTURES),
                    str(Path(tmp, name)),
                ],
                check=True,
                capture_output=True,
            )
    MANIFEST.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    print(f"wrote {COUNT} files of each of {', '.join(_KINDS)} and {MANIFEST}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="write benchmarks/legacy/ again (needs soffice)")
    if ap.parse_args().write:
        write()
        sys.exit(0)
    ap.print_help()
