"""Property tests of the chunker's invariants on generated markdown documents."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raychunk.chunking import Profile, chunk_document
from raychunk.parse import parse_document
from raychunk.render import render_table
from raychunk.tokens import WordCounter

WORDS = WordCounter(max_input=10_000)


VOCAB = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "rho",
    "sigma",
    "tau",
    "omega",
    "acme",
    "cloud",
    "seat",
    "plan",
    "refund",
    "token",
]


def _words(seed: int, n: int) -> str:
    return " ".join(VOCAB[(seed * 7 + i * 13 + i * i) % len(VOCAB)] for i in range(n))


def _sentence(seed: int, n: int) -> str:
    return _words(seed, n).capitalize() + ".!?"[seed % 3]


@st.composite
def markdown_doc(draw):
    """Headings, paragraphs, lists, tables and code, from a small list of integers (fast to draw)."""
    parts = ["# " + VOCAB[draw(st.integers(0, len(VOCAB) - 1))].capitalize()]
    for kind, a, b in draw(
        st.lists(
            st.tuples(st.integers(0, 6), st.integers(1, 30), st.integers(1, 12)), min_size=1, max_size=12
        )
    ):
        if kind == 0:
            parts.append("#" * (2 + a % 3) + " " + _words(a, 1 + b % 4))
        elif kind in (1, 2, 3):
            parts.append(" ".join(_sentence(a + i, 1 + (a * i + b) % 30) for i in range(b)))
        elif kind == 4:
            parts.append("\n".join("- " + _sentence(a + i, 1 + (b + i) % 15) for i in range(1 + b % 5)))
        elif kind == 5:
            cols = 1 + b % 4
            wide = 40 if b > 8 else 5  # wide: rows over any cap, cut by cells, a cell over it by words
            head = "| " + " | ".join(f"h{i}" for i in range(cols)) + " |\n|" + "---|" * cols
            rows = [
                "| " + " | ".join(_words(a + r + c, 1 + (r * c + a) % wide) for c in range(cols)) + " |"
                for r in range(a)
            ]
            parts.append(head + "\n" + "\n".join(rows))
        else:
            parts.append("```\n" + "\n".join(_words(a + i, (b * i) % 8) for i in range(a)) + "\n```")
    return "\n\n".join(parts) + "\n"


profiles = st.builds(
    Profile,
    strategy=st.sampled_from(["structure", "structure", "fixed", "records"]),
    max_tokens=st.integers(48, 160),
    overlap=st.sampled_from([0, 0.1, 0.2, 8]),
    min_tokens=st.sampled_from([0, 0, 12]),
    table_max_tokens=st.sampled_from([None, 48, 100]),
)

SETTINGS = settings(
    max_examples=int(__import__("os").environ.get("HYPOTHESIS_EXAMPLES", 150)),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def body(c):
    return c.text[len(c.header) + 2 :] if c.header else c.text


def _strip_list_marker(seg: str) -> str:
    return re.sub(r"^\s*- ", "", seg)


@SETTINGS
@given(markdown_doc(), profiles)
def test_body_pieces_are_spans_of_the_source(src, profile):
    doc = parse_document(src.encode(), "gen.md")
    for c in chunk_document(doc, profile, WORDS):
        span = doc.text[c.char_start : c.char_end]
        if c.table_id:
            # A part spans its own rows; the header rows repeated above them are context.
            lines = body(c).split("\n")
            if span == "\n".join(lines[2:] if c.table_part else lines):
                continue
            # A part of one row over the cap, cut by cells: its own cells (or piece of one), the
            # row's label repeated as context after the row's first part.
            cells = lines[-1][2:-2]
            assert span == cells or (cells.endswith(span) and cells[: -len(span)].endswith(" | ")), (
                span,
                body(c),
            )
            continue
        for seg in re.split(r"\n\n|\n(?=\s*- )", body(c)):
            if seg.startswith("| "):  # a whole table joined after its introduction: its cells
                for cell in re.split(r" \| ", seg.replace("\n", " | ")):
                    assert cell.strip("| -") in span or re.fullmatch(r"[|\- ]*", cell), (cell, span)
                continue
            assert _strip_list_marker(seg).strip() in span, (seg, span)


# Found by Hypothesis: a fixed window that starts at a row's closing pipe ("|\n| omega ...").
_WIDE_ROWS = (
    "# Alpha\n"
    "\n"
    "| h0 | h1 | h2 |\n"
    "|---|---|---|\n"
    "| alpha alpha gamma tau refund tau gamma alpha alpha | omega omega cloud token sigma token"
    " cloud omega omega | alpha alpha gamma tau refund tau gamma alpha alpha |\n"
    "| omega omega cloud token sigma token cloud omega omega | alpha alpha gamma tau refund tau"
    " gamma alpha alpha gamma | omega omega cloud token sigma token cloud omega omega cloud tok"
    "en |\n"
    "| alpha alpha gamma tau refund tau gamma alpha alpha | omega omega cloud token sigma token"
    " cloud omega omega cloud token | alpha alpha gamma tau refund tau gamma alpha alpha gamma "
    "tau refund tau |\n"
    "| omega omega cloud token sigma token cloud omega omega | alpha alpha gamma tau refund tau"
    " gamma alpha alpha gamma tau refund | omega omega cloud token sigma token cloud omega omeg"
    "a cloud token sigma token cloud omega |\n"
    "| alpha alpha gamma tau refund tau gamma alpha alpha | omega omega cloud token sigma token"
    " cloud omega omega cloud token sigma token | alpha alpha gamma tau refund tau gamma alpha "
    "alpha gamma tau refund tau gamma alpha alpha gamma |\n"
    "| omega omega cloud token sigma token cloud omega omega | alpha alpha gamma tau refund tau"
    " gamma alpha alpha gamma tau refund tau gamma | omega omega cloud token sigma token cloud "
    "omega omega cloud token sigma token cloud omega omega cloud token sigma |\n"
    "| alpha alpha gamma tau refund tau gamma alpha alpha | omega omega cloud token sigma token"
    " cloud omega omega cloud token sigma token cloud omega | alpha alpha gamma tau refund tau "
    "gamma alpha alpha gamma tau refund tau gamma alpha alpha gamma tau refund tau gamma |\n"
    "| omega omega cloud token sigma token cloud omega omega | alpha alpha gamma tau refund tau"
    " gamma alpha alpha gamma tau refund tau gamma alpha alpha | omega omega cloud token sigma "
    "token cloud omega omega cloud token sigma token cloud omega omega cloud token sigma token "
    "cloud omega omega |\n"
)


def test_a_fixed_window_from_a_rows_closing_pipe_spans_it():
    """A window of a fixed-size chunk that starts at a table row's closing pipe (``|\\n| omega``)
    spans that pipe: the rows' outer pipes map to their own lines here, unlike AsciiDoc's."""
    profile = Profile(strategy="fixed", max_tokens=48, overlap=0, min_tokens=0)
    test_body_pieces_are_spans_of_the_source.hypothesis.inner_test("".join(_WIDE_ROWS), profile)


@SETTINGS
@given(markdown_doc(), profiles)
def test_chunks_cover_every_block_and_repeat_only_declared_overlap(src, profile):
    doc = parse_document(src.encode(), "gen.md")
    chunks = chunk_document(doc, profile, WORDS)
    bodies = "\n\n".join(body(c) for c in chunks)
    for b in doc.blocks:
        if b.kind == "table" and profile.strategy != "fixed":
            for row in b.rows[b.header_rows :]:
                assert " | ".join(row) in bodies or all(w in bodies for w in " ".join(row).split())
        elif b.kind not in ("heading", "page_break"):
            for w in b.text.replace("|", " ").split():
                assert w in bodies
    if profile.strategy != "fixed":
        # A table that joined the chunk of the text before it is counted with that chunk.
        joined = [
            b
            for b in doc.blocks
            if b.kind == "table"
            and any(not c.table_id and c.char_start <= b.char_start < c.char_end for c in chunks)
        ]
        prose = [b for b in doc.blocks if b.kind not in ("heading", "table", "page_break")] + joined
        rendered = [
            ("  " * b.level + "- " + b.text)
            if b.kind == "list_item"
            else render_table(b.rows, b.header_rows)
            if b.kind == "table"
            else b.text
            for b in prose
        ]
        expected = sum(WORDS.count_batch(rendered))
        merged_headings = sum(
            WORDS.count(h) for c in chunks if not c.table_id for h in _merged_headings(c, doc)
        )
        got = sum(c.n_tokens - c.header_tokens - c.overlap_tokens for c in chunks if not c.table_id)
        assert got == expected + merged_headings


def _merged_headings(c, doc):
    """Headings that a min_tokens merge put into a chunk's body as text."""
    return [b.text for b in doc.blocks if b.kind == "heading" and c.char_start <= b.char_start < c.char_end]


