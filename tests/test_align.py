"""``align``: where each word of a rendering comes from in its source, known answers. The words of the
two texts are read once, in step, and the one-to-one mapping is left as soon as they differ, so the
answers below hold where they differ early, late (past a long stretch of the same characters) or
only at the end."""

from raychunk.chunking.align import align

PROSE = " ".join(f"word{i} and more" for i in range(40))  # well over the stretch the aligner skips


def _span(rendered: str, source: str, part: str, *, markup: str = "", base: int = 0) -> str:
    a = rendered.index(part)
    s, e = align(rendered, source, base, markup=markup).span(a, a + len(part))
    return source[s - base : e - base]


def test_html_words_map_through_tags_and_entities():
    source = "<p id='r'>Refunds are <b>paid</b> within ten days &amp; more.</p>"
    rendered = "Refunds are paid within ten days & more."
    assert _span(rendered, source, "paid", markup="source") == "paid"
    assert _span(rendered, source, "within ten days", markup="source") == "within ten days"
    whole = align(rendered, source, 100, markup="source").span(0, len(rendered))
    assert whole == (100 + source.index("Refunds"), 100 + source.index("more.") + len("more."))


def test_html_runs_cross_tags_only_where_the_source_has_them():
    # Long stretches of the same text between tags are matched whole, then cut at each tag.
    source = (
        "<div><p class='x'>" + PROSE + " <b>bold</b> AT&amp;T<br>next&nbsp;word <a href='u'>link"
        "</a>.</p><!-- note --></div>"
    )
    rendered = PROSE + " bold AT&T next word link."
    expected = {
        "word0 and more": "word0 and more",
        "word39 and more bold": "word39 and more <b>bold",
        "bold": "bold",
        "AT": "AT",
        "T next": "T<br>next",
        "word link.": "word <a href='u'>link</a>.",
    }
    for part, held in expected.items():
        assert _span(rendered, source, part, markup="source", base=7) == held
    s, e = align(rendered, source, 7, markup="source").span(0, len(rendered))
    assert (s - 7, e - 7) == (source.index("word0"), source.index("</a>.") + 5)


def test_a_word_only_the_source_has_after_a_long_same_stretch():
    rendered = PROSE + " zeta closes it."
    source = PROSE + " extra zeta closes it."
    assert _span(rendered, source, "zeta closes") == "zeta closes"
    assert _span(rendered, source, "word39") == "word39"


def test_a_word_only_the_source_has_at_the_start_or_the_end():
    assert _span("b c d", "a b c d", "b c") == "b c"
    assert _span("b c d e", "a b c d", "c d") == "c d"  # as many words, one apart
    assert _span("a b c", "a x c", "b") == ""  # a word of the rendering's own spans nothing
    assert _span("a b c", "a b c d", "c") == "c"
    rendered = "| r1 | one |\n| r2 | two |"
    source = "| r1 | one | dropped |\n| r2 | two |"
    assert _span(rendered, source, "r2 | two", markup="both") == "r2 | two"


def test_a_record_is_mapped_by_its_values_only_where_they_stand_verbatim():
    from raychunk.chunking.align import record_alignment

    def spans(rendered, names, cells, source, keyed=False):
        a = record_alignment(rendered, names, cells, source, 0, len(source), keyed=keyed)
        return (
            None
            if a is None
            else [source[s : s + e - r] for r, e, s in zip(a.r_starts, a.r_ends, a.s_starts)]
        )

    # A TSV row: the values where they stand; the keys are context.
    assert spans("name: a name\nsize: 0", ("name", "size"), ("a name", "0"), "a name\t0") == ["a name", "0"]
    # An empty cell is not rendered; a value is never found inside a longer word or number.
    assert spans("a: 1\nc: 0", ("a", "b", "c"), ("1", "", "0"), "1\t10\t0") is None
    assert spans("a: 1\nc: 0", ("a", "b", "c"), ("1", "", "0"), "1\t\t0") == ["1", "0"]
    # A JSON object: its keys and colons are in the source too.
    src = '{"url": "https://x.org/a", "n": 5}'
    assert spans("url: https://x.org/a\nn: 5", ("url", "n"), ("https://x.org/a", "5"), src, keyed=True) == [
        "url",
        ":",
        "https://x.org/a",
        "n",
        ":",
        "5",
    ]
    # Left to the word aligner: a value escaped or quoted in its source, one with no word in it,
    # a member with no value between two, a key equal to its value.
    assert spans('q: say "hi"', ("q",), ('say "hi"',), '"say ""hi"""') is None
    assert spans("a: x\nb: -", ("a", "b"), ("x", "-"), "x,-") is None
    assert spans("a: x\nc: y", ("a", "c"), ("x", "y"), '{"a": "x", "b": null, "c": "y"}', keyed=True) is None
    assert spans("name: name", ("name",), ("name",), '{"name": "name"}', keyed=True) == ["name", ":", "name"]


def test_a_json_string_value_maps_through_its_escapes():
    from raychunk.chunking.align import record_alignment

    line = (
        '{"id": "a-1", "text": "First  para.\\n\\nSecond \\"quoted\\" one: it\\u2019s \\ud83d\\ude00 done."}'
    )
    value = 'First para. Second "quoted" one: it’s 😀 done.'
    rendered = f"id: a-1\ntext: {value}"
    a = record_alignment(rendered, ("id", "text"), ("a-1", value), line, 0, len(line), keyed=True)
    assert a is not None

    def source(part: str) -> str:
        at = rendered.index(part)
        s, e = a.span(at, at + len(part))
        return line[s:e]

    assert source("First para.") == "First  para."
    assert source("Second") == "Second"
    assert (
        source('"quoted"') == '"quoted\\"'
    )  # an escaped quote is its quote; the opening one's backslash is left out
    assert source("it’s 😀 done.") == "it\\u2019s \\ud83d\\ude00 done."  # \\u escapes inside a span are in it
    assert source("done.") == "done."
    assert source(rendered) == line[2:-2]
    # a value that is not what the string reads as is left to the word aligner
    wrong = rendered.replace("Second", "Third")
    assert (
        record_alignment(
            wrong, ("id", "text"), ("a-1", value.replace("Second", "Third")), line, 0, len(line), keyed=True
        )
        is None
    )
