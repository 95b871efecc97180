"""raychunk's own readers of slides (.pptx, python-pptx) and e-mail (.eml, the standard library; .msg,
python-oxmsg): decks and messages drawn here or kept in tests/data, read back as blocks; every span
holds its block's text."""

from __future__ import annotations

import io
from email.message import EmailMessage
from pathlib import Path

import pytest

from raychunk.parse import ParseOptions, parse_document

pptx = pytest.importorskip("pptx")
from pptx.chart.data import CategoryChartData  # noqa: E402
from pptx.enum.chart import XL_CHART_TYPE  # noqa: E402
from pptx.oxml.ns import qn  # noqa: E402
from pptx.util import Inches, Pt  # noqa: E402


def parsed(data: bytes, name: str):
    p = parse_document(data, name)
    assert p.document.status == "ok", p.document.reason
    for b in p.blocks:
        if b.kind != "page_break":
            assert p.text[b.char_start : b.char_end] == b.text
    return p


def saved(deck) -> bytes:
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue()


def blocks(p) -> list[tuple]:
    return [(b.kind, b.text, b.level, b.marker, b.heading_path, b.pages) for b in p.blocks]


def test_bullets_inherited_from_the_layout_are_list_items_and_a_text_box_line_is_no_heading():
    """Body text in a content placeholder is bulleted by the master, with no a:buChar of its own;
    unstructured read it as paragraphs, and a short line in a text box as a heading (spaCy)."""
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])  # title and content
    slide.shapes.title.text = "Rollout"
    frame = slide.placeholders[1].text_frame
    frame.text = "Sync agent shipped to 60% of gateways"
    deeper = frame.add_paragraph()
    deeper.text, deeper.level = "Frankfurt paused", 1
    plain = frame.add_paragraph()
    plain.text = "Numbers as of 30 September"
    ppr = plain._p.get_or_add_pPr()
    ppr.append(ppr.makeelement(qn("a:buNone"), {}))
    box = slide.shapes.add_textbox(Inches(1), Inches(6.5), Inches(4), Inches(0.5))
    box.text_frame.text = "Owner Lena"
    p = parsed(saved(deck), "deck.pptx")
    assert blocks(p) == [
        ("heading", "Rollout", 1, "", (), (1,)),
        ("list_item", "Sync agent shipped to 60% of gateways", 0, "", ("Rollout",), (1,)),
        ("list_item", "Frankfurt paused", 1, "", ("Rollout",), (1,)),
        ("paragraph", "Numbers as of 30 September", 0, "", ("Rollout",), (1,)),
        ("paragraph", "Owner Lena", 0, "", ("Rollout",), (1,)),
    ]


