"""The text formats' sections of ``benchmarks/fidelity.py``: HTML and markdown tables, lists and block
quotes in markdown, HTML and office formats (docx and pptx drawn by python-docx / python-pptx, odt
converted from HTML by pandoc, so the truth is what was written).

Each section has hand-written cases (the shapes real documents have: spanning and multi-row
headers, cells with inline markup, ``<details>`` and a table inside a cell, ``<ol start="7">``, task
lists, definition lists) and, at full size, generated ones drawn from a seeded random source.
What a reader reads is the truth: a cell spanning columns or rows has its text in each of them (a
title row over every column once), a ``<br>`` in a cell wraps its line, a table inside a cell is
its rows (``;`` between rows, ``,`` between cells), inline HTML is its text; markdown's own inline
syntax (``**bold**``, `` `code` ``, links) is text as written, as in a paragraph.
"""

from __future__ import annotations

import io
import random
import re
from dataclasses import dataclass

from fidelity import (
    ListItem,
    Section,
    TruthTable,
    parse_and_chunk,
    roman,
    score_lists,
    score_markup,
    score_quotes,
    score_tables,
)

# -- tables --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableCase:
    name: str
    fmt: str
    source: str
    truth: tuple[TruthTable, ...]


def _t(*rows: tuple[str, ...], header_rows: int = 1) -> TruthTable:
    return TruthTable(tuple(tuple(r) for r in rows), header_rows)


HTML_TABLES = [
    TableCase(
        "thead and tbody",
        "html",
        "<table><thead><tr><th>Plan</th><th>Seats</th><th>Price</th></tr></thead><tbody>"
        "<tr><td>Free</td><td>1</td><td>$0</td></tr><tr><td>Team</td><td>25</td><td>$99</td></tr>"
        "<tr><td>Pro</td><td>100</td><td>$399</td></tr></tbody></table>",
        (_t(("Plan", "Seats", "Price"), ("Free", "1", "$0"), ("Team", "25", "$99"), ("Pro", "100", "$399")),),
    ),
    TableCase(
        "th first row, empty cell",
        "html",
        "<table><tr><th>Setting</th><th>Default</th><th>Notes</th></tr>"
        "<tr><td>proxy</td><td>none</td><td></td></tr><tr><td>port</td><td>8080</td><td>TCP</td></tr></table>",
        (_t(("Setting", "Default", "Notes"), ("proxy", "none", ""), ("port", "8080", "TCP")),),
    ),
    TableCase(
        "two header rows: a row-spanning label, column-spanning years",
        "html",
        "<table><thead><tr><th rowspan='2'>Region</th><th colspan='2'>2023</th><th colspan='2'>2024</th></tr>"
        "<tr><th>Revenue</th><th>Cost</th><th>Revenue</th><th>Cost</th></tr></thead><tbody>"
        "<tr><td>Europe</td><td>12</td><td>8</td><td>14</td><td>9</td></tr>"
        "<tr><td>Asia</td><td>9</td><td>6</td><td>11</td><td>7</td></tr></tbody></table>",
        (
            _t(
                ("Region", "2023", "2023", "2024", "2024"),
                ("Region", "Revenue", "Cost", "Revenue", "Cost"),
                ("Europe", "12", "8", "14", "9"),
                ("Asia", "9", "6", "11", "7"),
                header_rows=2,
            ),
        ),
    ),
    TableCase(
        "a row label spanning rows",
        "html",
        "<table><tr><th>Country</th><th>City</th><th>Population</th></tr>"
        "<tr><td rowspan='3'>France</td><td>Paris</td><td>2.1M</td></tr>"
        "<tr><td>Lyon</td><td>0.5M</td></tr><tr><td>Nice</td><td>0.3M</td></tr>"
        "<tr><td>Spain</td><td>Madrid</td><td>3.3M</td></tr></table>",
        (
            _t(
                ("Country", "City", "Population"),
                ("France", "Paris", "2.1M"),
                ("France", "Lyon", "0.5M"),
                ("France", "Nice", "0.3M"),
                ("Spain", "Madrid", "3.3M"),
            ),
        ),
    ),
    TableCase(
        "inline markup in cells",
        "html",
        "<table><tr><th>Option</th><th>Meaning</th></tr>"
        "<tr><td><code>--force</code></td><td>Skip the <b>safety</b> checks, see <a href='/x'>the guide</a></td></tr>"
        "<tr><td><span class='k'>--dry-run</span></td><td>Print the plan<br>then exit</td></tr>"
        "<tr><td><em>--quiet</em></td><td>Errors &amp; warnings only</td></tr></table>",
        (
            _t(
                ("Option", "Meaning"),
                ("--force", "Skip the safety checks, see the guide"),
                ("--dry-run", "Print the plan then exit"),
                ("--quiet", "Errors & warnings only"),
            ),
        ),
    ),
    TableCase(
        "a table and a details inside cells",
        "html",
        "<table><tr><th>Parameter</th><th>Type</th><th>Description</th></tr>"
        "<tr><td>contact</td><td>dict</td><td>The contact information. <details><summary>contact fields</summary>"
        "<table><tr><th>Name</th><th>Type</th></tr><tr><td>url</td><td>str</td></tr>"
        "<tr><td>email</td><td>str</td></tr></table></details></td></tr>"
        "<tr><td>title</td><td>str</td><td>The title of the API.</td></tr></table>",
        (
            _t(
                ("Parameter", "Type", "Description"),
                (
                    "contact",
                    "dict",
                    "The contact information. contact fields; Name, Type; url, str; email, str",
                ),
                ("title", "str", "The title of the API."),
            ),
        ),
    ),
]

