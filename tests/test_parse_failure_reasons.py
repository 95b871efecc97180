"""Failure reasons are sentences a user can act on: no exception class names, no library internals."""

import io
import logging
import zipfile

import pytest

from raychunk.parse import ParseOptions, office, parse_document


def zipped(members: dict[str, bytes], *, big: dict[str, int] | None = None) -> bytes:
    """A zip of ``members``, plus members of ``big[name]`` MiB of zeros streamed through deflate."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name, mib in (big or {}).items():
            with zf.open(name, "w") as f:
                block = bytes(1 << 20)
                for _ in range(mib):
                    f.write(block)
    return buf.getvalue()


def reason(data: bytes, name: str, **options) -> str:
    doc = parse_document(data, name, options=ParseOptions(**options)).document
    assert doc.status == "failed", doc
    assert "Error" not in doc.reason and "\n" not in doc.reason
    return doc.reason


def test_zip_bomb_named_docx_is_refused_from_its_directory():
    bomb = zipped({"[Content_Types].xml": b"<Types/>"}, big={"word/document.xml": 200})
    assert len(bomb) < 2 << 20
    assert reason(bomb, "bomb.docx") == (
        "the package would decompress to 200 MB from 0.9 MB: refusing a likely zip bomb"
    )
    assert reason(zipped({}, big={"zeros": 200}), "bomb.xlsx").endswith("refusing a likely zip bomb")


def test_zip_bomb_cap_is_an_option():
    bomb = zipped({"[Content_Types].xml": b"<Types/>"}, big={"word/document.xml": 120})
    # a higher ratio lets it through to the parser, which then fails on the empty Word part
    assert "zip bomb" not in reason(bomb, "big.docx", max_unzip_ratio=1000)
    with pytest.raises(ValueError, match="max_unzip_ratio"):
        ParseOptions(max_unzip_ratio=0)


def test_small_compressible_package_is_not_a_bomb():
    data = zipped({"notes.txt": b"a" * 5_000_000})  # ratio ~1000 but a few MB
    assert "zip bomb" not in reason(data, "notes.docx")


@pytest.mark.parametrize(
    "fmt, what, missing",
    [
        ("docx", "Word document", "[Content_Types].xml"),
        ("pptx", "PowerPoint deck", "[Content_Types].xml"),
        ("xlsx", "workbook", "[Content_Types].xml"),
        ("epub", "EPUB book", "META-INF/container.xml"),
        ("odt", "OpenDocument text", "content.xml"),
    ],
)
def test_zip_that_is_not_the_format_says_what_it_holds(fmt, what, missing):
    data = zipped({"notes.txt": b"hello", "a.csv": b"1,2", "b.csv": b"3", "c.csv": b"4"})
    assert reason(data, f"x.{fmt}") == (
        f"not a valid {what}: the package is damaged or is not a .{fmt} "
        f"(it has no {missing}; it holds notes.txt, a.csv, b.csv and 1 more)"
    )


def test_docx_without_its_word_folder():
    data = zipped({"[Content_Types].xml": b"<Types/>", "docProps/core.xml": b"<x/>"})
    assert reason(data, "x.docx").endswith(
        "(it has no word/ folder; it holds [Content_Types].xml, docProps/core.xml)"
    )


def test_truncated_and_non_zip_docx():
    data = zipped({"[Content_Types].xml": b"<Types/>" * 100, "word/document.xml": b"<x/>" * 1000})
    assert reason(data[: len(data) // 2], "cut.docx").endswith(
        "(the zip's directory is missing: the file is cut short)"
    )
    assert reason(b"just some words, not a zip at all", "words.docx") == (
        "content is plain text, not a Word document as the .docx extension says"
    )


def test_package_part_with_foreign_xml_gets_a_precise_reason():
    # [Content_Types].xml without its namespace: python-docx fails with an AttributeError deep inside
    # (an lxml element without the attribute its own element class would have). scripts/fuzz.py
    # found this shape often enough to name it.
    data = zipped({"[Content_Types].xml": b"<x/>", "word/document.xml": b"<x/>"})
    assert reason(data, "odd.docx") == (
        "not a valid Word document: the package is damaged or is not a .docx "
        "(a part does not hold the XML elements its format expects)"
    )


def test_library_crash_on_a_plausible_docx_gets_the_generic_reason(caplog, monkeypatch):
    docx = pytest.importorskip("docx")
    import raychunk.parse.word as word

    def bug(*args, **kwargs):
        raise TypeError("unsupported operand type(s) for +: 'NoneType' and 'int'")

    monkeypatch.setattr(word, "read_docx", bug)
    buf = io.BytesIO()
    docx.Document().save(buf)
    data = buf.getvalue()
    with caplog.at_level(logging.INFO, logger="raychunk.parse"):
        got = reason(data, "odd.docx")
    assert got == (
        "could not be parsed as a Word document: the parser failed on this file; "
        "run `raychunk -v parse odd.docx` for details"
    )
    assert any(r.exc_info for r in caplog.records)


def test_damaged_part_inside_a_readable_zip():
    assert office._package_damage(KeyError("There is no item named 'word/styles.xml' in the archive")) == (
        "it lacks word/styles.xml"
    )
    assert office._package_damage(KeyError("no member '/[Content_Types].xml' in package")) == (
        "it lacks [Content_Types].xml"
    )
    assert office._package_damage(KeyError("some_dict_key")) is None  # a bug, not a damaged package
    assert office._package_damage(zipfile.BadZipFile("Bad CRC-32 for file 'word/document.xml'")) == (
        "a part fails its checksum"
    )


def test_an_unclosed_quote_in_csv_is_cut_on_its_row_not_failed():
    doc = parse_document(b'a,b\n"x' + b"y" * 200_000 + b"\n", "data.csv", options=ParseOptions()).document
    assert doc.status == "ok"
    assert doc.reason.endswith("a field over 131,072 characters was cut to that length (row at line 2)")


def test_unopenable_pdf_reason():
    got = reason(b"%PDF-1.4\n" + b"garbage " * 100, "x.pdf")
    assert got.startswith("cannot open PDF: the file is damaged or is not a PDF")


def test_postscript_is_named_not_read_as_text():
    # A print file is text of drawing operators: read as text, /usr/share/doc's valgrind manual
    # (1.7 MB of PostScript) made 47,488 chunks of `/F1 9.96 Tf` and glyph codes.
    import gzip

    ps = b"%!PS-Adobe-3.0\n%%Creator: DocBook XSL\n%%Pages: 1\n/F1 9.96 Tf (Valgrind) show\nshowpage\n%%EOF\n"
    for data, name in (
        (ps, "manual.ps"),
        (gzip.compress(ps), "manual.ps.gz"),
        (ps, "print.txt"),
        (ps, "noext"),
    ):
        doc = parse_document(data, name).document
        assert doc.status == "unsupported", (name, doc)
        assert doc.reason.startswith("content is PostScript, not")
        assert doc.reason.endswith("print it to PDF (ps2pdf) to have it read")
    eps = b"\xc5\xd0\xd3\xc6" + bytes(26) + ps
    assert parse_document(eps, "figure.eps").document.status == "unsupported"
    # a TeX file's magic comment is no PostScript
    tex = b"%!TEX program = xelatex\n\\documentclass{article}\n\\begin{document}\nHello.\n\\end{document}\n"
    assert parse_document(tex, "paper.tex").document.status == "ok"
