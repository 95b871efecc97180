"""Vim help files read as the sections Vim shows: headings from the rules and headlines, examples as
code, tab-set columns as tables, tags and links as their words, and no banner, modeline or tables of
contents."""

import re
from pathlib import Path

from raychunk.parse import parse_document
from tests.spans import chunks_holding_their_spans

DATA = Path(__file__).parent / "data" / "vimhelp"


def parse_file(name: str):
    return parse_document((DATA / name).read_bytes(), str(DATA / name))


def parse(src: str, name: str = "doc/plugin.txt"):
    return parse_document(src.encode("utf-8"), name)


def assert_words_in_spans(doc) -> None:
    """Each block's words stand in its span, once the help markup (``|link|``, ``*tag*``, ``~``) and
    the colon that joins a term to its description are set aside."""
    for b in doc.blocks:
        source = " ".join(re.sub(r"[|*~]", "", doc.text[b.char_start : b.char_end]).split())
        cells = [c for row in b.rows for c in row] if b.kind == "table" else [b.text]
        for cell in cells:
            for word in re.sub(r"[|*~]", " ", cell).split():
                assert word in source or word.rstrip(":") in source, (word, b.kind, source[:200])


def test_a_user_manual_chapter_reads_as_its_sections():
    doc = parse_file("usr_05.txt")
    assert doc.document.format == "vimhelp" and doc.document.status == "ok"
    assert doc.document.title == "Set your settings"
    headings = [(b.level, b.text) for b in doc.blocks if b.kind == "heading"]
    assert headings[:4] == [
        (1, "05.1 The vimrc file"),
        (1, "05.2 The example vimrc file explained"),
        (1, "05.3 The defaults.vim file explained"),
        (1, "05.4 Simple mappings"),
    ]
    code = [b for b in doc.blocks if b.kind == "code"]
    assert code[0].text == ":edit $MYVIMRC" and code[0].language == "vim"
    assert code[0].heading_path == ("05.1 The vimrc file",)
    # a multi-line example keeps its lines and their indent relative to each other
    backup = next(b for b in code if b.text.startswith('if has("vms")'))
    assert backup.text.split("\n")[:3] == ['if has("vms")', "  set nobackup", "else"]
    # the example's closing "<" is no text; the paragraph before it loses its ">" mark
    text = "\n".join(b.text for b in doc.blocks)
    prose = [b.text for b in doc.blocks if b.kind in ("paragraph", "list_item", "heading")]
    assert "Loading defaults.vim can be disabled with this command:" in prose
    assert not any(t.endswith(">") for t in prose)
    assert not any(line.startswith("<") for b in doc.blocks for line in b.text.split("\n"))
    # links read as their words; the chapter's table of contents, its neighbours' links, the banner
    # and the modeline are left out
    assert not any("|" in t for t in prose)
    screen = next(b for b in doc.blocks if "|text in the Vim window" in b.text)  # a drawing
    assert screen.kind == "code" and screen.text.startswith("+-----") and screen.text.count("\n") >= 5
    assert "see vimrc to find out" in text
    for navigation in (
        "Next chapter",
        "Previous chapter",
        "Table of contents",
        "VIM USER MANUAL",
        "vim:tw=78",
    ):
        assert navigation not in text, navigation
    assert not any(b.text.startswith("05.1 The vimrc file 05.2") for b in doc.blocks)
    assert_words_in_spans(doc)
    assert all(n > 0 for n in chunks_holding_their_spans(doc, 120))


def test_the_quick_reference_is_tables_under_tag_headings():
    doc = parse_file("quickref.txt.gz")
    assert doc.document.format == "vimhelp" and doc.document.title == "Quick reference guide"
    lr = next(b for b in doc.blocks if b.kind == "heading" and b.text == "Q_lr Left-right motions")
    assert lr.level == 2
    table = doc.blocks[doc.blocks.index(lr) + 1]
    assert table.kind == "table" and table.heading_path == ("Q_lr Left-right motions",)
    assert table.rows[0] == ("h", "N h", "left (also: CTRL-H, <BS>, or <Left> key)")
    # a row that goes on on an indented line is one row
    dollar = next(r for r in table.rows if r[0] == "$")
    assert dollar == ("$", "N $", "to the last character in the line (N-1 lines lower) (also: <End> key)")
    # the two-column table of contents at the top is navigation: left out
    assert not any("list of help files" in b.text for b in doc.blocks)
    assert sum(b.kind == "table" for b in doc.blocks) >= 30
    assert_words_in_spans(doc)
    assert all(n > 0 for n in chunks_holding_their_spans(doc, 200))