MARKDOWN_TABLES = [
    TableCase(
        "pipe table",
        "markdown",
        "| Plan | Seats | Price |\n|:-----|:----:|-----:|\n| Free | 1 | $0 |\n| Team | 25 | $99 |\n",
        (_t(("Plan", "Seats", "Price"), ("Free", "1", "$0"), ("Team", "25", "$99")),),
    ),
    TableCase(
        "markdown inline syntax and an escaped pipe",
        "markdown",
        "| Flag | Effect |\n|---|---|\n| `-v` | **verbose** output |\n| `a \\| b` | either [a](#a) or b |\n",
        (_t(("Flag", "Effect"), ("`-v`", "**verbose** output"), ("`a | b`", "either [a](#a) or b")),),
    ),
    TableCase(
        "inline html and <br> in cells",
        "markdown",
        "| Key | Value |\n|---|---|\n| <code>timeout</code> | 30 s<br>per request |\n"
        "| <kbd>Ctrl</kbd>+<kbd>C</kbd> | <b>stops</b> the server |\n",
        (_t(("Key", "Value"), ("timeout", "30 s per request"), ("Ctrl+C", "stops the server")),),
    ),
    TableCase(
        "a docs site's parameter table: <details> with a table in a cell",
        "markdown",
        "| Parameter | Type | Description |\n|---|---|---|\n"
        "| `title` | `str` | The title of the API. |\n"
        "| `contact` | `dict` | The contact information. <details><summary><code>contact</code> fields</summary>"
        "<table><thead><tr><th>Parameter</th><th>Type</th></tr></thead><tbody>"
        "<tr><td><code>name</code></td><td><code>str</code></td></tr>"
        "<tr><td><code>url</code></td><td><code>str</code></td></tr></tbody></table></details> |\n",
        (
            _t(
                ("Parameter", "Type", "Description"),
                ("`title`", "`str`", "The title of the API."),
                (
                    "`contact`",
                    "`dict`",
                    "The contact information. contact fields; Parameter, Type; name, str; url, str",
                ),
            ),
        ),
    ),
    TableCase(
        "an html table in markdown",
        "markdown",
        "Text before.\n\n<table>\n<tr><th>Model</th><th>Size</th></tr>\n<tr><td>small</td><td>12 MB</td></tr>\n"
        "<tr><td>large</td><td>1.2 GB</td></tr>\n</table>\n\nText after.\n",
        (_t(("Model", "Size"), ("small", "12 MB"), ("large", "1.2 GB")),),
    ),
]

_WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "region",
    "plan",
    "seats",
    "price",
    "north",
    "south",
    "east",
    "west",
    "total",
    "cost",
    "revenue",
    "margin",
    "units",
    "rate",
    "level",
    "status",
    "owner",
    "team",
    "quota",
    "limit",
]


def _random_tables(rng: random.Random, n: int) -> tuple[list[TableCase], list[TableCase]]:
    """``n`` HTML tables with spanning headers, row-spanning labels and markup in cells, and ``n``
    markdown tables with markup (markdown has no spans)."""
    html_cases, md_cases = [], []
    for k in range(n):
        cols = rng.randint(2, 6)
        body = rng.randint(2, 12)
        two_heads = cols >= 3 and rng.random() < 0.5
        truth: list[list[str]] = []
        html = ["<table><thead>"]
        if two_heads:
            groups, j = [], 1
            while j < cols:
                w = min(rng.randint(1, 3), cols - j)
                groups.append((j, w, f"G{k}{len(groups)}"))
                j += w
            top = ["Label"] + [g[2] for g in groups for _ in range(g[1])]
            low = ["Label"] + [f"H{k}{c}" for c in range(1, cols)]
            html.append("<tr><th rowspan='2'>Label</th>")
            html += [f"<th colspan='{w}'>{t}</th>" if w > 1 else f"<th>{t}</th>" for _, w, t in groups]
            html.append("</tr><tr>" + "".join(f"<th>{t}</th>" for t in low[1:]) + "</tr>")
            truth += [top, low]
        else:
            head = [f"H{k}{c}" for c in range(cols)]
            html.append("<tr>" + "".join(f"<th>{t}</th>" for t in head) + "</tr>")
            truth.append(head)
        html.append("</thead><tbody>")
        r = 0
        while r < body:
            span = rng.randint(2, 3) if rng.random() < 0.2 and r + 1 < body else 1
            span = min(span, body - r)
            label = f"row{k}-{r}"
            for s in range(span):
                cells_html, cells = [], []
                for c in range(1, cols):
                    shown, written = _cell(rng, k, r + s, c)
                    cells.append(shown)
                    cells_html.append(f"<td>{written}</td>")
                lead = (
                    (f"<td rowspan='{span}'>{label}</td>" if span > 1 else f"<td>{label}</td>")
                    if s == 0
                    else ""
                )
                html.append("<tr>" + lead + "".join(cells_html) + "</tr>")
                truth.append([label, *cells])
            r += span
        html.append("</tbody></table>")
        tt = TruthTable(tuple(map(tuple, truth)), 2 if two_heads else 1)
        html_cases.append(TableCase(f"generated {k}", "html", "".join(html), (tt,)))

        head = [f"H{k}{c}" for c in range(cols)]
        md = ["| " + " | ".join(head) + " |", "|" + "---|" * cols]
        mtruth = [head]
        for r in range(body):
            row, shown = [], []
            for c in range(cols):
                a, b = _md_cell(rng, k, r, c)
                row.append(b)
                shown.append(a)
            md.append("| " + " | ".join(row) + " |")
            mtruth.append(shown)
        md_cases.append(
            TableCase(
                f"generated {k}", "markdown", "\n".join(md) + "\n", (TruthTable(tuple(map(tuple, mtruth))),)
            )
        )
    return html_cases, md_cases


