"""The ``pdf-code``, ``pdf-code-real``, ``docx-code`` and ``pptx-code`` sections of
``benchmarks/fidelity.py``: code set in a typewriter face, in PDFs, Word documents and decks.

PDFs have no code element: a listing is lines in a typewriter face (Courier, Nimbus Mono, TeX's
CMTT), set apart from the text. Generated cases are HTML pages rendered to PDF by PyMuPDF's Story
(``<pre>`` in a typewriter face, the text in a serif), so the truth is exact: shell sessions,
Python with nested indentation, JSON and XML, program output with blank lines, one-line commands.
Beside them, what must stay text: sentences with words in the face (``<code>`` inline), an
option's name on a line of its own over its description (a definition list's term), a footnote's
address in the face, and a memo set wholly in Courier (a text file printed to PDF). At full size the
cases are drawn from a seeded random source; ``--fast`` takes the first few.

``pdf-code-real`` scores the shared corpus's Bash manual (``pdf/bashref.pdf``, Texinfo through
TeX, CMTT): examples, synopses and a sample inputrc read off the page image, each a code block of
the parse with its lines as set, and builtins' names over their entries that must stay text.

``docx-code`` writes the same pages as Word documents (python-docx), a listing in one of the ways
Word documents carry code: a paragraph a line in Courier New or Consolas with an empty paragraph
for a blank line (as people type it), one "Source Code" paragraph with line breaks (pandoc), a
"HTML Preformatted" paragraph a line (Word's own style), or runs of a character style whose face is
Consolas (pandoc's "Verbatim Char"); sentences with words in Consolas, and an option's name in
Courier New on a paragraph of its own over its description indented under it. ``pptx-code``:
decks whose text boxes hold a listing (a paragraph a line in the face, or one paragraph with line
breaks, as pandoc writes a deck's code), a sentence with a code word, or a bulleted file name.

Figures: ``code kept as code`` (each truth block a code block of the parse, exactly: its lines,
their indentation, its blank lines); ``text kept as text`` (each sentence with code words, each
term and each address a block of text, not code, its words whole).
"""

from __future__ import annotations

import html
import io
import os
import random
from pathlib import Path

from fidelity import Section, score_code

HERE = Path(__file__).resolve().parent
CORPUS = Path(os.environ.get("RAYCHUNK_CORPUS", HERE.parent.parent / "shared" / "corpus")) / "pdf"

LISTINGS = (
    "./configure --prefix=/usr/local\nmake -j4\nsudo make install",
    'def load(path):\n    with open(path) as f:\n        for line in f:\n            if line.strip():\n                yield line.rstrip("\\n")',
    '{\n  "name": "raychunk",\n  "version": "1.4.0",\n  "dependencies": {\n    "ray": ">=2.9"\n  }\n}',
    '<server port="8080">\n  <route path="/api" target="backend"/>\n  <route path="/" target="static"/>\n</server>',
    "$ kubectl get pods -n prod\nNAME          READY   STATUS\napi-7d9f      1/1     Running\n\n$ kubectl logs api-7d9f --tail=20",
    'for f in *.log; do\n    gzip -9 "$f"\ndone',
    "SELECT name, count(*)\n  FROM orders\n WHERE placed > now() - interval '7 days'\n GROUP BY name;",
    "git rebase -i HEAD~3",
    "[server]\nhost = 0.0.0.0\nport = 9000\n\n[cache]\nsize_mb = 512",
    "if (count > limit) {\n    flush(buffer);\n    count = 0;\n}",
)
SENTENCES = (
    "Run {c} once the build is done; it copies the files into place and the shell finds them at once.",
    "The {c} setting takes a number of seconds, and a value of zero turns the timeout off entirely.",
    "When {c} is missing the tool reads its defaults, which suit a laptop but not a shared server.",
    "Each worker calls {c} before it starts, so a change to it is seen by the next run, not this one.",
)
CODE_WORDS = ("make install", "timeout_s", "config.toml", "init()", "PATH", "--dry-run")
TERMS = (
    ("--quiet", "Print nothing but errors, and return a non-zero status when any step of the build fails."),
    ("--jobs N", "Run N steps at once; the default is the number of cores this machine reports to the tool."),
    ("RAY_ADDRESS", "The cluster to submit to; unset, the job starts a local one and stops it when done."),
)
PROSE = (
    "The release notes list every change since the last version, with the issues each one closes.",
    "Nothing here needs a network connection: the models and the tokenizer ship inside the packages.",
    "A document that fails to parse becomes a row with its reason, and the others go on without it.",
    "Upgrades keep the index: chunks of unchanged files keep their ids, so their vectors are reused.",
)
CSS = "body {font-family: serif; font-size: 10pt;} pre {font-family: monospace; font-size: 9pt;} .dd {margin-left: 36pt;}"


