"""Known-answer cases for each chunking rule."""

import pymupdf
import pytest

from raychunk.chunking import Profile, chunk_document, header_line
from raychunk.document import Block, Document, ParsedDocument
from raychunk.parse import parse_document
from raychunk.tokens import WordCounter, load_counter

WORDS = WordCounter(max_input=254)


def md(src: str, name: str = "guide.md"):
    return parse_document(src.encode(), name)


def body(chunk) -> str:
    return chunk.text[len(chunk.header) + 2 :] if chunk.header else chunk.text


def sentences(n: int, word: str) -> str:
    return " ".join(f"{word.capitalize()} number {i} is here." for i in range(n))


def test_header_line_starts_with_title_and_skips_repeats():
    assert header_line("Acme Cloud", ("Billing", "Refunds")) == "Acme Cloud > Billing > Refunds"
    assert header_line("Acme Cloud", ("Acme Cloud", "Billing")) == "Acme Cloud > Billing"


@pytest.mark.parametrize(
    "title",
    ["Mozilla - Wikipedia", "Mozilla | The Independent", "MOZILLA [LWN.net]", "Mozilla ✩ Hacks – the blog"],
)
def test_a_title_that_is_the_first_heading_and_a_site_gives_way_to_the_heading(title):
    assert header_line(title, ("Mozilla", "History")) == "Mozilla > History"
    assert header_line(title, ("Firefox",)) == f"{title} > Firefox"  # another heading: the title stays
    assert header_line(title, ()) == title


@pytest.mark.parametrize(
    "title", ["Mozilla: the browser's makers", "Mozilla Foundation", "Mozillas - plural"]
)
def test_a_title_that_says_more_than_its_first_heading_stays(title):
    assert header_line(title, ("Mozilla", "History")) == f"{title} > Mozilla > History"


def test_a_site_title_drops_from_the_chunks_under_its_heading_only():
    doc = parse_document(
        b"<title>Mozilla - Wikipedia</title><p>Jump to navigation.</p><h1>Mozilla</h1><p>A free software "
        b"community.</p><h2>History</h2><p>Founded in 1998.</p>",
        "mozilla.html",
    )
    chunks = chunk_document(doc, Profile(max_tokens=64), WORDS)
    assert doc.document.title == "Mozilla - Wikipedia"
    assert [c.header for c in chunks] == ["Mozilla - Wikipedia", "Mozilla", "Mozilla > History"]


@pytest.mark.parametrize(
    "src, title",
    [
        ("1. Introduction\n\nIt began.\n\n2. Design\n\nIt grew.\n\n3. Results\n\nIt ended.\n", ""),
        ("# Introduction\n\nIt began.\n\n# 2 Design\n\nIt grew.\n", ""),
        ("# II. Design\n\nIt grew.\n", ""),
        ("# 3.1 Models\n\nIt grew.\n", ""),
        ("# Acme Guide\n\nIntro.\n\n## 1. Setup\n\nSteps.\n\n## 2. Use\n\nMore.\n", "Acme Guide"),
        ("# 2023 Environmental Report\n\nIntro.\n\n# Scope\n\nAll sites.\n", "2023 Environmental Report"),
        ("# Acme\n\nIntro.\n\n# License\n\nMIT.\n\n# Credits\n\nUs.\n", "Acme"),
    ],
)
def test_the_first_heading_is_the_title_unless_it_is_the_first_numbered_section(src, title):
    name = "notes.txt" if src[0].isdigit() else "notes.md"
    doc = parse_document(src.encode(), name)
    assert doc.document.title == title
    chunks = chunk_document(doc, Profile(max_tokens=64), WORDS)
    if not title:  # no section named as every other one's parent
        assert all(not c.header.startswith(doc.blocks[0].text + " > ") for c in chunks)