def _cell(rng: random.Random, k: int, r: int, c: int) -> tuple[str, str]:
    """An HTML cell: (what a reader reads, what is written)."""
    w = f"{rng.choice(_WORDS)} {k}.{r}.{c}"
    roll = rng.random()
    if roll < 0.1:
        return w, f"<b>{w}</b>"
    if roll < 0.2:
        return w, f"<a href='#{r}'>{w}</a>"
    if roll < 0.28:
        x, y = w.split(" ")
        return f"{x} {y}", f"{x}<br>{y}"
    if roll < 0.34:
        return f"{w} & more", f"{w} &amp; more"
    if roll < 0.4:
        return w, f"<span>{w.split(' ')[0]}</span> {w.split(' ')[1]}"
    return w, w


def _md_cell(rng: random.Random, k: int, r: int, c: int) -> tuple[str, str]:
    w = f"{rng.choice(_WORDS)} {k}.{r}.{c}"
    roll = rng.random()
    if roll < 0.1:
        return f"**{w}**", f"**{w}**"
    if roll < 0.2:
        return w, f"<b>{w}</b>"
    if roll < 0.28:
        x, y = w.split(" ")
        return f"{x} {y}", f"{x}<br>{y}"
    if roll < 0.34:
        return f"`{w}`", f"`{w}`"
    return w, w


def _table_section(name: str, cases: list[TableCase]) -> Section:
    s = Section(name)
    for case in cases:
        ext = {"html": "html", "markdown": "md"}[case.fmt]
        parsed, chunks = parse_and_chunk(case.source.encode(), f"case.{ext}", table_max_tokens=4096)
        found = [(b.rows, b.header_rows) for b in parsed.blocks if b.kind == "table"]
        score_tables(s, case.name, case.fmt, case.truth, found)
        score_markup(s, case.name, case.fmt, chunks)
        s.cases += 1
    return s


def html_tables(fast: bool) -> Section:
    generated = _random_tables(random.Random(24), 4 if fast else 60)[0]
    return _table_section("html-tables", HTML_TABLES + generated)


def markdown_tables(fast: bool) -> Section:
    generated = _random_tables(random.Random(24), 4 if fast else 60)[1]
    return _table_section("markdown-tables", MARKDOWN_TABLES + generated)


# -- lists ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ListCase:
    name: str
    fmt: str
    source: bytes | str
    truth: tuple[ListItem, ...]


def _i(text: str, marker: str = "-", level: int = 0) -> ListItem:
    return ListItem(text, marker, level)


MARKDOWN_LISTS = [
    ListCase(
        "a cutover procedure",
        "markdown",
        "# Cutover\n\n1. Add Traefik to DNS\n2. Monitor\n3. Remove NGINX from DNS\n",
        (_i("Add Traefik to DNS", "1."), _i("Monitor", "2."), _i("Remove NGINX from DNS", "3.")),
    ),
    ListCase(
        "a list starting at 7, and one numbered 1. 1. 1.",
        "markdown",
        "Steps so far.\n\n7. Drain the node\n8. Upgrade it\n\nText.\n\n1. First\n1. Second\n1. Third\n",
        (
            _i("Drain the node", "7."),
            _i("Upgrade it", "8."),
            _i("First", "1."),
            _i("Second", "2."),
            _i("Third", "3."),
        ),
    ),
    ListCase(
        "a ) delimiter",
        "markdown",
        "Pick one:\n\n1) the fast path\n2) the safe path\n",
        (_i("the fast path", "1)"), _i("the safe path", "2)")),
    ),
    ListCase(
        "nesting: steps with bullets, bullets with steps",
        "markdown",
        "1. Prepare\n   - back up the database\n   - stop the workers\n2. Migrate\n   1. run the script\n"
        "   2. check the logs\n\n* Notes\n  + first note\n    - deep note\n",
        (
            _i("Prepare", "1."),
            _i("back up the database", "-", 1),
            _i("stop the workers", "-", 1),
            _i("Migrate", "2."),
            _i("run the script", "1.", 1),
            _i("check the logs", "2.", 1),
            _i("Notes", "-"),
            _i("first note", "-", 1),
            _i("deep note", "-", 2),
        ),
    ),
    ListCase(
        "a task list",
        "markdown",
        "Release checklist:\n\n- [x] tag the commit\n- [ ] publish the wheel\n  - [x] build it\n",
        (
            _i("tag the commit", "- [x]"),
            _i("publish the wheel", "- [ ]"),
            _i("build it", "- [x]", 1),
        ),
    ),
    ListCase(
        "a loose list with two paragraphs in an item",
        "markdown",
        "3. Open the port.\n\n4. Restart the service.\n\n   It takes a minute.\n\n5. Check the status.\n",
        (
            _i("Open the port.", "3."),
            _i("Restart the service. It takes a minute.", "4."),  # its second paragraph under it
            _i("Check the status.", "5."),
        ),
    ),
    ListCase(
        "a definition list (MkDocs def_list, pandoc)",
        "markdown",
        "Glossary.\n\nShard\n:   One Parquet file of chunks.\n\nManifest\n:   The list of a run's shards.\n",
        (
            _i("Shard: One Parquet file of chunks.", ""),
            _i("Manifest: The list of a run's shards.", ""),
        ),
    ),
]

