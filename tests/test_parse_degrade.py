"""Parsers degrade per part, not per file: a CSV field over the reader's limit is cut on its row and
the other rows kept; deep block quotes and lists keep their text; a DOCX whose XML declares
entities keeps all its text and resolves nothing from outside."""

from __future__ import annotations

import io
import zipfile

import pytest

from raychunk.parse import ParseOptions, parse_document
from raychunk.parse.records import FIELD_LIMIT


def parse(data: bytes, name: str):
    return parse_document(data, name, options=ParseOptions())


def test_a_csv_field_over_the_limit_is_cut_on_its_row_and_the_next_row_kept():
    text = "name,notes\nbig," + "x" * (3 * 2**20) + "\nsmall,short row kept\n"
    p = parse(text.encode(), "big.csv")
    assert p.document.status == "ok"
    assert "cut to that length (row at line 2)" in p.document.reason
    big, small = p.blocks
    assert big.text == "name: big\nnotes: " + "x" * FIELD_LIMIT
    assert small.text == "name: small\nnotes: short row kept"
    assert p.text[small.char_start : small.char_end] == "small,short row kept"
    import csv

    assert csv.field_size_limit() == 131072  # the reader's limit is put back


def test_an_unclosed_quote_keeps_the_rows_before_it_and_the_rest_as_text():
    p = parse(b'a,b\n1,one\n2,"unclosed\n3,three\n', "q.csv")
    assert p.document.status == "ok"
    assert [b.text for b in p.blocks] == ["a: 1\nb: one", "a: 2\nb: unclosed 3,three"]


@pytest.mark.parametrize(
    "line",
    [">" * 100_000 + " hello", "> " * 50_000 + "hello", "- " * 300 + "hello", "1. " * 200 + "hello"],
    ids=["100k-quote-markers", "spaced-quotes", "deep-bullets", "deep-numbers"],
)
def test_deep_markdown_nesting_keeps_its_text(line):
    p = parse(f"# Title\n\n{line}\n\nafter\n".encode(), "deep.md")
    assert p.document.status == "ok"
    texts = [b.text for b in p.blocks]
    assert texts == ["Title", "hello", "after"]
    b = p.blocks[1]
    assert p.text[b.char_start : b.char_end] == "hello"


def _docx_with_entities(tmp_path) -> bytes:
    docx = pytest.importorskip("docx")
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-FROM-OUTSIDE")
    d = docx.Document()
    d.add_paragraph("Start marker text.")
    d.add_paragraph("PLACEHOLDER")
    buf = io.BytesIO()
    d.save(buf)
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zin,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z,
    ):
        for info in zin.infolist():
            body = zin.read(info.filename)
            if info.filename == "word/document.xml":
                doctype = (
                    f'<!DOCTYPE w:document [<!ENTITY ext SYSTEM "file://{secret}">'
                    '<!ENTITY co "Acme Corp"><!ENTITY lol "&co;&co;">]>'
                ).encode()
                body = body.replace(b"?>", b"?>\n" + doctype, 1)
                body = body.replace(b"PLACEHOLDER", b"Made by &co; with &ext; &lol; &amp; the end.")
            z.writestr(info, body)
    return out.getvalue()


def test_a_docx_with_entities_keeps_its_text_and_resolves_nothing_from_outside(tmp_path):
    p = parse(_docx_with_entities(tmp_path), "entity.docx")
    assert p.document.status == "ok", p.document.reason
    assert "SECRET-FROM-OUTSIDE" not in p.text
    # the internal entity is its value; the external and the nested one are nothing; " the end." stays
    assert [" ".join(b.text.split()) for b in p.blocks] == [
        "Start marker text.",
        "Made by Acme Corp with & the end.",
    ]
