"""Code in PDFs: lines set in a typewriter face, apart from the text, are code blocks as set."""

from __future__ import annotations

import pytest

pymupdf = pytest.importorskip("pymupdf")

from test_parse_pdf import CORPUS, parse, story_pdf  # noqa: E402

from raychunk.chunking import Profile, chunk_document  # noqa: E402
from raychunk.tokens import WordCounter  # noqa: E402

PROSE = (
    "<p>The build reads its settings from the environment and from the command line, and the "
    "second wins where both set the same thing. Nothing here needs a network connection.</p>"
)


def blocks(parsed, kind: str) -> list[str]:
    return [b.text for b in parsed.blocks if b.kind == kind]


def test_a_listing_is_one_code_block_with_its_lines_and_indentation():
    html = f"""<h1>Install</h1>{PROSE}
<p>Build it from source with the usual steps, in the unpacked tree:</p>
<pre>./configure --prefix=/usr/local
make
if [ -n "$CHECK" ]; then
    make check
fi

make install</pre>
<p>The <code>make</code> step takes a while; <code>install</code> then copies the files into place
and the shell finds the new binary at once.</p>{PROSE}"""
    parsed = parse(story_pdf(html))
    assert blocks(parsed, "code") == [
        './configure --prefix=/usr/local\nmake\nif [ -n "$CHECK" ]; then\n    make check\nfi\n\nmake install'
    ]
    # words in the face inside a sentence stay in their paragraph
    assert any(
        t.startswith("The make step takes a while; install then copies") for t in blocks(parsed, "paragraph")
    )
    (chunk,) = chunk_document(parsed, Profile(strategy="structure", max_tokens=400), WordCounter())
    assert "unpacked tree:\n\n./configure --prefix=/usr/local\nmake\nif" in chunk.text
    assert "    make check\nfi\n\nmake install\n\nThe make step" in chunk.text


def test_a_term_on_a_line_of_its_own_and_a_wrapped_address_are_not_code():
    pdf = pymupdf.open()
    page = pdf.new_page()
    page.insert_text((72, 80), "Options of the build, each with what it does:", fontsize=11, fontname="helv")
    page.insert_text((72, 110), "--quiet", fontsize=11, fontname="cour")
    page.insert_textbox(
        pymupdf.Rect(100, 120, 520, 200),
        "Print nothing but errors, and return a non-zero status when the build fails at any step of it.",
        fontsize=11,
        fontname="helv",
    )
    page.insert_text(
        (72, 230), "The sources are published on the project's own server.", fontsize=11, fontname="helv"
    )
    page.insert_text((72, 700), "1 https://example.org/releases/", fontsize=8, fontname="cour")
    page.insert_text((72, 710), "build-2.4.tar.gz", fontsize=8, fontname="cour")
    parsed = parse(pdf.tobytes())
    assert blocks(parsed, "code") == []
    texts = [b.text for b in parsed.blocks]
    assert "--quiet" in texts
    assert any("https://example.org/releases/" in t for t in texts)


def test_a_document_set_wholly_in_a_typewriter_face_has_no_code():
    """A text file printed to PDF: the face tells nothing apart."""
    pdf = pymupdf.open()
    page = pdf.new_page()
    lines = ["MEMORANDUM", "", "To: the board", "From: the treasurer", "", "The accounts are closed."]
    for k, text in enumerate(lines):
        if text:
            page.insert_text((72, 72 + 14 * k), text, fontsize=11, fontname="cour")
    parsed = parse(pdf.tobytes())
    assert blocks(parsed, "code") == []
    assert "The accounts are closed." in parsed.text


@pytest.mark.skipif(not (CORPUS / "pdf" / "bashref.pdf").exists(), reason="needs ../shared/corpus")
def test_the_bash_manuals_examples_and_synopses_are_code():
    parsed = parse((CORPUS / "pdf" / "bashref.pdf").read_bytes())
    code = blocks(parsed, "code")
    assert "getopts optstring name [arg ...]" in code
    assert (
        "TEXTDOMAIN=example\nTEXTDOMAINDIR=/usr/local/share/locale\n\n"
        "cp es.mo ${TEXTDOMAINDIR}/es/LC_MESSAGES/${TEXTDOMAIN}.mo\n"
        "cp eo.mo ${TEXTDOMAINDIR}/eo/LC_MESSAGES/${TEXTDOMAIN}.mo"
    ) in code
    assert any(t.startswith("if test-commands; then\n") and t.endswith("\nfi") for t in code)
    # a builtin's name over its entry is a term, not code
    assert "getopts" not in code and "getopts" in blocks(parsed, "paragraph")
    assert len(code) > 100
    # a builtin's name over its synopsis, and two such names, are terms, not the code's first lines
    assert not any(t.startswith("set\n") or "\n${parameter:offset}" in t for t in code)
    assert any(t.startswith("set [-abefhkmnptuvxBCEHPT] [-o option-name]") for t in code)


@pytest.mark.skipif(
    not (CORPUS / "pdf" / "layout-parser-paper-with-table.pdf").exists(), reason="needs ../shared/corpus"
)
def test_a_numbered_listing_a_block_a_line_is_one_code_block():
    """The paper's listing: five numbered lines in CMTT, each a block of its own, set out from the
    text's margin by their numbers, over a paragraph whose first line is indented."""
    parsed = parse((CORPUS / "pdf" / "layout-parser-paper-with-table.pdf").read_bytes())
    (code,) = blocks(parsed, "code")
    assert code.startswith("1 import layoutparser as lp\n2 image = cv2.imread(")
    assert code.endswith("\n5 layout = model.detect(image)")