HTML_LISTS = [
    ListCase(
        "a cutover procedure",
        "html",
        "<h1>Cutover</h1><ol><li>Add Traefik to DNS</li><li>Monitor</li><li>Remove NGINX from DNS</li></ol>",
        (_i("Add Traefik to DNS", "1."), _i("Monitor", "2."), _i("Remove NGINX from DNS", "3.")),
    ),
    ListCase(
        "start=, value= and type=",
        "html",
        "<p>Next steps.</p><ol start='7'><li>Drain the node</li><li>Upgrade it</li></ol>"
        "<ol type='a'><li>apples</li><li>pears</li></ol><ol type='I'><li>Intro</li><li>Body</li></ol>"
        "<ol><li>one</li><li value='10'>ten</li><li>eleven</li></ol>",
        (
            _i("Drain the node", "7."),
            _i("Upgrade it", "8."),
            _i("apples", "a."),
            _i("pears", "b."),
            _i("Intro", "I."),
            _i("Body", "II."),
            _i("one", "1."),
            _i("ten", "10."),
            _i("eleven", "11."),
        ),
    ),
    ListCase(
        "nesting",
        "html",
        "<ol><li>Prepare<ul><li>back up the database</li><li>stop the workers</li></ul></li>"
        "<li>Migrate<ol><li>run the script</li><li>check the logs</li></ol></li></ol>",
        (
            _i("Prepare", "1."),
            _i("back up the database", "-", 1),
            _i("stop the workers", "-", 1),
            _i("Migrate", "2."),
            _i("run the script", "1.", 1),
            _i("check the logs", "2.", 1),
        ),
    ),
    ListCase(
        "a task list (GitHub's rendering)",
        "html",
        "<ul class='contains-task-list'><li class='task-list-item'><input type='checkbox' checked disabled> "
        "tag the commit</li><li class='task-list-item'><input type='checkbox' disabled> publish the wheel</li></ul>",
        (_i("tag the commit", "- [x]"), _i("publish the wheel", "- [ ]")),
    ),
    ListCase(
        "items of two paragraphs (Sphinx's and DocBook's <li><p>), text after a nested list",
        "html",
        "<ol start='3'><li><p>Open the port.</p></li><li><p>Restart the service.</p><p>It takes a minute.</p>"
        "</li><li class='listitem'><p>Check the status.</p><p>It says active.</p><p>Or failed.</p></li></ol>"
        "<ul><li>Notes<ul><li>a note</li></ul>Read them first.</li><li>Logs</li></ul>",
        (
            _i("Open the port.", "3."),
            _i("Restart the service. It takes a minute.", "4."),
            _i("Check the status. It says active. Or failed.", "5."),
            _i("Notes", "-"),
            _i("a note", "-", 1),
            _i("Logs", "-"),
        ),
    ),
    ListCase(
        "items and definitions whose text sits in a <div> (web pages' cards, link lists)",
        "html",
        "<ol start='4'><li><div class='step'>Drain the node</div></li><li><a href='u'><img src='i.png'></a>"
        "<div class='title'><a href='u'>Upgrade it</a></div></li></ol>"
        "<dl><dt><div>Shard</div></dt><dd><div>One Parquet file of chunks.</div></dd></dl>",
        (_i("Drain the node", "4."), _i("Upgrade it", "5."), _i("Shard: One Parquet file of chunks.", "")),
    ),
    ListCase(
        "a definition list",
        "html",
        "<dl><dt>Shard</dt><dd>One Parquet file of chunks.</dd><dt><code>-a</code></dt>"
        "<dd><p>Mark every variable for export.</p></dd></dl>",
        (_i("Shard: One Parquet file of chunks.", ""), _i("-a: Mark every variable for export.", "")),
    ),
]