PLUGIN = """\
*frob.txt*\tFrobnicate buffers in place

Author: A. Person <a@example.org>

INTRODUCTION\t\t\t\t\t\t*frob* *frob-intro*

Frob turns the lines of a buffer into their frobnicated form. See |frob-commands|.

==============================================================================
COMMANDS\t\t\t\t\t\t*frob-commands*

\t\t\t\t\t\t\t*:Frob* *E9001*
:Frob[!] {count}\tFrobnicate {count} lines.  With [!] the
\t\t\tlines are frobnicated twice.

Configure it in your vimrc: >vim
\tlet g:frob_level = 3
\tnnoremap <Leader>f :Frob<CR>
<
Options ~

g:frob_level\tHow hard to frob, 1 to 5.

 vim:tw=78:ts=8:noet:ft=help:norl:
"""


def test_a_plugin_doc_by_its_modeline():
    doc = parse(PLUGIN)
    assert doc.document.format == "vimhelp"
    assert doc.document.title == "frob: Frobnicate buffers in place"
    headings = [(b.level, b.text, b.heading_path) for b in doc.blocks if b.kind == "heading"]
    assert headings == [
        (2, "INTRODUCTION", ()),
        (1, "COMMANDS", ()),
        (3, "Options", ("COMMANDS",)),
    ]
    blocks = [(b.kind, b.text) for b in doc.blocks]
    # the tags a :help jump lands on stay as words, beside the command they name; a term and its
    # description after a tab read as a man page's
    assert (
        "paragraph",
        ":Frob E9001 :Frob[!] {count}: Frobnicate {count} lines. With [!] the lines are frobnicated twice.",
    ) in blocks
    assert ("code", "let g:frob_level = 3\nnnoremap <Leader>f :Frob<CR>") in blocks
    code = next(b for b in doc.blocks if b.kind == "code")
    assert code.language == "vim"
    assert ("paragraph", "Configure it in your vimrc:") in blocks
    assert ("paragraph", "g:frob_level: How hard to frob, 1 to 5.") in blocks
    assert not any("vim:tw" in b.text or "ft=help" in b.text for b in doc.blocks)
    assert_words_in_spans(doc)


def test_only_help_files_are_read_as_help():
    # a first line that looks like a tag, with no modeline, tags or rules: plain text
    plain = parse("*note.txt* my notes\n\nBuy milk. See the shop.\n", "note.txt")
    assert plain.document.format == "text"
    # another file type's modeline
    other = parse("Some notes.\n\n vim:tw=78:ft=markdown:\n", "notes.txt")
    assert other.document.format == "text"
    # no modeline, but the file's tag, rules and tags through it
    body = "".join(f"Line {i} about |link{i}| and *tag{i}*.\n\n" for i in range(4))
    tagged = parse(f"*mine.txt*\tMine\n\n{'=' * 78}\n1. Start\t\t*mine-start*\n\n{body}")
    assert tagged.document.format == "vimhelp"
    assert [b.text for b in tagged.blocks if b.kind == "heading"] == ["1. Start"]


