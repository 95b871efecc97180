"""Every bad input gets a document record with a status and a one-line reason; nothing raises."""

import logging
import os
from pathlib import Path

import pytest

from raychunk.io import list_inputs
from raychunk.parse import ParseOptions, parse_document, parse_path


def check(doc, status: str, *words: str):
    d = doc.document
    assert d.status == status, d
    assert d.reason and "\n" not in d.reason
    for w in words:
        assert w.lower() in d.reason.lower(), d.reason
    assert d.doc_id and len(d.doc_id) == 32


def test_zero_byte_file():
    check(parse_document(b"", "empty.pdf"), "empty", "zero-byte")
    check(parse_document(b"", "empty.md"), "empty", "zero-byte")


def test_whitespace_only_text():
    check(parse_document(b"  \n\n\t \n", "blank.txt"), "empty", "whitespace")


def test_binary_garbage_behind_text_extension():
    check(parse_document(os.urandom(4096), "notes.txt"), "failed", "binary", ".txt")


def test_binary_threshold_counts_control_characters_but_not_layout_ones():
    """A text is binary over a tenth of control characters (not tab, line breaks, form feed or
    backspace), DEL and C1 characters, or replacement characters: at 10% it is text, just over, not."""
    from raychunk.parse.detect import _looks_binary

    layout = "\t\n\r\f\b"
    for c in map(chr, range(0x2100)):
        binary = (c < " " and c not in layout) or "\x7f" <= c < "\xa0" or c == "\ufffd"
        assert not _looks_binary(c * 3 + "x" * 27), repr(c)  # 3 in 30: 10%, not over
        assert _looks_binary(c * 4 + "x" * 26) == binary, repr(c)
    assert not _looks_binary("\x00" * 10 + "x" * 90) and _looks_binary("\x00" * 11 + "x" * 89)
    assert _looks_binary("\ufffd" * 20 + "x" * 80) and not _looks_binary(layout * 100)
    assert not _looks_binary("x" * 8192 + "\x00" * 8192)  # only the first 8,192 characters are looked at


def test_a_tar_archive_compressed_or_not_is_unsupported():
    import io
    import tarfile

    for mode, name in (("w", "docs.tar"), ("w:gz", "docs.tar.gz"), ("w:gz", "docs.tgz")):
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode=mode) as tar:
            member = tarfile.TarInfo("a.md")
            member.size = 7
            tar.addfile(member, io.BytesIO(b"# Title"))
        check(parse_document(buf.getvalue(), name), "unsupported", "archive")


def test_unknown_extension_binary():
    check(parse_document(os.urandom(512) + b"\x00" * 100, "blob.xyz"), "unsupported", "unknown extension")


def test_unknown_extension_text_is_parsed_as_text():
    doc = parse_document(b"Just some words.\n", "README")
    assert doc.document.status == "ok" and doc.document.format == "text"


def test_html_named_pdf_is_not_parsed_as_pdf():
    check(
        parse_document(b"<!DOCTYPE html><html><body><h1>404 Not Found</h1></body></html>", "report.pdf"),
        "failed",
        "HTML",
        "not a PDF",
    )


def test_text_named_pdf():
    check(parse_document(b"Plain words in a file.\n", "report.pdf"), "failed", "plain text")


def test_png_named_pdf():
    check(parse_document(b"\x89PNG\r\n\x1a\n" + os.urandom(100), "scan.pdf"), "failed", "image")


def test_pdf_named_docx():
    check(parse_document(b"%PDF-1.7\n" + os.urandom(100), "memo.docx"), "failed", "PDF", ".docx")


def test_latin1_and_utf16_decoded():
    text = "Café crème, déjà vu.\n"
    for enc in ("latin-1", "utf-16"):
        doc = parse_document(text.encode(enc), "menu.txt")
        assert doc.document.status == "ok"
        assert doc.blocks[0].text == text.strip()


def test_unreadable_path(tmp_path):
    check(parse_path(tmp_path / "missing.md"), "failed", "cannot read")


def test_parser_exception_becomes_failed_with_a_sentence_and_a_logged_traceback(monkeypatch, caplog):
    import raychunk.parse.markdown as md

    def boom(text, base):
        raise RuntimeError("kaboom\nsecond line")

    monkeypatch.setattr(md, "parse_markdown", boom)
    with caplog.at_level(logging.INFO, logger="raychunk.parse"):
        doc = parse_document(b"# hi", "my notes.md")
    check(doc, "failed")
    assert doc.document.reason == (
        "could not be parsed as Markdown: the parser failed on this file; "
        "run `raychunk -v parse 'my notes.md'` for details"
    )
    [record] = [r for r in caplog.records if r.exc_info]
    assert record.levelno == logging.INFO  # the CLI's -v shows INFO
    assert "kaboom" in str(record.exc_info[1])


