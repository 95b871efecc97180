"""Fidelity sections ``rst``, ``asciidoc``, ``latex``, ``mediawiki``, ``typst`` and ``djot``: generated
documents in the markups documentation is written in, whose structure is known exactly.

One document is drawn (a fixed seed) and written in each markup as its writers write it; the
truth is what was written, never what a reader reads. Each has a title (most of the time; a
MediaWiki page has its title outside the page), sections three levels deep, paragraphs filled at 72
columns with the markup's inline syntax (bold, emphasis, literals, links), lists (numbered, from 1
or from another number, ``a.`` letters where the markup writes them, bullets, a bullet list nested
under a numbered item, items wrapped onto a second line), tables with a header row, block quotes
and code blocks. As written:

- ``rst``: the title over- and underlined, sections underlined ``=``, ``-``, ``~`` (the order in
  which the styles first appear sets the levels); lists ``3.``, ``#.`` (auto-numbered), ``a.``,
  ``-`` and ``*``; grid tables, simple tables and ``list-table`` directives; quotes as an indented
  block, ``epigraph`` directives; code as ``.. code-block:: lang``, as ``.. parsed-literal::`` and
  as a paragraph ending in ``::`` with the code indented below;
- ``asciidoc``: ``= Title``, ``==`` to ``====``; ``.`` items (``..`` one level down, which
  Asciidoctor numbers ``a.``), ``[start=4]``, explicit ``1.``, ``*`` and ``-`` bullets, checklists;
  ``|===`` tables with ``[options="header"]``, ``%header`` or the implicit header (a blank line
  after the first row), cells one to a line or a row to a line; ``____`` and ``[quote]`` quotes;
  ``[source,lang]`` listings;
- ``latex``: ``\\title`` with ``\\maketitle``, ``\\section`` to ``\\subsubsection``; ``enumerate``
  (``\\setcounter{enumi}`` to start past 1), ``itemize``; ``tabular`` with the header row set off by
  ``\\hline`` or booktabs' ``\\midrule``; ``quote`` and ``quotation``; ``verbatim`` and
  ``lstlisting``; ``%`` comments between paragraphs;
- ``typst``: ``#set document(title: ...)``, ``=`` to ``===``; ``+`` items (``4.`` where a list starts
  past 1), ``-`` bullets; ``#table`` with ``table.header`` and ``table.cell(colspan: 2)``;
  ``#quote(block: true)``; raw blocks; ``/ Term: definition``;
- ``djot``: the title a ``#`` heading; ``4.``, ``a.``, ``-`` and ``- [x]`` items; pipe tables;
  ``>`` quotes; fenced code; ``: Term`` definitions; ``::: note`` divs;
- ``mediawiki``: ``==`` to ``====`` (level 2 to 4: the page's title is level 1, outside the page),
  ``#`` and ``*`` lists (``#*`` nested), ``{| class="wikitable"`` tables with ``!`` header cells on
  one line or one to a line, ``<blockquote>``, ``<syntaxhighlight lang=...>`` and ``<pre>``.

Scored as ``fidelity_books.py`` scores Org (``score_document``: headings at their level, texts
under their heading, list items with their numbers, cells, rows and header rows, read in order,
title), and:

- ``code kept as code``: code blocks that are a code block with the code exactly;
- ``quotes``: block quotes whose text is whole in one chunk;
- ``markup left out``: chunks (other than code) holding none of the markup's block syntax (a
  directive, an adornment line, ``\\begin``, a table's delimiter, ``'''``): what was syntax is not
  text. Inline syntax that a reader keeps as written (AsciiDoc's ``*bold*``, as Markdown's) is not
  scored here.
"""

from __future__ import annotations

import random
import re
import textwrap

from fidelity import (
    Fresh,
    ListItem,
    Section,
    TruthTable,
    body,
    counter,
    new_truth,
    parse_and_chunk,
    score_code,
    score_document,
    score_quotes,
)

