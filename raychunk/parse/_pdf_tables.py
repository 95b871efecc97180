"""Child process that runs pymupdf's table finder, so the parent can kill it when a page hangs.

Run as ``python -m raychunk.parse._pdf_tables FILE PAGE [PAGE ...]`` (1-based page numbers). It prints one JSON
line ``{"ready": true}`` once the file is open, then one line per page, in the order given:
``{"page": n, "tables": [{"bbox": [x0, y0, x1, y1], "rows": [[cell, ...], ...],
"header_external": bool, "header_names": [...],
"header_bbox": [...]}, ...]}`` or ``{"page": n, "error": "..."}``.
Coordinates are those of ``page.rect`` (rotation applied). Only the standard library and pymupdf are
imported here.
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> int:
    # MuPDF and pymupdf may print to stdout; keep the real stdout for our JSON lines only.
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    import pymupdf

    pymupdf.TOOLS.mupdf_display_errors(False)
    pymupdf.TOOLS.mupdf_display_warnings(False)
    path, pages = argv[0], [int(p) for p in argv[1:]]
    doc = pymupdf.open(path)
    out.write(json.dumps({"ready": True}) + "\n")
    for number in pages:
        try:
            page = doc[number - 1]
            found = page.find_tables()
            tables = []
            words = _words(page) if found.tables else []
            for table in found.tables:
                try:  # the header check renders the page; a broken page may fail there
                    header = table.header
                    external, hbox = bool(header.external), list(header.bbox)
                    names = _cell_texts([header.cells], words)[0] if external else []
                except Exception:
                    external, names, hbox = False, [], None
                tables.append(
                    {
                        "bbox": list(table.bbox),
                        "rows": _cell_texts([row.cells for row in table.rows], words),
                        "header_external": external,
                        "header_names": names,
                        "header_bbox": hbox,
                    }
                )
            line = {"page": number, "tables": tables}
        except Exception as e:  # one bad page must not lose the others
            line = {"page": number, "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return 0


def _words(page) -> list[tuple]:
    """The page's words in visual coordinates, in MuPDF's reading order.

    pymupdf 2.0's ``Table.extract()`` loses spaces between words and misplaces punctuation
    ("GabrielDiaz", "2100\\n,"), so cells are filled from MuPDF's own word segmentation instead.
    """
    import pymupdf

    m = page.rotation_matrix
    out = []
    for x0, y0, x1, y1, word, block, line, _ in page.get_text("words"):
        r = pymupdf.Rect(x0, y0, x1, y1) * m
        out.append(((r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2, word, (block, line)))
    return out


def _cell_texts(rows: list[list], words: list[tuple]) -> list[list[str | None]]:
    """Each word goes to the smallest cell holding its centre (merged cells overlap their parts)."""
    cells = [(i, j, c) for i, row in enumerate(rows) for j, c in enumerate(row) if c is not None]
    texts: dict[tuple[int, int], list[tuple[tuple, str]]] = {}
    for cx, cy, word, line in words:
        best, best_area = None, None
        for i, j, (x0, y0, x1, y1) in cells:
            if x0 <= cx <= x1 and y0 <= cy <= y1:
                area = (x1 - x0) * (y1 - y0)
                if best_area is None or area < best_area:
                    best, best_area = (i, j), area
        if best is not None:
            texts.setdefault(best, []).append((line, word))
    out = []
    for i, row in enumerate(rows):
        out_row = []
        for j, c in enumerate(row):
            if c is None:
                out_row.append(None)
                continue
            lines: list[list[str]] = []
            last = None
            for line, word in texts.get((i, j), ()):
                if line != last:
                    lines.append([])
                    last = line
                lines[-1].append(word)
            out_row.append("\n".join(" ".join(ws) for ws in lines))
        out.append(out_row)
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
