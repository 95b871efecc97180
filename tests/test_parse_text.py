from pathlib import Path

from raychunk.parse import parse_document
from raychunk.parse._common import clean_text
from tests.spans import assert_spans_match, kinds


def parse(src: str, name: str = "notes.txt"):
    return parse_document(src.encode("utf-8"), name)


def test_paragraphs_split_at_blank_lines():
    doc = parse("First paragraph\nstill first.\n\n  \nSecond one.\n")
    assert kinds(doc) == [("paragraph", "First paragraph\nstill first."), ("paragraph", "Second one.")]
    assert_spans_match(doc)


def test_plain_headings_only():
    src = (
        "User Guide\n==========\n\nIntro text.\n\n"
        "1 Getting started\n\nSome text.\n\n"
        "1.2 Configuration\n\nMore text.\n\n"
        "== Appendix ==\n\nLast.\n\n"
        "This line ends with a period.\n\n"
        "Sub part\n--------\nbody right under it\n"
    )
    doc = parse(src)
    headings = [(b.text, b.level, b.heading_path) for b in doc.blocks if b.kind == "heading"]
    assert headings == [
        ("User Guide", 1, ()),
        ("1 Getting started", 2, ("User Guide",)),
        ("1.2 Configuration", 3, ("User Guide", "1 Getting started")),
        ("Appendix", 2, ("User Guide",)),
        ("Sub part", 2, ("User Guide",)),
    ]
    assert ("paragraph", "This line ends with a period.") in kinds(doc)
    assert kinds(doc)[-1] == ("paragraph", "body right under it")
    assert_spans_match(doc)


def test_numbered_steps_are_not_headings():
    doc = parse("1. Open the lid\n\n2. Pour water\n\n3. Close the lid\n")
    assert [b.kind for b in doc.blocks] == ["paragraph"] * 3


def test_a_reference_list_is_not_headings_but_numbered_sections_are():
    """From norwich-city.txt (a Wikipedia article as text): its numbered references were 25 headings,
    one of them the title in every chunk's header line."""
    src = (
        "1.1 Early career\n\nHe signed for Watford.\n\n"
        "1. Hugman, Barry J., ed. (2005). The PFA Footballers' Who's Who\n\n"
        "(2005-2006). Queen Anne Press.\n\n"
        "47. Roberts 2004, pp. 62-63\n\n"
        "51. Foster 2015, p. 212\n\n"
        '10. Rowson, Matt (16 September 2014). "Iwan Roberts scored his first\n\n'
        "2. Thrussell, Andrea (23 April 2005). In focus (https://www.edp24.co.uk)\n"
    )
    doc = parse(src)
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["1.1 Early career"]
    assert doc.document.title == ""  # a numbered section, not the document's title


def test_nroff_numbered_sections_are_headings_but_a_page_footer_is_not():
    """From bash-article.txt (a 1994 article as nroff output): each section title is underlined by
    overstrikes (``_\\bI``), which hid every heading; the page footer ``9    October 28, 1994`` is none."""
    u = lambda s: "".join(f"_\b{c}" if c != " " else c for c in s)  # noqa: E731
    src = (
        f"{u('1.')}  {u('Introduction')}\n\n     Bash is the shell.\n\n"
        "9                      October 28, 1994\n\n"
        f"{u('4.2.')}  {u('New Builtin Commands')}\n\nSeveral builtins are new.\n"
    )
    doc = parse(src)
    heads = [(b.text, b.level) for b in doc.blocks if b.kind == "heading"]
    assert heads == [("1. Introduction", 1), ("4.2. New Builtin Commands", 2)]
    assert [b.heading_path for b in doc.blocks if b.text == "Several builtins are new."] == [
        ("1. Introduction", "4.2. New Builtin Commands")
    ]
    for b in doc.blocks:  # each block spans its own line, overstrikes and all (a heading reads squashed)
        assert clean_text(doc.text[b.char_start : b.char_end]).split() == b.text.split()


def test_bullets_become_list_items():
    doc = parse("Shopping:\n\n- milk\n- bread\n  - rye\n    * dark\n  - wheat\n\nSteps:\n\n1. Buy\n2) Cook\n")
    assert [(b.kind, b.marker, b.text, b.level) for b in doc.blocks] == [
        ("paragraph", "", "Shopping:", 0),
        (
            "list_item",
            "",
            "milk",
            0,
        ),  # a bullet renders as "-" (chunks read "- - milk" while it was text too)
        ("list_item", "", "bread", 0),
        ("list_item", "", "rye", 1),
        ("list_item", "", "dark", 2),  # as deep as the indents left of it (every nested item was level 1)
        ("list_item", "", "wheat", 1),
        ("paragraph", "", "Steps:", 0),
        ("list_item", "1.", "Buy", 0),
        ("list_item", "2)", "Cook", 0),
    ]
    assert_spans_match(doc)
    from raychunk.chunking.pieces import render

    assert [render(b) for b in doc.blocks if b.kind == "list_item"] == [
        "- milk",
        "- bread",
        "  - rye",
        "    - dark",
        "  - wheat",
        "1. Buy",
        "2) Cook",
    ]