# Sphinx sources: what a reader of the built page sees (numbers, letters, terms joined to definitions).
RST_LISTS = [
    ListCase(
        "an RST item of two paragraphs",
        "rst",
        "Upgrade\n=======\n\n3. Restart the service.\n\n   It takes a minute.\n\n4. Check the status.\n",
        (_i("Restart the service. It takes a minute.", "3."), _i("Check the status.", "4.")),
    ),
    ListCase(
        "an RST procedure with nested bullets and letters",
        "rst",
        "Steps\n=====\n\n1. Prepare\n\n   - back up the database\n   - stop the workers\n\n2. Migrate\n\n"
        "   a. run the script\n   b. check the logs\n",
        (
            _i("Prepare", "1."),
            _i("back up the database", "-", 1),
            _i("stop the workers", "-", 1),
            _i("Migrate", "2."),
            _i("run the script", "a.", 1),
            _i("check the logs", "b.", 1),
        ),
    ),
    ListCase(
        "an RST list going on at 3, and one auto-numbered",
        "rst",
        "Then:\n\n3. Drain the node\n4. Upgrade it\n\nAnd after:\n\n#. verify the pods\n#. close the ticket\n",
        (
            _i("Drain the node", "3."),
            _i("Upgrade it", "4."),
            _i("verify the pods", "1."),
            _i("close the ticket", "2."),
        ),
    ),
    ListCase(
        "an RST definition list (an option reference)",
        "rst",
        "Options:\n\n``retries``\n   How many times to retry.\n\ntimeout\n   Seconds to wait.\n",
        (_i("retries: How many times to retry.", ""), _i("timeout: Seconds to wait.", "")),
    ),
    ListCase(
        "RST roman numerals",
        "rst",
        "Cases:\n\n(i) the node is drained\n(ii) the node is gone\n",
        (_i("the node is drained", "i."), _i("the node is gone", "ii.")),
    ),
]


def _docx_lists() -> list[ListCase]:
    import docx
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    d = docx.Document()
    d.add_heading("Cutover", 1)
    for t in ("Add Traefik to DNS", "Monitor", "Remove NGINX from DNS"):
        d.add_paragraph(t, style="List Number")
    d.add_paragraph("Checks to run:")
    d.add_paragraph("DNS answers", style="List Bullet")
    d.add_paragraph("from two resolvers", style="List Bullet 2")
    d.add_paragraph("Certificates valid", style="List Bullet")
    # A numbered list restarted at 7: a new w:num over the List Number definition, startOverride 7.
    numbering = d.part.numbering_part.element
    style_num = d.styles["List Number"].element.pPr.numPr.numId.val
    abstract = next(n for n in numbering.findall(qn("w:num")) if n.numId == style_num).abstractNumId.val
    num = numbering.add_num(abstract)
    override = OxmlElement("w:lvlOverride")
    override.set(qn("w:ilvl"), "0")
    start = OxmlElement("w:startOverride")
    start.set(qn("w:val"), "7")
    override.append(start)
    num.append(override)
    d.add_paragraph("Later:")
    for t in ("Drain the node", "Upgrade it"):
        p = d.add_paragraph(t, style="List Number")
        p._p.get_or_add_pPr().get_or_add_numPr().get_or_add_numId().val = num.numId
        p._p.pPr.numPr.get_or_add_ilvl().val = 0
    buf = io.BytesIO()
    d.save(buf)
    return [
        ListCase(
            "numbered, bulleted, nested, restarted at 7",
            "docx",
            buf.getvalue(),
            (
                _i("Add Traefik to DNS", "1."),
                _i("Monitor", "2."),
                _i("Remove NGINX from DNS", "3."),
                _i("DNS answers"),
                _i("from two resolvers", "-", 1),
                _i("Certificates valid"),
                _i("Drain the node", "7."),
                _i("Upgrade it", "8."),
            ),
        )
    ]


def _pdf_lists() -> list[ListCase]:
    """A page as a writer sets lists in a PDF: the number in the item's text (``1.``, ``a)``), a
    wrapped item's second line indented under its text, and dashes for bullets."""
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    y = 72.0

    def line(text: str, x: float = 72, size: float = 11, font: str = "helv") -> None:
        nonlocal y
        page.insert_text((x, y), text, fontsize=size, fontname=font)
        y += size * 1.45

    line("Cutover", size=18, font="hebo")
    y += 6
    line("Do these steps in order, on the primary first and then on the replica:")
    y += 6
    line("1.  Add Traefik to DNS")
    line("2.  Monitor the error rate of both proxies for one whole hour before")
    line("going on to the next step", x=92)
    line("3.  Remove NGINX from DNS")
    y += 8
    line("Then check, in this order:")
    y += 6
    line("a)  the certificates")
    line("b)  the redirects")
    y += 8
    line("Notes kept on the run:")
    y += 6
    line("-  the old proxy stays up for a day")
    line("-  the logs go to the archive")
    return [
        ListCase(
            "numbered and lettered items with their numbers in their text, dashes",
            "pdf",
            doc.tobytes(),
            (
                _i("Add Traefik to DNS", "1."),
                _i(
                    "Monitor the error rate of both proxies for one whole hour before going on to the next step",
                    "2.",
                ),
                _i("Remove NGINX from DNS", "3."),
                _i("the certificates", "a)"),
                _i("the redirects", "b)"),
                _i("the old proxy stays up for a day"),
                _i("the logs go to the archive"),
            ),
        )
    ]


def _pptx_lists() -> list[ListCase]:
    import pptx
    from pptx.oxml.ns import qn

    prs = pptx.Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[1])
    slide.shapes.title.text = "Cutover"
    frame = slide.placeholders[1].text_frame
    items = [
        ("Add Traefik to DNS", 0, "7"),
        ("Monitor", 0, "7"),
        ("from two resolvers", 1, None),
        ("Remove NGINX from DNS", 0, "7"),
    ]
    for k, (text, level, start) in enumerate(items):
        p = frame.paragraphs[0] if k == 0 else frame.add_paragraph()
        p.text, p.level = text, level
        ppr = p._p.get_or_add_pPr()
        if start:
            ppr.append(ppr.makeelement(qn("a:buAutoNum"), {"type": "arabicPeriod", "startAt": start}))
        else:
            ppr.append(ppr.makeelement(qn("a:buChar"), {"char": "•"}))
    buf = io.BytesIO()
    prs.save(buf)
    return [
        ListCase(
            "auto-numbered from 7 with a bullet under it",
            "pptx",
            buf.getvalue(),
            (
                _i("Add Traefik to DNS", "7."),
                _i("Monitor", "8."),
                _i("from two resolvers", "-", 1),
                _i("Remove NGINX from DNS", "9."),
            ),
        )
    ]


