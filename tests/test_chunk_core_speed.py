"""The chunk core's speed-ups give what the plain forms give: the exact-cut search by ``str.find``
is the regex's, remembered join costs are the counted ones, and pausing the cycle collector while a
document is packed leaves the collector as it found it. (Their speed: ``benchmarks/chunk_speed.py``;
the whole output before and after: ``scripts/chunk_dump.py``.)"""

import gc
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raychunk.chunking import Profile, chunk_document, costs
from raychunk.parse import parse_document
from raychunk.tokens import CachedCounter, load_counter

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not present at {CORPUS}")
CL100K = load_counter("tiktoken:cl100k_base")

# The definitions: a space after a non-space, or a non-space after a line break.
EXACT_CUT = re.compile(r"(?<=\S) |(?<=[\r\n])\S")
LAST_EXACT_CUT = re.compile(r"(?s:.*)(?:(?<=\S) |(?<=[\r\n])\S)")


def first_cut(text: str) -> int:
    m = EXACT_CUT.search(text)
    return m.start() if m else -1


def last_cut(text: str) -> int:
    m = LAST_EXACT_CUT.match(text)
    return m.end() - 1 if m else -1


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=" \n\r\t\x0b\x85\u3000\u00a0ab.|", max_size=24))
def test_exact_cut_search_is_the_regex(text):
    assert costs._first_cut(text) == first_cut(text)
    assert costs._last_cut(text) == last_cut(text)


@needs_corpus
def test_exact_cut_search_on_corpus_lines():
    n = 0
    for path in sorted((CORPUS / "md").glob("*.md"))[:8]:
        text = path.read_text(encoding="utf-8", errors="replace")
        for k in range(0, len(text), 97):
            piece = text[k : k + 160]
            assert costs._first_cut(piece) == first_cut(piece), (path.name, k)
            assert costs._last_cut(piece) == last_cut(piece), (path.name, k)
            n += 1
    assert n > 1000


def _corpus_doc(name: str):
    path = CORPUS / "md" / name
    return parse_document(path.read_bytes(), str(path))


@needs_corpus
def test_remembered_join_costs_are_the_counted_ones(monkeypatch):
    """The same chunks (texts, spans, counts, ids) with join costs remembered and without."""
    parsed = [_corpus_doc(p.name) for p in sorted((CORPUS / "md").glob("*.md"))[:6]]
    profile = Profile(strategy="structure", max_tokens=128)

    def chunks():
        return [[c.to_dict() for c in chunk_document(p, profile, CachedCounter(CL100K))] for p in parsed]

    remembered = chunks()
    monkeypatch.setattr(costs, "_SEEN", 0)
    assert chunks() == remembered
    assert sum(map(len, remembered)) > 50


@needs_corpus
def test_collector_left_as_found():
    parsed = _corpus_doc(sorted((CORPUS / "md").glob("*.md"))[0].name)
    profile = Profile(strategy="structure", max_tokens=256)
    assert gc.isenabled()
    assert chunk_document(parsed, profile, CL100K)
    assert gc.isenabled()
    gc.disable()
    try:
        assert chunk_document(parsed, profile, CL100K)
        assert not gc.isenabled()
    finally:
        gc.enable()


@settings(max_examples=4000, deadline=None)
@given(
    st.text(alphabet="ab9.|)*: \n\t\u3000\u00a0文。", max_size=14),
    st.sampled_from(["\n", "\n\n", " ", "\n ", " \n"]),
    st.text(alphabet="ab9.|( \n\u3000文", max_size=8),
)
def test_line_join_is_the_general_edges(left, sep, right):
    """Where the line-break shortcut answers, it is the key the exact-cut search finds."""
    found = costs._line_join(left, sep, right)
    if found is not None:
        a, b = costs.join_edges(left, sep, right, exact=True)
        assert found == (a, sep, b)


def test_line_join_answers_the_common_joins():
    assert costs._line_join("a row | x |", "\n", "| next |") == (" |", "\n", "")
    assert costs._line_join("It ends.", "\n\n", "Next") == (".", "\n\n", "")
    assert costs._line_join("word", "\n", "- item") == ("", "\n", "")
    assert costs._line_join("文档。", "\n\n", "Next") is None  # not ASCII: the search decides
    assert costs._line_join("It ends.", "\n\n", " indented") is None
    assert costs._line_join("...", "\n", "x") is None  # a run of punctuation alone


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.text(alphabet="ab9.|)*: \n\u3000文。", min_size=1, max_size=10), min_size=2, max_size=5),
    st.lists(st.sampled_from(["\n", "\n\n", " ", "\n "]), min_size=4, max_size=4),
)
def test_joined_count_is_the_count_of_the_joined_text(texts, seps):
    """A chunk's count from its parts' counts and its joins' edges (line breaks by the shortcut) is
    the count of its text, wherever it gives one."""
    seps = seps[: len(texts) - 1]
    counter = CachedCounter(CL100K)
    n = costs.TokenCosts(counter).joined_count(texts, seps, counter.count_batch(texts))
    whole = texts[0] + "".join(sep + t for sep, t in zip(seps, texts[1:]))
    assert n is None or n == CL100K.count(whole)


@needs_corpus
def test_line_join_shortcut_changes_no_chunk(monkeypatch):
    """The same chunks (texts, spans, counts, ids) with the line-break shortcut and without, on
    corpus pages with tables (rows joined by line breaks), lists and CJK text."""
    names = [
        "public-apis-README.md",
        "system-design-primer-README-zh-Hans.md",
        "mkdocs-user-guide-configuration.md",
    ]
    parsed = [_corpus_doc(n) for n in names]
    profile = Profile(strategy="structure", max_tokens=256)
    hits = []
    line_tail = costs._line_tail

    def counted(left):
        found = line_tail(left)
        hits.append(found is not None)
        return found

    def chunks():
        return [[c.to_dict() for c in chunk_document(p, profile, CachedCounter(CL100K))] for p in parsed]

    monkeypatch.setattr(costs, "_line_tail", counted)
    fast = chunks()
    monkeypatch.setattr(costs, "_line_tail", lambda left: None)
    assert chunks() == fast
    assert sum(hits) > 1000 and sum(map(len, fast)) > 100
