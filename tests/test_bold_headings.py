"""A paragraph set wholly in bold that labels what follows (``**To create a user pool client**``, as
the AWS CLI's examples, CMake's and many READMEs head their sections) is a heading one level under
the section it is in; emphasis, lead-ins and links stay paragraphs."""

from pathlib import Path

import pytest

from raychunk.chunking import Profile, chunk_document
from raychunk.parse import parse_document
from raychunk.parse._common import bold_label
from raychunk.tokens import WordCounter
from tests.spans import assert_spans_match
from tests.test_parse_html import assert_spans

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"

MARKDOWN = """# Pools

Pools hold users.

**To create a user pool**

The following example creates a pool.

**Example 2: To delete a user pool**

The following example deletes a pool.

## Clients

**Do not share the secret.**

**Parameters:**

- `name`: the client's name

**[Back to the index](#index)**

**one** and **two** are bold words in a sentence.

> **A quoted label**

- **A bold item**

**To rotate a client secret**

Rotate it monthly.
"""


def _headings(parsed):
    return [(b.text, b.level, b.heading_path) for b in parsed.blocks if b.kind == "heading"]


def _paragraphs(parsed):
    return [b.text for b in parsed.blocks if b.kind == "paragraph"]


def test_markdown_bold_lines_are_headings_under_their_section():
    parsed = parse_document(MARKDOWN.encode(), "pools.md")
    assert_spans_match(parsed)
    assert _headings(parsed) == [
        ("Pools", 1, ()),
        ("To create a user pool", 2, ("Pools",)),
        # a bold heading beside the one before it, not under it
        ("Example 2: To delete a user pool", 2, ("Pools",)),
        # the next real heading of the section's level closes them
        ("Clients", 2, ("Pools",)),
        ("To rotate a client secret", 3, ("Pools", "Clients")),
    ]
    assert _paragraphs(parsed) == [
        "Pools hold users.",
        "The following example creates a pool.",
        "The following example deletes a pool.",
        "**Do not share the secret.**",  # a sentence in bold is emphasis
        "**Parameters:**",  # a lead-in to the list after it
        "**[Back to the index](#index)**",  # a link
        "**one** and **two** are bold words in a sentence.",
        "**A quoted label**",
        "Rotate it monthly.",
    ]
    rotate = next(b for b in parsed.blocks if b.text == "Rotate it monthly.")
    assert rotate.heading_path == ("Pools", "Clients", "To rotate a client secret")
    item = next(b for b in parsed.blocks if b.kind == "list_item" and "bold item" in b.text)
    assert item.heading_path == ("Pools", "Clients")


def test_html_bold_paragraphs_are_headings_and_their_chunks_carry_them():
    html = (
        "<html><body><h1>Pools</h1><p>Pools hold users.</p>"
        "<p><strong>To create a user pool</strong></p><p>The following example creates a pool.</p>"
        "<p> <b>Example 2:</b> <b>To delete a user pool</b> </p><p>The following example deletes a pool.</p>"
        "<p><b>Do not share the secret.</b></p><p><b>Parameters:</b></p>"
        "<p><b><a href='#i'>Back to the index</a></b></p><p><b>one</b> and two</p>"
        "<blockquote><p><b>A quoted label</b></p></blockquote>"
        "<ul><li><p><b>A bold item</b></p></li></ul>"
        "<table><tr><td><p><b>A bold cell</b></p></td><td><p><b>x</b></p></td></tr>"
        "<tr><td>1</td><td>2</td></tr></table>"
        "<p><b>Unclosed bold label</p><p>Text after the unclosed bold.</p>"
        "</body></html>"
    )
    parsed = parse_document(html.encode(), "pools.html")
    assert_spans(parsed)
    assert _headings(parsed) == [
        ("Pools", 1, ()),
        ("To create a user pool", 2, ("Pools",)),
        ("Example 2: To delete a user pool", 2, ("Pools",)),
        ("Unclosed bold label", 2, ("Pools",)),
    ]
    assert "Do not share the secret." in _paragraphs(parsed)
    assert "Parameters:" in _paragraphs(parsed)
    assert "A quoted label" in _paragraphs(parsed)
    assert "Text after the unclosed bold." in _paragraphs(parsed)  # the bold ends with its block
    assert [b.text for b in parsed.blocks if b.kind == "list_item"] == ["A bold item"]
    definition = parse_document(b"<dl><dt>term</dt><dd><p><b>A bold definition</b></p></dd></dl>", "d.html")
    assert [(b.kind, b.text) for b in definition.blocks] == [("paragraph", "term: A bold definition")]
    assert any(b.kind == "table" and "A bold cell" in b.text for b in parsed.blocks)

    chunks = chunk_document(parsed, Profile(strategy="structure", max_tokens=40), WordCounter())
    deletes = next(c for c in chunks if "deletes a pool" in c.text)
    assert deletes.heading_path == ("Pools", "Example 2: To delete a user pool")
    assert "To delete a user pool" in deletes.text  # the embedded text carries it
    creates = next(c for c in chunks if "creates a pool" in c.text)
    assert "deletes a pool" not in creates.text  # a heading closes the chunk before it