def _odt_lists() -> list[ListCase]:
    import os
    import tempfile

    import pypandoc

    html = (
        "<h1>Cutover</h1><ol start='7'><li>Drain the node</li><li>Upgrade it<ul><li>one at a time</li></ul>"
        "</li></ol><ul><li>Certificates valid</li></ul>"
    )
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "lists.odt")
        pypandoc.convert_text(html, "odt", format="html", outputfile=out)
        with open(out, "rb") as f:
            data = f.read()
    return [
        ListCase(
            "a list from 7 with a nested bullet (pandoc from HTML)",
            "odt",
            data,
            (
                _i("Drain the node", "7."),
                _i("Upgrade it", "8."),
                _i("one at a time", "-", 1),
                _i("Certificates valid"),
            ),
        )
    ]


@dataclass(slots=True)
class _ListDraft:
    """One generated list written three ways (HTML, markdown, plain text), with the truth of each."""

    k: int
    truth: list[ListItem]
    md_truth: list[ListItem]
    md: list[str]
    html: list[str]
    txt: list[str]

    def build(self, rng: random.Random, level: int, indent: str) -> None:
        kind = rng.choice(["bullet", "ordered", "ordered", "task", "alpha", "roman"])
        start = rng.choice([1, 1, 1, 3, 7, 12]) if kind == "ordered" else 1
        tag = "ol" if kind in ("ordered", "alpha", "roman") else "ul"
        attrs = {"alpha": " type='a'", "roman": " type='i'"}.get(kind, "")
        if start != 1:
            attrs = f" start='{start}'"
        self.html.append(f"<{tag}{attrs}>")
        for j in range(rng.randint(1, 4)):
            text = f"item {self.k}.{len(self.truth)} {rng.choice(_WORDS)}"
            number = start + j
            checked = rng.random() < 0.5
            written = "-" if kind == "bullet" else f"{number}."
            if kind == "task":
                written = "- [x]" if checked else "- [ ]"
            shown = {"alpha": f"{chr(96 + number)}.", "roman": f"{roman(number).lower()}."}.get(kind, written)
            self.truth.append(ListItem(text, shown, level))
            self.md_truth.append(ListItem(text, written, level))
            self.md.append(f"{indent}{written} {text}")
            # plain text: two spaces a level, a bullet as a typist picks one (read back as "-")
            typed = rng.choice(["-", "*", "•"]) if kind == "bullet" else written
            self.txt.append(f"{'  ' * level}{typed} {text}")
            box = ""
            if kind == "task":
                box = "<input type='checkbox' disabled" + (" checked>" if checked else ">") + " "
            self.html.append(f"<li>{box}{text}")
            if level < 2 and rng.random() < 0.3:
                # markdown nests an item under the content column of its parent; a list that
                # starts at another number than 1 cannot interrupt a paragraph (CommonMark)
                before = len(self.md)
                self.build(rng, level + 1, indent + " " * (len(written.split(" ")[0]) + 1))
                if not re.match(r"\s*(?:[-*+]|1[.)])\s", self.md[before]):
                    self.md.insert(before, "")
            self.html.append("</li>")
        self.html.append(f"</{tag}>")


def _random_lists(rng: random.Random, n: int) -> list[ListCase]:
    """Lists nested up to three deep of every kind, each written in HTML and in markdown (where
    letters and numerals are written as numbers, markdown having only those)."""
    out = []
    for k in range(n):
        d = _ListDraft(k, [], [], [], [], [])
        d.build(rng, 0, "")
        out.append(ListCase(f"generated {k}", "html", "<p>A list.</p>" + "".join(d.html), tuple(d.truth)))
        md = "A list.\n\n" + "\n".join(d.md) + "\n"
        out.append(ListCase(f"generated {k}", "markdown", md, tuple(d.md_truth)))
        if len(d.txt) > 1:  # a line alone is a paragraph in plain text, not a list
            txt = "A list.\n\n" + "\n".join(d.txt) + "\n"
            out.append(ListCase(f"generated {k}", "text", txt, tuple(d.md_truth)))
    return out


def lists(fast: bool) -> Section:
    s = Section("lists")
    cases = MARKDOWN_LISTS + HTML_LISTS + RST_LISTS + _random_lists(random.Random(7), 3 if fast else 80)
    cases += _docx_lists() + _pptx_lists() + _pdf_lists()
    if not fast:
        cases += _odt_lists()
    ext = {
        "markdown": "md",
        "html": "html",
        "rst": "rst",
        "docx": "docx",
        "pptx": "pptx",
        "odt": "odt",
        "pdf": "pdf",
        "text": "txt",
    }
    for case in cases:
        data = case.source.encode() if isinstance(case.source, str) else case.source
        _, chunks = parse_and_chunk(data, f"case.{ext[case.fmt]}")
        score_lists(s, case.name, case.fmt, case.truth, chunks)
        s.cases += 1
    return s