def test_faq_pairs_become_records():
    src = "Billing FAQ\n\nQ: Can I pay by card?\nA: Yes, all plans.\n\nQ: Refunds?\nA: Within 30 days.\nNo questions asked.\n"
    doc = parse(src, "faq.txt")
    records = [b for b in doc.blocks if b.kind == "record"]
    assert [r.text for r in records] == [
        "Q: Can I pay by card?\nA: Yes, all plans.",
        "Q: Refunds?\nA: Within 30 days.\nNo questions asked.",
    ]
    assert records[0].rows == (("question",), ("Can I pay by card?",))
    assert doc.blocks[0].kind == "paragraph"


def test_lowercase_faq_pairs_become_records():
    src = "Help\n\nq: can I pay by card?\na: yes.\n\nquestion: refunds?\nanswer: within 30 days.\n"
    doc = parse(src, "faq.txt")
    records = [b for b in doc.blocks if b.kind == "record"]
    assert [r.rows for r in records] == [
        (("question",), ("can I pay by card?",)),
        (("question",), ("refunds?",)),
    ]
    assert_spans_match(doc)


def test_a_lettered_list_is_no_faq():
    # bash's NEWS: each release's items run a. b. ... z., so its "a." and "q." lines look like Q/A.
    # It failed to parse (the records' question search and the check disagreed on case).
    items = "\n\n".join(
        f"{c}.  The {c}-item of this release changes the shell." for c in "abcdefghijklmnopqrs"
    )
    src = "This is a terse description of the new features.\n\n" + "\n\n".join(
        f"{n}. Changes to Bash\n\n{items}" for n in (1, 2, 3)
    )
    doc = parse(src, "NEWS")
    assert doc.document.status == "ok", doc.document.reason
    assert not [b for b in doc.blocks if b.kind == "record"]
    assert any(b.text.startswith("q.  The q-item") for b in doc.blocks)
    assert_spans_match(doc)


def test_text_without_blank_lines_splits_per_line():
    src = "\n".join(f"2026-11-29 12:00:{i:02d} INFO worker {i} started" for i in range(30))
    doc = parse(src, "app.log")
    assert len(doc.blocks) == 30
    assert_spans_match(doc)


def test_hard_wrapped_prose_without_blank_lines_gives_its_paragraphs_back():
    import textwrap

    first = (
        "Iwan Wyn Roberts is a Welsh former professional footballer who played as a forward from 1986 "
        "to 2005 for a number of clubs and the Wales national team, and later worked as a commentator."
    )
    second = (
        "His footballing career started at Watford as a trainee before signing his first professional "
        "contract with the club in 1986. He moved to Huddersfield Town in 1990, where he remained for "
        "three seasons before transferring to Leicester City."
    )
    third = "He scored on his debut. The club won the league that season, and he stayed for five more years with them."
    # a page flattened to text: no blank lines, a width that changes, a heading as a short line; the
    # second paragraph's last line is nearly full, but "The" would still have fitted after it
    src = "\n".join(
        ["Club career", *textwrap.wrap(first, 72), *textwrap.wrap(second, 90), *textwrap.wrap(third, 90)]
    )
    assert len(textwrap.wrap(second, 90)[-1]) + len(" The") <= 90
    doc = parse(src + "\n")
    assert [" ".join(b.text.split()) for b in doc.blocks] == ["Club career", first, second, third]
    assert_spans_match(doc)
    # without the wrapping, each line is its own paragraph, as in a log
    lines = ["Club career", "Iwan Wyn Roberts played as a forward.", "He scored often."] * 4
    assert len(parse("\n".join(lines) + "\n").blocks) == 12


def test_overstrikes_and_control_characters_are_cleaned():
    doc = parse("_\bI_\bm_\bp_\bo_\br_\bt_\ba_\bn_\bt note\x00 here\n")
    assert doc.blocks[0].text == "Important note here"


