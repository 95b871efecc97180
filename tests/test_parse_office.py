"""Office and e-mail parsing: fixtures are generated here, nothing is downloaded."""

from __future__ import annotations

import base64
import dataclasses
import importlib.util
import io
import json
import socket
import zlib
from email.message import EmailMessage
from pathlib import Path

import pytest

from raychunk._unstructured import use_packaged_spacy_model
from raychunk.document import Document, ParsedDocument
from raychunk.parse import ParseOptions, parse_document
from raychunk.parse.office import parse_office

# Looked up, not imported: importing unstructured before prepare_unstructured() has set the opt-out
# variables would send its load-time analytics ping (the spaCy test below uses it; no reader does).
if importlib.util.find_spec("unstructured") is None:
    pytest.skip("these tests need unstructured, a dependency", allow_module_level=True)

CORPUS_BAD = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "bad"  # beside the repo

# A 3x2 .xls (BIFF8, sheet "Cities") written by xlwt, which is not a dependency; zlib + base64.
_XLS = (
    "eNrtWD1oFEEU/mbv/0gud/EiJEI4AkZNUvhTqEVcjWgq42mjiBAvZglHjr2wOYvYGI1XCoKVYhNIYxO18QcttLMQIloIgnBn"
    "SitBwSK59c3bWbzoFTmIQWW+Zd68ffPNztudN2939s1SqjL/sKuKX3AIAdTcGMJ1NkEl5p8kQe2uK1W/jlJxNf4pxKI0keEQ"
    "nrW+jsg5lPNdhYEHwZckgU9UzmMKI0XbymwihtiHnJA+DJIUuEuWBDrZq3aWF1luYXmfmc9ZHmbLDZaDxK2Ic1gyR/oOqCg+"
    "a/RwWwLyuo+5zwe27EEHXskovnJTeNwQjjj5XOHvbOgOtmABNG/Dlm05uUIFaZrABXxzM8BXf6W+yGj75toFyP59rT3SwH7L"
    "CAKzcC9wgJcpIJcD3iI8mi/lrekVSsNhtSiJScaZOJAtTl0q5Er5ok22k9OFIjXv3y1BypDlTFg2KXsPSktcpmxe4sk1S7yV"
    "Q7+F5DjaWE/xAkhSEl+59+XtibGsOcqWWU7rXvLfLv2Fi6uyB3VOcAu7zNw+lv0sr/FVt7HexTJNYUt1b7ZDKcfnmHOdW3tp"
    "nH2Md+aOOn0n6eXPp550l5fNXaQvDlcvpxffm/PooZfROPWXxxwGxIC4c1viqenXQiWKjyw7f0saUSOpfHfVG64Nq4izmmLp"
    "ncmnIxRfNOAL5huKL5gfUHyjAd9gflDxvacfki9dox2PZCOlsJ+IQ0NDQ0NDQ0NDQ2ODINSne8DbYvBnqNwgRNR/nVUqNf2b"
    "5L/FaRTpKNHG9Bhsqh3MNBU/WxES/rXEOvv4/wslztDoDiYxxn5MNh2/tMET9fez7o7JjVtCzY5fa8bPPzz+D+H9zBw="
)


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Any attempt to open a connection (telemetry, a model download) fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def parse(data: bytes, name: str) -> ParsedDocument:
    return parse_document(data, name, options=ParseOptions())


def assert_ok(parsed: ParsedDocument) -> None:
    assert parsed.document.status == "ok", parsed.document.reason
    for b in parsed.blocks:
        assert parsed.text[b.char_start : b.char_end] == b.text, b


def by_kind(parsed: ParsedDocument, kind: str):
    return [b for b in parsed.blocks if b.kind == kind]