def test_a_title_at_the_foot_of_its_slide_heads_it_and_a_slide_without_one_stands_alone():
    """unstructured ordered the title with the other shapes by position: a title placed below a table
    came after it, and the table sat under the slide before's title."""
    deck = pptx.Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[5])  # title only
    first.shapes.title.text = "Overview"
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Storage by quarter"
    second.shapes.title.top = Inches(6)
    table = second.shapes.add_table(2, 2, Inches(1), Inches(1), Inches(4), Inches(1)).table
    for r, row in enumerate([("Metric", "Q3"), ("Stored (PB)", "4.6")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    third = deck.slides.add_slide(deck.slide_layouts[6])  # blank: no title placeholder
    third.shapes.add_textbox(
        Inches(1), Inches(1), Inches(6), Inches(1)
    ).text_frame.text = "Questions go to the platform channel."
    p = parsed(saved(deck), "deck.pptx")
    got = [(b.kind, b.text, b.heading_path, b.pages) for b in p.blocks]
    assert got == [
        ("heading", "Overview", (), (1,)),
        ("page_break", "", (), (2,)),
        ("heading", "Storage by quarter", (), (2,)),
        ("table", "| Metric | Q3 |\n|---|---|\n| Stored (PB) | 4.6 |", ("Storage by quarter",), (2,)),
        ("page_break", "", (), (3,)),
        ("paragraph", "Questions go to the platform channel.", (), (3,)),
    ]
    assert p.document.pages == 3


def test_a_title_placeholder_holding_a_list_is_body_text_and_numbers_count_per_level():
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    frame = slide.shapes.title.text_frame
    for k, (text, level, bullet) in enumerate(
        [("Drain the node", 0, "auto"), ("Check the pods", 1, "char"), ("Upgrade it", 0, "auto")]
    ):
        para = frame.paragraphs[0] if k == 0 else frame.add_paragraph()
        para.text, para.level = text, level
        ppr = para._p.get_or_add_pPr()
        if bullet == "auto":
            ppr.append(ppr.makeelement(qn("a:buAutoNum"), {"type": "alphaLcParenR", "startAt": "3"}))
        else:
            ppr.append(ppr.makeelement(qn("a:buChar"), {"char": "-"}))
    p = parsed(saved(deck), "steps.pptx")
    assert [(b.kind, b.text, b.level, b.marker) for b in p.blocks] == [
        ("list_item", "Drain the node", 0, "c)"),
        ("list_item", "Check the pods", 1, ""),
        ("list_item", "Upgrade it", 0, "d)"),
    ]


def test_a_listing_in_a_typewriter_face_is_one_code_block():
    """A deck's code is a text box's paragraphs in Courier (pandoc writes it so): one code block,
    its indentation and blank line kept; a word in the face inside a sentence stays a paragraph,
    a bulleted item in the face stays an item."""
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])  # title only
    slide.shapes.title.text = "Fetch"
    frame = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(8), Inches(4)).text_frame
    frame.text = "Call it once the service is up:"
    for line in ("import json", "", "def fetch(url):", "    return json.load(open(url))"):
        para = frame.add_paragraph()
        if line:
            run = para.add_run()
            run.text, run.font.name = line, "Courier New"
    sentence = frame.add_paragraph()
    sentence.add_run().text = "Then "
    word = sentence.add_run()
    word.text, word.font.name = "fetch()", "Consolas"
    sentence.add_run().text = " returns the settings."
    item = frame.add_paragraph()
    run = item.add_run()
    run.text, run.font.name = "config.toml", "Courier New"
    ppr = item._p.get_or_add_pPr()
    ppr.append(ppr.makeelement(qn("a:buChar"), {"char": "•"}))
    p = parsed(saved(deck), "deck.pptx")
    assert [(b.kind, b.text) for b in p.blocks] == [
        ("heading", "Fetch"),
        ("paragraph", "Call it once the service is up:"),
        ("code", "import json\n\ndef fetch(url):\n    return json.load(open(url))"),
        ("paragraph", "Then fetch() returns the settings."),
        ("list_item", "config.toml"),
    ]


def test_a_deck_set_in_courier_throughout_marks_no_code_by_its_face():
    deck = pptx.Presentation()
    for words in (("Agenda", "Budget review", "Hiring plan"), ("Budget", "Spend is flat", "Travel is down")):
        slide = deck.slides.add_slide(deck.slide_layouts[5])
        slide.shapes.title.text = words[0]
        slide.shapes.title.text_frame.paragraphs[0].runs[0].font.name = "Courier New"
        frame = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(8), Inches(3)).text_frame
        for k, line in enumerate(words[1:]):
            para = frame.paragraphs[0] if k == 0 else frame.add_paragraph()
            run = para.add_run()
            run.text, run.font.name = line, "Courier New"
    p = parsed(saved(deck), "deck.pptx")
    assert [b.kind for b in p.blocks if b.kind != "page_break"] == ["heading", "paragraph", "paragraph"] * 2


