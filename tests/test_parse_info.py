"""GNU Info manuals read as the sections they print: headings at their underline's level, text
under them, and none of what an Info reader navigates by (node headers, menus, tables, markers)."""

from pathlib import Path

from raychunk.parse import parse_document
from tests.spans import assert_spans_match

DATA = Path(__file__).parent / "data" / "info"


def parse(name: str, as_name: str | None = None):
    return parse_document((DATA / name).read_bytes(), as_name or str(DATA / name))


def test_a_manual_reads_as_its_sections():
    doc = parse("time.info.gz")
    assert doc.document.format == "info" and doc.document.status == "ok"
    assert doc.document.title == "Time"
    headings = [(b.level, b.text) for b in doc.blocks if b.kind == "heading"]
    assert headings[:5] == [
        (1, "Time"),
        (1, "1 Measuring Program Resource Use"),
        (2, "1.1 Setting the Output Format"),
        (2, "1.2 The Format String"),
        (3, "1.2.1 Time Resources"),
    ]
    resources = next(b for b in doc.blocks if b.text.startswith("'E'"))
    assert resources.heading_path == (
        "1 Measuring Program Resource Use",
        "1.2 The Format String",
        "1.2.1 Time Resources",
    )
    text = "\n".join(b.text for b in doc.blocks)
    for navigation in ("File: time.info", "* Menu:", "INFO-DIR-SECTION", "Tag Table", "[index]", "Node: "):
        assert navigation not in text, navigation
    # the index node has nothing but its menu: its heading is all that is left of it
    assert doc.blocks[-1].kind == "heading" and doc.blocks[-1].text == "Concept index"
    assert_spans_match(doc)


def test_a_split_manual_names_where_its_text_is():
    doc = parse("find.info.gz")
    assert doc.document.status == "empty"
    assert doc.document.reason == "an Info manual split into files: its text is in find.info-1, find.info-2"
    part = parse("find.info-2.gz")  # a part is Info by its name
    assert part.document.format == "info" and part.document.status == "ok"
    assert [b.text for b in part.blocks if b.kind == "heading"] == ["'find' Primary Index"]


def test_info_is_known_by_its_content_and_an_info_name_alone_is_not_enough():
    directory = parse("dir")  # no extension: the ^_ line and node header say Info
    assert directory.document.format == "info"
    assert [b.text.split()[:3] for b in directory.blocks] == [
        ["This", "(the", "Directory"],
        ["In", "Debian", "GNU/Linux,"],
    ]
    other = parse_document(b"name=widget\nversion=1.2\n\nA package's info file.\n", "package.info")
    assert other.document.format == "text" and other.document.status == "ok"