def _story_pdf(body: str) -> bytes:
    import pymupdf

    rect = pymupdf.paper_rect("letter")
    story = pymupdf.Story(html=body, user_css=CSS)
    buf = io.BytesIO()
    writer = pymupdf.DocumentWriter(buf)
    more = True
    while more:
        device = writer.begin_page(rect)
        more, _ = story.place(rect + (72, 72, -72, -72))
        story.draw(device)
        writer.end_page()
    writer.close()
    return buf.getvalue()


def _case(rng: random.Random) -> tuple[str, list[str], list[str]]:
    """An HTML page, its code blocks, and the texts that must stay text."""
    parts = [f"<h1>{html.escape(rng.choice(('Install', 'Configure', 'Deploy', 'Operate')))}</h1>"]
    code: list[str] = []
    text: list[str] = []
    for _ in range(rng.randint(3, 5)):
        parts.append(f"<p>{html.escape(rng.choice(PROSE))}</p>")
        kind = rng.random()
        if kind < 0.55:
            listing = rng.choice(LISTINGS)
            code.append(listing)
            parts.append(
                f"<p>{html.escape(rng.choice(PROSE)[:-1])}, as follows:</p><pre>{html.escape(listing)}</pre>"
            )
        elif kind < 0.8:
            sentence = rng.choice(SENTENCES)
            word = rng.choice(CODE_WORDS)
            text.append(sentence.format(c=word))
            parts.append("<p>" + html.escape(sentence).format(c=f"<code>{html.escape(word)}</code>") + "</p>")
        else:
            term, desc = rng.choice(TERMS)
            text.append(term)
            parts.append(f"<p><code>{html.escape(term)}</code></p><p class='dd'>{html.escape(desc)}</p>")
    return "".join(parts), code, text


def _score_text(section: Section, case: str, fmt: str, parsed, texts: list[str]) -> None:
    ok = 0
    for t in texts:
        hit = next((b for b in parsed.blocks if t in b.text), None)
        if hit is not None and hit.kind != "code":
            ok += 1
        else:
            section.miss(
                f"{case}: text {t[:50]!r}: got {hit.kind if hit else 'nothing'} {hit.text[:60] if hit else ''!r}"
            )
    if texts:
        section.add("text kept as text", fmt, ok, len(texts))


def _scored(name: str, fmt: str, seed: int, make, fast: bool) -> Section:
    """A section of generated cases: ``make(rng)`` gives a file's bytes, its code blocks and the
    texts that must stay text."""
    from raychunk.parse import parse_document

    section = Section(name)
    rng = random.Random(seed)
    for n in range(6 if fast else 40):
        data, code, text = make(rng)
        parsed = parse_document(data, f"case-{n}.{fmt}")
        score_code(section, f"case-{n}", fmt, parsed, code)
        _score_text(section, f"case-{n}", fmt, parsed, text)
        section.cases += 1
    return section


def _pdf_case(rng: random.Random) -> tuple[bytes, list[str], list[str]]:
    body, code, text = _case(rng)
    return _story_pdf(body), code, text