def test_merged_cells_header_row_option_chart_data_groups_alt_text_and_notes():
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Capacity"
    shape = slide.shapes.add_table(3, 3, Inches(0.5), Inches(1.5), Inches(6), Inches(1.5))
    table = shape.table
    for r, row in enumerate([("Region", "Disk", "CPU"), ("EU", "4.6 PB", "12k"), ("US", "", "9k")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(1, 1).merge(table.cell(2, 1))  # the EU figure covers the US row too
    table._tbl.tblPr.set("firstRow", "0")  # "Header Row" turned off
    data = CategoryChartData()
    data.categories = ["Q2", "Q3"]
    data.add_series("Stored PB", (4.1, 4.6))
    slide.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(0.5), Inches(3.5), Inches(4), Inches(2), data
    )
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(0.5), Inches(6), Inches(3), Inches(0.4)).text_frame.text = "Left note"
    group.shapes.add_textbox(Inches(4), Inches(6), Inches(3), Inches(0.4)).text_frame.text = "Right note"
    empty_box = slide.shapes.add_textbox(Inches(7), Inches(6.8), Inches(1), Inches(0.3))
    # a description on a text box is no picture's alt text: the box's (empty) text is what it says
    empty_box._element.find(qn("p:nvSpPr")).find(qn("p:cNvPr")).set("descr", "unused: a text box")
    slide.notes_slide.notes_text_frame.text = "Say the EU number first.\nThen the chart."
    p = parsed(saved(deck), "capacity.pptx")
    kinds = [(b.kind, b.text) for b in p.blocks]
    assert not any("unused" in text for _, text in kinds)
    [tbl, chart] = [b for b in p.blocks if b.kind == "table"]
    assert tbl.rows == (("Region", "Disk", "CPU"), ("EU", "4.6 PB", "12k"), ("US", "4.6 PB", "9k"))
    assert tbl.copies == ((2, 1),) and tbl.header_rows == 0
    assert chart.rows == (("", "Stored PB"), ("Q2", "4.1"), ("Q3", "4.6")) and chart.header_rows == 1
    assert kinds[-4:] == [
        ("paragraph", "Left note"),
        ("paragraph", "Right note"),
        ("paragraph", "Say the EU number first."),
        ("paragraph", "Then the chart."),
    ]


def test_footer_and_slide_number_placeholders_and_office_written_alt_text_give_no_text():
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Plan"
    box = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(5), Inches(1))
    box.text_frame.text = "Move the backups to cold storage."
    pic = slide.shapes.add_picture(io.BytesIO(_PNG), Inches(1), Inches(3))
    pic._element.nvPicPr.cNvPr.set("descr", "Diagram of the backup flow from gateway to cold storage")
    pic2 = slide.shapes.add_picture(io.BytesIO(_PNG), Inches(3), Inches(3))
    pic2._element.nvPicPr.cNvPr.set("descr", "A picture containing text. Description automatically generated")
    footer = slide.shapes.add_textbox(Inches(1), Inches(7), Inches(3), Inches(0.3))
    footer.text_frame.text = "Acme confidential"
    ph = footer._element.find(qn("p:nvSpPr")).find(qn("p:nvPr"))
    ph.append(ph.makeelement(qn("p:ph"), {"type": "ftr", "idx": "11"}))
    footer.text_frame.paragraphs[0].runs[0].font.size = Pt(8)
    p = parsed(saved(deck), "plan.pptx")
    assert [(b.kind, b.text) for b in p.blocks] == [
        ("heading", "Plan"),
        ("paragraph", "Move the backups to cold storage."),
        ("paragraph", "Diagram of the backup flow from gateway to cold storage"),
    ]


# A 1x1 PNG.
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def test_mail_html_body_keeps_its_lists_and_tables_under_the_subject():
    msg = EmailMessage()
    msg["Subject"] = "Retention change"
    msg["From"] = "ops@example.com"
    msg.set_content("Plain fallback: retention stays at 35 days.\n")
    msg.add_alternative(
        "<html><body><p>Hi all,</p><h2>What changes</h2><ol><li>Retention stays at 35 days</li>"
        "<li>A 90-day add-on ships in Q1</li></ol><table><tr><th>Plan</th><th>Days</th></tr>"
        "<tr><td>Basic</td><td>35</td></tr></table></body></html>",
        subtype="html",
    )
    msg.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename="policy.pdf")
    p = parsed(msg.as_bytes(), "retention.eml")
    assert [(b.kind, b.text, b.level, b.marker, b.heading_path) for b in p.blocks] == [
        ("heading", "Retention change", 1, "", ()),
        ("paragraph", "Hi all,", 0, "", ("Retention change",)),
        ("heading", "What changes", 3, "", ("Retention change",)),
        ("list_item", "Retention stays at 35 days", 0, "1.", ("Retention change", "What changes")),
        ("list_item", "A 90-day add-on ships in Q1", 0, "2.", ("Retention change", "What changes")),
        ("table", "| Plan | Days |\n|---|---|\n| Basic | 35 |", 0, "", ("Retention change", "What changes")),
    ]
    doc = p.document
    assert doc.title == "Retention change" and dict(doc.metadata)["from"] == "ops@example.com"
    assert doc.reason == (  # eight bytes of a PDF's header are no PDF: the attachment is named, with why
        "attachments not read (policy.pdf (failed: cannot open PDF: the file is damaged or is not a PDF "
        "(MuPDF: Failed to open stream)))"
    )


