"""Fidelity section ``slides``: generated PowerPoint decks whose structure is known exactly.

Each deck is drawn by python-pptx with a fixed seed, a few slides each, as people lay them out: a
title placeholder (now and then dragged below the content, or a blank slide without one), body text
in the content placeholder whose bullets come from the master (no bullet of its own, some levels
nested, now and then a line with ``buNone``), a short label in a text box ("Owner: Lena Brandt"),
a table with a header row (sometimes a merged cell, whose text a reader sees in every cell it
covers), two notes side by side in a group, and speaker notes. Scored (``ok / total``):

- ``titles head their slide``: blocks of a titled slide whose heading path is that slide's title
  (the title's own heading included); a blank slide's blocks must sit under no title;
- ``list items``: bulleted body lines whose line (marker ``-``, indent per level) is in a chunk;
- ``not made headings``: text lines other than titles that are no heading (a label, a plain body line,
  a note);
- ``cells``, ``rows``, ``header rows``: as for the other table sections;
- ``read in order``: each slide's texts in the order a reader reads them (title, then top to bottom,
  left to right, then notes), consecutive pairs found in order in the document's text.
"""

from __future__ import annotations

import io
import random

from fidelity import ListItem, Section, TruthTable, parse_and_chunk, score_lists, score_tables

_WORDS = [
    "backup",
    "retention",
    "gateway",
    "storage",
    "region",
    "quota",
    "rollout",
    "billing",
    "agent",
    "upload",
    "cluster",
    "failover",
    "snapshot",
    "latency",
    "capacity",
    "tenant",
    "invoice",
    "archive",
    "policy",
    "replica",
]
_NAMES = ("Lena Brandt", "Omar Haddad", "Mei Chen", "Ravi Iyer", "Ana Souza")


def _phrase(rng: random.Random, k: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(k)]
    return " ".join(words).capitalize()


def deck(rng: random.Random, n: int = 4):
    """``(pptx bytes, truth)``; truth per slide: title (or None), ordered texts, list items, labels,
    tables."""
    import pptx
    from pptx.oxml.ns import qn
    from pptx.util import Inches

    prs = pptx.Presentation()
    truth = []
    used: set[str] = set()

    def fresh(k: int) -> str:
        while True:
            t = f"{_phrase(rng, k)} {rng.randint(100, 999)}"  # no text a prefix of another
            if t not in used:
                used.add(t)
                return t

    for _ in range(n):
        blank = rng.random() < 0.2
        slide = prs.slides.add_slide(prs.slide_layouts[6 if blank else 1])
        t = {"title": None, "order": [], "items": [], "labels": [], "tables": []}
        title_below = False
        if not blank:
            t["title"] = fresh(3)
            slide.shapes.title.text = t["title"]
            title_below = rng.random() < 0.3
            frame = slide.placeholders[1].text_frame
            lines = []
            for k in range(rng.randint(2, 5)):
                level = 1 if k and rng.random() < 0.3 else 0
                plain = k and rng.random() < 0.15
                lines.append((fresh(rng.randint(4, 8)), level, plain))
            for k, (text, level, plain) in enumerate(lines):
                para = frame.paragraphs[0] if k == 0 else frame.add_paragraph()
                para.text, para.level = text, level
                if plain:
                    ppr = para._p.get_or_add_pPr()
                    ppr.append(ppr.makeelement(qn("a:buNone"), {}))
                    t["labels"].append(text)
                else:
                    t["items"].append(ListItem(text, "-", level))
            if title_below:  # dragged to the foot of the slide, the body moved up
                slide.shapes.title.top = Inches(6.6)
                slide.placeholders[1].top = Inches(0.4)
            t["order"] += [x[0] for x in lines]
        label = f"Owner: {rng.choice(_NAMES)} #{rng.randint(1, 999):03d}"
        while label in used:
            label = f"Owner: {rng.choice(_NAMES)} #{rng.randint(1, 999):03d}"
        used.add(label)
        slide.shapes.add_textbox(Inches(0.5), Inches(5.0), Inches(4), Inches(0.4)).text_frame.text = label
        t["labels"].append(label)
        t["order"].append(label)
        if rng.random() < 0.6:
            rows = [(fresh(1), fresh(1), fresh(1))] + [
                (fresh(2), str(rng.randint(1, 900)), fresh(1)) for _ in range(3)
            ]
            shape = slide.shapes.add_table(len(rows), 3, Inches(5), Inches(5.0), Inches(4.5), Inches(1.2))
            for r, row in enumerate(rows):
                for c, value in enumerate(row):
                    shape.table.cell(r, c).text = value
            grid = [list(r) for r in rows]
            if rng.random() < 0.5:
                shape.table.cell(2, 2).text = ""  # merging moves a covered cell's text into the origin
                shape.table.cell(1, 2).merge(shape.table.cell(2, 2))
                grid[2][2] = grid[1][2]
            t["tables"].append(TruthTable(tuple(tuple(r) for r in grid), 1))
        left, right = fresh(3), fresh(3)
        group = slide.shapes.add_group_shape()
        group.shapes.add_textbox(Inches(0.5), Inches(6.0), Inches(4), Inches(0.4)).text_frame.text = left
        group.shapes.add_textbox(Inches(5.0), Inches(6.0), Inches(4), Inches(0.4)).text_frame.text = right
        t["labels"] += [left, right]
        t["order"] += [left, right]
        if rng.random() < 0.5:
            note = fresh(6) + "."
            slide.notes_slide.notes_text_frame.text = note
            t["labels"].append(note)
            t["order"].append(note)
        if t["title"]:  # a title opens its slide wherever it sits
            t["order"].insert(0, t["title"])
        truth.append(t)
    buf = io.BytesIO()
    prs.save(buf)
    return buf.getvalue(), truth