def test_a_tags_file_is_an_index_not_text():
    """Vim's ``doc/tags`` (11,241 lines of ``name<TAB>file<TAB>/*name*``) was 840 chunks of a
    154-file run; ctags' ``tags`` is the same shape. Each line points into another file, read on its
    own: the file is ``empty``, saying so. Three columns of data with a number last stay text."""
    vim_tags = "".join(
        f"{t}\t{f}\t/*{t}*\n"
        for t, f in [
            ("'aleph'", "options.txt"),
            (":set", "options.txt"),
            ("E764", "options.txt"),
            ("zz", "scroll.txt"),
        ]
    )
    doc = parse(vim_tags, "vim/doc/tags")
    assert doc.document.status == "empty" and not doc.blocks
    assert doc.document.reason == (
        "a tags file (4 entries, each pointing into another file, which is read on its own): an index, no text of its own"
    )
    ctags = '!_TAG_FILE_FORMAT\t2\t/extended format/\nmain\tsrc/main.c\t/^int main(void)$/;"\tf\nhelper\tsrc/util.c\t12;"\tf\nVERSION\tsrc/version.h\t3\n'
    assert parse(ctags, "repo/tags").document.reason.startswith("a tags file (3 entries")
    assert parse(ctags, "repo/index.txt").document.status == "empty"  # ctags marks it
    people = "alice\tparis\t30\nbob\tlyon\t41\ncarol\tnice\t52\n"
    assert parse(people, "people.txt").document.status == "ok"


def test_alternatives_set_apart_by_or_share_one_description():
    """Vim writes a command's other forms one a line, each with ``or`` in the description's column,
    the description after the last: one entry, its terms joined by ``or``, its tags first (as a tags
    line above a term reads). Before, the first form was the term and the rest ran into the
    description (``["x]<Del>: or <Del> x dl ["x]x Delete ...``); 32 entries of Vim's own help."""
    src = (
        "*change.txt*\tFor Vim version 9.0.\n\n"
        "==============================================================================\n"
        "1. Deleting text\t\t\t\t\t*deleting*\n\n"
        '["x]<Del>\tor\t\t\t\t\t*<Del>* *x* *dl*\n'
        '["x]x\t\t\tDelete [count] characters under and after the cursor\n'
        "\t\t\t[into register x] (not |linewise|).\n\n"
        '{Visual}["x]x\tor\t\t\t\t\t*v_x* *v_d*\n'
        '{Visual}["x]d   or\n'
        '{Visual}["x]<Del>\tDelete the highlighted text.\n\n'
        "The commands can be used in Visual mode  or\n"
        "in Normal mode, as the text says.\n\n"
        " vim:tw=78:ts=8:noet:ft=help:norl:\n"
    )
    doc = parse(src, "doc/change.txt")
    texts = [b.text for b in doc.blocks if b.kind == "paragraph"]
    assert texts == [
        '<Del> x dl ["x]<Del> or ["x]x: Delete [count] characters under and after the cursor'
        " [into register x] (not linewise).",
        'v_x v_d {Visual}["x]x or {Visual}["x]d or {Visual}["x]<Del>: Delete the highlighted text.',
        "The commands can be used in Visual mode or in Normal mode, as the text says.",  # prose: no tab
    ]
    assert_words_in_spans(doc)


def test_a_header_row_parted_by_single_tabs_heads_its_table():
    """A header ending in `` ~`` whose cells one tab parts, over rows of as many cells, is the
    table's header row, not a level-3 heading over a paragraph of its rows (Vim's ``item<tab>action
    ~`` in insert.txt, a plugin's ``Name<tab>Value<tab>Meaning ~``); a header line of words is a
    heading still."""
    src = (
        "*tool.txt*\tMove ledgers\n\n"
        "==============================================================================\n"
        "1. Setup\n\n"
        "Settings ~\n\n"
        "Name\tValue\tMeaning ~\n"
        "north\t10\tthe first\n"
        "south\t4\tthe second\n\n"
        "After the table.\n\n"
        " vim:tw=78:ts=8:noet:ft=help:norl:\n"
    )
    doc = parse(src, "doc/tool.txt")
    assert [(b.kind, b.level) for b in doc.blocks if b.kind == "heading"] == [("heading", 1), ("heading", 3)]
    (table,) = [b for b in doc.blocks if b.kind == "table"]
    assert table.rows == (
        ("Name", "Value", "Meaning"),
        ("north", "10", "the first"),
        ("south", "4", "the second"),
    )
    assert table.header_rows == 1 and table.heading_path == ("1. Setup", "Settings")
    assert_words_in_spans(doc)