# -- block quotes --------------------------------------------------------------------------------------

QUOTES = [
    ("a quote between paragraphs", "markdown", "Before.\n\n> Measure retrieval on its own.\n\nAfter.\n",
     ("Measure retrieval on its own.",)),
    ("a quote over wrapped lines and two paragraphs", "markdown",
     "> A chunk is the unit of retrieval\n> and the unit of evidence.\n>\n> It must stand alone.\n",
     ("A chunk is the unit of retrieval and the unit of evidence.", "It must stand alone.")),
    ("a nested quote", "markdown", "> Outer words.\n>\n> > Inner words.\n", ("Outer words.", "Inner words.")),
    ("a quote inside a list item", "markdown", "- Item text.\n\n  > Quoted in the item.\n",
     ("Quoted in the item.",)),
    ("a quote with inline html", "markdown", "> Press <kbd>Enter</kbd> to go on.\n", ("Press Enter to go on.",)),
    ("blockquote with paragraphs", "html",
     "<p>Before.</p><blockquote><p>Measure retrieval on its own.</p><p>Then tune.</p></blockquote><p>After.</p>",
     ("Measure retrieval on its own.", "Then tune.")),
    ("blockquote with a footer", "html",
     "<blockquote><p>Look at the parser first.</p><footer>— a design note</footer></blockquote>",
     ("Look at the parser first.",)),
    ("nested blockquotes", "html", "<blockquote>Outer words.<blockquote>Inner words.</blockquote></blockquote>",
     ("Outer words.", "Inner words.")),
]  # fmt: skip


def _docx_quotes():
    import docx

    d = docx.Document()
    d.add_paragraph("Before the quote.")
    d.add_paragraph("Get the chunks right, then tune.", style="Quote")
    d.add_paragraph("A second, intense one.", style="Intense Quote")
    buf = io.BytesIO()
    d.save(buf)
    return [("Quote and Intense Quote styles", "docx", buf.getvalue(),
             ("Get the chunks right, then tune.", "A second, intense one."))]  # fmt: skip


def quotes(fast: bool) -> Section:
    s = Section("quotes")
    ext = {"markdown": "md", "html": "html", "docx": "docx"}
    for name, fmt, source, truth in QUOTES + _docx_quotes():
        data = source.encode() if isinstance(source, str) else source
        _, chunks = parse_and_chunk(data, f"case.{ext[fmt]}")
        score_quotes(s, name, fmt, truth, chunks)
        score_markup(s, name, fmt, chunks)
        s.cases += 1
    return s


# -- table rows over the embedder's limit -----------------------------------------------------------

_PROSE = [
    "the",
    "value",
    "is",
    "read",
    "once",
    "at",
    "start",
    "and",
    "applies",
    "to",
    "every",
    "request",
    "the",
    "server",
    "handles",
    "until",
    "it",
    "restarts",
    "so",
    "a",
    "change",
    "needs",
    "a",
    "restart",
    "of",
    "each",
    "worker",
    "process",
    "in",
    "the",
    "pool",
    "before",
    "it",
    "takes",
    "effect",
]


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(_PROSE) for _ in range(n)]
    return " ".join(words).capitalize() + "."


def _docs_site(rng: random.Random, k: int, fmt: str) -> tuple[str, list[str]]:
    """A docs site's parameter table (FastAPI's shape): rows of 40 to 900 tokens, the big ones a
    ``<details>`` holding a table of fields; and the text of every cell as a reader reads it."""
    head = ("Parameter", "Type", "Description")
    rows, shown = [], []
    for r in range(rng.randint(3, 8)):
        name = f"param_{k}_{r}"
        lead = _sentence(rng, rng.randint(8, 30))
        fields = [
            (f"field_{k}_{r}_{f}", _sentence(rng, rng.randint(10, 40)))
            for f in range(rng.choice([0, 0, 3, 8, 16]))
        ]
        html = lead
        text = lead
        if fields:
            inner = "".join(
                f"<tr><td><code>{n}</code></td><td><code>str</code></td><td>{d}</td></tr>" for n, d in fields
            )
            html += (
                f" <details><summary><code>{name}</code> fields</summary><table><thead><tr><th>Parameter</th>"
                f"<th>Type</th><th>Description</th></tr></thead><tbody>{inner}</tbody></table></details>"
            )
            text += f" {name} fields; Parameter, Type, Description; " + "; ".join(
                f"{n}, str, {d}" for n, d in fields
            )
        rows.append((f"`{name}`" if fmt == "markdown" else f"<code>{name}</code>", "dict", html))
        shown += [name, "dict", text]
    if fmt == "markdown":
        src = "# Parameters\n\n| " + " | ".join(head) + " |\n|---|---|---|\n"
        src += "".join(f"| {a} | `{b}` | {c} |\n" for a, b, c in rows)
    else:
        src = (
            "<h1>Parameters</h1><table><thead><tr>"
            + "".join(f"<th>{h}</th>" for h in head)
            + "</tr></thead><tbody>"
        )
        src += (
            "".join(f"<tr><td>{a}</td><td>{b}</td><td>{c}</td></tr>" for a, b, c in rows) + "</tbody></table>"
        )
    return src, shown