def test_docx_headings_lists_and_table():
    docx = pytest.importorskip("docx")
    d = docx.Document()
    d.add_heading("Getting started", level=1)
    d.add_paragraph("This guide explains how the installer works on every supported platform.")
    d.add_heading("Requirements", level=2)
    d.add_paragraph("Python 3.11", style="List Bullet")
    d.add_paragraph("Ten gigabytes of free disk space", style="List Bullet")
    table = d.add_table(rows=3, cols=2)
    for r, row in enumerate([("Platform", "Status"), ("Linux", "supported"), ("Windows", "beta")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    d.add_heading("Usage", level=1)
    d.add_paragraph("Run the installer and follow the prompts until it reports success.")
    buf = io.BytesIO()
    d.save(buf)

    parsed = parse(buf.getvalue(), "guide.docx")
    assert_ok(parsed)
    headings = [(b.text, b.level, b.heading_path) for b in by_kind(parsed, "heading")]
    assert headings == [
        ("Getting started", 1, ()),
        ("Requirements", 2, ("Getting started",)),
        ("Usage", 1, ()),
    ]
    items = by_kind(parsed, "list_item")
    assert [(b.text, b.level) for b in items] == [("Python 3.11", 0), ("Ten gigabytes of free disk space", 0)]
    assert all(b.heading_path == ("Getting started", "Requirements") for b in items)
    [tbl] = by_kind(parsed, "table")
    assert tbl.rows == (("Platform", "Status"), ("Linux", "supported"), ("Windows", "beta"))
    assert tbl.header_rows == 1
    assert tbl.text.splitlines()[:2] == ["| Platform | Status |", "|---|---|"]
    assert parsed.document.title == "Getting started"
    last = parsed.blocks[-1]
    assert (last.kind, last.heading_path) == ("paragraph", ("Usage",))


def test_pptx_slides_are_pages():
    pptx = pytest.importorskip("pptx")
    from pptx.oxml.ns import qn
    from pptx.util import Inches

    prs = pptx.Presentation()
    s1 = prs.slides.add_slide(prs.slide_layouts[1])
    s1.shapes.title.text = "Quarterly results"
    body = s1.placeholders[1].text_frame
    body.text = "Revenue grew in every region"
    sub = body.add_paragraph()
    sub.text = "Europe led the growth"
    sub.level = 1
    for para in body.paragraphs:
        # unstructured takes a paragraph for a list item only when it carries its own buChar;
        # bullets inherited from the slide layout read as paragraphs.
        ppr = para._p.get_or_add_pPr()
        ppr.append(ppr.makeelement(qn("a:buChar"), {"char": "•"}))
    s1.notes_slide.notes_text_frame.text = "Mention the currency effect before the regional split."
    s2 = prs.slides.add_slide(prs.slide_layouts[5])
    s2.shapes.title.text = "Regional numbers"
    shape = s2.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2))
    for r, row in enumerate([("Region", "Revenue"), ("Europe", "12"), ("Asia", "9")]):
        for c, value in enumerate(row):
            shape.table.cell(r, c).text = value
    buf = io.BytesIO()
    prs.save(buf)

    parsed = parse(buf.getvalue(), "deck.pptx")
    assert_ok(parsed)
    assert parsed.document.pages == 2
    headings = by_kind(parsed, "heading")
    assert [(b.text, b.level, b.pages) for b in headings] == [
        ("Quarterly results", 1, (1,)),
        ("Regional numbers", 1, (2,)),
    ]
    items = by_kind(parsed, "list_item")
    assert [(b.text, b.level, b.pages) for b in items] == [
        ("Revenue grew in every region", 0, (1,)),
        ("Europe led the growth", 1, (1,)),
    ]
    [notes] = by_kind(parsed, "paragraph")
    assert notes.text.startswith("Mention the currency effect") and notes.pages == (1,)
    [tbl] = by_kind(parsed, "table")
    assert tbl.pages == (2,) and tbl.heading_path == ("Regional numbers",)
    assert tbl.rows[0] == ("Region", "Revenue") and tbl.header_rows == 1
    [brk] = by_kind(parsed, "page_break")
    assert brk.text == "" and brk.char_start == brk.char_end and brk.pages == (2,)


def test_xlsx_sheet_becomes_heading_and_table():
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Inventory"
    for row in [("Item", "Count", "Shelf"), ("Bolts", 120, "A1"), ("Nuts", 80, "A2"), ("Washers", 300, "B4")]:
        ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)

    parsed = parse(buf.getvalue(), "stock.xlsx")
    assert_ok(parsed)
    assert [(b.kind, b.text) for b in parsed.blocks if b.kind == "heading"] == [("heading", "Inventory")]
    [tbl] = by_kind(parsed, "table")
    assert tbl.rows == (
        ("Item", "Count", "Shelf"),
        ("Bolts", "120", "A1"),
        ("Nuts", "80", "A2"),
        ("Washers", "300", "B4"),
    )
    assert tbl.header_rows == 1 and tbl.heading_path == ("Inventory",) and tbl.pages == (1,)
    assert parsed.document.pages == 1


def test_xls_is_read_without_libreoffice():
    pytest.importorskip("xlrd")
    parsed = parse(zlib.decompress(base64.b64decode(_XLS)), "cities.xls")
    assert_ok(parsed)
    [tbl] = by_kind(parsed, "table")
    assert tbl.rows == (("City", "Population"), ("Oslo", "700000"), ("Bergen", "290000"))


