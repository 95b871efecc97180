"""Spans over text the parser dropped, and the span check on escaped markup: known answers on short
excerpts of real corpus documents (``../shared/corpus``; licences in its ``_licenses/``:
open-telemetry/opentelemetry-specification and mozilla/readability Apache-2.0, fastapi/fastapi MIT,
bminor/bash GNU FDL 1.3).

- A chunk's span is contiguous, so a chunk that holds two blocks claims what lies between them:
  markdown link reference definitions, an HTML page's navigation. It may claim only a few such
  words (``packing.Packer.bridges``), and a new chunk starts where it would claim more.
- The span check reads markup as markup only where the document holds it as markup: an HTML page's
  ``&lt;newline&gt;`` is the word ``newline`` in its source and in its parsed text alike.
"""

import pytest

from raychunk.chunking import Profile, chunk_document
from raychunk.evaluation.spans import check_chunk
from raychunk.parse import parse_document
from raychunk.tokens import load_counter

MINILM = load_counter("all-MiniLM-L6-v2")
SETTINGS = [(s, n, o) for s in ("structure", "fixed") for n in (64, 128, 256) for o in (0, 0.2)]

# open-telemetry/opentelemetry-specification, specification/trace/sdk.md: link reference definitions
# between a paragraph and the next heading.
OTEL_TRACE_SDK = """\
This specification recommends the use of either TraceID randomness or explicit randomness,
which ensures that samplers always have sufficient randomness when using W3C Trace Context propagation.

[W3CCONTEXTLEVEL2]: https://www.w3.org/TR/trace-context-2/
[W3CCONTEXTLEVEL1]: https://www.w3.org/TR/trace-context/
[W3CCONTEXTTRACEID]: https://www.w3.org/TR/trace-context-2/#randomness-of-trace-id
[W3CCONTEXTTRACESTATE]: https://www.w3.org/TR/trace-context-2/#tracestate-header
[W3CCONTEXTSAMPLEDFLAG]: https://www.w3.org/TR/trace-context-2/#sampled-flag
[W3CCONTEXTRANDOMFLAG]: https://www.w3.org/TR/trace-context-2/#random-trace-id-flag
[OTELRVALUE]: ./tracestate-handling.md#explicit-randomness-value-rv

#### TraceID randomness

For root span contexts, the SDK SHOULD implement the TraceID randomness requirements of the [W3C Trace Context Level 2][W3CCONTEXTTRACEID] Candidate Recommendation when generating TraceID values.
"""

# mozilla/readability, test/test-pages/google-sre-book-1/source.html: the chapter title, the site's
# chapter menu (dropped as navigation; its first items), then the chapter.
SRE_BOOK = """\
<!DOCTYPE html>
<html lang="en"><head><title>Google - Site Reliability Engineering</title></head>
    <body>
        <main>
            <div ng-controller="HeaderCtrl as headerCtrl">
                <div class="header clearfix">
                    <a id="burger-menu" class="expand"></a>
                    <h2 class="chapter-title">
                        Chapter 6 - Monitoring Distributed Systems
                    </h2>
                </div>
                <div id="overlay-element" class="expands">
                    <ol id="drop-down" class="dropdown-content hide">
                        <li>
                            <a class="menu-buttons" href="/sre/sre-book/toc/">Table of Contents</a>
                        </li>
                        <li>
                            <a href="/sre/sre-book/chapters/foreword" class="menu-buttons">Foreword</a>
                        </li>
                        <li>
                            <a href="/sre/sre-book/chapters/preface" class="menu-buttons">Preface</a>
                        </li>
                        <li>
                            <a href="/sre/sre-book/chapters/part1" class="menu-buttons">Part I - Introduction</a>
                        </li>
                        <li>
                            <a href="/sre/sre-book/chapters/introduction" class="menu-buttons">1. Introduction</a>
                        </li>
                        <li>
                            <a href="/sre/sre-book/chapters/production-environment" class="menu-buttons">2. The Production Environment at Google, from the Viewpoint of an SRE</a>
                        </li>
                        <li>
                            <a href="/sre/sre-book/chapters/part2" class="menu-buttons">Part II - Principles</a>
                        </li>
                        <li>
                            <a href="/sre/sre-book/chapters/embracing-risk" class="menu-buttons">3. Embracing Risk</a>
                        </li>
                        <li>
                            <a href="/sre/sre-book/chapters/service-level-objectives" class="menu-buttons">4. Service Level Objectives</a>
                        </li>
                    </ol>
                </div>
            </div>
            <div id="maia-main" role="main">
                <div class="content">
                    <section data-type="chapter" id="chapter_monitoring">
                        <h1 class="heading jumptargets">
                            Monitoring Distributed Systems
                        </h1>
                        <p class="byline author">
                            Written by Rob Ewaschuk<br />
                            Edited by Betsy Beyer
                        </p>
                        <p>
                            Google’s SRE teams have some basic principles and best practices for building successful monitoring and alerting systems. This chapter offers guidelines for what issues should interrupt a human via a page, and how to deal with issues that aren’t serious enough to trigger a page.
                        </p>
                    </section>
                </div>
            </div>
        </main>
    </body>
</html>
"""