def test_sections_bound_chunks_and_carry_heading_path():
    doc = md(
        "# Acme Cloud\n\nIntro.\n\n## Billing\n\n### Refunds\n\nRefunds take 30 days.\n\nPaid to the card.\n\n"
        "## Support\n\nEmail us.\n"
    )
    chunks = chunk_document(doc, Profile(max_tokens=64), WORDS)
    assert [(c.heading_path, body(c)) for c in chunks] == [
        (("Acme Cloud",), "Intro."),
        (("Acme Cloud", "Billing", "Refunds"), "Refunds take 30 days.\n\nPaid to the card."),
        (("Acme Cloud", "Support"), "Email us."),
    ]
    assert chunks[1].text == "Acme Cloud > Billing > Refunds\n\nRefunds take 30 days.\n\nPaid to the card."
    assert chunks[1].header_tokens == WORDS.count("Acme Cloud > Billing > Refunds")
    assert chunks[1].n_tokens == WORDS.count(chunks[1].text)
    assert len({c.parent_id for c in chunks}) == 3


def test_block_is_never_cut_while_it_fits():
    para1, para2 = sentences(4, "alpha"), sentences(4, "beta")  # 24 words each
    doc = md(f"# T\n\n{para1}\n\n{para2}\n")
    chunks = chunk_document(doc, Profile(max_tokens=40), WORDS)
    assert [body(c) for c in chunks] == [para1, para2]


def test_block_over_cap_splits_at_sentence_ends_and_is_marked():
    para = sentences(12, "gamma")
    doc = md(f"# T\n\n{para}\n")
    chunks = chunk_document(doc, Profile(max_tokens=40), WORDS)
    assert len(chunks) > 1
    assert all(body(c).endswith(".") for c in chunks)
    assert [c.continuation for c in chunks] == [False] + [True] * (len(chunks) - 1)
    assert " ".join(body(c) for c in chunks) == para
    for c in chunks:
        assert doc.text[c.char_start : c.char_end] == body(c)


def test_table_over_cap_splits_by_rows_with_header_repeated():
    rows = "\n".join(f"| plan{i} | {i * 10} seats | {i} TB |" for i in range(30))
    doc = md(f"# Plans\n\nIntro text.\n\n| Plan | Seats | Storage |\n|---|---|---|\n{rows}\n\nAfter table.\n")
    chunks = chunk_document(doc, Profile(max_tokens=256, table_max_tokens=60), WORDS)
    tables = [c for c in chunks if c.table_id]
    assert len(tables) > 2
    assert len({c.table_id for c in tables}) == 1
    assert [c.table_part for c in tables] == list(range(len(tables)))
    for c in tables:
        lines = body(c).split("\n")
        assert lines[:2] == ["| Plan | Seats | Storage |", "|---|---|---|"]
        assert c.block_kinds == ("table",)
        assert c.n_tokens <= 60
    seen = [line for c in tables for line in body(c).split("\n")[2:]]
    assert seen == [f"| plan{i} | {i * 10} seats | {i} TB |" for i in range(30)]
    # A table split by rows never mixes with prose.
    assert body(chunks[0]) == "Intro text." and body(chunks[-1]) == "After table."


def test_a_table_that_fits_joins_the_text_that_introduces_it():
    table = "| Variable | Default |\n|---|---|\n| BATCH_SIZE | 512 |\n| DELAY | 1000 |"
    src = f"# Exporter\n\n## Batch processor\n\nThe batch processor reads these variables:\n\n{table}\n\nSee also the limits.\n"
    doc = md(src)
    (c,) = chunk_document(doc, Profile(max_tokens=64), WORDS)
    assert body(c) == f"The batch processor reads these variables:\n\n{table}\n\nSee also the limits."
    assert c.block_kinds == ("paragraph", "table") and c.table_id is None
    assert doc.text[c.char_start : c.char_end] == body(c)  # the span holds the table's source exactly
    # Where the introduction and the table do not fit one chunk, the table takes its own.
    intro, rest = chunk_document(doc, Profile(max_tokens=30, table_max_tokens=64), WORDS)[:2]
    assert body(intro) == "The batch processor reads these variables:"
    assert body(rest).startswith(table) and rest.table_id and rest.table_part == 0
    # A table at the start of a section is its own chunk, as before.
    (first, after) = chunk_document(md(f"# T\n\n{table}\n\nAfter.\n"), Profile(max_tokens=64), WORDS)
    assert body(first) == table and first.table_id and body(after) == "After."