def test_mail_plain_body_is_read_as_text_and_a_signature_is_no_heading():
    msg = EmailMessage()
    msg["Subject"] = "Standup notes"
    msg.set_content("Hi all,\n\nThe rollout resumes on Monday.\n\nLena\n")
    p = parsed(msg.as_bytes(), "notes.eml")
    assert [(b.kind, b.text) for b in p.blocks] == [
        ("heading", "Standup notes"),
        ("paragraph", "Hi all,"),
        ("paragraph", "The rollout resumes on Monday."),
        ("paragraph", "Lena"),
    ]
    assert p.document.reason == ""


def test_mail_without_a_body_keeps_its_subject():
    msg = EmailMessage()
    msg["Subject"] = "Call me"
    p = parse_document(msg.as_bytes(), "empty.eml")
    assert p.document.title == "Call me"
    assert [(b.kind, b.text) for b in p.blocks] == [("heading", "Call me")]


OUTLOOK = Path(__file__).parent / "data" / "outlook"  # msg-parser's test messages (BSD, LICENSE-msg-parser)


def test_a_message_attached_whole_to_an_outlook_message_is_read_under_its_name():
    """Outlook's "attach as item" (forwarding a message as an attachment; a bounce holding the
    message it returns) keeps the attached message as a storage, not a file: it was named, "an
    attached item, not a file", and its text lost. Now it is read one level deep, as an attached .eml
    is: under ``Attachment: <its name>`` (a heading saying its subject once), its own attachments
    named in the reason."""
    p = parsed((OUTLOOK / "outer.msg").read_bytes(), "outer.msg")
    assert blocks(p) == [
        ("heading", "outer subject", 1, "", (), ()),
        ("paragraph", "Outer body", 0, "", ("outer subject",), ()),
        ("heading", "Attachment: test", 2, "", ("outer subject",), ()),
        ("paragraph", "body", 0, "", ("outer subject", "Attachment: test"), ()),
    ]
    assert p.document.reason == ""
    assert p.document.metadata == (("to", "outer@foo.bar"),)  # a string property ends at its NUL

    # A bounce (Chinese and English) that holds the returned message, itself holding a PDF.
    p = parsed((OUTLOOK / "other.msg").read_bytes(), "other.msg")
    inner = ("投递状态通知 (Failure Notice)", "Attachment: default_attachment.eml")
    subject = "回复：转发：反馈·北京 2017年12月02-03日 销售"
    assert ("heading", subject, 3, "", inner, ()) in blocks(p)
    texts = [b.text for b in p.blocks if b.heading_path == (*inner, subject)]
    assert texts[:2] == ["Meredith", "FYI..."]
    assert any("原始邮件" in t for t in texts)
    assert p.document.reason == (
        "in attachments: default_attachment.eml: attachments not read (北京 2017年12月02-03日 销售主管 确认n.pdf)"
    )

    # Attachments not read: the attached message is named, as a file would be.
    off = parse_document(
        (OUTLOOK / "outer.msg").read_bytes(), "outer.msg", options=ParseOptions(attachments=False)
    )
    assert [b.text for b in off.blocks] == ["outer subject", "Outer body"]
    assert off.document.reason == "attachments not read (test)"


def test_a_damaged_attached_message_is_named_and_the_message_still_read():
    """The attached message's own properties stream renamed in the OLE directory (names are UTF-16):
    the outer message is read, the attached one named with why."""
    data = (OUTLOOK / "outer.msg").read_bytes()
    name = "__properties_version1.0".encode("utf-16-le")
    at = [i for i in range(len(data)) if data.startswith(name, i)]
    assert len(at) == 6
    # which directory entry is the attached message's: the fifth, by olefile's listing of the file
    damaged = data[: at[4]] + "__properties_version9.0".encode("utf-16-le") + data[at[4] + len(name) :]
    p = parsed(damaged, "outer.msg")
    assert [b.text for b in p.blocks] == ["outer subject", "Outer body"]
    assert p.document.reason == "attachments not read (test (an attached message that cannot be read))"