# fastapi/fastapi, docs/en/docs/index.md: a code fence whose info string holds seven words.
FASTAPI_INDEX = """\
## Example upgrade { #example-upgrade }

Now modify the file `main.py` to receive a body from a `PUT` request.

Declare the body using standard Python types, thanks to Pydantic.

```Python hl_lines="2  7-10 23-25"
from fastapi import FastAPI
from pydantic import BaseModel

app = FastAPI()


class Item(BaseModel):
    name: str
    price: float
    is_offer: bool | None = None


@app.get("/")
def read_root():
    return {"Hello": "World"}
```

The `fastapi dev` server should reload automatically.
"""

# bminor/bash, doc/bash.html (the corpus's bash.1.html): escaped angle brackets in the text.
BASH_1 = """\
<HTML><HEAD><TITLE>BASH(1) Manual Page</TITLE></HEAD><BODY>
<H3>DEFINITIONS</H3>
<DL COMPACT>
<DT><B>metacharacter</B>

<DD>
A character that, when unquoted, separates words.
One of the following:
<BR>

<DL COMPACT><DT><DD>
<P>

<B>|  &amp;  ;  (  )  &lt;  &gt;  space  tab  newline</B>

</DL>

<DT><B>control operator</B>

<DD>
A <I>token</I> that performs a control function.
It is one of the following symbols:
<DL COMPACT><DT><DD>
<P>

<B>||  &amp;  &amp;&amp;  ;  ;;  ;&amp;  ;;&amp;  (  )  |  |&amp;    &lt;newline&gt;</B>

</DL>


</DL>
<A NAME="lbAJ">&nbsp;</A>
<H3>RESERVED WORDS</H3>

<I>Reserved words</I> are words that have a special meaning to the shell.
<A NAME="lbBK">&nbsp;</A>
<H4>Redirecting Input</H4>

The general format for redirecting input is:
<DL COMPACT><DT><DD>
<P>

[<I>n</I>]<B>&lt;</B><I>word</I>
</DL>

<A NAME="lbBL">&nbsp;</A>
<H4>Redirecting Output</H4>

Redirecting output opens the file whose name results from
the expansion of
<I>word</I>

for writing on file descriptor
<I>n</I>,

or the standard output (file descriptor 1) if
<I>n</I>

is not specified.
<P>

The general format for redirecting output is:
<DL COMPACT><DT><DD>
<P>

[<I>n</I>]<B>&gt;</B><I>word</I>
</DL>
</BODY></HTML>
"""


def _chunks(text: str, name: str, strategy: str, size: int, overlap: float = 0):
    parsed = parse_document(text.encode(), name)
    assert parsed.document.status == "ok", parsed.document.reason
    profile = Profile(strategy=strategy, max_tokens=size, overlap=overlap)
    return parsed.text, chunk_document(parsed, profile, MINILM)


def _failures(text: str, chunks) -> list[str]:
    return [f"{c.chunk_index}: {why}" for c in chunks if (why := check_chunk(text, c.to_dict()))]


def test_a_window_does_not_span_markdown_link_definitions():
    text, chunks = _chunks(OTEL_TRACE_SDK, "sdk.md", "fixed", 256)
    assert _failures(text, chunks) == []
    defs = text.index("[W3CCONTEXTLEVEL2]:"), text.index("[OTELRVALUE]:")
    assert not [c for c in chunks if c.char_start < defs[1] and c.char_end > defs[0]]
    # The paragraph before the definitions, and the heading and paragraph after them.
    assert [c.text.split("\n\n", 1)[1][:30] for c in chunks] == [
        "This specification recommends ",
        "TraceID randomness\n\nFor root s",
    ]


def test_a_window_does_not_span_a_pages_dropped_navigation():
    text, chunks = _chunks(SRE_BOOK, "sre.html", "fixed", 256)
    assert _failures(text, chunks) == []
    menu = text.index('<ol id="drop-down"'), text.index("</ol>")
    assert not [c for c in chunks if c.char_start < menu[0] and c.char_end > menu[1]]
    assert chunks[0].text.endswith("\n\nChapter 6 - Monitoring Distributed Systems")
    assert "Google’s SRE teams" in chunks[1].text


