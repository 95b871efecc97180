"""Fidelity sections of XML read by its shape (``raychunk/parse/xmldata.py``): generated documents
whose records, comments and steps are known, with the place of every value in the source.

- ``xml-records``: settings schemas (keys with a default, a summary and a description wrapped over
  lines), feeds (items whose description is HTML escaped into the value or kept in CDATA) and
  catalogues (entries described by their attributes, values with ``&``, quotes and ``<``), and
  configuration files documented in comments. Figures: ``values`` (each truth ``name: value`` pair
  a line of a chunk), ``record spans`` (each record chunked on its own, its span from its first
  value's place in the source to its last's end), ``comments`` (each comment paragraph whole in a
  chunk), ``markup-free chunks``.
- ``xml-documents``: DITA tasks (steps and substeps as numbered list items under the task's title)
  and TEI texts (chapters under their heads). Figures: ``list items``, ``headings`` (each title or
  head a heading of the parse, with its path), ``paragraphs`` (each paragraph whole in a chunk).
"""

from __future__ import annotations

import random
from xml.sax.saxutils import escape

from fidelity import ListItem, Section, body, counter, parse_and_chunk, score_lists, score_markup

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "cloud",
    "seat",
    "plan",
    "rate",
    "quota",
    "region",
    "zone",
    "disk",
    "cache",
    "queue",
    "shard",
]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


class _Source:
    """A document written piece by piece, remembering where each value stands."""

    def __init__(self):
        self.parts: list[str] = []
        self.size = 0

    def add(self, text: str) -> int:
        at = self.size
        self.parts.append(text)
        self.size += len(text)
        return at

    def value(self, written: str) -> tuple[int, int]:
        """A value as written (escaped, wrapped): its stripped place."""
        at = self.add(written)
        lead = len(written) - len(written.lstrip())
        return at + lead, at + len(written.rstrip())

    def text(self) -> str:
        return "".join(self.parts)


def _attr(v: str) -> str:
    return escape(v, {'"': "&quot;"})


def schema(rng: random.Random, n: int) -> tuple[bytes, list, list]:
    """A GSettings schema: ``n`` keys."""
    src, records = _Source(), []
    src.add(
        '<?xml version="1.0" encoding="UTF-8"?>\n<schemalist>\n  <schema id="org.example.app" path="/org/example/app/">\n'
    )
    for i in range(n):
        name, kind = f"option-{i}-{rng.choice(WORDS)}", rng.choice("bsid")
        default = rng.choice(["true", "false", "'auto'", str(rng.randint(0, 5000))])
        summary = _words(rng, 3).capitalize()
        first, second = _words(rng, 8), _words(rng, 6)
        description = f"{first.capitalize()} & {second}."
        src.add('    <key name="')
        a = src.value(_attr(name))
        src.add('" type="')
        src.value(kind)
        src.add('">\n      <default>')
        src.value(escape(default))
        src.add("</default>\n      <summary>")
        src.value(escape(summary))
        src.add("</summary>\n      <description>\n        ")
        wrapped = escape(description).replace(" &amp; ", " &amp;\n        ", 1)
        b = src.value(wrapped)
        src.add("\n      </description>\n    </key>\n")
        pairs = [
            ("name", name),
            ("type", kind),
            ("default", default),
            ("summary", summary),
            ("description", description),
        ]
        records.append((pairs, (a[0], b[1])))
    src.add("  </schema>\n</schemalist>\n")
    return src.text().encode(), records, []


def feed(rng: random.Random, n: int) -> tuple[bytes, list, list]:
    """An RSS feed: ``n`` items, their descriptions HTML escaped or in CDATA."""
    src, records = _Source(), []
    src.add(
        '<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0">\n<channel>\n  <title>Release notes</title>\n'
    )
    for i in range(n):
        title = f"Release {i}: {_words(rng, 3)}"
        link = f"https://example.org/releases/{i}"
        words = _words(rng, 10)
        src.add("  <item>\n    <title>")
        a = src.value(escape(title))
        src.add("</title>\n    <link>")
        src.value(link)
        src.add("</link>\n    <description>")
        if i % 2:
            b = src.value(f"<![CDATA[<p>{words}.</p>]]>")
            b = (b[0] + len("<![CDATA[<p>"), b[1] - len("</p>]]>"))
        else:
            b = src.value(escape(f"<p>{words}.</p>"))
            b = (b[0] + len("&lt;p&gt;"), b[1] - len("&lt;/p&gt;"))
        src.add("</description>\n  </item>\n")
        records.append(([("title", title), ("link", link), ("description", f"{words}.")], (a[0], b[1])))
    src.add("</channel>\n</rss>\n")
    return src.text().encode(), records, []


def catalogue(rng: random.Random, n: int) -> tuple[bytes, list, list]:
    """Entries described by their attributes, with ``&``, quotes and ``<`` in the values."""
    src, records = _Source(), []
    src.add('<?xml version="1.0"?>\n<catalogue>\n')
    for i in range(n):
        code = f"C{i:04d}"
        name = f'{_words(rng, 2).title()} & {rng.choice(WORDS).title()} "{i}"'
        note = f"{_words(rng, 2)} < {rng.randint(1, 99)}"
        src.add('  <entry code="')
        a = src.value(code)
        src.add('" name="')
        src.value(_attr(name))
        src.add('" note="')
        b = src.value(_attr(note))
        src.add('"/>\n')
        records.append(([("code", code), ("name", name), ("note", note)], (a[0], b[1])))
    src.add("</catalogue>\n")
    return src.text().encode(), records, []


