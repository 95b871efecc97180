"""Exact chunks: every chunk's span is exactly the source its body was made from, ids are unique,
``n_tokens`` is the count of the embedded text for any tokenizer, the header line stays within its
share, and only a unit that cannot be split goes over the cap (flagged). Property tests on inputs
that used to break them (long list items, long records, long headings, tables with repeated rows
or over the cap, blocks over the cap), and known answers for the regressions and the baseline."""

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raychunk.chunking import Profile, check_profiles, chunk_document, chunk_stats
from raychunk.parse import parse_document
from raychunk.tokens import WordCounter, load_counter

WORDS = WordCounter(max_input=10_000)
CL100K = load_counter("tiktoken:cl100k_base")
MINILM = load_counter("all-MiniLM-L6-v2")
W = re.compile(r"\w+")
VOCAB = ["alpha", "beta", "gamma", "delta", "rho", "sigma", "tau", "omega", "acme", "cloud", "seat", "plan"]
KEYS = ("kone", "ktwo", "kthree")  # record keys: words no value uses
LONG_WORD = "Zq" * 400  # one word over any cap in cl100k tokens

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def _words(seed: int, n: int) -> str:
    return " ".join(VOCAB[(seed * 7 + i * 13 + i * i) % len(VOCAB)] for i in range(n))


def _prose(seed: int, n_sentences: int) -> str:
    return " ".join(_words(seed + i, 3 + (seed + i) % 20).capitalize() + "." for i in range(n_sentences))


@st.composite
def markdown_doc(draw):
    parts = ["# " + _words(draw(st.integers(0, 50)), draw(st.sampled_from([1, 3, 60])))]
    for kind, a, b in draw(
        st.lists(st.tuples(st.integers(0, 6), st.integers(0, 60), st.integers(1, 40)), min_size=1, max_size=6)
    ):
        if kind == 0:  # a heading, sometimes a very long one
            parts.append("#" * (2 + a % 3) + " " + _words(a, 120 if b > 30 else 1 + b % 5))
        elif kind == 1:  # a paragraph, sometimes far over any cap
            parts.append(_prose(a, b * (4 if a % 3 == 0 else 1)))
        elif kind == 2:  # list items, one of them long
            parts.append(
                "\n".join("- " + _prose(a + i, 1 + (b * 3 if i == 0 else i % 3)) for i in range(1 + b % 4))
            )
        elif kind in (3, 4):  # a table: rows drawn from a few, so repeated identical rows are common
            cols = 1 + b % 3
            distinct = [
                " | ".join(_words(a + r + c, 1 + (r * c + a) % 6) for c in range(cols)) for r in range(3)
            ]
            rows = [distinct[(r * r + a) % (1 + b % 3)] for r in range(a + 2)]
            head = "| " + " | ".join(f"h{i}" for i in range(cols)) + " |\n|" + "---|" * cols
            parts.append(head + "\n" + "\n".join(f"| {r} |" for r in rows))
        elif kind == 5:  # repeated identical paragraphs
            parts.extend([_prose(a, 2)] * (1 + b % 3))
        else:
            parts.append(f"Before {LONG_WORD} after." if a % 4 == 0 else _prose(a, 2))
    return parse_document(("\n\n".join(parts) + "\n").encode(), "x.md")