def _html_blocks(html: str) -> list[tuple[str, str]]:
    from raychunk.document import Document
    from raychunk.parse.html import parse_html

    return [(b.kind, b.text) for b in parse_html(html, Document("x", "body.html", "html", "ok")).blocks]


def test_the_html_outlook_keeps_in_its_rtf_body_is_the_html_body():
    """Outlook often saves an HTML message with a plain-text body and its HTML only inside the
    compressed RTF body (RTF-encapsulated HTML, [MS-OXRTFEX]). Two real messages that keep both: the
    HTML taken back out of the RTF gives the blocks of the message's own HTML body, and is that HTML
    but for whitespace: a 62 KB newsletter (tables, emoji, links; an uncompressed "MELA" RTF) and
    the corpus's test message (a list; LZFu-compressed)."""
    import gzip
    import re

    from raychunk.parse.rtf_html import decompressed_rtf, rtf_body

    rtf = gzip.decompress((OUTLOOK / "complete-rtf-body.bin.gz").read_bytes())
    html = gzip.decompress((OUTLOOK / "complete-html-body.html.gz").read_bytes()).decode("utf-8")
    got, is_html = rtf_body(decompressed_rtf(rtf))
    assert is_html
    assert re.sub(r"\s+", "", got) == re.sub(r"\s+", "", html)
    blocks_of = _html_blocks(got)
    assert blocks_of == _html_blocks(html) and len(blocks_of) == 29
    assert ("paragraph", "😇😇😇😇Nokia Health is now Withings. Learn more") in blocks_of
    msg_file = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "other" / "fake-email.msg"
    if msg_file.exists():
        from oxmsg import Message

        m = Message.load(msg_file.read_bytes())
        got, is_html = rtf_body(decompressed_rtf(m.properties.binary_prop_value(0x1009)))
        assert _html_blocks(got) == _html_blocks(m.html_body)
        assert ("list_item", "Roses are red") in _html_blocks(got)


