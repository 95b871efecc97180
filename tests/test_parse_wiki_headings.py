"""Wiki-style headings (``== Title ==`` and WikiText's spaced ``= = Title = =``) in text and markdown."""

import pytest

from raychunk.parse import parse_document
from raychunk.parse._common import wiki_heading
from tests.spans import assert_spans_match, kinds

WIKITEXT = (
    " = Valkyria Chronicles III = \n \n"
    " Senjō no Valkyria 3 is a tactical role @-@ playing game .\n \n"
    " = = Gameplay = = \n \n"
    " The game plays in turns .\n \n"
    " = = = Early development = = = \n \n"
    " Work began in 2010 .\n \n"
    " = = = = Staff = = = = \n \n"
    " A small team .\n \n"
    " = = Reception = = \n \n"
    " It sold well .\n"
)
EXPECTED = [
    ("Valkyria Chronicles III", 1, ()),
    ("Senjō no Valkyria 3 is a tactical role @-@ playing game .", 0, ("Valkyria Chronicles III",)),
    ("Gameplay", 2, ("Valkyria Chronicles III",)),
    ("The game plays in turns .", 0, ("Valkyria Chronicles III", "Gameplay")),
    ("Early development", 3, ("Valkyria Chronicles III", "Gameplay")),
    ("Work began in 2010 .", 0, ("Valkyria Chronicles III", "Gameplay", "Early development")),
    ("Staff", 4, ("Valkyria Chronicles III", "Gameplay", "Early development")),
    ("A small team .", 0, ("Valkyria Chronicles III", "Gameplay", "Early development", "Staff")),
    ("Reception", 2, ("Valkyria Chronicles III",)),
    ("It sold well .", 0, ("Valkyria Chronicles III", "Reception")),
]


def parse(src: str, name: str):
    return parse_document(src.encode("utf-8"), name)


def outline(doc):
    return [(b.text, b.level, b.heading_path) for b in doc.blocks]


@pytest.mark.parametrize(
    "line, expected",
    [
        ("= Title =", (1, "Title")),
        ("== Section ==", (2, "Section")),
        ("==Tight==", (2, "Tight")),
        (" = = History = = ", (2, "History")),
        ("= = = Early life = = =", (3, "Early life")),
        ("= = = = = = = Deep = = = = = = =", (7, "Deep")),
        ("== a = b ==", (2, "a = b")),
        ("== Unbalanced =", None),
        ("= = =", None),
        ("====", None),
        ("x = 1 =", None),
        ("Some = prose =", None),
    ],
)
def test_wiki_heading_line(line, expected):
    found = wiki_heading(line)
    assert (found and (found[0], line[found[1] : found[2]])) == expected


def test_wikitext_in_plain_text_loses_its_markers_and_gets_levels_and_paths():
    doc = parse(WIKITEXT, "wiki.train.txt")
    assert outline(doc) == EXPECTED
    assert [b.kind for b in doc.blocks][::2] == ["heading"] * 5
    assert not any("=" in b.text for b in doc.blocks)
    assert_spans_match(doc)


def test_unspaced_wiki_headings_and_a_body_right_under_one():
    doc = parse("= Guide =\n\nIntro.\n\n== Install ==\nRun the installer.\nThen reboot.\n", "guide.txt")
    assert outline(doc) == [
        ("Guide", 1, ()),
        ("Intro.", 0, ("Guide",)),
        ("Install", 2, ("Guide",)),
        ("Run the installer.\nThen reboot.", 0, ("Guide", "Install")),
    ]
    assert_spans_match(doc)


def test_markdown_made_only_of_wiki_headings_gets_them():
    doc = parse(WIKITEXT, "wiki.md")
    assert outline(doc) == EXPECTED
    headings = [b for b in doc.blocks if b.kind == "heading"]
    assert all(doc.text[b.char_start : b.char_end] == b.text for b in headings)
    assert_spans_match(doc, exact=False)
    assert doc.document.title == "Valkyria Chronicles III"


def test_markdown_wiki_headings_leave_code_and_lists_alone():
    src = "= Notes =\n\nFirst.\n== Setup ==\nThen this.\n\n```\n== not a heading ==\n```\n\n- == item ==\n"
    doc = parse(src, "notes.md")
    assert [(b.kind, b.text, b.heading_path) for b in doc.blocks] == [
        ("heading", "Notes", ()),
        ("paragraph", "First.", ("Notes",)),
        ("heading", "Setup", ("Notes",)),
        ("paragraph", "Then this.", ("Notes", "Setup")),
        ("code", "== not a heading ==", ("Notes", "Setup")),
        ("list_item", "== item ==", ("Notes", "Setup")),
    ]
    assert_spans_match(doc, exact=False)


def test_markdown_with_real_headings_keeps_equals_signs_in_prose():
    src = (
        "Title\n=====\n\n"
        "Set x = 1 and\n= y =\nis prose.\n\n"
        "= = Looks like wiki = =\n\n"
        "== also wiki-like ==\n\n"
        "Sub\n---\n\nBody.\n"
    )
    doc = parse(src, "setext.md")
    assert kinds(doc) == [
        ("heading", "Title"),
        ("paragraph", "Set x = 1 and\n= y =\nis prose."),
        ("paragraph", "= = Looks like wiki = ="),
        ("paragraph", "== also wiki-like =="),
        ("heading", "Sub"),
        ("paragraph", "Body."),
    ]


def test_markdown_with_one_wiki_like_line_is_left_alone():
    doc = parse("Where a == b holds.\n\n== Only one ==\n\nThe end.\n", "one.md")
    assert [b.kind for b in doc.blocks] == ["paragraph"] * 3