def configuration(rng: random.Random, n: int) -> tuple[bytes, list, list]:
    """A configuration file documented in comments: each setting after the comment that explains it."""
    src, comments = _Source(), []
    src.add('<?xml version="1.0"?>\n<!--\n | Settings of the example service.\n |-->\n<settings>\n')
    comments.append("Settings of the example service.")
    for i in range(n):
        doc = f"{_words(rng, 12).capitalize()}: setting {i} of the service."
        src.add(f"  <!-- {doc} -->\n  <setting{i}>{rng.randint(1, 9)}</setting{i}>\n")
        comments.append(doc)
    src.add("</settings>\n")
    return src.text().encode(), [], comments


def score_records(section: Section, case: str, data: bytes, records: list, comments: list) -> None:
    from raychunk.chunking import chunk_document
    from raychunk.chunking.model import Profile
    from raychunk.parse import parse_document

    parsed = parse_document(data, f"{case}.xml")
    chunks = chunk_document(parsed, Profile(strategy="records", max_tokens=256), counter())
    lines = {line for c in chunks for line in body(c).split("\n")}
    ok = 0
    for pairs, _ in records:
        for name, value in pairs:
            if f"{name}: {' '.join(value.split())}" in lines:
                ok += 1
            else:
                section.miss(f"{case}: no line {name}: {value!r}")
    section.add("values", "xml", ok, sum(len(p) for p, _ in records))
    spans = {(c.char_start, c.char_end) for c in chunks if not c.continuation}
    ok = 0
    for pairs, span in records:
        if span in spans:
            ok += 1
        else:
            near = [s for s in spans if s[0] <= span[1] and span[0] <= s[1]]
            section.miss(f"{case}: record {pairs[0][1]!r} wants span {span}, found {near[:2]}")
    section.add("record spans", "xml", ok, len(records))
    if comments:
        bodies = [" ".join(body(c).split()) for c in chunks]
        found = sum(1 for t in comments if any(t in b for b in bodies))
        for t in comments:
            if not any(t in b for b in bodies):
                section.miss(f"{case}: comment {t[:50]!r} not whole in a chunk")
        section.add("comments", "xml", found, len(comments))
    score_markup(section, case, "xml", chunks)


def records_section(fast: bool) -> Section:
    s = Section("xml-records")
    rng = random.Random(7)
    n = 12 if fast else 120
    for k, make in enumerate((schema, feed, catalogue, configuration) * (1 if fast else 3)):
        data, records, comments = make(rng, n)
        score_records(s, f"{make.__name__}-{k}", data, records, comments)
        s.cases += 1
    return s


def dita_task(rng: random.Random, n: int) -> tuple[bytes, list[ListItem], list[tuple[str, tuple]], list[str]]:
    title = f"Installing the {rng.choice(WORDS)} service"
    steps, xml = [], []
    for i in range(n):
        cmd = f"{_words(rng, 5).capitalize()} step {i + 1}."
        steps.append(ListItem(cmd, f"{i + 1}."))
        sub = ""
        if i % 3 == 1:
            subs = [f"{_words(rng, 3).capitalize()} substep {j + 1}." for j in range(2)]
            steps.extend(ListItem(t, f"{j + 1}.", 1) for j, t in enumerate(subs))
            sub = (
                "<substeps>"
                + "".join(f"<substep><cmd>{escape(t)}</cmd></substep>" for t in subs)
                + "</substeps>"
            )
        xml.append(f"<step><cmd>{escape(cmd)}</cmd>{sub}</step>")
    short = f"{_words(rng, 9).capitalize()}."
    data = (
        f'<?xml version="1.0"?>\n<task id="t"><title>{title}</title><shortdesc>{short}</shortdesc>'
        f"<taskbody><steps>{''.join(xml)}</steps></taskbody></task>\n"
    )
    return data.encode(), steps, [(title, ())], [short]


def tei_text(rng: random.Random, n: int) -> tuple[bytes, list[ListItem], list[tuple[str, tuple]], list[str]]:
    heads, paragraphs, divs = [], [], []
    for i in range(n):
        head = f"Chapter {i + 1}: the {rng.choice(WORDS)}"
        ps = [
            f"{_words(rng, 14).capitalize()} <hi>{rng.choice(WORDS)}</hi> {_words(rng, 4)}." for _ in range(2)
        ]
        heads.append((head, ()))
        paragraphs.extend(p.replace("<hi>", "").replace("</hi>", "") for p in ps)
        divs.append(f"<div><head>{head}</head>" + "".join(f"<p>{p}</p>" for p in ps) + "</div>")
    data = f'<TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body>{"".join(divs)}</body></text></TEI>\n'
    return data.encode(), [], heads, paragraphs


def documents_section(fast: bool) -> Section:
    s = Section("xml-documents")
    rng = random.Random(11)
    n = 6 if fast else 40
    for k, make in enumerate((dita_task, tei_text) * (1 if fast else 3)):
        data, items, heads, paragraphs = make(rng, n)
        case = f"{make.__name__}-{k}"
        parsed, chunks = parse_and_chunk(data, f"{case}.xml")
        if items:
            score_lists(s, case, "xml", items, chunks)
        found = {(b.text, b.heading_path) for b in parsed.blocks if b.kind == "heading"}
        ok = sum(1 for h in heads if h in found)
        for h in heads:
            if h not in found:
                s.miss(f"{case}: heading {h[0]!r} not found")
        s.add("headings", "xml", ok, len(heads))
        bodies = [" ".join(body(c).split()) for c in chunks]
        ok = sum(1 for p in paragraphs if any(p in b for b in bodies))
        s.add("paragraphs", "xml", ok, len(paragraphs))
        score_markup(s, case, "xml", chunks)
        s.cases += 1
    return s


SECTIONS = {"xml-records": records_section, "xml-documents": documents_section}