def score_deck(section: Section, case: str, data: bytes, truth: list[dict], fmt: str = "pptx") -> None:
    """Score one deck against its truth; ``fmt`` is its extension (``ppt``: the same deck saved as
    PowerPoint 97-2003, ``fidelity_legacy.py``)."""
    parsed, chunks = parse_and_chunk(data, f"{case}.{fmt}")
    headed = total = 0
    for k, t in enumerate(truth, 1):
        for b in parsed.blocks:
            if b.kind == "page_break" or b.pages != (k,):
                continue
            total += 1
            own = (t["title"],) if t["title"] else ()
            path = b.heading_path + ((b.text,) if b.kind == "heading" else ())
            if path == own:
                headed += 1
            else:
                section.miss(f"{case} slide {k}: {b.text[:40]!r} under {path!r}, want {own!r}")
    section.add("titles head their slide", fmt, headed, total)
    score_lists(section, case, fmt, [i for t in truth for i in t["items"]], chunks)
    headings = {b.text for b in parsed.blocks if b.kind == "heading"}
    labels = [x for t in truth for x in t["labels"]]
    kept = [x for x in labels if x not in headings]
    for x in labels:
        if x in headings:
            section.miss(f"{case}: {x!r} made a heading")
    section.add("not made headings", fmt, len(kept), len(labels))
    found = [(b.rows, b.header_rows) for b in parsed.blocks if b.kind == "table"]
    score_tables(section, case, fmt, [x for t in truth for x in t["tables"]], found)
    text = parsed.text
    in_order = pairs = 0
    for t in truth:
        at = [text.find(x) for x in t["order"]]
        pairs += len(at) - 1
        ok = sum(1 for a, b in zip(at, at[1:]) if 0 <= a < b)
        in_order += ok
        if ok < len(at) - 1:
            section.miss(f"{case}: {ok}/{len(at) - 1} in order: {t['order']}")
    section.add("read in order", fmt, in_order, pairs)
    section.cases += 1


def slides(fast: bool) -> Section:
    s = Section("slides")
    rng = random.Random(11)
    for i in range(3 if fast else 30):
        data, truth = deck(rng)
        score_deck(s, f"deck-{i}", data, truth)
    return s


SECTIONS = {"slides": slides}
