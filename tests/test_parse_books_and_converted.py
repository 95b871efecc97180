"""EPUB books (``parse/book.py``), Outlook messages (``parse/mail.py``), RTF and Org
(``parse/pandoc.py``): read by raychunk's own readers, without unstructured."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from raychunk.parse import ParseOptions, parse_document
from raychunk.parse.pandoc import rows_defined

ROOT = Path(__file__).resolve().parent.parent
CORPUS_OTHER = ROOT.parent / "shared" / "corpus" / "other"

CONTAINER = (
    b'<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
    b'<rootfiles><rootfile full-path="OPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles>'
    b"</container>"
)


def epub(manifest: str, spine: str, files: dict[str, bytes], container: bytes = CONTAINER) -> bytes:
    opf = (
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Field Manual</dc:title></metadata>'
        f"<manifest>{manifest}</manifest><spine>{spine}</spine></package>"
    ).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("mimetype", "application/epub+zip")
        zf.writestr("META-INF/container.xml", container)
        zf.writestr("OPS/book.opf", opf)
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def page(body: str, declaration: str = '<?xml version="1.0" encoding="utf-8"?>') -> bytes:
    return f'{declaration}<html xmlns="http://www.w3.org/1999/xhtml"><head><title>Field Manual</title></head><body>{body}</body></html>'.encode(
        "latin-1" if "latin-1" in declaration else "utf-8"
    )


def blocks(parsed) -> list[tuple]:
    for b in parsed.blocks:
        assert parsed.text[b.char_start : b.char_end] == b.text
    return [(b.kind, b.text, b.heading_path, b.marker, b.header_rows) for b in parsed.blocks]


def test_epub_pages_in_spine_order_the_heading_path_running_on_and_the_contents_page_left_out():
    manifest = (
        '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        '<item id="c2" href="text/chapter%202.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="c1" href="text/part-one.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="notes" href="text/notes.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="css" href="style.css" media-type="text/css"/>'
    )
    spine = (
        '<itemref idref="nav"/><itemref idref="c1"/><itemref idref="notes" linear="no"/><itemref idref="c2"/>'
    )
    data = epub(
        manifest,
        spine,
        {
            "OPS/nav.xhtml": page(
                '<nav epub:type="toc"><ol><li><a href="text/part-one.xhtml">Part One</a></li></ol></nav>'
            ),
            "OPS/text/part-one.xhtml": page("<h1>Part One</h1><p>Pitch the tent on level ground.</p>"),
            "OPS/text/notes.xhtml": page("<p>Note 1: level means within two degrees.</p>"),
            "OPS/text/chapter 2.xhtml": page(
                "<h2>Knots</h2><ol start='3'><li>Tie a bowline.</li><li>Dress the knot.</li></ol>"
                "<table><tr><th>Knot</th><th>Use</th></tr><tr><td>Bowline</td><td>Fixed loop</td></tr></table>"
            ),
            "OPS/style.css": b"p { margin: 0 }",
        },
    )
    parsed = parse_document(data, "manual.epub")
    assert parsed.document.status == "ok", parsed.document.reason
    assert parsed.document.title == "Field Manual"
    assert blocks(parsed) == [
        ("heading", "Part One", (), "", 0),
        ("paragraph", "Pitch the tent on level ground.", ("Part One",), "", 0),
        ("paragraph", "Note 1: level means within two degrees.", ("Part One",), "", 0),
        ("heading", "Knots", ("Part One",), "", 0),
        ("list_item", "Tie a bowline.", ("Part One", "Knots"), "3.", 0),
        ("list_item", "Dress the knot.", ("Part One", "Knots"), "4.", 0),
        ("table", "| Knot | Use |\n|---|---|\n| Bowline | Fixed loop |", ("Part One", "Knots"), "", 1),
    ]
    assert parsed.document.reason == ""


def test_epub_pages_missing_or_not_text_are_named_and_the_rest_read():
    manifest = (
        '<item id="a" href="a.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="gone" href="gone.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="pic" href="cover.svg" media-type="image/svg+xml"/>'
        '<item id="latin" href="latin.xhtml" media-type="application/xhtml+xml"/>'
    )
    spine = '<itemref idref="pic"/><itemref idref="a"/><itemref idref="gone"/><itemref idref="nobody"/><itemref idref="latin"/><itemref idref="a"/>'
    data = epub(
        manifest,
        spine,
        {
            "OPS/a.xhtml": page("<p>Carry two litres of water.</p>"),
            "OPS/cover.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>",
            "OPS/latin.xhtml": page(
                "<p>Caf\u00e9 au lait, cr\u00e8me br\u00fbl\u00e9e.</p>",
                '<?xml version="1.0" encoding="latin-1"?>',
            ),
        },
    )
    parsed = parse_document(data, "manual.epub")
    assert parsed.document.status == "ok"
    assert [b.text for b in parsed.blocks] == ["Carry two litres of water.", "Café au lait, crème brûlée."]
    assert parsed.document.reason == (
        "pages its spine lists are missing from the package (OPS/gone.xhtml, nobody); "
        "spine items that are not pages of text not read (OPS/cover.svg (image/svg+xml))"
    )


def test_an_svg_page_gives_its_words_and_one_without_words_is_named():
    manifest = (
        '<item id="a" href="a.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="map" href="map.svg" media-type="image/svg+xml"/>'
        '<item id="cover" href="cover.svg" media-type="image/svg+xml"/>'
        '<item id="bad" href="bad.svg" media-type="image/svg+xml"/>'
    )
    spine = '<itemref idref="cover"/><itemref idref="a"/><itemref idref="map"/><itemref idref="bad"/>'
    data = epub(
        manifest,
        spine,
        {
            "OPS/a.xhtml": page("<h1>Routes</h1><p>Two routes lead to the hut.</p>"),
            "OPS/map.svg": (
                b"<svg xmlns='http://www.w3.org/2000/svg'><title>Trail map</title>"
                b"<path d='M0 0L9 9'/><text x='1' y='2'>North <tspan>ridge</tspan></text>"
                b"<text x='5' y='6'>Hut</text><style>.a{}</style></svg>"
            ),
            "OPS/cover.svg": b"<svg xmlns='http://www.w3.org/2000/svg'><image href='c.jpg'/></svg>",
            "OPS/bad.svg": b"<svg xmlns='http://www.w3.org/2000/svg'><text>open",
        },
    )
    parsed = parse_document(data, "trails.epub")
    assert parsed.document.status == "ok"
    assert blocks(parsed) == [
        ("heading", "Routes", (), "", 0),
        ("paragraph", "Two routes lead to the hut.", ("Routes",), "", 0),
        ("paragraph", "Trail map", ("Routes",), "", 0),
        ("paragraph", "North ridge Hut", ("Routes",), "", 0),
    ]
    assert parsed.document.reason == (
        "spine items that are not pages of text not read "
        "(OPS/cover.svg (image/svg+xml), OPS/bad.svg (image/svg+xml))"
    )


@pytest.mark.parametrize(
    ("container", "manifest", "spine", "files", "why"),
    [
        (b"<container/>", "", "", {}, "META-INF/container.xml names no package document"),
        (
            CONTAINER.replace(b"OPS/book.opf", b"OPS/lost.opf"),
            "",
            "",
            {},
            "its container names a package document it lacks (OPS/lost.opf)",
        ),
        (b"<container", "", "", {}, "META-INF/container.xml is not well-formed XML"),
        (
            CONTAINER.replace(b"OPS/book.opf", b"OPS/lost&#10;book.opf"),
            "",
            "",
            {},
            "its container names a package document it lacks (OPS/lost?book.opf)",
        ),
        (
            b'<?xml version="1.0" encoding="utf-65535"?><container/>',
            "",
            "",
            {},
            "META-INF/container.xml declares an encoding Python does not know (unknown encoding: utf-65535)",
        ),
        (
            CONTAINER,
            '<item id="a" href="a.xhtml" media-type="application/xhtml+xml"/>',
            "",
            {},
            "its package document lists no pages in its spine",
        ),
        (
            CONTAINER,
            '<item id="a" href="a.xhtml" media-type="application/xhtml+xml"/>',
            '<itemref idref="a"/>',
            {},
            "none of the pages its spine lists is in the package (OPS/a.xhtml)",
        ),
    ],
)
def test_a_damaged_epub_is_a_failed_row_saying_what_is_wrong(container, manifest, spine, files, why):
    doc = parse_document(epub(manifest, spine, files, container), "book.epub").document
    assert doc.status == "failed"
    assert doc.reason.startswith(f"not a valid EPUB book: the package is damaged or is not a .epub ({why}"), (
        doc.reason
    )


def test_rtf_rows_that_reuse_the_row_before_s_definition_stay_rows():
    """A row may reuse the definition before it (unstructured's own example file does); pandoc ran
    such rows into one row of six cells."""
    rtf = (
        rb"{\rtf1\ansi\deff0 {\pard\outlinelevel0\b\fs36 Quotas\par}"
        rb"{\trowd\cellx3000\cellx6000"
        b"\n"
        rb"\pard\intbl\qc Plan\cell Requests a day\cell\row"
        b"\n"
        rb"\pard\intbl\qc Free\cell 1000\cell\row"
        b"\n"
        rb"\pard\intbl\qc Team\cell 50000\cell\row"
        b"\n"
        rb"}{\pard After the table.\par}}"
    )
    parsed = parse_document(rtf, "quotas.rtf")
    assert blocks(parsed) == [
        ("heading", "Quotas", (), "", 0),
        (
            "table",
            "| Plan | Requests a day |\n|---|---|\n| Free | 1000 |\n| Team | 50000 |",
            ("Quotas",),
            "",
            1,
        ),
        ("paragraph", "After the table.", ("Quotas",), "", 0),
    ]


def test_rows_defined_adds_a_definition_only_where_a_row_lacks_one():
    own = "\\trowd\\cellx10\n\\pard\\intbl a\\cell\\row\n\\trowd\\cellx20\n\\pard\\intbl b\\cell\\row\n"
    assert rows_defined(own) == own
    reused = "\\trowd\\cellx10\n\\pard\\intbl a\\cell\\row\n\\pard\\intbl b\\cell\\row\n\\pard after\\par"
    assert rows_defined(reused) == (
        "\\trowd\\cellx10\n\\pard\\intbl a\\cell\\row\n\\trowd\\cellx10\n\n\\pard\\intbl b\\cell\\row\n\\pard after\\par"
    )
    many = "\\trowd\\cellx10 " + "\\pard\\intbl x\\cell\\row " * 5000
    assert rows_defined(many).count("\\trowd") == 5000
    assert rows_defined("\\trowd " * 10000) == "\\trowd " * 10000  # definitions without rows: untouched


def test_org_headings_numbered_lists_and_a_table_s_header_row():
    # Org numbers a list from 1 unless a counter cookie says otherwise, as its exporters do
    org = b"* Deploys\n** Rollback\n1. [@3] Stop the canary.\n2. Restore the last image.\n\n| Step | Owner |\n|------+-------|\n| 3 | SRE |\n"
    parsed = parse_document(org, "runbook.org")
    assert blocks(parsed) == [
        ("heading", "Deploys", (), "", 0),
        ("heading", "Rollback", ("Deploys",), "", 0),
        ("list_item", "Stop the canary.", ("Deploys", "Rollback"), "3.", 0),
        ("list_item", "Restore the last image.", ("Deploys", "Rollback"), "4.", 0),
        ("table", "| Step | Owner |\n|---|---|\n| 3 | SRE |", ("Deploys", "Rollback"), "", 1),
    ]


@pytest.mark.skipif(not (CORPUS_OTHER / "fake-email.msg").exists(), reason="shared corpus not present")
def test_outlook_message_fields_from_its_internet_headers_and_its_html_body():
    parsed = parse_document((CORPUS_OTHER / "fake-email.msg").read_bytes(), "fake-email.msg")
    doc = parsed.document
    assert (doc.status, doc.title, doc.reason) == ("ok", "Test Email", "")
    assert dict(doc.metadata) == {
        "from": "Matthew Robinson <mrobinson@unstructured.io>",
        "to": "Matthew Robinson <mrobinson@unstructured.io>",
        "date": "Fri, 16 Dec 2022 17:04:16 -0500",
    }
    assert blocks(parsed) == [
        ("heading", "Test Email", (), "", 0),
        ("paragraph", "This is a test email to use for unit tests.", ("Test Email",), "", 0),
        ("paragraph", "Important points:", ("Test Email",), "", 0),
        ("list_item", "Roses are red", ("Test Email",), "-", 0),
        ("list_item", "Violets are blue", ("Test Email",), "-", 0),
    ]


def test_books_messages_rtf_and_org_load_neither_unstructured_nor_spacy(tmp_path):
    files = {
        "book.epub": epub(
            '<item id="a" href="a.xhtml" media-type="application/xhtml+xml"/>',
            '<itemref idref="a"/>',
            {"OPS/a.xhtml": page("<h1>Camp</h1><p>Pitch the tent.</p>")},
        ),
        "quotas.rtf": rb"{\rtf1\ansi{\b Quotas}\par Free plans allow a thousand requests per day.\par}",
        "runbook.org": b"* Deploys\nStop the canary.\n",
    }
    names = []
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        names.append(str(tmp_path / name))
    if (CORPUS_OTHER / "fake-email.msg").exists():
        names.append(str(CORPUS_OTHER / "fake-email.msg"))
    script = (
        "import sys, json\n"
        "from raychunk.parse import parse_document\n"
        "out = [parse_document(open(n, 'rb').read(), n).document.status for n in sys.argv[1:]]\n"
        "print(json.dumps([out, 'unstructured' in sys.modules, 'spacy' in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, *names], capture_output=True, text=True, cwd=ROOT, check=True
    )
    statuses, unstructured, spacy = json.loads(out.stdout.splitlines()[-1])
    assert statuses == ["ok"] * len(names)
    assert not unstructured and not spacy


def test_rtf_headings_by_style_escaped_characters_labels_and_title_as_word_shows_them():
    """What pandoc alone loses: a heading set only by its style's name, the character after a
    ``\\uN`` escape where ``\\uc0`` was set before a ``\\pard`` (and after a control word), a list's
    ``a)`` and its count past a nested list, the title in the information group."""
    rtf = (
        rb"{\rtf1\ansi\ansicpg1252\uc0{\stylesheet{\s0 Normal;}{\s1\sbasedon0 heading 1;}{\s2 Heading 2;}}"
        rb"{\info{\title Caf\'e9 Runbook}}"
        rb"\pard\plain\s1 Setup\par"
        rb"\pard\plain\s0 Ask \u304 zmir \uc0\u8220 ma\uc0\u241 ana\uc0\u8221  and \u-10179 \u-8704 .\par"
        rb"\pard\plain\s2 Steps\par"
        rb"{\listtext a)\tab}\pard\ls1\ilvl0 Stop the canary.\par"
        rb"{\listtext \'b7\tab}\pard\ls1\ilvl1 Wait a minute.\par"
        rb"{\listtext b)\tab}\pard\ls1\ilvl0 Restore the image.\par}"
    )
    parsed = parse_document(rtf, "runbook.rtf")
    assert parsed.document.title == "Café Runbook"
    got = blocks(parsed)
    assert got[:3] == [
        ("heading", "Setup", (), "", 0),
        ("paragraph", "Ask İzmir “mañana” and 😀.", ("Setup",), "", 0),
        ("heading", "Steps", ("Setup",), "", 0),
    ]
    assert [(kind, text, marker) for kind, text, _, marker, _ in got[3:]] == [
        ("list_item", "Stop the canary.", "a)"),
        ("list_item", "Wait a minute.", "-"),
        ("list_item", "Restore the image.", "b)"),
    ]


def test_org_title_delimiters_and_header_rows_as_org_exports_them():
    org = (
        b"#+TITLE: Deploy runbook\n* Steps\n1) Stop the canary.\n2) Restore the image.\n"
        b"#+BEGIN_SRC sh\n1) not an item\n#+END_SRC\n\n"
        b"| Region | Owner |\n| (code) | (team) |\n|--------+-------|\n| eu-1 | SRE |\n"
    )
    parsed = parse_document(org, "runbook.org")
    assert parsed.document.title == "Deploy runbook"
    got = blocks(parsed)
    assert [(k, t, m) for k, t, _, m, _ in got if k == "list_item"] == [
        ("list_item", "Stop the canary.", "1)"),
        ("list_item", "Restore the image.", "2)"),
    ]
    assert got[-1] == (
        "table",
        "| Region | Owner |\n| (code) | (team) |\n|---|---|\n| eu-1 | SRE |",
        ("Steps",),
        "",
        2,
    )


def _message_with_attachments() -> bytes:
    import email.message

    import fitz

    pdf = fitz.open()
    pdf.new_page().insert_text((72, 72), "Invoice 4471: 12 licences at 40 EUR.")
    pdf_bytes = pdf.tobytes()
    forwarded = email.message.EmailMessage()
    forwarded["Subject"] = "Old thread"
    forwarded.set_content("The renewal date is 1 March.")
    forwarded.add_attachment(b"inner notes", maintype="text", subtype="plain", filename="inner.txt")
    msg = email.message.EmailMessage()
    msg["Subject"] = "Licence renewal"
    msg["From"] = "ops@example.com"
    msg.set_content("See the attached invoice and the thread.")
    msg.add_alternative('<p>See the attached invoice and the thread.</p><img src="cid:logo">', subtype="html")
    msg.get_payload()[1].add_related(b"\x89PNG\r\n\x1a\n", maintype="image", subtype="png", cid="<logo>")
    msg.add_attachment(  # a signature's logo, shown in the body
        b"\x89PNG\r\n\x1a\n",
        maintype="image",
        subtype="png",
        cid="<sig>",
        disposition="inline",
        filename="sig.png",
    )
    msg.add_attachment(pdf_bytes, maintype="application", subtype="pdf", filename="invoice.pdf")
    msg.add_attachment(b"# Terms\n\nNet 30 days.\n", maintype="text", subtype="markdown", filename="terms.md")
    msg.add_attachment(b"PK\x05\x06" + b"\0" * 18, maintype="application", subtype="zip", filename="old.zip")
    msg.add_attachment(forwarded)
    return msg.as_bytes()


def test_attachments_are_read_under_the_message_one_level_deep():
    parsed = parse_document(_message_with_attachments(), "renewal.eml")
    assert parsed.document.status == "ok"
    got = [(k, t, p) for k, t, p, _, _ in blocks(parsed)]
    assert got == [
        ("heading", "Licence renewal", ()),
        ("paragraph", "See the attached invoice and the thread.", ("Licence renewal",)),
        ("heading", "Attachment: invoice.pdf", ("Licence renewal",)),
        ("paragraph", "Invoice 4471: 12 licences at 40 EUR.", ("Licence renewal", "Attachment: invoice.pdf")),
        ("heading", "Attachment: terms.md", ("Licence renewal",)),
        ("heading", "Terms", ("Licence renewal", "Attachment: terms.md")),
        ("paragraph", "Net 30 days.", ("Licence renewal", "Attachment: terms.md", "Terms")),
        ("heading", "Attachment: message.eml", ("Licence renewal",)),
        ("heading", "Old thread", ("Licence renewal", "Attachment: message.eml")),
        (
            "paragraph",
            "The renewal date is 1 March.",
            ("Licence renewal", "Attachment: message.eml", "Old thread"),
        ),
    ]
    assert [b.level for b in parsed.blocks if b.kind == "heading"] == [1, 2, 2, 3, 2, 3]
    assert all(not b.pages for b in parsed.blocks)  # the PDF's page is its own, not the message's
    reason = parsed.document.reason
    assert reason == (
        "attachments not read (sig.png (a picture in the body), "
        "old.zip (unsupported: content is a zip archive, not a supported document)); "
        # the forwarded message's own attachment, not read (one level deep), said as its own
        "in attachments: message.eml: attachments not read (inner.txt)"
    )
    off = parse_document(
        _message_with_attachments(), "renewal.eml", options=ParseOptions(attachments=False)
    ).document
    assert (
        off.reason
        == "attachments not read (sig.png (a picture in the body), invoice.pdf, terms.md and 2 more)"
    )


@pytest.mark.parametrize("name", ["old.zip", "notes.md"])
def test_an_empty_zip_is_a_zip_not_utf16_text(name):
    """Found reading attachments: an empty archive (only its end record, ``PK\\x05\\x06`` and zeros)
    was decoded as UTF-16 text, its zeros taken for the high bytes of characters."""
    doc = parse_document(b"PK\x05\x06" + b"\0" * 18, name).document
    assert doc.status in ("unsupported", "failed") and "zip archive" in doc.reason, doc


def test_a_message_whose_inner_boundary_is_broken_keeps_its_text_and_attachments():
    """Found by scripts/fuzz.py (seed 58007): a byte flipped in a nested part's boundary made the
    standard library keep that part's parts as a string, and ``get_body`` raise AttributeError; the
    message was "the parser failed" (before the attachment reader too)."""
    raw = (
        b"Subject: Broken\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/mixed; boundary="outer"\n\n'
        b"--outer\n"
        b'Content-Type: multipart/alternative; boundary="alt"\n\n'
        b"--alt\nContent-Type: text/plain\n\nThe plain words.\n"
        b'--alt\nContent-Type: multipart/related;\n boundary="rel=\x1d"\n\n'  # the lines say "rel=="
        b"--rel==\nContent-Type: text/html\n\n<p>The html words.</p>\n--rel==--\n"
        b"--alt--\n"
        b'--outer\nContent-Type: text/markdown\nContent-Disposition: attachment; filename="terms.md"\n\n'
        b"# Terms\n\nNet 30 days.\n"
        b"--outer--\n"
    )
    parsed = parse_document(raw, "broken.eml")
    assert parsed.document.status == "ok", parsed.document.reason
    assert [b.text for b in parsed.blocks] == [
        "Broken",
        "The plain words.",
        "Attachment: terms.md",
        "Terms",
        "Net 30 days.",
    ]


def test_a_forwarded_message_is_read_as_it_was_received():
    """Found by scripts/fuzz.py (seeds 58010, 58044): writing a forwarded message back out, the
    standard library refolds its headers, and raised IndexError on a quote inside its Content-Type
    (and took minutes over a long parameter); written back as received, it is read."""
    raw = (
        b'Subject: Fwd\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="outer"\n\n'
        b"--outer\nContent-Type: text/plain\n\nSee below.\n"
        b"--outer\nContent-Type: message/rfc822\nContent-Disposition: attachment\n\n"
        b'Subject: Old thread\nMIME-Version: 1.0\nContent-Type: multipart/mixe"d; boundary="===============1863060482465526092=="\n\n'
        b"--===============1863060482465526092==\nContent-Type: text/plain\n\nThe renewal date is 1 March.\n--===============1863060482465526092==--\n"
        b"--outer--\n"
    )
    parsed = parse_document(raw, "fwd.eml")
    assert parsed.document.status == "ok" and parsed.document.reason == ""
    assert [b.text for b in parsed.blocks][:4] == [
        "Fwd",
        "See below.",
        "Attachment: message.eml",
        "Old thread",
    ]


@pytest.mark.skipif(not (CORPUS_OTHER / "fake-email.msg").exists(), reason="shared corpus not present")
def test_an_outlook_property_of_the_wrong_type_costs_that_field_not_the_message():
    """Found by scripts/fuzz.py (seed 60030): one byte of a property's type tag changed made
    python-oxmsg return an integer for the sent time; the message is read without a date."""
    data = bytearray((CORPUS_OTHER / "fake-email.msg").read_bytes())
    data[4448] = 96  # was 64: the submit time's property type
    doc = parse_document(bytes(data), "fake-email.msg").document
    assert doc.status == "ok" and doc.title == "Test Email"
    assert dict(doc.metadata)["date"] == "Fri, 16 Dec 2022 17:04:16 -0500"  # the internet header's, kept


def test_wordpad_lists_are_list_items_with_their_labels():
    """WordPad (and Word 95) write a list item's label as text in ``\\pntext``; pandoc leaves it at
    the start of a paragraph. The label becomes the item's marker; a paragraph that only begins
    like one, with no ``\\pntext`` of its own, stays a paragraph."""
    rtf = (
        rb"{\rtf1\ansi{\fonttbl{\f0 Arial;}{\f1 Symbol;}}\pard 1) not a list item, no pntext\par"
        rb"{\pntext\f0 1)\tab}{\*\pn\pnlvlbody\pnf0\pnindent0\pnstart1\pndec{\pntxta)}}\fi-360\li720 Stop the canary.\par"
        rb"{\pntext\f0 2)\tab}\fi-360\li720 Restore the image.\par\pard\par"
        rb"{\pntext\f1\'B7\tab}{\*\pn\pnlvlblt\pnf1\pnindent0{\pntxtb\'B7}}\fi-360\li720 Tell the channel.\par"
        rb"\pard After.\par}"
    )
    got = [(k, t, m) for k, t, _, m, _ in blocks(parse_document(rtf, "steps.rtf"))]
    assert got == [
        ("paragraph", "1) not a list item, no pntext", ""),
        ("list_item", "Stop the canary.", "1)"),
        ("list_item", "Restore the image.", "2)"),
        ("list_item", "Tell the channel.", "-"),
        ("paragraph", "After.", ""),
    ]


def test_pandoc_past_its_heap_limit_is_a_failed_row_saying_so(monkeypatch):
    """pandoc runs with its heap capped (``+RTS -M``), as its manual advises for untrusted input: a
    10 KB RTF whose numbers the fuzz mangled (seed 62000) had it take 15 GB. Here a small cap and a
    2 MB file of paragraphs reach it."""
    import raychunk.parse.pandoc as pandoc

    monkeypatch.setattr(pandoc, "_HEAP_MB", 4)
    rtf = b"{\\rtf1\\ansi " + b"\\par word " * 200_000 + b"}"
    doc = parse_document(rtf, "big.rtf").document
    assert (doc.status, doc.reason) == (
        "failed",
        "pandoc could not convert this .rtf file within its 4 MB heap limit "
        "(a file built to exhaust the converter, or one too large for it)",
    )


def test_a_pandoc_that_takes_no_heap_limit_still_converts(tmp_path, monkeypatch):
    """A pandoc built without ``-rtsopts`` refuses ``+RTS -M``; pypandoc may find one on PATH newer than
    its own. Such a pandoc (here the real one behind a wrapper that refuses RTS options as GHC
    does) converts the file without the heap limit."""
    import os

    import pypandoc

    real = pypandoc.get_pandoc_path()
    wrapper = tmp_path / "pandoc"
    wrapper.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$a" = "+RTS" ] && { echo "pandoc: Most RTS options are disabled. '
        'Link with -rtsopts to enable them." >&2; exit 1; }; done\n'
        f'exec "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)
    monkeypatch.setattr(pypandoc, "get_pandoc_path", lambda: os.fspath(wrapper))
    parsed = parse_document(b"* Steps\n1. Stop the canary.\n", "runbook.org")
    assert [(b.kind, b.text) for b in parsed.blocks] == [
        ("heading", "Steps"),
        ("list_item", "Stop the canary."),
    ]