def test_encodings_detected():
    text = "Grüße aus Köln. Ça va très bien, merci.\n\nZweiter Absatz über Öl.\n"
    for enc, expect in (("utf-16", "utf-16"), ("latin-1", None), ("utf-8", "utf-8")):
        doc = parse_document(text.encode(enc), f"x-{enc}.txt")
        assert doc.document.status == "ok", doc.document
        assert doc.blocks[0].text == "Grüße aus Köln. Ça va très bien, merci."
        if expect:
            assert doc.document.encoding == expect
    bom = parse_document(b"\xff\xfe" + "BOM text".encode("utf-16-le"), "bom.txt")
    assert bom.blocks[0].text == "BOM text"
    assert bom.document.encoding == "utf-16"


def test_utf32_without_a_bom_is_read_as_utf32():
    """UTF-32 with no byte-order mark (chardet's own test pages, in gcloud's SDK) was read as UTF-16,
    a NUL between every two characters, and the HTML page was one paragraph of its markup. Four
    bytes a character with the high two NUL is UTF-32 (little- or big-endian); UTF-16 has a NUL in
    every other byte only; a table of small 32-bit numbers stays binary."""
    text = "Grüße aus Köln, 𝄞 and ünïcode.\n\nZweiter Absatz über Öl.\n"
    for enc in ("utf-32-le", "utf-32-be"):
        doc = parse_document(text.encode(enc), f"x-{enc}.txt")
        assert doc.document.encoding == enc
        assert [b.text for b in doc.blocks] == ["Grüße aus Köln, 𝄞 and ünïcode.", "Zweiter Absatz über Öl."]
        page = parse_document(f"<h1>Title</h1><p>{text}</p>".encode(enc), f"x-{enc}.html")
        assert [b.kind for b in page.blocks][:2] == ["heading", "paragraph"], page.blocks
    for enc in ("utf-16-le", "utf-16-be"):
        assert parse_document(text.encode(enc), "x.txt").document.encoding == enc
    numbers = b"".join(n.to_bytes(4, "big") for n in range(1, 3000, 7))
    assert parse_document(numbers, "table.txt").document.status != "ok"


def test_east_asian_legacy_encodings_are_read_as_written():
    """CPython's own codec test files (Lib/test/cjkencodings, each with its UTF-8 truth) read 8 of 15
    right: 7-bit ISO-2022 and HZ text decoded as ASCII into its escape sequences (ISO-2022-KR's
    shifts then made it "binary content"), and Korean that detection gives no answer for was read
    as Latin-1 (cp949) or refused (Johab). Generated here the same way."""
    korean = "한국어 문서입니다. 청구서는 매월 첫째 날에 발행됩니다.\n\n두 번째 단락입니다.\n"
    japanese = "日本語の文書です。請求書は毎月一日に発行されます。\n\n二番目の段落です。\n"
    chinese = "中文文档。账单每月第一天开具。\n\n第二段。\n"
    for text, encoding in (
        (korean, "iso2022_kr"),
        (korean, "johab"),
        (korean, "cp949"),
        (japanese, "iso2022_jp"),
        (chinese, "hz"),
    ):
        doc = parse_document(text.encode(encoding), f"doc-{encoding}.txt")
        assert doc.document.status == "ok", (encoding, doc.document)
        assert doc.text == text, (encoding, doc.document.encoding, doc.text[:40])
    # CPython's own files, as written (detection has no answer for this cp949 and Johab text)
    data = Path(__file__).parent / "data" / "cjk"
    for name in ("cp949", "johab", "iso2022_kr", "iso2022_jp", "hz"):
        doc = parse_document((data / f"{name}.txt").read_bytes(), f"{name}.txt")
        truth = (data / f"{name}-utf8.txt").read_text(encoding="utf-8")
        assert doc.document.status == "ok" and doc.text == truth, (name, doc.document.encoding)
    # an escape that is a terminal's, not ISO-2022's, leaves UTF-8 alone
    log = parse_document(b"\x1b[31mERROR\x1b[0m disk full ~{not hz}\n", "app.log")
    assert log.document.encoding == "utf-8"


def test_speaker_turns_become_paragraphs():
    src = "Standup notes.\n\nPriya: Let's start.\nMarco: The rollout is\nhalfway done.\nPriya: Thanks.\n"
    doc = parse(src, "standup.txt")
    assert kinds(doc) == [
        ("paragraph", "Standup notes."),
        ("paragraph", "Priya: Let's start."),
        ("paragraph", "Marco: The rollout is\nhalfway done."),
        ("paragraph", "Priya: Thanks."),
    ]
    assert_spans_match(doc)