def _limit_figures(s: Section, fmt: str, chunks, limit: int | None) -> None:
    tables = [c for c in chunks if c.table_id]
    within = [c for c in tables if limit is None or c.n_tokens <= limit]
    s.add("table chunks within the limit", fmt, len(within), len(tables))
    for c in tables:
        if c not in within:
            s.miss(f"{c.source}: a table chunk of {c.n_tokens} tokens (limit {limit}): {c.text[:80]!r}")
            break


def table_rows(fast: bool) -> Section:
    """Table chunks within the embedder's input limit, under the per-type profiles as ``raychunk
    run`` uses them: generated docs-site tables (rows of up to ~900 tokens), with every cell's words
    kept; at full size also every table of the shared corpus."""
    import os
    from pathlib import Path

    from fidelity import ROOT, counter

    from raychunk.chunking import chunk_document
    from raychunk.classify import classify
    from raychunk.config import load_config, load_doc_types, parse_options_from
    from raychunk.parse import parse_document

    s = Section("table-rows")
    types = load_doc_types(None)
    options = parse_options_from(load_config(None).get("parse"))
    limit = counter().max_input

    def chunked(data: bytes, name: str):
        parsed = parse_document(data, name, options=options)
        if parsed.document.status != "ok":
            return parsed, []
        kind = classify(parsed, types.thresholds, types.overrides).doc_type
        return parsed, chunk_document(parsed, types.profiles[kind], counter(), doc_type=kind)

    rng = random.Random(26)
    for k in range(3 if fast else 24):
        for fmt, ext in (("markdown", "md"), ("html", "html")):
            src, cells = _docs_site(rng, k, fmt)
            _, chunks = chunked(src.encode(), f"params-{k}.{ext}")
            _limit_figures(s, fmt, chunks, limit)
            seen = set(re.findall(r"\w+", " ".join(c.text for c in chunks).casefold()))
            kept = [c for c in cells if set(re.findall(r"\w+", c.casefold())) <= seen]
            s.add("cells kept", fmt, len(kept), len(cells))
            s.cases += 1
    if not fast:
        corpus = Path(os.environ.get("RAYCHUNK_CORPUS", ROOT.parent / "shared" / "corpus"))
        for folder in ("html", "md", "other", "pdf"):
            for path in sorted((corpus / folder).glob("*")) if (corpus / folder).is_dir() else []:
                _, chunks = chunked(path.read_bytes(), path.name)
                _limit_figures(s, f"corpus {folder}", chunks, limit)
                s.cases += 1
    return s


# -- prose flattened to text without blank lines -------------------------------------------------

_HEADS = [
    "Early life",
    "Club career",
    "International career",
    "Style of play",
    "Personal life",
    "Later years",
]


def _wrapped_doc(rng: random.Random) -> tuple[str, list[str]]:
    """A page flattened to text (Wikipedia's `norwich-city.txt` shape): paragraphs hard-wrapped with
    no blank line between them, at a width that changes from part to part, a short heading line
    now and then; and each paragraph as one line of words, as written."""
    import textwrap

    lines, truth = [], []
    for _ in range(rng.randint(2, 4)):
        width = rng.choice([64, 78, 92, 110, 140])
        if rng.random() < 0.7:
            head = rng.choice(_HEADS)
            lines.append(head)
            truth.append(head)
        for _ in range(rng.randint(2, 5)):
            para = " ".join(_sentence(rng, rng.randint(6, 24)) for _ in range(rng.randint(1, 6)))
            truth.append(para)
            lines += textwrap.wrap(para, width)
    return "\n".join(lines) + "\n", truth


def _log_doc(rng: random.Random) -> tuple[str, list[str]]:
    """A log: lines of one shape and about one length, each a record of its own."""
    lines = [
        f"2024-03-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} "
        f"{rng.choice(['INFO', 'WARN', 'ERROR'])} worker-{rng.randint(1, 9)} {_sentence(rng, rng.randint(6, 12))}"
        for _ in range(rng.randint(30, 60))
    ]
    return "\n".join(lines) + "\n", lines


def wrapped_text(fast: bool) -> Section:
    """Plain text with no blank lines: hard-wrapped prose gives its paragraphs back whole, a log
    keeps each line apart. ``paragraphs whole``: a block holds the paragraph (or line), all of it and
    nothing else, whitespace aside."""
    s = Section("wrapped-text")
    rng = random.Random(7)
    for k in range(10 if fast else 60):
        fmt = "log" if k % 4 == 3 else "prose"
        text, truth = _log_doc(rng) if fmt == "log" else _wrapped_doc(rng)
        parsed, _ = parse_and_chunk(text.encode(), f"case-{k}.txt")
        blocks = {" ".join(b.text.split()) for b in parsed.blocks}
        whole = sum(1 for t in truth if " ".join(t.split()) in blocks)
        s.add("paragraphs whole", fmt, whole, len(truth))
        if whole < len(truth):
            s.miss(f"case-{k} ({fmt}): {whole}/{len(truth)} paragraphs whole")
        s.cases += 1
    return s


SECTIONS = {
    "html-tables": html_tables,
    "markdown-tables": markdown_tables,
    "lists": lists,
    "quotes": quotes,
    "table-rows": table_rows,
    "wrapped-text": wrapped_text,
}
