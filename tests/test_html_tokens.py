"""The HTML parse's tokenizer (``parse.html._Tokens``) against the standard library's ``html.parser``:
the same events with the same arguments, start-tag text and offsets, on every HTML file of the
shared corpus (its hostile files included) and on generated tag soup that leans on the edges of
the common-shape start tag (bare values against ``/>``, ``=`` runs, non-ASCII whitespace, quotes
next to names, ``<script>`` content, tags cut off by the end)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from raychunk.parse.detect import decode_text
from raychunk.parse.html import _SIMPLE_TAG, _Tokens

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _recorder(base: type) -> type:
    class Recorder(base):
        def __init__(self, text: str):
            super().__init__() if base is _Tokens else super().__init__(convert_charrefs=True)
            self.events: list[tuple] = []
            self.lines = [0] + [m.end() for m in re.finditer("\n", text)]

        def at(self) -> int:
            if base is _Tokens:
                return self.event_start()
            line, col = self.getpos()
            return self.lines[line - 1] + col

        def handle_starttag(self, tag, attrs):
            self.events.append(("start", self.at(), tag, attrs, self.get_starttag_text()))

        def handle_startendtag(self, tag, attrs):
            self.events.append(("startend", self.at(), tag, attrs, self.get_starttag_text()))

        def handle_endtag(self, tag):
            self.events.append(("end", self.at(), tag))

        def handle_data(self, data):
            self.events.append(("data", self.at(), data))

        def handle_comment(self, data):
            self.events.append(("comment", self.at(), data))

        def handle_decl(self, decl):
            self.events.append(("decl", self.at(), decl))

        def handle_pi(self, data):
            self.events.append(("pi", self.at(), data))

        def unknown_decl(self, data):
            self.events.append(("unknown", self.at(), data))

    return Recorder


_FAST, _STDLIB = _recorder(_Tokens), _recorder(HTMLParser)


def _events(cls: type, text: str, pieces: int = 1) -> list[tuple]:
    p = cls(text)
    step = max(1, len(text) // pieces)
    for i in range(0, len(text), step):
        p.feed(text[i : i + step])
    p.close()
    return p.events


def _same(text: str, pieces: int = 1) -> None:
    assert _events(_FAST, text, pieces) == _events(_STDLIB, text, pieces)


def _html_files() -> list[Path]:
    return sorted(
        p for p in CORPUS.rglob("*") if p.is_file() and p.suffix.lower() in (".html", ".htm", ".xhtml")
    )


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not checked out next to the repo")
def test_corpus_html_gives_the_same_events():
    files = _html_files()
    assert len(files) >= 20
    fast_tags = 0
    for path in files:
        try:
            text = decode_text(path.read_bytes(), html=True)[0]
        except ValueError:  # a hostile file that is not text
            continue
        _same(text)
        fast_tags += sum(1 for _ in _SIMPLE_TAG.finditer(text))
    assert fast_tags > 10_000  # the common shape is the common case, not a path never taken


@pytest.mark.parametrize(
    "text",
    [
        '<img src=x/><br/><br /><hr/ ><p class="a"/>',  # a bare value takes the slash
        "<a href=x>t</a><a href= x >t</a><a href = 'x'>t</a>",
        '<a href="x"/>t<a b=c d e="f" g=\'h\'>',
        "<a b==c>t<a b=>t<a =b>t<a b=c=d>t<a b=`c`>t",
        "<a b=\"c\"d=e>t<a b='c'/d>t<div\xa0class=x>t<div class\xa0=x>t<div class=x\xa0y>t",
        "<div\vclass=x>t<div\x0bid=y>t<DIV CLASS=X ID='&amp;&lt;'>t</DIV>",
        "<script>if (a<b) { x = '</p>' }</script><p>after<style>p{}</style>",
        "<script type=text/javascript>x</scr</script ><p>t",
        "<p>a &amp; b &#169; &copy &unknown; <b>c</b></p>",
        "<x-y data-a=1 v-on:click=f @click=g :prop=h _u=i>t</x-y>",
        "<p>cut off <a href='x",
        "<p>cut off <a href=x",
        "<p>t</p><!-- c --><!DOCTYPE html><?pi x?><![CDATA[z]]><!bogus></ p></>",
        "<p a b c>t<p a= b>t<p a =\nb\n>t<p\n\ta\r\n=\r\n'b'\r\n/>",
        "a < b > c <1 <p>",
        "<p title='a>b'>t<p title=\"a>b\"/>t",
    ],
)
def test_edges_give_the_same_events(text):
    _same(text)
    _same(text, pieces=5)  # fed in pieces: a tag cut by a feed boundary waits for the rest


_TAG = st.sampled_from(["p", "a", "div", "img", "br", "script", "style", "x-y", "TD", "h1"])
_NAME = st.sampled_from(["href", "class", "data-x", "v:on", "@c", "_u", "A", "b", "x.y"])
_VALUE = st.sampled_from(
    ['"q v"', "'q'", "x", "x/", "a=b", "", '"a>b"', "&amp;", "`t`", "a\xa0b", '"&lt;&#62;"', "/"]
)
_SPACE = st.sampled_from([" ", "  ", "\n", "\t", "\r\n", "\f", "\v", "\xa0", ""])
_EQ = st.sampled_from(["=", " = ", "==", "=\n", "\xa0=", ""])


@st.composite
def _start_tag(draw) -> str:
    out = "<" + draw(_TAG)
    for _ in range(draw(st.integers(0, 3))):
        out += draw(_SPACE) + draw(_NAME)
        if draw(st.booleans()):
            out += draw(_EQ) + draw(_VALUE)
    return out + draw(_SPACE) + draw(st.sampled_from([">", "/>", " />", "/ >", "", ">"]))


_PIECE = st.one_of(
    _start_tag(),
    _TAG.map(lambda t: f"</{t}>"),
    _TAG.map(lambda t: f"</ {t} x>"),
    st.sampled_from(["text ", "a &amp; b", " < ", "&", "<!-- c -->", "<!x>", "<?p?>", "\n", "</>", "<"]),
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECE, max_size=14), st.integers(1, 4))
def test_tag_soup_gives_the_same_events(pieces, feeds):
    _same("".join(pieces), pieces=feeds)