def test_terminal_escapes_in_a_captured_log_are_dropped_whole():
    """CI and terminal logs hold colour and cursor sequences; their bytes after ESC (``[31m``) would
    otherwise stay in the text a retriever embeds. The spans still cover the raw lines."""
    src = (
        "2024-05-01 \x1b[32mINFO\x1b[0m build started\n"
        "2024-05-01 \x1b[1;31mERROR\x1b[m cache miss for \x1b]8;;https://ci/x\x1b\\job 7\x1b]8;;\x1b\\\n"
        "\x1b]0;runner title\x07\x1b(B\x1b[mdone\x1b[2K\n"
    )
    doc = parse(src, "build.log")
    assert doc.text == src  # the document text is the file's, which the spans index
    assert [b.text for b in doc.blocks] == [
        "2024-05-01 INFO build started\n2024-05-01 ERROR cache miss for job 7\ndone"
    ]
    assert_spans_match(doc)
    assert clean_text("keep [31m as written, \x1b=\x1b7 gone") == "keep [31m as written,  gone"


def test_classic_mac_line_ends_are_lines():
    src = "Title\r=====\r\rFirst line\rsecond line\r\rNext paragraph.\r"
    doc = parse(src)
    assert kinds(doc) == [
        ("heading", "Title"),
        ("paragraph", "First line\nsecond line"),
        ("paragraph", "Next paragraph."),
    ]
    assert len(doc.text) == len(src) and doc.text == src.replace("\r", "\n")  # one for one: offsets kept
    assert_spans_match(doc)
    md = parse_document(b"# Guide\r\r## Install\r\rRun it.\r- one\r- two\r", "guide.md")
    assert [(b.kind, b.text, b.heading_path) for b in md.blocks][-2:] == [
        ("list_item", "one", ("Guide", "Install")),
        ("list_item", "two", ("Guide", "Install")),
    ]


def _copyright_file() -> str:
    licence = "\n .\n".join(
        " " + f"Clause {i}. Permission is granted to copy, distribute and modify this work under terms {i}."
        for i in range(60)
    )
    return (
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        "Upstream-Name: curl\nSource: https://curl.se/download/\n\n"
        "Files: *\nCopyright: 1996-2023, Daniel Stenberg <daniel@haxx.se>\nLicense: curl\n\n"
        "Files: lib/krb5.c\nCopyright:\n 1995-2006 Kungliga Tekniska Hogskolan\n 2008 Someone Else\n"
        "License: BSD-3-Clause\n\n"
        f"License: curl\n All rights reserved.\n .\n{licence}\n\n"
        "Files: libelf/elf.h\nCopyright: 1995-2022 Free Software Foundation, Inc.\n"
        "Comment: This file is part of the GNU C Library.\nLicense: LGPL-2.1+\n The GNU C Library is free.\n"
        "Comment:\n See /usr/share/common-licenses/LGPL-2.1.\n"
    )


def test_field_stanzas_are_records_and_the_file_no_transcript():
    # /usr/share/doc's 223 Debian copyright files were transcripts of speakers named Files, Copyright
    # and License, chunked in fixed windows, their licence texts cut into lines.
    from raychunk.classify import classify
    from raychunk.config import load_doc_types

    src = _copyright_file()
    doc = parse(src, "copyright")
    assert [b.kind for b in doc.blocks] == ["record"] * 5
    first, _, krb5, licence, glibc = doc.blocks
    assert first.rows[0] == ("Format", "Upstream-Name", "Source")
    assert krb5.rows == (
        ("Files", "Copyright", "License"),
        ("lib/krb5.c", "1995-2006 Kungliga Tekniska Hogskolan\n2008 Someone Else", "BSD-3-Clause"),
    )
    assert len(licence.text) > 4000 and licence.text.count("\n") > 100  # one record, not a run of lines
    assert licence.rows[1][0].startswith("curl\nAll rights reserved.\n\nClause 0.")
    # a field named twice, as real copyright files do with Comment, is still one stanza
    assert glibc.rows[0] == ("Files", "Copyright", "Comment", "License", "Comment")
    assert glibc.rows[1][-1] == "See /usr/share/common-licenses/LGPL-2.1."
    assert_spans_match(doc)
    types = load_doc_types(None)
    assert classify(doc, types.thresholds, types.overrides).doc_type == "records"