def test_rst_strong_paragraphs_as_the_aws_cli_examples_head_them():
    rst = b"""**To create a user pool client**

The following ``create-user-pool-client`` example creates a new user pool client. ::

    aws cognito-idp create-user-pool-client \\
        --user-pool-id us-west-2_EXAMPLE

Output::

    {"UserPoolClient": {}}

**Example 2: To create a client with a secret**

Text about secrets.
"""
    parsed = parse_document(rst, "create-user-pool-client.rst")
    assert parsed.document.status == "ok", parsed.document.reason
    assert_spans_match(parsed)
    assert parsed.document.title == "To create a user pool client"
    assert [(b.kind, b.text.split("\n")[0]) for b in parsed.blocks] == [
        ("heading", "To create a user pool client"),
        ("paragraph", "The following create-user-pool-client example creates a new user pool client."),
        ("code", "aws cognito-idp create-user-pool-client \\"),
        ("paragraph", "Output:"),
        ("code", '{"UserPoolClient": {}}'),
        ("heading", "Example 2: To create a client with a secret"),
        ("paragraph", "Text about secrets."),
    ]
    assert [b.level for b in parsed.blocks if b.kind == "heading"] == [1, 1]


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("To create a user pool client", True),
        ("Module mode", True),
        ("Q: For interviews, do I need to know everything here?", True),
        ("In `FastAPI`", True),
        ("Parameters:", False),
        ("Do not run this as root.", False),
        ("Help translate this guide!", False),
        ("a, b,", False),
        ("2024", False),
        ("one two three four five six seven eight nine ten eleven twelve thirteen", False),
        ("first line\nsecond line", False),
        ("Step one. Then step two", False),
        ("精彩视频推荐", True),
        ("问：对于面试来说，我需要知道这里的所有知识点吗？", True),
        ("答：不，如果只是为了准备面试的话，你并不需要知道所有的知识点。", False),
        ("【未经授权，不得转载、摘编等。】", False),
        ('"Do it now."', False),
        ("xslt-config --libs", False),
        ("gcc -o pipes -Wall pipes.c", False),
        ("cat /etc/hosts", False),
        ("Eclipse Public License - v 1.0", True),
        ("I/O errors", True),
        ("Note: back up the database first", False),
        ("WARNING: this deletes the pool", False),
        ("Notes on upgrading", True),
        ("", False),
    ],
)
def test_what_reads_as_a_label(text, label):
    assert bold_label(text) is label


def test_real_readme_question_headings():
    path = CORPUS / "md" / "system-design-primer-README.md"
    if not path.exists():
        pytest.skip("the shared corpus is not beside the repository")
    parsed = parse_document(path.read_bytes(), path.name)
    question = next(b for b in parsed.blocks if b.text.startswith("Q: For interviews"))
    assert question.kind == "heading"
    after = parsed.blocks[parsed.blocks.index(question) + 1]
    assert after.heading_path[-1] == "Q: For interviews, do I need to know everything here?"
    # its lead-in sentence in bold, with a colon, stays a paragraph
    lead = next(b for b in parsed.blocks if "nitty gritty" in b.text)
    assert lead.kind == "paragraph"