def _generated(fast: bool) -> Section:
    from raychunk.parse import parse_document

    section = _scored("pdf-code", "pdf", 2026, _pdf_case, fast)
    # a footnote's address in the face, broken over two lines, and a memo set wholly in Courier
    import pymupdf

    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_textbox(pymupdf.Rect(72, 72, 540, 300), " ".join(PROSE * 2), fontsize=10, fontname="helv")
    page.insert_text((72, 700), "1 https://example.org/releases/", fontsize=8, fontname="cour")
    page.insert_text((72, 710), "raychunk-1.4.0.tar.gz", fontsize=8, fontname="cour")
    parsed = parse_document(pdf.tobytes(), "footnote.pdf")
    _score_text(section, "footnote", "pdf", parsed, ["https://example.org/releases/"])
    memo = pymupdf.open()
    page = memo.new_page()
    for k, line in enumerate(
        ("MEMORANDUM", "To: the board", "From: the treasurer", "The accounts are closed.")
    ):
        page.insert_text((72, 72 + 16 * k), line, fontsize=11, fontname="cour")
    parsed = parse_document(memo.tobytes(), "memo.pdf")
    _score_text(section, "memo", "pdf", parsed, ["To: the board", "The accounts are closed."])
    section.cases += 2
    return section


# Read off the page images of the shared corpus's bashref.pdf (Bash 5.2's reference manual).
BASHREF_CODE = (
    "TEXTDOMAIN=example\nTEXTDOMAINDIR=/usr/local/share/locale\n\n"
    "cp es.mo ${TEXTDOMAINDIR}/es/LC_MESSAGES/${TEXTDOMAIN}.mo\n"
    "cp eo.mo ${TEXTDOMAINDIR}/eo/LC_MESSAGES/${TEXTDOMAIN}.mo",
    "bash --dump-po-strings scriptname > domain.pot",
    "until test-commands; do consequent-commands; done",
    "getopts optstring name [arg ...]",
    "ls > dirlist 2>&1",
    "mkdir /usr/local/src/bash/{old,new,dist,bugs}",
    "printf [-v var] format [arguments]",
    "declare -a name[subscript]",
    "mkdir /fs1/bash-install\nmake install DESTDIR=/fs1/bash-install",
)
# a term alone on its line, or (ending in a space) one that its description follows on the line
BASHREF_TEXT = ("getopts", "PATH ", "BASH_VERSINFO", "BASH_VERSINFO[0]", "cmdhist ")


def _real(fast: bool) -> Section:
    from raychunk.parse import parse_document

    section = Section("pdf-code-real")
    path = CORPUS / "bashref.pdf"
    if not path.exists():
        section.miss(f"{path} not found (RAYCHUNK_CORPUS)")
        return section
    parsed = parse_document(path.read_bytes(), "bashref.pdf")
    score_code(section, "bashref", "pdf", parsed, BASHREF_CODE)
    ok = 0
    for term in BASHREF_TEXT:
        kinds = {
            b.kind for b in parsed.blocks if b.text == term or term.endswith(" ") and b.text.startswith(term)
        }
        if kinds and "code" not in kinds:
            ok += 1
        else:
            section.miss(f"bashref: term {term!r}: {sorted(kinds) or 'no block'}")
    section.add("text kept as text", "pdf", ok, len(BASHREF_TEXT))
    section.cases += 1
    return section


