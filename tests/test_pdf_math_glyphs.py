"""TeX's math symbol and extension fonts (cmsy, cmex, and Elsevier's Advent fonts after them) name
their glyphs by position or not at all, so MuPDF reads them as U+FFFD: a minus before a number was
lost (``�0.9393``). The PDF reader puts each back by its code and its font's encoding, in the text
and in a table's cells."""

from pathlib import Path

import pytest

from raychunk.parse import parse_document

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


def _pdf(content: bytes, fonts: dict[str, str]) -> bytes:
    """A one-page PDF of ``content`` (a content stream) with ``fonts`` (resource name -> font dict)."""
    names = list(fonts)
    resources = " ".join(f"/{n} {5 + i} 0 R" for i, n in enumerate(names))
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Contents 4 0 R "
        f"/Resources << /Font << {resources} >> >> >>".encode(),
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        *(fonts[n].encode() for n in names),
    ]
    out, offsets = b"%PDF-1.4\n", []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return out + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)


FONTS = {
    # Elsevier's math symbols: code 3 is the glyph named C0, TeX's position 0, the minus
    "F1": "<< /Type /Font /Subtype /Type1 /BaseFont /IHEOLK+AdvMacMthSyN "
    "/Encoding << /Type /Encoding /Differences [1 /C15 3 /C0] >> >>",
    # TeX's extension font in its own encoding: codes are positions (0x12, 0x13 big parentheses)
    "F2": "<< /Type /Font /Subtype /Type1 /BaseFont /CMEX10 >>",
    "F3": "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    # any other font's unmapped code stays unknown: no table guesses for it
    "F4": "<< /Type /Font /Subtype /Type1 /BaseFont /SomeDingbats >>",
}


def test_tex_math_glyphs_read_as_their_characters():
    content = (
        b"BT /F3 10 Tf 20 150 Td (Ecorr is ) Tj /F1 10 Tf (\\003) Tj /F3 10 Tf (0.9393 V) Tj ET\n"
        b"BT /F1 10 Tf 20 125 Td (\\001) Tj /F3 10 Tf ( a bullet) Tj ET\n"
        b"BT /F2 10 Tf 20 100 Td (\\022) Tj /F3 10 Tf (a+b) Tj /F2 10 Tf (\\023) Tj ET\n"
        b"BT /F4 10 Tf 20 75 Td (\\022) Tj ET\n"
    )
    parsed = parse_document(_pdf(content, FONTS), "math.pdf")
    assert parsed.document.status == "ok", parsed.document.reason
    lines = parsed.text.split("\n")
    assert "Ecorr is −0.9393 V" in lines
    # the glyph named C15, TeX's bullet: a list item's bullet
    assert [(b.kind, b.text) for b in parsed.blocks if "a bullet" in b.text] == [("list_item", "a bullet")]
    assert "(a+b)" in lines
    assert "\ufffd" in parsed.text  # SomeDingbats' code 0x12: unknown, and left so


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not present at {CORPUS}")
def test_a_real_table_keeps_its_minus_signs():
    path = CORPUS / "pdf" / "embedded-images-tables.pdf"
    parsed = parse_document(path.read_bytes(), path.name)
    table = next(b for b in parsed.blocks if b.kind == "table")
    column = table.rows[0].index("Ecorr (V)")
    values = [row[column] for row in table.rows[1:]]
    assert values and all(v.startswith("−0.") for v in values), values
    assert "\ufffd" not in parsed.text


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not present at {CORPUS}")
def test_a_cid_math_font_is_left_as_read():
    # TMMathEx here is a Type0 (CID) font: its codes are glyph numbers of its own subset, not TeX's
    # positions (read as OMX, its matrix brackets came out as "[⌋ ... ⌈ ... ⌈⌊")
    path = CORPUS / "bad" / "test_4435.pdf"
    parsed = parse_document(path.read_bytes(), path.name)
    assert parsed.document.status == "ok", parsed.document.reason
    assert not set(parsed.text) & set("⌊⌋⌈⌉"), [c for c in parsed.text if c in "⌊⌋⌈⌉"]