@pytest.mark.parametrize(("strategy", "size", "overlap"), SETTINGS)
def test_every_chunk_of_the_excerpts_holds_its_body(strategy, size, overlap):
    for doc, name in ((OTEL_TRACE_SDK, "sdk.md"), (SRE_BOOK, "sre.html"), (BASH_1, "bash.1.html")):
        text, chunks = _chunks(doc, name, strategy, size, overlap)
        assert chunks
        assert _failures(text, chunks) == [], name


@pytest.mark.parametrize("strategy", ["structure", "fixed"])
def test_a_code_fences_few_info_words_do_not_part_it_from_its_prose(strategy):
    # Seven words of info string between a paragraph and its code are within what a chunk of this
    # size may claim: the code stays with the sentence that introduces it.
    text, chunks = _chunks(FASTAPI_INDEX, "index.md", strategy, 256)
    assert _failures(text, chunks) == []
    assert any("Declare the body" in c.text and "class Item(BaseModel)" in c.text for c in chunks)


def test_escaped_angle_brackets_are_words_in_the_span_and_in_the_body():
    text, chunks = _chunks(BASH_1, "bash.1.html", "structure", 256)
    (last,) = [c for c in chunks if c.text.endswith("<newline>")]
    assert check_chunk(text, last.to_dict()) is None
    # Its span closes on ``newline`` (before the ``&gt;`` entity); one word further fails.
    assert text[: last.char_end].endswith("&lt;newline")
    later = text.index("RESERVED WORDS", last.char_end) + len("RESERVED")
    assert "runs 1 word past the body (...'reserved')" in check_chunk(
        text, {**last.to_dict(), "char_end": later}
    )


def test_escaped_brackets_across_blocks_are_not_read_as_one_tag():
    # ``[n]<word`` ... ``[n]>word`` in the parsed text: a tag to a regex, text to a reader.
    text, chunks = _chunks(BASH_1, "bash.1.html", "fixed", 128, 0.2)
    (both,) = [c for c in chunks if "[n]<word" in c.text and "[n]>word" in c.text]
    assert check_chunk(text, both.to_dict()) is None
    assert check_chunk(text, {**both.to_dict(), "char_end": text.index("Redirecting Output")}).startswith(
        "body word"
    )


def test_a_tag_like_run_over_list_items_is_markup_in_both_span_and_body():
    # bminor/bash, doc/bashref.pdf as extracted: ``{var}<word`` ... ``‘>|’`` reads as one tag, which
    # the body (list items, rendered with markers) holds with other separators than the span.
    items = [
        "Bash provides the {var}<word capability to have the shell allocate file descriptors for "
        "redirections and assign them to var (see Section 3.6 [Redirections], page 41).",
        "Bash can open network connections to arbitrary machines and services with the redirection "
        "operators (see Section 3.6 [Redirections], page 41).",
        "The noclobber option is available to avoid overwriting existing files with output redirection "
        "(see Section 4.3.1 [The Set Builtin], page 74). The ‘>|’ redirection operator may be used to "
        "override noclobber.",
    ]
    doc = "10.8 Optional Features\n\n" + "\n\n".join(items)
    chunk = {
        "text": "Bash > 10.8 Optional Features\n\n" + "\n".join("- " + i for i in items),
        "header": "Bash > 10.8 Optional Features",
        "char_start": doc.index("Bash provides"),
        "char_end": len(doc),
    }
    assert check_chunk(doc, chunk) is None
    assert "starts 4 words before" in check_chunk(doc, {**chunk, "char_start": 0})


def test_the_sweep_script_checks_every_setting_and_exits_0_when_all_hold(tmp_path, capsys):
    import importlib.util

    spec = importlib.util.spec_from_file_location("span_sweep", "scripts/span_sweep.py")
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    (tmp_path / "sdk.md").write_text(OTEL_TRACE_SDK)
    (tmp_path / "bash.1.html").write_text(BASH_1)
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"source": "sdk.md"}\n{"source": "sdk.md"}\n')
    args = ["--labels", str(labels), "--corpus", str(tmp_path), "--sizes", "64,128", "--overlaps", "0,0.2"]
    assert sweep.main([str(tmp_path / "bash.1.html"), *args]) == 0
    out = capsys.readouterr().out
    assert "2 documents x 12 settings" in out and ", 0 failed" in out