@SETTINGS
@given(markdown_doc(), profiles)
def test_no_chunk_exceeds_max_tokens_unless_unsplittable(src, profile):
    doc = parse_document(src.encode(), "gen.md")
    for c in chunk_document(doc, profile, WORDS):
        cap = profile.table_cap if c.table_id else profile.max_tokens
        # a table row over the cap is cut by cells, a cell by words: only a unit of one word may be over
        assert c.n_tokens <= cap or not c.table_id, (c.n_tokens, cap, c.text)


@SETTINGS
@given(markdown_doc(), profiles)
def test_identical_input_gives_identical_output(src, profile):
    a = chunk_document(parse_document(src.encode(), "gen.md"), profile, WORDS)
    b = chunk_document(parse_document(src.encode(), "gen.md"), profile, WORDS)
    assert a == b
    assert len({c.chunk_id for c in a}) == len(a)


@SETTINGS
@given(markdown_doc(), profiles)
def test_chunk_stats_agree_with_chunk_records(src, profile):
    from raychunk.chunking import chunk_stats

    doc = parse_document(src.encode(), "gen.md")
    chunks = chunk_document(doc, profile, WORDS)
    stats = chunk_stats(doc, profile, WORDS, with_ids=True)
    assert [(s.chunk_id, s.n_tokens, s.header_tokens, s.overlap_tokens, s.text_bytes) for s in stats] == [
        (c.chunk_id, c.n_tokens, c.header_tokens, c.overlap_tokens, len(c.text.encode())) for c in chunks
    ]


