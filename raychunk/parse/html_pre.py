"""A page whose body is preformatted text (an IETF draft as a run of ``<pre>`` pages): its ``<pre>``
blocks read by the plain-text parser's rules (``text_blocks``: numbered section lines as headings,
paragraphs at blank lines, bullet lines as list items), spans mapped back into the HTML source.

A ``<pre>`` with a language (``class="language-python"``) or whose lines read as code stays code, and
so does every ``<pre>`` of a page whose other preformatted blocks hold half of its visible text or
less (code samples in an article).
"""

from __future__ import annotations

import html
import re

from raychunk.parse._common import clean_text
from raychunk.parse.text import text_blocks
from raychunk.render import squash

__all__ = ["preformatted_body"]

# What the browser does not show inside a <pre>: comments, tags, declarations; and character
# references, shown decoded.
_MARKUP = re.compile(
    r"<!--.*?(?:-->|\Z)|</?[A-Za-z][^>]*>?|<[!?][^>]*>?|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);?",
    re.S,
)


def preformatted_body(source: str, ops: list[tuple]) -> list[tuple]:
    """``ops`` (``html.py``'s output ops) with each ``<pre>`` block read as plain text when the
    ``<pre>`` blocks without a language hold more than half of the page's visible text."""
    pre = {id(op) for op in ops if op[0] == "code" and not op[5] and not _reads_as_code(op[1])}
    if not pre or 2 * sum(len(op[1]) for op in ops if id(op) in pre) <= sum(len(op[1]) for op in ops):
        return ops
    out: list[tuple] = []
    for op in ops:
        if id(op) not in pre:
            out.append(op)
            continue
        visible, starts, ends = _visible(source, op[2], op[3])
        if squash(clean_text(visible)) != squash(op[1]):  # tag soup inside the <pre>: kept as it was
            out.append(op)
            continue
        for b in text_blocks(visible):
            s, e = starts[b.char_start], ends[b.char_end - 1]
            out.append((b.kind, b.text, s, e, b.level, None, (), 0, 0, "", ()))
    return out


_DRAFT_PAGE = re.compile(r"\[Page \d+\][ \t]*$|^(?:Internet-Draft|RFC \d+) ", re.M)


def _reads_as_code(text: str) -> bool:
    """Code, though no language is named: two in five of its lines end in ``;``, ``{`` or ``}`` or
    open a C directive or comment (a Texinfo page's ``<pre class="example">`` of C: 79%), and it is
    no page of a draft (one with JSON examples: 20%, and another, 40%, which its ``[Page 13]`` and
    ``Internet-Draft`` lines give away)."""
    if _DRAFT_PAGE.search(text):
        return False  # a draft's page, examples and all
    lines = [line for line in text.split("\n") if line.strip()]
    code = sum(
        1
        for line in lines
        if line.rstrip(" \t").endswith((";", "{", "}"))
        or line.lstrip(" \t").startswith(("#include", "#define", "//", "/*"))
    )
    return bool(lines) and 5 * code >= 2 * len(
        lines
    )  # a line at a time: a regex over a long line was quadratic


def _visible(source: str, start: int, end: int) -> tuple[str, list[int], list[int]]:
    """The text a browser shows of ``source[start:end]``, with each character's source span."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    pos = start
    for m in _MARKUP.finditer(source, start, end):
        chars.append(source[pos : m.start()])
        starts.extend(range(pos, m.start()))
        ends.extend(range(pos + 1, m.start() + 1))
        if m.group().startswith("&"):
            decoded = html.unescape(m.group())
            chars.append(decoded)
            starts.extend([m.start()] * len(decoded))
            ends.extend([m.end()] * len(decoded))
        pos = m.end()
    chars.append(source[pos:end])
    starts.extend(range(pos, end))
    ends.extend(range(pos + 1, end + 1))
    return "".join(chars), starts, ends