@st.composite
def records_doc(draw):
    n, size, fmt = (
        draw(st.integers(1, 4)),
        draw(st.sampled_from([3, 40, 400])),
        draw(st.sampled_from(["jsonl", "csv"])),
    )
    recs = [{KEYS[0]: i, KEYS[1]: _words(i, 2), KEYS[2]: _prose(i * 5, 1 + size // 10)} for i in range(n)]
    recs += recs[:1]  # a repeated identical record
    if fmt == "jsonl":
        return parse_document("\n".join(json.dumps(r) for r in recs).encode(), "x.jsonl")
    lines = [",".join(KEYS)] + [f'{r[KEYS[0]]},{r[KEYS[1]]},"{r[KEYS[2]]}"' for r in recs]
    return parse_document("\n".join(lines).encode(), "x.csv")


profiles = st.builds(
    Profile,
    strategy=st.sampled_from(["structure", "records", "fixed", "code"]),
    max_tokens=st.sampled_from([32, 64, 128]),
    overlap=st.sampled_from([0, 0.1, 0.2]),
    table_max_tokens=st.sampled_from([None, 48]),
)


def body(c) -> str:
    return c.text[len(c.header) + 2 :] if c.header else c.text


def content_words(doc, c) -> tuple[list[str], set[str]]:
    """The body's words that come from the source, and the context words it may hold besides
    (a CSV's keys, which exist only in its header line)."""
    text = body(c)
    span_words = W.findall(doc.text[c.char_start : c.char_end])
    if c.table_id and (c.table_part or W.findall(text) != span_words):
        # The header rows repeated above a part's own rows are context; so is the label of a row cut
        # by cells (its first cell), repeated in each part of the row after the first.
        (table,) = [b for b in doc.blocks if b.kind == "table" and b.char_start <= c.char_start < b.char_end]
        lines = text.split("\n")[table.header_rows + 1 :] if table.header_rows else text.split("\n")
        label, _, rest = lines[-1][2:-2].partition(" | ")
        if len(lines) == 1 and rest and W.findall(label) != span_words[: len(W.findall(label))]:
            lines = ["| " + rest + " |"]
        text = "\n".join(lines)
    context = set(KEYS) if doc.document.format == "csv" else set()
    return W.findall(text), context


def assert_exact_span(doc, c):
    """Tight and complete: the span's words are the body's words, in order, and nothing else."""
    span = doc.text[c.char_start : c.char_end]
    words, context = content_words(doc, c)
    span_words = W.findall(span)
    assert span == span.strip(), (c.char_start, c.char_end, span[:80])
    assert [w for w in words if w not in context or w in span_words] == span_words, (
        body(c)[:200],
        span[:200],
    )


def assert_exact(doc, profile, counter):
    chunks = chunk_document(doc, profile, counter)
    assert chunks or all(b.kind == "heading" for b in doc.blocks)
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    stats = chunk_stats(doc, profile, counter, with_ids=True)
    assert [s.chunk_id for s in stats] == [c.chunk_id for c in chunks]
    assert [s.n_tokens for s in stats] == [c.n_tokens for c in chunks]
    share = max(1, int(profile.header_share * profile.max_tokens))
    for c, n in zip(chunks, counter.count_batch([c.text for c in chunks])):
        assert c.n_tokens == n, (c.n_tokens, n, c.text[:200])
        assert c.header_tokens == (counter.count(c.header) if c.header else 0) <= share
        assert_exact_span(doc, c)
        cap = profile.table_cap if c.table_id else profile.max_tokens
        assert c.oversize == (n > cap)
        if c.oversize:  # a single row of a table, or a single word
            lines, _ = content_words(doc, c)
            rows = body(c).split("\n")[(2 if c.table_id else 0) :]
            assert (c.table_id and len(rows) == 1) or len(body(c).split()) == 1, (c.text[:300], lines[:5])
    return chunks


@SETTINGS
@given(markdown_doc(), profiles)
def test_markdown_chunks_are_exact_in_words(doc, profile):
    assert_exact(doc, profile, WORDS)


@SETTINGS
@given(markdown_doc(), profiles)
def test_markdown_chunks_are_exact_in_cl100k(doc, profile):
    assert_exact(doc, profile, CL100K)


@SETTINGS
@given(records_doc(), profiles, st.sampled_from([WORDS, CL100K]))
def test_record_chunks_are_exact(doc, profile, counter):
    assert_exact(doc, profile, counter)


# -- known answers ------------------------------------------------------------------------------


def test_one_long_list_item_gives_distinct_pieces_with_their_own_spans():
    item = _prose(0, 300)  # ~3,000 words
    doc = parse_document(f"# Title\n\n- {item}\n".encode(), "x.md")
    chunks = assert_exact(doc, Profile(max_tokens=256), MINILM)
    assert len(chunks) > 10
    assert len({(c.char_start, c.char_end) for c in chunks}) == len(chunks)
    assert all(a.char_end < b.char_start for a, b in zip(chunks, chunks[1:]))
    assert chunks[0].char_start == doc.text.index(item) and chunks[-1].char_end == doc.text.index(item) + len(
        item
    )
    assert body(chunks[0]).startswith("- ") and doc.text[chunks[0].char_start] != "-"


def test_long_jsonl_records_get_one_id_per_piece():
    recs = [{"id": i, "text": _prose(i, 120)} for i in range(3)]
    doc = parse_document("\n".join(json.dumps(r) for r in recs).encode(), "x.jsonl")
    chunks = assert_exact(doc, Profile(strategy="records", max_tokens=128), MINILM)
    assert len(chunks) > 6 and len({(c.char_start, c.char_end) for c in chunks}) == len(chunks)


# Column names whose words the values use too (a package list's ``name (every package served)``):
# a key's words must never be taken for a value's.
NAMES = ("name", "version of the name", "name served")
CELLS = ["", "name", "a name", "0", "0.0.0", "address-name-system", "served", "name served", "0 name"]


def _record_source(fmt: str, rows: list[list[str]]) -> tuple[str, list[tuple[int, int] | None]]:
    """The file, and the span each row's record must have: from its first value (a JSON object's:
    its first key) to the end of its last value; None for a row with no value."""
    lines, spans, pos = [], [], 0
    if fmt != "jsonl":
        lines.append(("\t" if fmt == "tsv" else ",").join(NAMES))
        pos = len(lines[0]) + 1
    for row in rows:
        if fmt == "jsonl":
            members = [(k, v) for k, v in zip(NAMES, row) if v]
            line = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in members) + "}"
            first = 2 if members else None
            last = len(line) - 2
        else:
            line = ("\t" if fmt == "tsv" else ",").join(row)
            at = [sum(len(c) + 1 for c in row[:i]) for i in range(len(row))]
            held = [i for i, c in enumerate(row) if c]
            first = at[held[0]] if held else None
            last = at[held[-1]] + len(row[held[-1]]) if held else None
        spans.append((pos + first, pos + last) if first is not None else None)
        lines.append(line)
        pos += len(line) + 1
    return "\n".join(lines) + "\n", spans


@SETTINGS
@given(
    st.lists(st.lists(st.sampled_from(CELLS), min_size=3, max_size=3), min_size=1, max_size=6),
    st.sampled_from(["tsv", "csv", "jsonl"]),
)
def test_a_record_spans_its_own_values_whatever_words_its_keys_share(rows, fmt):
    text, spans = _record_source(fmt, rows)
    doc = parse_document(text.encode(), f"x.{fmt}")
    chunks = chunk_document(doc, Profile(strategy="records", max_tokens=128), WORDS)
    assert [(c.char_start, c.char_end) for c in chunks] == [s for s in spans if s is not None]


def test_a_long_record_cut_in_parts_spans_only_the_values_each_part_holds():
    # The shape of a package list: long column names, most of their words in the values as well.
    names = (
        "name (every package served, and some names that are not served)",
        "newest version (pre-releases only where no other version is served)",
        "summary [tags]",
    )
    rows = [
        (
            "Acornima",
            "1.9.2",
            "A standard-compliant JavaScript parser, a fork of Esprima served as a package",
        ),
        ("AdaptiveCards", "not-served", "no version of this name is served"),
        ("address-name-system", "0.2.3", "Mapping names to served versions"),
    ]
    text = "\n".join("\t".join(r) for r in [names, *rows]) + "\n"
    doc = parse_document(text.encode(), "packages.tsv")
    for max_tokens in (16, 24, 400):
        chunks = chunk_document(doc, Profile(strategy="records", max_tokens=max_tokens), WORDS)
        for c in chunks:
            assert set(W.findall(doc.text[c.char_start : c.char_end])) <= set(W.findall(body(c))), c.text
        starts = [c.char_start for c in chunks if not c.continuation]
        assert starts == [text.index(r[0]) for r in rows]


def test_split_table_with_repeated_rows_counts_and_spans_each_part():
    rows = ["| a | b |", "| a | b |", "| " + _words(3, 40) + " | c |", "| a | b |", "| d | e |"] * 8
    doc = parse_document(("# T\n\n| h1 | h2 |\n|---|---|\n" + "\n".join(rows) + "\n").encode(), "x.md")
    for counter in (MINILM, CL100K):
        chunks = assert_exact(doc, Profile(max_tokens=64), counter)
        parts = [c for c in chunks if c.table_id]
        assert len(parts) > 3 and [c.table_part for c in parts] == list(range(len(parts)))
        assert all(body(c).startswith("| h1 | h2 |\n|---|---|\n") for c in parts)
        assert all(a.char_end < b.char_start for a, b in zip(parts, parts[1:]))


def test_a_split_pipe_table_part_spans_its_own_source_lines():
    # Rows as people write them: padded cells, no closing pipe, cells past the header's columns
    # (the parser drops them), a <br> in a cell, a code span with angle brackets. Each part spans
    # from its first row's first character to its last row's last kept one, never a neighbour's pipe.
    rows = []
    for i in range(30):
        kind = i % 5
        if kind == 0:
            rows.append(f"| r{i}   | {_words(i, 12)}   |")
        elif kind == 1:
            rows.append(f"| r{i} | {_words(i, 12)}")  # no closing pipe
        elif kind == 2:
            rows.append(f"| r{i} | {_words(i, 12)} | extra {i} | |")  # cells past the header's columns
        elif kind == 3:
            rows.append(f"| r{i} | {_words(i, 6)}<br>{_words(i + 1, 6)} |")
        else:
            rows.append(f"| r{i} | `<host>:<port>` {_words(i, 10)} |")
    text = "# T\n\n| name | value |\n|:-----|------:|\n" + "\n".join(rows) + "\n"
    doc = parse_document(text.encode(), "x.md")
    starts = [text.index(r) for r in rows]
    kept = [s + len(r.split(" | extra")[0]) + (2 if " | extra" in r else 0) for s, r in zip(starts, rows)]
    for counter in (MINILM, CL100K):
        # Not assert_exact: the span of a part is contiguous, so it holds the dropped cells of its rows
        # before the last, words its body lacks.
        parts = [c for c in chunk_document(doc, Profile(max_tokens=96), counter) if c.table_id]
        assert len(parts) > 4
        assert parts[0].char_start == text.index("| name")
        for c in parts:
            own = [i for i, r in enumerate(rows) if f"| r{i} " in body(c)]
            assert c.char_end == kept[own[-1]], (c.table_part, text[c.char_start : c.char_end][-30:])
            if c.table_part:
                assert c.char_start == starts[own[0]]
        assert all(a.char_end < b.char_start for a, b in zip(parts, parts[1:]))
        # Without the dropped cells and the tags every part's span is tight: its words are its body's.
        plain = text.replace(" | extra ", " ").replace(" | |", " |").replace("<br>", " ")
        assert_exact(parse_document(plain.encode(), "y.md"), Profile(max_tokens=96), counter)
    whole = parse_document(b"| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4\n", "w.md")
    (c,) = chunk_document(whole, Profile(), CL100K)
    assert (c.char_start, c.char_end) == (0, len("| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4"))


def test_long_heading_is_cut_to_its_share_keeping_title_and_nearest():
    heading = _words(1, 120)
    doc = parse_document(
        f"# Title\n\n## {heading}\n\n### Mid\n\n#### Nearest\n\n{_prose(0, 30)}\n".encode(), "x.md"
    )
    for counter in (MINILM, CL100K):
        profile = Profile(max_tokens=128)
        chunks = assert_exact(doc, profile, counter)
        assert len(chunks) < 10 and all(c.n_tokens <= 128 for c in chunks)
        assert all(c.header.startswith("Title > ") and c.header.endswith(" > Nearest") for c in chunks)
        assert all("…" in c.header and c.header_tokens <= 32 for c in chunks)
    only = parse_document(f"# {heading}\n\n{_prose(0, 5)}\n".encode(), "x.md")
    (c,) = chunk_document(only, Profile(max_tokens=128), MINILM)
    assert c.header.endswith("…") and c.header_tokens <= 32


def test_ids_depend_on_the_tokenizer():
    doc = parse_document(f"# T\n\n{_prose(0, 5)}\n".encode(), "x.md")
    a = chunk_document(doc, Profile(), MINILM)
    b = chunk_document(doc, Profile(), CL100K)
    assert (
        a[0].chunk_id != b[0].chunk_id and a[0].chunk_id == chunk_document(doc, Profile(), MINILM)[0].chunk_id
    )


def test_profiles_are_checked_against_the_embedder_limit(caplog):
    caplog.set_level("WARNING", logger="raychunk")  # whatever level an earlier in-process CLI left
    assert MINILM.max_input == 254
    assert check_profiles({"prose": Profile(max_tokens=254)}, MINILM) == []
    with pytest.raises(ValueError, match=r"'prose'.*table_max_tokens=300.*254"):
        check_profiles({"prose": Profile(max_tokens=200, table_max_tokens=300)}, MINILM)
    (warning,) = check_profiles({"faq": Profile(max_tokens=512, allow_over_limit=True)}, MINILM)
    assert "'faq'" in warning and "254" in warning and "allow_over_limit" in caplog.text
    assert check_profiles({"faq": Profile(max_tokens=4096)}, CL100K) == []  # no limit known


def test_shipped_doc_types_fit_the_default_embedder():
    from raychunk.config import build_run_config, load_config
    from raychunk.plan import resolve_plan

    assert resolve_plan(build_run_config(load_config())).warnings == ()


# -- the baseline: a few known answers (unstructured is too slow for many examples) --------------


def test_baseline_pieces_of_a_long_list_item_span_their_own_parts():
    item = _prose(0, 60)
    doc = parse_document(f"# Title\n\n- {item}\n\nAfter it.\n".encode(), "x.md")
    chunks = chunk_document(doc, Profile(strategy="unstructured_by_title", max_tokens=64), MINILM)
    pieces = [c for c in chunks if c.text != "After it." and "Title" not in c.text[:5]]
    assert len(pieces) > 3 and len({c.chunk_id for c in chunks}) == len(chunks)
    assert [doc.text[c.char_start : c.char_end] for c in pieces] == [c.text for c in pieces]
    assert all(a.char_end < b.char_start for a, b in zip(pieces, pieces[1:]))


def test_baseline_repeated_paragraphs_get_distinct_ids():
    para = _prose(3, 2)
    doc = parse_document(f"# T\n\n{para}\n\n## U\n\n{para}\n\n## V\n\n{para}\n".encode(), "x.md")
    chunks = chunk_document(doc, Profile(strategy="unstructured_by_title", max_tokens=64), MINILM)
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    assert all(doc.text[c.char_start : c.char_end].endswith(para) for c in chunks)