# A child process measures its own peak RSS around chunk_document, so the test sees what the
# tokenizer allocates outside Python too; the document is built in the child, without the parser.
_ONE_LINE_CHILD = """
import json, resource, sys
from raychunk.chunking import Profile, chunk_document
from raychunk.document import Block, Document, ParsedDocument
from raychunk.tokens import CachedCounter, load_counter

size, spec = int(sys.argv[1]), sys.argv[2]
vocab = ["alpha", "beta", "gamma", "delta", "rho", "sigma", "tau", "omega", "acme", "cloud", "seat",
         "plan", "refund", "token", "x7", "id=42", "took=12ms", "2024-01-01T00:00:00", "INFO", "path=/a/b"]
words = []
for i in range(434):  # sentences of 4, 30 and 400 words (the long one is split into words)
    w = vocab[(i * 7 + i * i // 3) % len(vocab)]
    words.append(w.capitalize() if not words or words[-1].endswith(".") else w)
    if i in (3, 33, 433):
        words[-1] += "."
unit = " ".join(words)
text = " ".join([unit] * (size // len(unit) + 1))  # one line, built without a copy of it per word
doc = ParsedDocument(Document("d" * 32, "one-line.txt", "text", "ok"), text, (Block("paragraph", text, 0, len(text)),))
inner = load_counter(spec)
inner.count(text[:32768])  # the tokenizer's own start-up allocations are not the document's
try:  # Linux: the peak so far (inherited from the parent process at fork) starts over from here
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError:
    pass
unit = 1 if sys.platform == "darwin" else 1024
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit
profile = Profile(max_tokens=128, overlap=0.1)
chunks = chunk_document(doc, profile, CachedCounter(inner))
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit - base
body = [c.text[len(c.header) + 2 :] for c in chunks]
print(json.dumps({
    "size": len(text),
    "grown": grown,
    "first": chunks[0].char_start,
    "last": chunks[-1].char_end,
    "bodies_are_spans": all(b == text[c.char_start : c.char_end] for b, c in zip(body, chunks)),
    "in_order": all(a.char_start < b.char_start <= a.char_end + 1 for a, b in zip(chunks, chunks[1:])),
    "body_tokens": sum(c.n_tokens - c.header_tokens - c.overlap_tokens for c in chunks),
    "text_tokens": inner.count(text),
    "max_tokens": max(c.n_tokens for c in chunks),
    "overlaps": sum(c.overlap_tokens > 0 for c in chunks),
    "chunks": len(chunks),
}))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="peak RSS comes from the resource module")
@pytest.mark.parametrize("spec, size", [("words", 4_000_000), ("all-MiniLM-L6-v2", 1_500_000)])
def test_a_multi_megabyte_single_line_chunks_in_memory_proportional_to_it(spec, size):
    """A one-line document (a log or a scraped page without newlines) is one block: it is tokenized
    window by window, and split into sentences and words a batch at a time, so chunking it takes a
    few times its size (it took 60-120 times its size here, and 150-350 times on bigger inputs,
    when every token and word was a Python object), and its chunks still tile it."""
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
    run = subprocess.run(
        [sys.executable, "-c", _ONE_LINE_CHILD, str(size), spec],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    r = json.loads(run.stdout.strip().splitlines()[-1])
    assert r["grown"] < 20 * r["size"], f"chunking took {r['grown'] / r['size']:.1f}x the text's size"
    assert r["first"] == 0 and r["last"] == r["size"]  # the chunks cover the line ...
    assert r["bodies_are_spans"] and r["in_order"]  # ... each body exactly its span, in order
    assert r["body_tokens"] == r["text_tokens"]  # every token once, besides the declared overlap
    assert r["max_tokens"] <= 128 and 0 < r["overlaps"] < r["chunks"]  # overlap after sentence ends