def test_a_manual_page_bold_line_is_a_command_not_a_heading():
    page = (
        b".TH FOO 1\n.SH NAME\nfoo \\- do foo\n.SH SYNOPSIS\n.B foo\n.SH DESCRIPTION\n"
        b".B Important Notes\n.PP\nText here.\n.SH FILES\n.B /etc/foo.conf\n.PP\nThe config.\n"
    )
    parsed = parse_document(page, "foo.1")
    assert parsed.document.status == "ok", parsed.document.reason
    assert [b.text for b in parsed.blocks if b.kind == "heading"] == [
        "NAME",
        "SYNOPSIS",
        "DESCRIPTION",
        "FILES",
    ]
    assert [b.text for b in parsed.blocks if b.kind == "paragraph"] == [
        "foo - do foo",
        "foo",
        "Important Notes",
        "Text here.",
        "/etc/foo.conf",
        "The config.",
    ]


def test_a_word_paragraph_in_bold_runs_is_a_heading():
    docx = pytest.importorskip("docx")
    import io

    d = docx.Document()
    d.add_heading("Onboarding", level=1)
    d.add_paragraph("Welcome to the team.")
    p = d.add_paragraph()
    p.add_run("First ").bold = True
    p.add_run("week").bold = True  # every run bold: a heading
    d.add_paragraph("Meet your manager.")
    d.add_paragraph().add_run("Second week").style = "Strong"  # bold by its character style
    d.add_paragraph("Ship something.")
    mixed = d.add_paragraph()
    mixed.add_run("Note").bold = True
    mixed.add_run(" that this is a sentence")
    d.add_paragraph().add_run("Bring your laptop.").bold = True  # emphasis: a sentence
    d.add_paragraph("Bold in a list", style="List Bullet").runs[0].bold = True
    d.add_paragraph("Bold in a list paragraph", style="List Paragraph").runs[0].bold = True  # no number
    table = d.add_table(rows=1, cols=1)
    table.cell(0, 0).paragraphs[0].add_run("A bold cell").bold = True
    off = d.add_paragraph().add_run("Not bold at all")
    off.bold = False
    buf = io.BytesIO()
    d.save(buf)

    parsed = parse_document(buf.getvalue(), "onboarding.docx")
    assert parsed.document.status == "ok", parsed.document.reason
    for b in parsed.blocks:
        assert parsed.text[b.char_start : b.char_end] == b.text, b
    assert _headings(parsed) == [
        ("Onboarding", 1, ()),
        ("First week", 2, ("Onboarding",)),
        ("Second week", 2, ("Onboarding",)),
    ]
    ship = next(b for b in parsed.blocks if b.text == "Ship something.")
    assert ship.heading_path == ("Onboarding", "Second week")
    assert "Note that this is a sentence" in _paragraphs(parsed)
    assert "Bring your laptop." in _paragraphs(parsed)
    assert "Not bold at all" in _paragraphs(parsed)
    assert [b.text for b in parsed.blocks if b.kind == "list_item"] == [
        "Bold in a list",
        "Bold in a list paragraph",
    ]
    assert [b.kind for b in parsed.blocks if "A bold cell" in b.text] == ["table"]


def test_a_word_paragraph_of_an_equation_alone_is_no_heading():
    # no run of text at all, bold or not: an equation's line (read from its math) stays a paragraph
    docx = pytest.importorskip("docx")
    import io

    from docx.oxml import parse_xml

    d = docx.Document()
    d.add_heading("Kinematics", level=1)
    p = d.add_paragraph()
    m = "http://schemas.openxmlformats.org/officeDocument/2006/math"
    p._p.append(parse_xml(f'<m:oMath xmlns:m="{m}"><m:r><m:t>v = at</m:t></m:r></m:oMath>'))
    d.add_paragraph("Speed grows with time.")
    buf = io.BytesIO()
    d.save(buf)
    parsed = parse_document(buf.getvalue(), "kinematics.docx")
    assert [(b.kind, b.text) for b in parsed.blocks] == [
        ("heading", "Kinematics"),
        ("paragraph", "v = at"),
        ("paragraph", "Speed grows with time."),
    ]