def test_an_outlook_message_without_an_html_body_is_read_from_the_html_in_its_rtf():
    """The bounce keeps its HTML only in the RTF: its body is read from it (a ``<br>`` a line break,
    the RTF's own line ends gone), not from the plain body. Without a plain body (outer.msg with its
    body property retagged, so that only the RTF holds the text), the body is still read; before,
    the message was its subject alone. A body that does not decompress, or HTML that lacks the plain
    body's words, leaves the plain body."""
    from raychunk.parse.mail import _rtf_body

    p = parsed((OUTLOOK / "other.msg").read_bytes(), "other.msg")
    body = [b.text for b in p.blocks if b.heading_path == ("投递状态通知 (Failure Notice)",)]
    assert (
        body[1]
        == "I'm afraid I was not able to deliver your message to the following recipient:\nhp_lsz@tjdpf.org.cn"
    )
    assert not any("\r" in t for t in body)

    data = (OUTLOOK / "outer.msg").read_bytes()
    no_plain = bytearray(data)
    tag = data.index(b"\x1f\x00\x00\x10")  # PidTagBody (0x1000, a string) in the root's property stream
    no_plain[tag : tag + 4] = b"\x1f\x00\xff\x6f"  # now 0x6FFF, a tag nothing reads
    at = data.index("__substg1.0_1000001F".encode("utf-16-le"))  # its stream, renamed to match
    no_plain[at : at + 40] = "__substg1.0_6FFF001F".encode("utf-16-le")
    no_plain = bytes(no_plain)
    from oxmsg import Message

    assert Message.load(no_plain).body is None
    p = parsed(no_plain, "outer.msg")
    assert [b.text for b in p.blocks][:2] == ["outer subject", "Outer body"]

    rtf = Message.load((OUTLOOK / "other.msg").read_bytes()).properties.binary_prop_value(0x1009)
    assert _rtf_body(rtf[: len(rtf) // 2], "plain words") is None  # cut short: does not decompress
    assert _rtf_body(rtf, "The quarterly budget review moves to Thursday") is None  # not this body's words
    assert _rtf_body(rtf, "")[1] is True


def _mailbox() -> bytes:
    """A mailbox as Python's ``mailbox`` writes one (Thunderbird and Google Takeout write the same
    format): an envelope line before each message, a body line that begins "From " quoted."""
    import mailbox
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        box = mailbox.mbox(f"{d}/inbox")
        m = EmailMessage()
        m["Subject"], m["From"], m["To"] = "Backup window moved", "ops@example.com", "team@example.com"
        m["Date"] = "Tue, 03 Jun 2025 09:30:00 +0000"
        m.set_content("The backup window moves to 02:00.\n\nFrom now on, restores need a ticket.\n")
        box.add(m)
        m = EmailMessage()
        m["Subject"], m["From"], m["Date"] = (
            "Q3 numbers",
            "cfo@example.com",
            "Wed, 04 Jun 2025 10:00:00 +0000",
        )
        m.set_content("See attached.")
        m.add_alternative(
            "<p>See the table.</p><table><tr><th>Q</th><th>EUR</th></tr><tr><td>Q3</td><td>12</td></tr></table>",
            subtype="html",
        )
        m.add_attachment(
            b"# Notes\n\nRevenue up.\n", maintype="text", subtype="markdown", filename="notes.md"
        )
        box.add(m)
        m = EmailMessage()
        m["From"] = "someone@example.com"
        m.set_content("No subject here.\n")
        box.add(m)
        box.flush()
        return Path(f"{d}/inbox").read_bytes()


@pytest.mark.parametrize("name", ["inbox.mbox", "Inbox"])  # Thunderbird's folders have no extension
def test_a_mailbox_is_its_messages_each_under_its_subject(name):
    """Before, a mailbox was plain text (``.mbox``) or one message (its first headers, the rest of
    the box as its body)."""
    p = parsed(_mailbox(), name)
    assert (p.document.format, p.document.title, p.document.reason) == (
        "mbox",
        name,
        "a mailbox of 3 messages",
    )
    q3 = ("Q3 numbers",)
    assert [(b.kind, b.text, b.heading_path) for b in p.blocks] == [
        ("heading", "Backup window moved", ()),
        (
            "paragraph",
            "From: ops@example.com; To: team@example.com; Date: Tue, 03 Jun 2025 09:30:00 +0000",
            ("Backup window moved",),
        ),
        ("paragraph", "The backup window moves to 02:00.", ("Backup window moved",)),
        ("paragraph", "From now on, restores need a ticket.", ("Backup window moved",)),  # unquoted
        ("heading", "Q3 numbers", ()),
        ("paragraph", "From: cfo@example.com; Date: Wed, 04 Jun 2025 10:00:00 +0000", q3),
        ("paragraph", "See the table.", q3),
        ("table", "| Q | EUR |\n|---|---|\n| Q3 | 12 |", q3),
        ("heading", "Attachment: notes.md", q3),
        ("heading", "Notes", (*q3, "Attachment: notes.md")),
        ("paragraph", "Revenue up.", (*q3, "Attachment: notes.md", "Notes")),
        ("heading", "Message 3", ()),
        ("paragraph", "From: someone@example.com", ("Message 3",)),
        ("paragraph", "No subject here.", ("Message 3",)),
    ]


def test_an_rtf_body_that_encapsulates_no_html_gives_its_text():
    """RTF written as RTF (no ``\\fromhtml1``): its text, destinations (fonts, colours, the generator)
    left out, ``\\'e9`` in the code page, ``\\u8364?`` with its fallback skipped, a table row's cells
    apart; bytes that are no RTF give None."""
    from raychunk.parse.rtf_html import rtf_body

    rtf = (
        rb"{\rtf1\ansi\ansicpg1252{\fonttbl{\f0 Arial;}}{\colortbl;\red0\green0\blue0;}"
        rb"\pard Caf\'e9 \b opens\b0  at 8.\par\pard{\*\generator Writer;}Second \u8364? line\par"
        rb"\trowd\cellx100\cellx200 A\cell B\cell\row}"
    )
    assert rtf_body(rtf) == ("Café opens at 8.\r\nSecond € line\r\nA\tB\t\r\n", False)
    assert rtf_body(b"not rtf") is None