WORDS = [
    "replica",
    "gateway",
    "bucket",
    "ledger",
    "tenant",
    "cursor",
    "socket",
    "lease",
    "backlog",
    "schema",
    "cluster",
    "ingest",
    "router",
    "token",
    "snapshot",
    "volume",
    "window",
    "quorum",
]
_CODE = {
    "python": "def {name}(items):\n    total = 0\n    for item in items:\n        total += item.size\n    return total",
    "bash": 'for f in *.log; do\n  {name} --input "$f" --out /tmp/out\ndone',
    "yaml": "{name}:\n  replicas: 3\n  limits:\n    cpu: 500m",
}
# a line a markup would read as something else: a list item, a heading, an enumerator
_LEAD = re.compile(r"^(?:\d+[.)]|[#*\-+.]|[a-z][.)]|=|\|)(?:\s|$)")
# block syntax that is not text once read
_MARKUP = {
    "rst": re.compile(r"^\.\. \S|^(?:[=\-~^]{4,})$|^\s*\+[-=+]{3,}|::$|:header-rows:", re.M),
    "asciidoc": re.compile(r"^(?:\|===|----|____|\[source|\[start|\[options|\[quote|\[%header)", re.M),
    "latex": re.compile(
        r"\\(?:begin|end|section|item|hline|midrule|toprule|textbf|emph|texttt|href|multicolumn|fbox|parbox)\b"
    ),
    "mediawiki": re.compile(
        r"^(?:\{\||\|\}|\|-(?!-)|!|==|;)|\{\{|'''|''|\[https?:|<(?:code|blockquote|syntaxhighlight|pre)\b",
        re.M,
    ),
}
_MARKUP["typst"] = re.compile(
    r"^(?:=+ |\+ |/ )|#(?:set|table|quote|enum|link)\b|\btable\.(?:header|cell)", re.M
)
_MARKUP["djot"] = re.compile(r"^(?:#+ |> |: |:::|```)|\]\(https?:", re.M)
# each markup's bold, emphasis, literal and link, ``{w}`` the word they set
_INLINE = {
    "rst": ("**{w}**", "*{w}*", "``{w}.conf``", "`the {w} page <https://example.org/{w}>`_"),
    "asciidoc": ("*{w}*", "_{w}_", "`{w}.conf`", "https://example.org/{w}[the {w} page]"),
    "latex": (
        "\\textbf{{w}}",
        "\\emph{{w}}",
        "\\texttt{{w}.conf}",
        "\\href{https://example.org/{w}}{the {w} page}",
    ),
    "mediawiki": ("'''{w}'''", "''{w}''", "<code>{w}.conf</code>", "[https://example.org/{w} the {w} page]"),
    "typst": ("*{w}*", "_{w}_", "`{w}.conf`", '#link("https://example.org/{w}")[the {w} page]'),
    "djot": ("*{w}*", "_{w}_", "`{w}.conf`", "[the {w} page](https://example.org/{w})"),
}
EXTENSION = {
    "rst": "rst",
    "asciidoc": "adoc",
    "latex": "tex",
    "mediawiki": "mediawiki",
    "typst": "typ",
    "djot": "dj",
}