def test_eml_subject_is_title_and_sender_is_metadata():
    msg = EmailMessage()
    msg["Subject"] = "Server maintenance on Friday"
    msg["From"] = "Ops Team <ops@example.com>"
    msg["To"] = "everyone@example.com"
    msg["Date"] = "Tue, 03 Jun 2025 09:30:00 +0000"
    msg.set_content("The database servers will be offline between 22:00 and 23:00 for a kernel upgrade.\n")

    parsed = parse(msg.as_bytes(), "notice.eml")
    assert_ok(parsed)
    doc = parsed.document
    assert doc.title == "Server maintenance on Friday"
    meta = dict(doc.metadata)
    assert meta["from"] == "Ops Team <ops@example.com>"
    assert meta["date"] == "Tue, 03 Jun 2025 09:30:00 +0000"
    [para] = by_kind(parsed, "paragraph")
    assert para.text.startswith("The database servers will be offline")
    assert para.heading_path == ("Server maintenance on Friday",)


def test_truncated_docx_fails_with_a_reason():
    docx = pytest.importorskip("docx")
    d = docx.Document()
    d.add_paragraph("Some text that will be cut off. " * 50)
    buf = io.BytesIO()
    d.save(buf)
    data = buf.getvalue()[: len(buf.getvalue()) // 2]

    direct = parse_office(data, Document("id", "cut.docx", "docx", "ok"), ParseOptions())
    assert direct.document.status == "failed"
    assert direct.document.reason == (
        "not a valid Word document: the package is damaged or is not a .docx "
        "(the zip's directory is missing: the file is cut short)"
    )
    assert "\n" not in direct.document.reason
    via_dispatcher = parse(data, "cut.docx")
    assert via_dispatcher.document.status == "failed" and via_dispatcher.document.reason


@pytest.mark.skipif(not (CORPUS_BAD / "password_protected.xlsx").exists(), reason="shared corpus not present")
def test_encrypted_workbook_fails_cleanly():
    data = (CORPUS_BAD / "password_protected.xlsx").read_bytes()
    parsed = parse_office(data, Document("id", "locked.xlsx", "xlsx", "ok"), ParseOptions())
    assert parsed.document.status == "failed"
    assert parsed.document.reason == "encrypted workbook: needs a password"


def test_spacy_patch_is_idempotent_and_loads_a_packaged_model():
    from unstructured.nlp import tokenize

    use_packaged_spacy_model()
    first = tokenize._load_spacy_model
    use_packaged_spacy_model()
    assert tokenize._load_spacy_model is first and first.raychunk_packaged
    assert tokenize.sent_tokenize("One sentence here. Another one there.") == [
        "One sentence here.",
        "Another one there.",
    ]


def test_unhandled_format_is_a_clear_error():
    with pytest.raises(ValueError, match="does not handle format 'pdf'"):
        parse_office(b"%PDF-1.7", dataclasses.replace(Document("id", "a.pdf", "pdf", "ok")), ParseOptions())


@pytest.mark.parametrize("charset", [b"utf-255", b"u\x00f-8"])
def test_eml_with_an_unknown_charset_is_read_as_utf8(charset):
    """Found by scripts/fuzz.py (seed 101, index 224: the charset became "utf-255"; seed 20251201,
    index 20: a NUL in it): the e-mail parser raised LookupError / ValueError and the message was
    lost behind "the parser failed"."""
    msg = EmailMessage()
    msg["Subject"] = "Backup retention stays at 35 days"
    msg["From"] = "ops@example.com"
    msg.set_content("Café hours: the backups are kept for 35 days.\n", charset="utf-8")
    data = msg.as_bytes().replace(b'charset="utf-8"', b'charset="' + charset + b'"')
    assert charset in data
    parsed = parse(data, "retention.eml")
    assert_ok(parsed)
    assert parsed.document.title == "Backup retention stays at 35 days"
    assert any("backups are kept for 35 days" in b.text for b in parsed.blocks)


@pytest.mark.parametrize("name", ["notes.org", "notes.rst", "mail.eml"])
def test_binary_bytes_behind_a_text_born_extension(name):
    """Found by scripts/fuzz.py (seed 100, index 171: a splice with a pptx's deflated parts, named
    .org): pandoc died on it and the reason was "the parser failed". Now it reads as for .txt."""
    data = b"* Heading\n\nSome words.\n" + bytes(range(256)) * 8
    doc = parse(data, name).document
    ext = name.rsplit(".", 1)[1]
    assert (doc.status, doc.reason) == ("failed", f"binary content, not text (behind a .{ext} extension)")


def test_pandoc_that_does_not_finish_costs_its_file_and_says_so(monkeypatch):
    """pandoc runs as a process of its own under a time limit: a file whose reading loops (the fuzz
    found an Org reader that never returns) is a failed row naming the limit, and the next file is
    read by a fresh pandoc."""
    import raychunk.parse.pandoc as pandoc

    monkeypatch.setattr(pandoc, "_TIMEOUT_S", 0.0)
    monkeypatch.setattr(pandoc, "_TIMEOUT_S_PER_MB", 0.0)
    doc = parse(b"* Heading\n\nSome words.\n", "notes.org").document
    assert (doc.status, doc.reason) == ("failed", "pandoc did not convert this .org file in 0 s")
    monkeypatch.setattr(pandoc, "_TIMEOUT_S", 30.0)
    assert parse(b"* Heading\n\nSome words.\n", "notes.org").document.status == "ok"


def test_eml_with_a_date_that_overflows_the_date_parser():
    """Found by scripts/fuzz.py (seed 5, index 80): "Date: Wed, 18 Nov 2426 -2147483648:0.000001:00"
    made unstructured's dateutil call raise OverflowError, which it does not catch."""
    data = (
        b"From: ops@example.com\n"
        b"Subject: Backup retention stays at 35 days\n"
        b"Date: Wed, 18 Nov 2026 -2147483648:0.000001:00 +0000\n"
        b'Content-Type: text/plain; charset="utf-8"\n'
        b"MIME-Version: 1.0\n\n"
        b"The backups are kept for 35 days.\n"
    )
    parsed = parse(data, "retention.eml")
    assert_ok(parsed)
    assert parsed.document.title == "Backup retention stays at 35 days"
    assert any("kept for 35 days" in b.text for b in parsed.blocks)


CORPUS_OTHER = CORPUS_BAD.parent / "other"


@pytest.mark.skipif(not (CORPUS_OTHER / "fake-email.msg").exists(), reason="shared corpus not present")
def test_damaged_outlook_messages_fail_with_a_reason():
    """Found by scripts/fuzz.py on the shared corpus (seeds 7000-7041): olefile and python-oxmsg
    raised OleFileError, KeyError '__properties_version1.0', ... behind "the parser failed"."""
    data = (CORPUS_OTHER / "fake-email.msg").read_bytes()
    assert_ok(parse(data, "mail.msg"))
    cut = parse(data[:10117], "mail.msg").document  # seed 7002, index 144: truncate(keep [0:10117])
    assert (cut.status, cut.reason) == (
        "failed",
        "not a valid Outlook message: its OLE container is damaged (incomplete OLE sector)",
    )
    # A stream the message needs, renamed in the OLE directory (names are UTF-16).
    name = "__properties_version1.0".encode("utf-16-le")
    assert name in data
    renamed = parse(data.replace(name, "__properties_version9.0".encode("utf-16-le")), "mail.msg").document
    assert (renamed.status, renamed.reason) == (
        "failed",
        "not a valid Outlook message: its OLE container is damaged "
        "(a required stream __properties_version1.0 is missing)",
    )


def test_office_samples_parse_without_unstructured_or_spacy():
    """unstructured imports spaCy (with thinc and torch, seconds) in every partitioner. The samples'
    word document, deck and e-mail are read by raychunk's own readers (python-docx, python-pptx, the
    standard library's e-mail parser), which load neither unstructured nor spaCy. With spaCy
    imported up front the blocks are the same."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    script = (
        "import sys, json\n"
        "eager = sys.argv[2] == 'eager'\n"
        "if eager: import spacy\n"
        "from raychunk.parse import parse_document\n"
        "p = parse_document(open(sys.argv[1], 'rb').read(), sys.argv[1])\n"
        "blocks = [[b.kind, b.text, b.char_start, b.char_end, list(b.heading_path)] for b in p.blocks]\n"
        "print(json.dumps([p.document.status, 'thinc' in sys.modules, 'torch' in sys.modules,\n"
        "                  'unstructured' in sys.modules, p.text, blocks]))\n"
    )
    names = ("onboarding-checklist.docx", "q3-platform-review.pptx", "retention-decision.eml")
    seen = {}
    for name in names:
        for how in ("deferred", "eager"):
            out = subprocess.run(
                [sys.executable, "-c", script, str(root / "samples" / name), how],
                capture_output=True,
                text=True,
                cwd=root,
                check=True,
            ).stdout
            seen[name, how] = json.loads(out.splitlines()[-1])
    for name in names:
        status, thinc, torch, unstructured, text, blocks = seen[name, "deferred"]
        assert status == "ok" and blocks and not thinc and not torch, name
        assert not unstructured, name
        assert seen[name, "eager"][2]  # spaCy imported up front brings torch
        assert seen[name, "deferred"][4:] == seen[name, "eager"][4:]