def test_a_joined_table_stays_with_its_introduction_when_the_tail_is_balanced():
    """A section's short last chunk takes pieces from the chunk before it, but never the table that
    joined the sentence introducing it: that would leave the introduction alone again."""
    rows = "\n".join(f"| VAR_{i} | {i * 100} ms |" for i in range(2))
    table = f"| Variable | Default |\n|---|---|\n{rows}"
    intro = (
        "The batch processor reads these variables when it starts, and each one of them can be set "
        "in the environment of the process or in its configuration file:"
    )
    doc = md(f"# Exporter\n\n## Batch processor\n\n{intro}\n\n{table}\n\nSee the limits page for more.\n")
    first, last = chunk_document(doc, Profile(max_tokens=64), WORDS)
    assert body(first) == f"{intro}\n\n{table}" and first.block_kinds == ("paragraph", "table")
    assert body(last) == "See the limits page for more."
    assert [doc.text[c.char_start : c.char_end] for c in (first, last)] == [body(first), body(last)]


def test_small_table_is_one_chunk():
    doc = md("# T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    (c,) = chunk_document(doc, Profile(max_tokens=64), WORDS)
    assert body(c) == "| a | b |\n|---|---|\n| 1 | 2 |" and c.table_part == 0


def test_overlap_within_a_section_never_across_a_heading():
    a = "\n\n".join(sentences(3, f"apple{i}") for i in range(6))
    b = "\n\n".join(sentences(3, f"berry{i}") for i in range(6))
    doc = md(f"# Fruit\n\n## Apples\n\n{a}\n\n## Berries\n\n{b}\n")
    chunks = chunk_document(doc, Profile(max_tokens=64, overlap=10), WORDS)
    apples = [c for c in chunks if c.heading_path[-1] == "Apples"]
    berries = [c for c in chunks if c.heading_path[-1] == "Berries"]
    assert len(apples) > 1 and len(berries) > 1
    assert apples[0].overlap_tokens == 0 and berries[0].overlap_tokens == 0
    assert all(c.overlap_tokens > 0 for c in apples[1:] + berries[1:])
    assert "apple" not in berries[0].text.lower()
    for prev, nxt in zip(apples, apples[1:]):
        repeated = body(nxt).split("\n\n")[0]
        assert body(prev).endswith(repeated)
        assert WORDS.count(repeated) == nxt.overlap_tokens <= 10


def test_overlap_never_into_or_out_of_a_table():
    prose = "\n\n".join(sentences(3, f"word{i}") for i in range(4))
    doc = md(f"# T\n\n{prose}\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n{prose}\n")
    chunks = chunk_document(doc, Profile(max_tokens=40, overlap=8), WORDS)
    for i, c in enumerate(chunks):
        if c.table_id or (i and chunks[i - 1].table_id):
            assert c.overlap_tokens == 0


def test_overlap_as_fraction_of_max_tokens():
    assert Profile(max_tokens=200, overlap=0.1).overlap_tokens == 20
    assert Profile(max_tokens=200, overlap=15).overlap_tokens == 15
    with pytest.raises(ValueError, match="overlap"):
        Profile(max_tokens=100, overlap=0.6)
    with pytest.raises(ValueError, match="accepted values are structure"):
        Profile(strategy="semantic")


def _two_page_pdf() -> bytes:
    doc = pymupdf.open()
    text1 = " ".join(f"The first page sentence {i} continues." for i in range(18))
    text2 = " ".join(f"The second page sentence {i} continues." for i in range(18))
    for i, text in enumerate((text1, text2)):
        page = doc.new_page()
        if i == 0:
            page.insert_text((72, 60), "Long Section", fontsize=20)
        page.insert_textbox(pymupdf.Rect(72, 90, 520, 700), text, fontsize=11)
    return doc.tobytes()


def test_continuation_across_a_page_break_gets_overlap():
    parsed = parse_document(_two_page_pdf(), "report.pdf")
    assert parsed.document.status == "ok", parsed.document
    chunks = chunk_document(parsed, Profile(max_tokens=160, overlap=20), WORDS)
    crossing = [c for c in chunks if c.page_start == 1 and c.page_end == 2]
    assert crossing, [(c.page_start, c.page_end) for c in chunks]
    assert all(c.overlap_tokens > 0 for c in crossing)
    assert crossing[0].heading_path[-1] == "Long Section"


def test_one_chunk_per_faq_pair():
    src = "Billing FAQ.\n\n" + "\n\n".join(f"Q: Question {i}?\nA: Answer {i}." for i in range(4))
    doc = parse_document(src.encode(), "faq.txt")
    chunks = chunk_document(doc, Profile(strategy="records", max_tokens=64), WORDS)
    assert [body(c) for c in chunks] == ["Billing FAQ."] + [
        f"Q: Question {i}?\nA: Answer {i}." for i in range(4)
    ]
    assert all(c.header == "faq.txt" for c in chunks)


def test_code_splits_at_def_and_class():
    funcs = "\n\n\n".join(
        f"def f{i}(x):\n" + "\n".join(f"    x = x + {j}" for j in range(20)) + "\n    return x"
        for i in range(3)
    )
    doc = parse_document(f"import os\n\n\n{funcs}\n\n\nclass K:\n    pass\n".encode(), "mod.py")
    chunks = chunk_document(doc, Profile(strategy="code", max_tokens=200), WORDS)
    firsts = [body(c).split("\n")[0] for c in chunks]
    assert firsts[1:4] == ["def f0(x):", "def f1(x):", "def f2(x):"]
    assert all(c.block_kinds == ("code",) for c in chunks)


def test_long_function_splits_at_blank_lines():
    fn = "def big():\n" + "\n\n".join("\n".join(f"    v{k}_{j} = {j}" for j in range(8)) for k in range(10))
    doc = parse_document(fn.encode(), "big.py")
    chunks = chunk_document(doc, Profile(strategy="code", max_tokens=60), WORDS)
    assert len(chunks) > 1
    assert all(body(c).split("\n")[0].strip().startswith(("def big", "v")) for c in chunks)
    assert all(c.n_tokens <= 60 for c in chunks)


def test_fixed_windows_cut_at_sentence_ends_with_overlap():
    turns = "\n".join(f"Speaker{i % 3}: line number {i} of the meeting." for i in range(40))
    doc = parse_document(turns.encode(), "meeting.txt")
    chunks = chunk_document(doc, Profile(strategy="fixed", max_tokens=50, overlap=10), WORDS)
    assert len(chunks) > 3
    for c in chunks:
        assert body(c).endswith("meeting.")
        assert c.n_tokens <= 50
    assert all(c.overlap_tokens > 0 for c in chunks[1:])


def test_chunk_over_embedder_limit_is_reported():
    counter = load_counter()
    doc = md("# T\n\n" + " ".join(f"token{i}" for i in range(200)) + "\n")
    (c,) = chunk_document(doc, Profile(max_tokens=1024, allow_over_limit=True), counter)
    assert c.n_tokens > counter.max_input == 254
    assert c.over_limit


def test_a_table_row_over_the_cap_is_cut_by_cells_with_its_header_and_label_repeated():
    counter = load_counter()
    cell = " ".join(f"token{i}" for i in range(200))
    doc = md(
        f"# T\n\n| key | a | b | c |\n|---|---|---|---|\n| row1 | {cell} | {cell} | 7 |\n| row2 | x | y | z |\n"
    )
    chunks = chunk_document(doc, Profile(max_tokens=250), counter)
    assert chunks and all(c.n_tokens <= 250 and not c.over_limit and not c.oversize for c in chunks)
    parts = [body(c).split("\n") for c in chunks]
    # every part of row1 is a narrowed pipe table: its columns' headers, the label, its own cells
    assert [p[-1].startswith("| row1 | ") for p in parts] == [True] * (len(parts) - 1) + [False]
    assert all(p[0].startswith("| key | ") and p[1].startswith("|---|---|") for p in parts)
    assert parts[-2] == ["| key | c |", "|---|---|", "| row1 | 7 |"]
    # the pieces of the long cells together are the cells, in order, each word once
    pieces = " ".join(p[-1][len("| row1 | ") : -2] for p in parts[:-1]).replace(" | ", " ")
    assert pieces.split() == f"{cell} {cell} 7".split()
    assert [c.table_part for c in chunks] == list(range(len(chunks)))
    # each part spans its own cells (or piece), in order, and the last part is the row that fits
    assert all(a.char_end < b.char_start for a, b in zip(chunks, chunks[1:]))
    assert doc.text[chunks[0].char_start :].startswith("row1 | token0 ")
    assert doc.text[chunks[-1].char_start : chunks[-1].char_end] == "| row2 | x | y | z |"


def test_a_wide_row_is_cut_where_the_headers_column_groups_end():
    counter = load_counter()
    cells = [" ".join(f"{c}{i}" for i in range(12)) for c in "abcdefg"]
    row = "| Groundline | " + " | ".join(cells) + " |"

    def parts(head: str) -> list[list[str]]:
        doc = md(f"# T\n\n{head}\n|{'---|' * 8}\n{row}\n")
        chunks = chunk_document(doc, Profile(max_tokens=120), counter)
        assert all(c.n_tokens <= 120 for c in chunks)
        return [[x.strip() for x in body(c).split("\n")[-1].strip("|").split("|")][1:] for c in chunks]

    # "LOAD RADIUS" spans the first four value columns, "MAXIMUM REACH" the last three (a PDF's
    # spanning cell leaves the columns under it empty): no part takes some of each group
    grouped = parts("| Height | LOAD RADIUS |  |  |  | MAXIMUM REACH |  |  |")
    assert sum(grouped, []) == cells
    assert all(set(p) <= set(cells[:4]) or set(p) <= set(cells[4:]) for p in grouped)
    assert cells[4:] in grouped  # the group that fits in a part is one part
    # without groups, as many cells as fit go in each part, across the same columns
    plain = parts("| Height | A | B | C | D | E | F | G |")
    assert sum(plain, []) == cells
    assert any(set(p) & set(cells[:4]) and set(p) & set(cells[4:]) for p in plain)


def test_min_tokens_joins_tiny_sibling_sections_only_under_same_parent():
    src = "# Doc\n\n## A\n\n### A1\n\nTiny.\n\n### A2\n\nAlso tiny.\n\n## B\n\n### B1\n\nSmall too.\n"
    chunks = chunk_document(md(src), Profile(max_tokens=64, min_tokens=10), WORDS)
    assert [(c.heading_path, body(c)) for c in chunks] == [
        (("Doc", "A"), "A1\n\nTiny.\n\nA2\n\nAlso tiny."),
        (("Doc", "B", "B1"), "Small too."),
    ]
    plain = chunk_document(md(src), Profile(max_tokens=64), WORDS)
    assert len(plain) == 3


def test_ids_are_deterministic_and_depend_on_setting():
    doc = md("# T\n\n" + "\n\n".join(sentences(3, f"w{i}") for i in range(10)))
    a = chunk_document(doc, Profile(max_tokens=40), WORDS)
    b = chunk_document(
        md("# T\n\n" + "\n\n".join(sentences(3, f"w{i}") for i in range(10))), Profile(max_tokens=40), WORDS
    )
    assert a == b
    c = chunk_document(doc, Profile(max_tokens=48), WORDS)
    assert {x.chunk_id for x in a}.isdisjoint({x.chunk_id for x in c})
    assert len({x.chunk_id for x in a}) == len(a)


def test_failed_documents_give_no_chunks():
    bad = ParsedDocument(Document("x" * 32, "x.pdf", "pdf", "failed", "corrupt"))
    assert chunk_document(bad, Profile(), WORDS) == []


def test_block_spans_and_pages_on_hand_built_document():
    text = "Intro line.\n\nSecond para."
    blocks = (
        Block("paragraph", "Intro line.", 0, 11, pages=(1,)),
        Block("paragraph", "Second para.", 13, 25, pages=(2,)),
    )
    doc = ParsedDocument(Document("d" * 32, "r.pdf", "pdf", "ok", title="Report", pages=2), text, blocks)
    (c,) = chunk_document(doc, Profile(max_tokens=64), WORDS)
    assert (c.char_start, c.char_end, c.page_start, c.page_end) == (0, 25, 1, 2)
    assert c.text == "Report\n\nIntro line.\n\nSecond para."


def test_a_huge_paragraph_is_split_into_sentences_once(monkeypatch):
    """Overlap is cut from the end of long blocks; finding it must not rescan the block every time."""
    import raychunk.chunking.cutting as core

    calls = []
    real = core.iter_sentence_spans
    monkeypatch.setattr(core, "iter_sentence_spans", lambda text: calls.append(len(text)) or real(text))
    doc = md("# T\n\n" + sentences(3000, "long"))
    chunks = chunk_document(doc, Profile(max_tokens=64, overlap=10), WORDS)
    assert len(chunks) > 100
    assert all(c.overlap_tokens > 0 for c in chunks[1:])
    assert sum(calls) <= 2 * len(doc.blocks[-1].text)


def test_a_long_word_is_cut_in_time_linear_in_its_length():
    """A base64 image in markdown is one 'word' of 200k characters: each part is found on a prefix
    of what is left (not on all of it: that was quadratic), at most the cap, and the parts put
    together are the word."""
    import base64
    import random

    blob = base64.b64encode(random.Random(3).randbytes(150_000)).decode()
    doc = md(f"# T\n\nAn image: ![x](data:image/png;base64,{blob}) and text after it.\n")
    counter = WordCounter(max_input=254)
    seen = []
    real = counter.cut_points
    counter.cut_points = lambda text, budget: seen.append(len(text)) or real(text, budget)
    chunks = chunk_document(doc, Profile(max_tokens=64), counter)
    assert sum(seen) < 10 * len(blob)
    assert all(c.n_tokens <= 64 for c in chunks)
    assert blob in "".join(body(c) for c in chunks)
    assert [c.char_start for c in chunks] == sorted(c.char_start for c in chunks)


def test_a_space_between_words_costs_bpe_what_the_next_word_alone_says():
    """tiktoken: a single space between two words belongs to the word after it, so a join there is
    counted on that word alone (remembered per word, not per pair of words: a long line has a pair
    per word) and is what counting the words either side together gives."""
    import random

    from raychunk.chunking.packing import Packer
    from raychunk.tokens import CachedCounter

    rng = random.Random(11)
    alphabet = [*"abcXYZ0189", *".,;:!?'\"()-_/=+", "é", "中", "\u0301"]

    def word() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9)))

    doc = md("# T\n\nSome text.\n")
    fast = Packer(doc, Profile(), CachedCounter(load_counter("tiktoken:cl100k_base")), "prose")
    generic = Packer(doc, Profile(), CachedCounter(load_counter("tiktoken:cl100k_base")), "prose")
    generic.counter.space_starts_word = False
    for _ in range(400):
        left = " ".join(word() for _ in range(rng.randint(1, 4)))
        right = " ".join(word() for _ in range(rng.randint(1, 4)))
        assert fast.join_text(left, " ", right) == generic.join_text(left, " ", right), (left, right)
    assert all(len(k) == 2 for k in fast.costs.joins)  # remembered per word