def test_people_talking_in_pairs_of_lines_are_no_stanzas():
    pairs = [("Alice", "Bob"), ("Carol", "Bob"), ("Alice", "Dan"), ("Bob", "Alice")]
    src = "\n\n".join(
        f"{a}: Shall we ship on Friday, {b}?\n{b}: Yes, {a}, the build is green." for a, b in pairs
    )
    assert {b.kind for b in parse(src, "chat.txt").blocks} == {"paragraph"}
    # one exchange in which someone speaks twice says these are turns, not fields
    talk = src + "\n\nAlice: One more thing.\nBob: Go on.\nAlice: The notes are due Thursday."
    assert "record" not in {b.kind for b in parse(talk, "chat.txt").blocks}


DEBIAN_CHANGELOG = """apt (2.6.1) unstable; urgency=medium

  * Restore adduser dependency for bookworm.
    This caused some regressions too late in the bookworm cycle.
  * Point gitlab-ci and gbp to bookworm/2.6.y

 -- Julian Andres Klode <jak@debian.org>  Thu, 25 May 2023 16:11:37 +0200

apt (2.6.0) unstable; urgency=medium

  [ Cyril Brulebois ]
  * Teach apt-cdrom's scoring system about non-free-firmware (Closes: #1029751)

  [ David Kalnischkies ]
  * More support for non-free-firmware
    - Have values in Section config trees refer to them in all components

 -- Julian Andres Klode <jak@debian.org>  Mon, 06 Mar 2023 13:34:32 +0100
"""


def test_a_debian_changelog_is_a_section_per_release():
    # /usr/share/doc holds 665 of them; read as text, a chunk ran across releases under no heading
    doc = parse(DEBIAN_CHANGELOG, "changelog.Debian")
    assert doc.document.title == "apt changelog"  # not the first release's line, over every chunk
    assert [(b.level, b.text) for b in doc.blocks if b.kind == "heading"] == [
        (1, "apt (2.6.1) unstable; urgency=medium"),
        (1, "apt (2.6.0) unstable; urgency=medium"),
        (2, "Cyril Brulebois"),
        (2, "David Kalnischkies"),
    ]
    items = [(b.heading_path, b.level, b.text) for b in doc.blocks if b.kind == "list_item"]
    assert items == [
        (
            ("apt (2.6.1) unstable; urgency=medium",),
            0,
            "Restore adduser dependency for bookworm.\n    This caused some regressions too late in the bookworm cycle.",
        ),
        (("apt (2.6.1) unstable; urgency=medium",), 0, "Point gitlab-ci and gbp to bookworm/2.6.y"),
        (
            ("apt (2.6.0) unstable; urgency=medium", "Cyril Brulebois"),
            0,
            "Teach apt-cdrom's scoring system about non-free-firmware (Closes: #1029751)",
        ),
        (
            ("apt (2.6.0) unstable; urgency=medium", "David Kalnischkies"),
            0,
            "More support for non-free-firmware",
        ),
        (
            ("apt (2.6.0) unstable; urgency=medium", "David Kalnischkies"),
            1,
            "Have values in Section config trees refer to them in all components",
        ),
    ]
    assert_spans_match(doc)


def test_a_gnu_changelog_is_a_section_per_entry():
    src = (
        "2013-12-09  Colin Watson  <cjwatson@debian.org>\n\n"
        "\t* .gitignore: Adjust for differences between bzr and\n\t  git.\n"
        "\t* gnulib: Add --no-vc-files.\n\n"
        "Wed Nov 27 11:54:17 GMT 2013  Colin Watson  <cjwatson@debian.org>\n\n"
        "\tUpgrade to Automake 1.14.\n"
    )
    doc = parse(src, "ChangeLog")
    assert doc.document.title == ""  # the file's name heads its chunks, not the first entry
    assert [b.text for b in doc.blocks if b.kind == "heading"] == [
        "2013-12-09 Colin Watson <cjwatson@debian.org>",
        "Wed Nov 27 11:54:17 GMT 2013 Colin Watson <cjwatson@debian.org>",
    ]
    assert [b.text for b in doc.blocks if b.kind == "list_item"] == [
        ".gitignore: Adjust for differences between bzr and\n\t  git.",
        "gnulib: Add --no-vc-files.",
    ]
    assert doc.blocks[-1].kind == "paragraph" and doc.blocks[-1].heading_path == (
        "Wed Nov 27 11:54:17 GMT 2013 Colin Watson <cjwatson@debian.org>",
    )
    for b in doc.blocks:  # a heading reads squashed
        assert clean_text(doc.text[b.char_start : b.char_end]).split() == b.text.split()
    # one entry line is no changelog: a document that only starts like one stays as it was
    single = parse(src.split("Wed Nov")[0], "notes.txt")
    assert [b.kind for b in single.blocks][:1] == ["paragraph"]