def _docx(rng: random.Random) -> tuple[bytes, list[str], list[str]]:
    """A Word document like ``_case``'s page, its code blocks and the texts that must stay text."""
    import docx
    from docx.enum.style import WD_STYLE_TYPE
    from docx.shared import Pt

    d = docx.Document()
    d.styles.add_style("Source Code", WD_STYLE_TYPE.PARAGRAPH)
    d.styles.add_style("HTML Preformatted", WD_STYLE_TYPE.PARAGRAPH)
    d.styles.add_style("Verbatim Char", WD_STYLE_TYPE.CHARACTER).font.name = "Consolas"
    d.add_heading(rng.choice(("Install", "Configure", "Deploy", "Operate")), 1)
    code: list[str] = []
    text: list[str] = []
    for _ in range(rng.randint(3, 5)):
        d.add_paragraph(rng.choice(PROSE))
        kind = rng.random()
        if kind < 0.55:
            listing = rng.choice(LISTINGS)
            code.append(listing)
            d.add_paragraph(rng.choice(PROSE)[:-1] + ", as follows:")
            way = rng.randrange(4)
            if way == 0:
                for line in listing.split("\n"):
                    p = d.add_paragraph()
                    if line:
                        p.add_run(line).font.name = rng.choice(("Courier New", "Consolas"))
            elif way == 1:
                p = d.add_paragraph(style="Source Code")
                for k, line in enumerate(listing.split("\n")):
                    if k:
                        p.add_run().add_break()
                    p.add_run(line)
            elif way == 2:
                for line in listing.split("\n"):
                    d.add_paragraph(line, style="HTML Preformatted")
            else:
                for line in listing.split("\n"):
                    p = d.add_paragraph()
                    if line:
                        p.add_run(line, style="Verbatim Char")
        elif kind < 0.8:
            sentence = rng.choice(SENTENCES)
            word = rng.choice(CODE_WORDS)
            text.append(sentence.format(c=word))
            head, tail = sentence.split("{c}")
            p = d.add_paragraph(head)
            p.add_run(word).font.name = "Consolas"
            p.add_run(tail)
        else:
            term, desc = rng.choice(TERMS)
            text.append(term)
            d.add_paragraph().add_run(term).font.name = "Courier New"
            d.add_paragraph(desc).paragraph_format.left_indent = Pt(36)
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue(), code, text


def _generated_docx(fast: bool) -> Section:
    return _scored("docx-code", "docx", 2027, _docx, fast)


def _pptx(rng: random.Random) -> tuple[bytes, list[str], list[str]]:
    """A deck of a few slides, each a title and a text box of prose, a listing (a paragraph a line
    in Courier New or Consolas, or one paragraph with line breaks, as pandoc writes it), a sentence
    with a code word or a bulleted file name in the face."""
    import pptx
    from pptx.oxml.ns import qn
    from pptx.util import Inches

    deck = pptx.Presentation()
    code: list[str] = []
    text: list[str] = []
    for _ in range(rng.randint(2, 4)):
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = rng.choice(("Install", "Configure", "Deploy", "Operate"))
        frame = slide.shapes.add_textbox(Inches(0.5), Inches(1.5), Inches(9), Inches(5)).text_frame
        frame.text = rng.choice(PROSE)
        kind = rng.random()
        face = rng.choice(("Courier New", "Consolas"))
        if kind < 0.6:
            listing = rng.choice(LISTINGS)
            code.append(listing)
            if rng.random() < 0.5:
                for line in listing.split("\n"):
                    para = frame.add_paragraph()
                    if line:
                        run = para.add_run()
                        run.text, run.font.name = line, face
            else:
                para = frame.add_paragraph()
                for k, line in enumerate(listing.split("\n")):
                    if k:
                        para._p.add_br()
                    if line:
                        run = para.add_run()
                        run.text, run.font.name = line, face
        elif kind < 0.85:
            sentence = rng.choice(SENTENCES)
            word = rng.choice(CODE_WORDS)
            text.append(sentence.format(c=word))
            head, tail = sentence.split("{c}")
            para = frame.add_paragraph()
            para.add_run().text = head
            run = para.add_run()
            run.text, run.font.name = word, face
            para.add_run().text = tail
        else:
            name = rng.choice(("config.toml", "settings.yaml", "Makefile"))
            text.append(name)
            para = frame.add_paragraph()
            run = para.add_run()
            run.text, run.font.name = name, face
            ppr = para._p.get_or_add_pPr()
            ppr.append(ppr.makeelement(qn("a:buChar"), {"char": "•"}))
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue(), code, text


def _generated_pptx(fast: bool) -> Section:
    return _scored("pptx-code", "pptx", 2028, _pptx, fast)


SECTIONS = {
    "pdf-code": _generated,
    "pdf-code-real": _real,
    "docx-code": _generated_docx,
    "pptx-code": _generated_pptx,
}