def test_bad_option_names_accepted_values():
    with pytest.raises(ValueError, match="auto, always, never"):
        ParseOptions(pdf_tables="sometimes")


def test_list_inputs(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.md").write_text("x")
    (tmp_path / "b.txt").write_text("y")
    (tmp_path / ".hidden").write_text("z")
    _, _, files = list_inputs([str(tmp_path)])
    found = [Path(f.path).relative_to(tmp_path.resolve()).as_posix() for f in files]
    assert found == ["a/x.md", "b.txt"]
    with pytest.raises(FileNotFoundError, match="nope"):
        list_inputs([str(tmp_path / "nope")])


def test_utf8_with_a_stray_legacy_byte_keeps_its_utf8():
    data = "Grüße — 25 ".encode() + b"\xb0C" + " and naïve café".encode()
    doc = parse_document(data, "temps.txt")
    assert doc.document.encoding == "utf-8+cp1252"
    assert doc.blocks[0].text == "Grüße — 25 °C and naïve café"


def test_base64_blob_behind_a_text_extension_is_unsupported():
    import base64

    blob = base64.b64encode("שלום עולם, זה טקסט בעברית".encode("iso-8859-8", errors="replace") * 3)
    check(parse_document(blob, "hebrew.txt"), "unsupported", "base64")
    wrapped = base64.encodebytes(bytes(range(256)) * 4)  # lines wrapped at 76 characters
    check(parse_document(wrapped, "attachment.txt"), "unsupported", "base64")
    assert parse_document(b"wombat", "name").document.status == "ok"
    assert parse_document(b"Plain words, 42 of them.\n", "a.txt").document.status == "ok"


def test_an_icon_is_unsupported_under_any_name():
    """mdBook ships its favicon as ``favicon-<hash>.png`` holding an .ico: it was ``failed`` ("not an
    image as the .png extension says"); an icon holds no text, whatever its name."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGBA", (32, 32), (200, 30, 30, 255)).save(buf, format="ICO", sizes=[(16, 16), (32, 32)])
    ico = buf.getvalue()
    assert ico[:4] == b"\x00\x00\x01\x00"
    check(parse_document(ico, "book/favicon-ba9a2803.png"), "unsupported", "icon", "behind a .png name")
    check(parse_document(ico, "favicon.ico"), "unsupported", "content is an icon (.ico): it holds no text")
    # text that happens to start with NUL NUL SOH NUL is not taken for one
    assert parse_document(b"\x00\x00\x01\x00\x00\x00" + b"x" * 500, "a.png").document.reason != (
        "content is an icon (.ico) behind a .png name: it holds no text"
    )


def test_text_under_a_msg_name_is_read_as_what_it_is():
    """.msg is Outlook's binary message, but also a mail saved as text by older clients and a
    program's message catalog (Tcl's ``msgs/el.msg``: 145 of them under /usr/share were ``failed``,
    "not an Outlook message"). Text is read as an e-mail where it has a mail's headers, else as text,
    the reason saying so; binary that is not Outlook's still fails."""
    mail = (
        b"From: Ann <ann@example.org>\nTo: Bob <bob@example.org>\nSubject: Lunch\n\nShall we meet at noon?\n"
    )
    doc = parse_document(mail, "saved/lunch.msg")
    assert (doc.document.format, doc.document.status, doc.document.title) == ("eml", "ok", "Lunch")
    assert doc.document.reason == "content is an e-mail, not an Outlook message: read as an e-mail"
    assert [b.text for b in doc.blocks][-1] == "Shall we meet at noon?"
    catalog = b'namespace eval ::tk {\n    ::msgcat::mcset el "&Abort" "\\u03a4\\u03b5"\n}\n'
    doc = parse_document(catalog, "msgs/el.msg")
    assert (doc.document.format, doc.document.status) == ("text", "ok")
    assert doc.document.reason == "content is plain text, not an Outlook message: read as plain text"
    check(parse_document(os.urandom(4096), "mail.msg"), "failed", "not an Outlook message")