class Doc:
    """One document's content, drawn once; each markup writes the same content."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        fresh = Fresh(rng, WORDS)
        self.title = fresh(3) if rng.random() < 0.85 else ""
        self.parts: list[tuple] = []
        if rng.random() < 0.4:
            self.parts.append(("paragraph", self._paragraph(fresh)))
        level = 0
        for i in range(rng.randint(3, 6)):
            level = 1 if i == 0 else rng.randint(1, min(level + 1, 3))
            self.parts.append(("heading", level, fresh(3)))
            self.parts.append(("paragraph", self._paragraph(fresh)))
            features = [
                f
                for f, s in (
                    ("list", 0.7),
                    ("table", 0.45),
                    ("quote", 0.3),
                    ("code", 0.35),
                    ("definitions", 0.3),
                    ("note", 0.25),
                )
                if rng.random() < s
            ]
            rng.shuffle(features)
            for f in features:
                self.parts.append(getattr(self, f"_{f}")(fresh))
                self.parts.append(("paragraph", self._paragraph(fresh)))

    def _paragraph(self, fresh: Fresh) -> tuple:
        rng = self.rng
        return (fresh(rng.randint(5, 9)), rng.randrange(6), rng.choice(WORDS), fresh(rng.randint(4, 8)))

    def _list(self, fresh: Fresh) -> tuple:
        rng = self.rng
        kind = rng.choices(["number", "letter", "bullet", "task"], [6, 1, 4, 1])[0]
        start = rng.choice([2, 3, 5, 10]) if kind == "number" and rng.random() < 0.3 else 1
        items = []
        for _ in range(rng.randint(2, 4)):
            text = fresh(rng.randint(3, 6))
            tail = fresh(rng.randint(3, 5), cap=False) if rng.random() < 0.15 else ""
            nested = (
                [fresh(rng.randint(2, 4)) for _ in range(rng.randint(2, 3))] if rng.random() < 0.25 else []
            )
            items.append((text, tail, nested, rng.random() < 0.5, rng.random() < 0.5))
        return ("list", kind, start, items)

    def _table(self, fresh: Fresh) -> tuple:
        rng = self.rng
        ncols = rng.randint(2, 4)
        rows = [[fresh(1) for _ in range(ncols)]]
        rows += [
            ([fresh(2)] + [str(rng.randint(1, 999)) for _ in range(ncols - 1)])
            for _ in range(rng.randint(2, 4))
        ]
        if ncols > 2 and rng.random() < 0.4:  # a row whose first cell spans two columns
            total = fresh(2)
            rows.append([total, total] + [str(rng.randint(1, 999)) for _ in range(ncols - 2)])
        return ("table", rows)

    def _definitions(self, fresh: Fresh) -> tuple:
        return (
            "definitions",
            [(fresh(2), fresh(self.rng.randint(5, 9))) for _ in range(self.rng.randint(2, 3))],
        )

    def _note(self, fresh: Fresh) -> tuple:
        return ("note", fresh(self.rng.randint(6, 10)) + ".")

    def _quote(self, fresh: Fresh) -> tuple:
        return ("quote", fresh(self.rng.randint(10, 16)) + ".")

    def _code(self, fresh: Fresh) -> tuple:
        lang = self.rng.choice(list(_CODE))
        name = fresh(2, cap=False).replace(" ", "_")
        return ("code", lang, name, _CODE[lang].format(name=name))


def spanning_row(row: list[str]) -> bool:
    """A row whose first cell spans two columns (its text in each, as a reader reads it)."""
    return len(row) > 2 and row[0] == row[1]


def _marker(kind: str, n: int) -> str:
    return f"{chr(96 + n)}." if kind == "letter" else f"{n}."


class _Writer:
    """A document written in one markup, with the truth of what was written."""

    def __init__(self, doc: Doc, lang: str, rng: random.Random):
        self.doc, self.lang, self.rng = doc, lang, rng
        self.lines: list[str] = []
        self.t = new_truth() | {"code": []}
        self.heading: str | None = None
        # the title's heading level, and how far sections are below it (as each reader documents)
        self.shift = 1 if doc.title or lang in ("mediawiki", "asciidoc") else 0

    # -- the truth, as written --

    def _under(self, text: str) -> None:
        self.t["under"].append((text, self.heading))
        self.t["order"].append(text)

    def fill(self, text: str, indent: str = "") -> list[str]:
        for width in range(72, 40, -1):
            lines = textwrap.wrap(text, width - len(indent))
            if not any(_LEAD.match(x) for x in lines[1:]):
                return [indent + x for x in lines]
        return [indent + text]

    def write(self) -> bytes:
        d, lang = self.doc, self.lang
        if d.title and lang != "mediawiki":
            self.t["title"] = d.title
            self.t["headings"].append((d.title, 1))
            self.t["order"].append(d.title)
            self.heading = d.title
        getattr(self, f"{lang}_start")()
        for part in d.parts:
            kind = part[0]
            if kind == "heading":
                _, level, text = part
                self.heading = text
                self.t["headings"].append((text, level + self.shift))
                self.t["order"].append(text)
                getattr(self, f"{lang}_heading")(level, text)
            elif kind == "paragraph":
                key, how, w, tail = part[1]
                self._under(key)
                self.paragraph(key, how, w, tail)
            elif kind == "list":
                self.write_list(*part[1:])
            elif kind == "table":
                rows = part[1]
                self.t["tables"].append(TruthTable(tuple(map(tuple, rows)), 1))
                self._under(rows[0][0])
                getattr(self, f"{lang}_table")(rows)
            elif kind == "quote":
                self.t["quotes"].append(part[1])
                self._under(part[1])
                getattr(self, f"{lang}_quote")(part[1])
            elif kind == "definitions":
                for term, definition in part[1]:
                    self.t["items"].append(ListItem(f"{term}: {definition}", ""))
                    self._under(definition)
                getattr(self, f"{lang}_definitions")(part[1])
            elif kind == "note":
                self._under(part[1])
                getattr(self, f"{lang}_note")(part[1])
            elif kind == "code":
                _, code_lang, name, code = part
                self.t["code"].append(code)
                self._under(name)
                getattr(self, f"{lang}_code")(code_lang, code)
        getattr(self, f"{lang}_end")()
        return ("\n".join(self.lines) + "\n").encode("utf-8")

    def paragraph(self, key: str, how: int, w: str, tail: str) -> None:
        """A paragraph filled at 72 columns, with one of the markup's inline forms (``_INLINE``) or none."""
        forms = _INLINE[self.lang]
        extra = [
            "",
            f" about {forms[0]}",
            f" and {forms[1]} again",
            f" with {forms[2]}",
            f" see {forms[3]}",
            "",
        ]
        extra = extra[how].replace("{w}", w)
        if self.lang == "mediawiki":  # a link's brackets cannot span lines: its spaces are kept from the wrap
            self.lines += [
                x.replace(chr(0), " ") for x in self.fill(f"{key}{extra.replace(' ', chr(0))}. {tail}.")
            ]
        else:
            self.lines += self.fill(f"{key}{extra}. {tail}.")
        if self.lang == "latex" and self.rng.random() < 0.15:
            self.lines.append("% TODO: check this with the team")
        self.lines.append("")

    def write_list(self, kind: str, start: int, items: list) -> None:
        lang = self.lang
        if kind == "letter" and lang in ("mediawiki", "latex", "typst"):
            kind = "number"  # none writes letters without styling them
        if lang == "mediawiki":
            start = 1
        if kind == "task" and lang not in ("asciidoc", "djot"):
            kind = "bullet"
        out = []
        numbered = kind in ("number", "letter") and lang != "latex"
        for j, (text, tail, nested, done, nested_numbered) in enumerate(items):
            nested_numbered = nested_numbered and numbered
            full = f"{text} {tail}" if tail else text
            if kind in ("number", "letter"):
                marker = _marker(kind, start + j)
            elif kind == "task":
                marker = "- [x]" if items[j][3] else "- [ ]"
            else:
                marker = "-"
            self.t["items"].append(ListItem(full, marker, 0))
            self._under(text)
            for k, x in enumerate(nested):
                sub = (f"{chr(97 + k)}." if lang == "asciidoc" else f"{k + 1}.") if nested_numbered else "-"
                self.t["items"].append(ListItem(x, sub, 1))
                self._under(x)
            out.append((text, tail, nested, done, nested_numbered))
        getattr(self, f"{lang}_list")(kind, start, out)

    # == reStructuredText =========================================================================

    def rst_start(self) -> None:
        self.rst_styles = self.rng.choice([("=", "-", "~"), ("*", "=", "-"), ("#", "*", "=")])
        if self.doc.title:
            bar = "=" * (len(self.doc.title) + self.rng.choice([0, 2]))
            over = self.rng.random() < 0.8
            self.lines += ([bar] if over else []) + [self.doc.title, bar, ""]
            if not over:  # a title underlined like the sections would be another level's style
                self.rst_styles = tuple(c for c in ("-", "~", "^", "+") if c != "=")[:3]
            else:
                self.rst_styles = tuple(c for c in self.rst_styles if c != "=") + ("=",)
                self.rst_styles = self.rst_styles[:3] if len(set(self.rst_styles)) == 3 else ("-", "~", "^")
        if self.rng.random() < 0.3:
            self.lines += [".. contents::", "   :local:", ""]

    def rst_heading(self, level: int, text: str) -> None:
        self.lines += [text, self.rst_styles[level - 1] * len(text), ""]

    def rst_list(self, kind, start, items) -> None:
        auto = kind == "number" and start == 1 and self.rng.random() < 0.4
        bullet = self.rng.choice("-*")
        for j, (text, tail, nested, _, nested_numbered) in enumerate(items):
            lead = "#." if auto else _marker(kind, start + j) if kind in ("number", "letter") else bullet
            lead += " "
            self.lines.append(lead + text)
            if tail:
                self.lines.append(" " * len(lead) + tail)
            if nested:
                self.lines.append("")
                self.lines += [
                    " " * len(lead) + (f"{k + 1}. " if nested_numbered else "- ") + x
                    for k, x in enumerate(nested)
                ]
                self.lines.append("")
        self.lines.append("")

    def rst_table(self, rows) -> None:
        how = "grid" if spanning_row(rows[-1]) else self.rng.choice(["grid", "simple", "list-table"])
        widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
        if how == "grid":
            rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
            head = rule.replace("-", "=")
            self.lines.append(rule)
            for i, row in enumerate(rows):
                if spanning_row(row):
                    cells = [row[0].ljust(widths[0] + widths[1] + 3)] + [
                        x.ljust(w) for x, w in zip(row[2:], widths[2:])
                    ]
                else:
                    cells = [x.ljust(w) for x, w in zip(row, widths)]
                self.lines.append("| " + " | ".join(cells) + " |")
                self.lines.append(head if i == 0 else rule)
        elif how == "simple":
            rule = "  ".join("=" * w for w in widths)
            self.lines.append(rule)
            for i, row in enumerate(rows):
                self.lines.append("  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip())
                if i == 0:
                    self.lines.append(rule)
            self.lines.append(rule)
        else:
            self.lines += [".. list-table::", "   :header-rows: 1", ""]
            for row in rows:
                self.lines.append("   * - " + row[0])
                self.lines += ["     - " + x for x in row[1:]]
        self.lines.append("")

    def rst_definitions(self, pairs) -> None:
        for term, definition in pairs:
            self.lines += [term, *self.fill(definition, "   "), ""]

    def rst_note(self, text) -> None:
        kind = self.rng.choice(["note", "warning", "tip"])
        self.lines += [f".. {kind}::", "", *self.fill(text, "   "), ""]

    def rst_quote(self, text) -> None:
        if self.rng.random() < 0.3:
            self.lines += [".. epigraph::", "", *self.fill(text, "   "), ""]
        else:
            self.lines += [*self.fill(text, "    "), ""]

    def rst_code(self, lang, code) -> None:
        r = self.rng.random()
        if r < 0.45:
            self.lines += [f".. code-block:: {lang}", ""]
        elif r < 0.6:
            self.lines += [".. parsed-literal::", ""]  # CMake's synopses: Sphinx shows the lines as written
        else:
            self.lines += ["For example::", ""]
        self.lines += ["   " + x if x else x for x in code.split("\n")]
        self.lines.append("")

    def rst_end(self) -> None:
        pass

    # == AsciiDoc ================================================================================

    def asciidoc_start(self) -> None:
        if self.doc.title:
            self.lines += [
                f"= {self.doc.title}",
                f"{self.rng.choice(['Ana Souza', 'Mei Chen'])} <a@example.org>",
            ]
            if self.rng.random() < 0.5:
                self.lines += [":toc:", ":source-highlighter: rouge"]
            self.lines.append("")

    def asciidoc_heading(self, level: int, text: str) -> None:
        if self.rng.random() < 0.2:
            self.lines.append(f"[#sec-{len(self.t['headings'])}]")
        self.lines += [f"{'=' * (level + 1)} {text}", ""]

    def asciidoc_list(self, kind, start, items) -> None:
        explicit = kind == "number" and self.rng.random() < 0.3
        if kind == "number" and start != 1 and not explicit:
            self.lines.append(f"[start={start}]")
        bullet = self.rng.choice("*-")
        for j, (text, tail, nested, done, nested_numbered) in enumerate(items):
            if kind == "number":
                lead = f"{start + j}. " if explicit else ". "
            elif kind == "letter":
                lead = "[loweralpha]\n. " if j == 0 else ". "
            elif kind == "task":
                lead = f"* [{'x' if done else ' '}] "
            else:
                lead = f"{bullet} "
            self.lines += lead.split("\n")[:-1]
            lead = lead.split("\n")[-1]
            self.lines.append(lead + text)
            if tail:
                self.lines.append(tail)
            inner = "**" if kind == "task" or (kind == "bullet" and bullet == "*") else "*"
            self.lines += [f"{'..' if nested_numbered else inner} {x}" for x in nested]
        self.lines.append("")

    def asciidoc_table(self, rows) -> None:
        how = self.rng.choice(["options", "percent", "implicit"])
        cols = ",".join("1" for _ in rows[0])
        if how == "options":
            self.lines.append(f'[cols="{cols}",options="header"]')
        elif how == "percent":
            self.lines.append(f'[%header,cols="{cols}"]')
        self.lines.append("|===")
        one_per_line = how != "implicit" and self.rng.random() < 0.5
        for i, row in enumerate(rows):
            cells = (
                [f"2+|{row[0]}"] + [f"|{x}" for x in row[2:]] if spanning_row(row) else [f"|{x}" for x in row]
            )
            if one_per_line and i > 0:
                self.lines += cells
            else:
                self.lines.append(" ".join(cells))
            if i == 0 or one_per_line:
                self.lines.append("")
        if self.lines[-1] == "":
            self.lines.pop()
        self.lines += ["|===", ""]

    def asciidoc_definitions(self, pairs) -> None:
        for term, definition in pairs:
            self.lines.append(f"{term}:: {definition}")
        self.lines.append("")

    def asciidoc_note(self, text) -> None:
        if self.rng.random() < 0.5:
            self.lines += [f"NOTE: {text}", ""]
        else:
            self.lines += ["[WARNING]", "====", *self.fill(text), "====", ""]

    def asciidoc_quote(self, text) -> None:
        if self.rng.random() < 0.5:
            self.lines += ["____", *self.fill(text), "____", ""]
        else:
            self.lines += ["[quote, Ana Souza]", "____", *self.fill(text), "____", ""]

    def asciidoc_code(self, lang, code) -> None:
        self.lines += [f"[source,{lang}]", "----", *code.split("\n"), "----", ""]

    def asciidoc_end(self) -> None:
        pass

    # == LaTeX ===================================================================================

    def latex_start(self) -> None:
        self.lines += ["\\documentclass[11pt]{article}", "\\usepackage{booktabs}", "\\usepackage{listings}"]
        self.lines += ["\\usepackage{hyperref}"]
        if self.doc.title:
            self.lines += [f"\\title{{{self.doc.title}}}", "\\author{Ana Souza}", "\\date{2026}"]
        self.lines += ["\\begin{document}"]
        if self.doc.title:
            self.lines += ["\\maketitle", ""]

    def latex_heading(self, level: int, text: str) -> None:
        cmd = ("section", "subsection", "subsubsection")[level - 1]
        star = "*" if self.rng.random() < 0.15 else ""
        self.lines += [f"\\{cmd}{star}{{{text}}}"]
        if self.rng.random() < 0.3:
            self.lines.append(f"\\label{{sec:{len(self.t['headings'])}}}")
        self.lines.append("")

    def latex_list(self, kind, start, items) -> None:
        env = "enumerate" if kind in ("number", "letter") else "itemize"
        self.lines.append(f"\\begin{{{env}}}")
        if env == "enumerate" and start != 1:
            self.lines.append(f"  \\setcounter{{enumi}}{{{start - 1}}}")
        for text, tail, nested, _, _ in items:
            self.lines.append(f"  \\item {text}")
            if tail:
                self.lines.append(f"    {tail}")
            if nested:
                self.lines += ["  \\begin{itemize}", *[f"    \\item {x}" for x in nested], "  \\end{itemize}"]
        self.lines += [f"\\end{{{env}}}", ""]

    def latex_table(self, rows) -> None:
        booktabs = self.rng.random() < 0.5
        self.lines += ["\\begin{table}[h]", "\\centering", f"\\begin{{tabular}}{{{'l' * len(rows[0])}}}"]
        self.lines.append("\\toprule" if booktabs else "\\hline")
        for i, row in enumerate(rows):
            cells = [f"\\multicolumn{{2}}{{l}}{{{row[0]}}}", *row[2:]] if spanning_row(row) else row
            self.lines.append(" & ".join(cells) + " \\\\")
            if i == 0:
                self.lines.append("\\midrule" if booktabs else "\\hline")
        self.lines += ["\\bottomrule" if booktabs else "\\hline", "\\end{tabular}", "\\end{table}", ""]

    def latex_definitions(self, pairs) -> None:
        self.lines += [
            "\\begin{description}",
            *[f"  \\item[{t}] {d}" for t, d in pairs],
            "\\end{description}",
            "",
        ]

    def latex_note(self, text) -> None:
        self.lines += [
            "\\begin{center}",
            "\\fbox{\\parbox{0.9\\linewidth}{",
            *self.fill(text),
            "}}",
            "\\end{center}",
            "",
        ]

    def latex_quote(self, text) -> None:
        env = self.rng.choice(["quote", "quotation"])
        self.lines += [f"\\begin{{{env}}}", *self.fill(text), f"\\end{{{env}}}", ""]

    def latex_code(self, lang, code) -> None:
        if self.rng.random() < 0.5:
            self.lines += ["\\begin{verbatim}", *code.split("\n"), "\\end{verbatim}", ""]
        else:
            self.lines += [
                f"\\begin{{lstlisting}}[language={lang}]",
                *code.split("\n"),
                "\\end{lstlisting}",
                "",
            ]

    def latex_end(self) -> None:
        self.lines.append("\\end{document}")

    # == MediaWiki ===============================================================================

    def mediawiki_start(self) -> None:
        if self.doc.title:  # a page's title is its name; the page opens with it in bold
            self.lines += [f"'''{self.doc.title}''' is described on this page.", ""]

    def mediawiki_heading(self, level: int, text: str) -> None:
        bar = "=" * (level + 1)
        self.lines += [f"{bar} {text} {bar}" if self.rng.random() < 0.8 else f"{bar}{text}{bar}"]
        if self.rng.random() < 0.5:
            self.lines.append("")

    def mediawiki_list(self, kind, start, items) -> None:
        mark = "#" if kind in ("number", "letter") else "*"
        for text, tail, nested, _, nested_numbered in items:
            self.lines.append(f"{mark} {text}" + (f" {tail}" if tail else ""))
            self.lines += [f"{mark}{'#' if nested_numbered else '*'} {x}" for x in nested]
        self.lines.append("")

    def mediawiki_table(self, rows) -> None:
        self.lines.append('{| class="wikitable"')
        if self.rng.random() < 0.5:
            self.lines.append("! " + " !! ".join(rows[0]))
        else:
            self.lines += [f"! {x}" for x in rows[0]]
        for row in rows[1:]:
            self.lines.append("|-")
            cells = [f'colspan="2" | {row[0]}', *row[2:]] if spanning_row(row) else row
            if self.rng.random() < 0.5:
                self.lines.append("| " + " || ".join(cells))
            else:
                self.lines += [f"| {x}" for x in cells]
        self.lines += ["|}", ""]

    def mediawiki_definitions(self, pairs) -> None:
        one_line = self.rng.random() < 0.5
        for term, definition in pairs:
            self.lines += [f"; {term} : {definition}"] if one_line else [f"; {term}", f": {definition}"]
        self.lines.append("")

    def mediawiki_note(self, text) -> None:
        self.lines += [f"{{{{Note|{text}}}}}", ""]

    def mediawiki_quote(self, text) -> None:
        self.lines += [f"<blockquote>{text}</blockquote>", ""]

    def mediawiki_code(self, lang, code) -> None:
        if self.rng.random() < 0.6:
            self.lines += [f'<syntaxhighlight lang="{lang}">', *code.split("\n"), "</syntaxhighlight>", ""]
        else:
            esc = code.replace("&", "&amp;").replace("<", "&lt;")
            self.lines += ["<pre>", *esc.split("\n"), "</pre>", ""]

    def mediawiki_end(self) -> None:
        self.lines += ["[[Category:Operations]]"]


class _Typst:
    """Typst as its writers write it (mixed into ``_Writer``)."""

    def typst_start(self) -> None:
        if self.doc.title:
            self.lines += [f'#set document(title: "{self.doc.title}")', ""]
        self.lines += ['#set page(paper: "a4")', ""]

    def typst_heading(self, level: int, text: str) -> None:
        self.lines += [f"{'=' * level} {text}", ""]

    def typst_list(self, kind, start, items) -> None:
        explicit = kind == "number" and (start != 1 or self.rng.random() < 0.3)
        for j, (text, tail, nested, _, nested_numbered) in enumerate(items):
            lead = f"{start + j}. " if explicit else "+ " if kind == "number" else "- "
            self.lines.append(lead + text)
            if tail:
                self.lines.append("  " + tail)
            self.lines += [("  + " if nested_numbered else "  - ") + x for x in nested]
        self.lines.append("")

    def typst_table(self, rows) -> None:
        def cells(row):
            if spanning_row(row):
                return [f"table.cell(colspan: 2)[{row[0]}]", *(f"[{x}]" for x in row[2:])]
            return [f"[{x}]" for x in row]

        self.lines += [
            "#table(",
            f"  columns: {len(rows[0])},",
            "  table.header" + "".join(f"[{x}]" for x in rows[0]) + ",",
        ]
        self.lines += ["  " + ", ".join(cells(r)) + "," for r in rows[1:]]
        self.lines += [")", ""]

    def typst_quote(self, text) -> None:
        self.lines += ["#quote(block: true)[", *self.fill(text, "  "), "]", ""]

    def typst_code(self, lang, code) -> None:
        self.lines += [f"```{lang}", *code.split("\n"), "```", ""]

    def typst_definitions(self, pairs) -> None:
        self.lines += [*(f"/ {t}: {d}" for t, d in pairs), ""]

    def typst_note(self, text) -> None:
        self.lines += [*self.fill(f"*Note:* {text}"), ""]

    def typst_end(self) -> None:
        pass


class _Djot:
    """Djot as its writers write it (mixed into ``_Writer``): the title a level-1 heading."""

    def djot_start(self) -> None:
        if self.doc.title:
            self.lines += [f"# {self.doc.title}", ""]

    def djot_heading(self, level: int, text: str) -> None:
        self.lines += [f"{'#' * (level + self.shift)} {text}", ""]

    def djot_list(self, kind, start, items) -> None:
        for j, (text, tail, nested, done, nested_numbered) in enumerate(items):
            if kind in ("number", "letter"):
                lead = _marker(kind, start + j) + " "
            elif kind == "task":
                lead = f"- [{'x' if done else ' '}] "
            else:
                lead = "- "
            self.lines.append(lead + text)
            if tail:
                self.lines.append(" " * len(lead) + tail)
            if nested:
                pad = " " * len(lead)
                self.lines += [
                    "",
                    *(pad + (f"{k + 1}. " if nested_numbered else "- ") + x for k, x in enumerate(nested)),
                ]
            self.lines.append("")

    def djot_table(self, rows) -> None:
        self.lines += ["| " + " | ".join(rows[0]) + " |", "|" + "|".join("---" for _ in rows[0]) + "|"]
        self.lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        self.lines.append("")

    def djot_quote(self, text) -> None:
        self.lines += [*("> " + x for x in self.fill(text)), ""]

    def djot_code(self, lang, code) -> None:
        self.lines += [f"``` {lang}", *code.split("\n"), "```", ""]

    def djot_definitions(self, pairs) -> None:
        for t, d in pairs:
            self.lines += [f": {t}", "", f"  {d}", ""]

    def djot_note(self, text) -> None:
        self.lines += ["::: note", *self.fill(text), ":::", ""]

    def djot_end(self) -> None:
        pass


class _Writers(_Writer, _Typst, _Djot):
    """Every markup's writer."""


def document(rng: random.Random, lang: str) -> tuple[bytes, dict]:
    w = _Writers(Doc(rng), lang, rng)
    return w.write(), w.t


def score_markup_document(
    section: Section,
    case: str,
    lang: str,
    data: bytes,
    t: dict,
    *,
    fmt: str = "",
    markup: re.Pattern | None = None,
) -> None:
    """Score one document of ``lang`` (its figures tallied under ``fmt``, the markup by default)."""
    fmt = fmt or lang
    markup = markup or _MARKUP[lang]
    parsed, chunks = parse_and_chunk(data, f"{case}.{EXTENSION.get(lang, '1')}", max_tokens=8192)
    if parsed.document.format != lang or parsed.document.status != "ok":
        section.miss(
            f"{case}: read as {parsed.document.format} ({parsed.document.status}: {parsed.document.reason})"
        )
    score_document(section, case, fmt, parsed, chunks, t)
    score_code(section, case, fmt, parsed, t["code"])
    if t["quotes"]:
        score_quotes(section, case, fmt, t["quotes"], chunks)
    prose = [c for c in chunks if "code" not in c.block_kinds]
    clean = [c for c in prose if not markup.search(body(c))]
    for c in prose:
        if c not in clean:
            m = markup.search(body(c))
            text = body(c)
            section.miss(f"{case}: markup in a chunk: {text[max(0, m.start() - 30) : m.end() + 30]!r}")
            break
    section.add("markup left out", fmt, len(clean), len(prose))
    from raychunk.chunking import chunk_document
    from raychunk.chunking.model import Profile
    from raychunk.evaluation.spans import check_chunk

    small = chunk_document(parsed, Profile(strategy="structure", max_tokens=96), counter())
    ok = 0
    for c in small:
        why = check_chunk(
            parsed.text,
            {"text": c.text, "header": c.header, "char_start": c.char_start, "char_end": c.char_end},
        )
        if why is None:
            ok += 1
        else:
            section.miss(f"{case}: span of {body(c)[:40]!r}: {why}")
    section.add("spans hold their text", fmt, ok, len(small))


SEED = 17


def _section(lang: str, fast: bool) -> Section:
    s = Section(lang)
    rng = random.Random(SEED)
    for i in range(4 if fast else 24):
        data, truth = document(random.Random(rng.random()), lang)
        score_markup_document(s, f"{lang}-{i}", lang, data, truth)
    return s


SECTIONS = {lang: (lambda fast, lang=lang: _section(lang, fast)) for lang in EXTENSION}
