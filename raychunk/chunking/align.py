"""Where rendered text comes from: offsets in a block's rendered text mapped to offsets in the
document text, so any cut of the rendering has an exact source span.

A rendering can differ from its source: a list marker or a record's ``key:`` that exists only in the
rendering, markup or entities the parser removed, a table's pipes. ``align`` matches the two at
word level (words first, then the punctuation between them); what stays unmatched in the rendering is
context, like the header line, and spans no source.
"""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Alignment", "align", "record_alignment"]

_WORD = re.compile(r"\w+")
_TAG = re.compile(r"<!--.*?-->|<[A-Za-z/!][^<>]*>|&#?\w+;", re.S)
_TAG_OR_WORD = re.compile(_TAG.pattern + r"|\w+", re.S)
_OVERSTRIKE = re.compile(".\x08", re.S)
_MARK = re.compile(r"[^\w\s]")
_SKIP_R = 8  # rendered words (list markers, record keys) skipped for a near match
_SKIP_S = 40  # source words (markup) skipped for a near match
_NEAR = 12
_PROBE = 48  # characters that must be the same in both texts before a stretch of them is measured
_LAST_WORD_END = re.compile(r"(?s:.*)\w\W")  # its end - 1: where the last word of a stretch ends


@dataclass(frozen=True, slots=True)
class Alignment:
    """Matched runs: the rendered ``[r_starts[k], r_ends[k])`` is the same characters as the document
    text from ``s_starts[k]`` (runs apart only by whitespace, at the same distance in both texts, are
    one run). ``base`` is where the block's source starts (for a block whose rendering has no source
    at all)."""

    r_starts: Sequence[int]
    r_ends: Sequence[int]
    s_starts: Sequence[int]
    base: int

    def span(self, a: int, b: int) -> tuple[int, int]:
        """The tight source span of ``rendered[a:b]``: from the first matched character in it to the
        last; an empty span where it holds none (context only). ``a`` and ``b - 1`` are characters
        other than whitespace (whitespace between runs may belong to one)."""
        k = bisect.bisect_right(self.r_ends, a)
        m = bisect.bisect_left(self.r_starts, b) - 1
        if k >= len(self.r_ends) or m < k:
            at = self.s_starts[k] if k < len(self.s_starts) else self._end()
            return at, at
        start = self.s_starts[k] + max(0, a - self.r_starts[k])
        end = self.s_starts[m] + min(b, self.r_ends[m]) - self.r_starts[m]
        return start, end

    def _end(self) -> int:
        return self.s_starts[-1] + self.r_ends[-1] - self.r_starts[-1] if self.s_starts else self.base


def identity(text: str, base: int) -> Alignment:
    """A rendering that is its source: one run, trimmed of whitespace at both ends."""
    s = len(text) - len(text.lstrip())
    e = len(text.rstrip())
    if e <= s:
        return Alignment((), (), (), base)
    return Alignment((s,), (e,), (base + s,), base)


def align(rendered: str, source: str, base: int, *, markup: str = "") -> Alignment:
    """Match ``rendered`` to ``source`` (the document text from ``base``), in order. ``markup``:
    ``"source"`` when the source is html and the rendering its text (the tags are cut out of the
    source, ``_without_tags``), ``"both"`` when both may hold html (markdown): a tag or an entity is
    one token, never words, and only matches itself."""
    if rendered == source:
        return identity(rendered, base)
    text = rendered
    if "\x08" in source:
        source = _OVERSTRIKE.sub("  ", source)  # nroff's char-backspace pairs, which the parser drops
    if markup == "source":
        # HTML: its text with the tags cut out reads as the rendering does for long stretches, which
        # are then matched whole, not word by word; the runs are lifted back onto the source.
        bare, pieces = _without_tags(source)
        if not pieces:
            return align(rendered, bare, base)
        return _lifted(align(rendered, bare, 0), pieces, base)
    both = markup == "both"
    pattern = _TAG_OR_WORD if both else _WORD
    words_of = source
    if both:  # tags blanked out, offsets kept: what is inside them is never the text
        text = _TAG.sub(_blank, rendered)
        source = _TAG.sub(_blank, source)
    # The same words (a table re-rendered, markup that parts no word): one to one.
    same = _same_words(pattern, rendered, text, words_of, source, base)
    if same is not None:
        return same
    rw = _tokens(rendered, both)
    sw = _tokens(words_of, both)
    runs: list[tuple[int, int, int]] = []  # (rendered start, rendered end, source start)
    prev_r = prev_s = 0
    for i, j, n in _match_words([w for w, _ in rw], [w for w, _ in sw]) + [(len(rw), len(sw), 0)]:
        r_end = rw[i][1] if i < len(rw) else len(text)
        s_end = sw[j][1] if j < len(sw) else len(source)
        runs.extend(_gap_marks(text, prev_r, r_end, source, prev_s, s_end, not runs))
        r = r_end
        for word, s in sw[j : j + n]:  # one rendered word, made of n source words
            runs.append((r, r + len(word), s))
            r, prev_s = r + len(word), s + len(word)
        prev_r = r
    return _compact(runs, rendered, base)


_CELL_GAP = re.compile(r"\W+")  # what parts two cells of a CSV or TSV row: delimiters, quotes, spaces
_WORDS2 = re.compile(r"\w\w")


def record_alignment(
    rendered: str,
    names: Sequence[str],
    cells: Sequence[str],
    text: str,
    start: int,
    end: int,
    *,
    keyed: bool,
    tagged: bool = False,
) -> Alignment | None:
    """A record rendered as ``name: value`` lines (``parse.records``: the non-empty cells in order)
    mapped by finding each value in its source ``text[start:end]``, in order, where it stands:
    verbatim (one run per value), or a JSON string read through its escapes (``_json_string_runs``);
    no words aligned. Before a value the source may hold only what parts two cells: in a CSV or TSV
    row no word character; in a JSON object (``keyed``) the value's quoted key and its colon (both
    mapped too) and punctuation; in an XML element (``tagged``) anything, the value standing as text or
    an attribute's value (not a tag's or an attribute's name), its words re-spaced as ``squash`` does.
    None where that does not hold (a value quoted or re-spaced in a CSV row, a nested JSON value, one
    without a word character, a member with no value between two, an XML value that stands neither
    as itself nor through its escapes): such a record is aligned word by word."""
    r_starts, r_ends, s_starts = array("q"), array("q"), array("q")
    r, s = 0, start
    for name, value in zip(names, cells):
        if not value:
            continue
        if r:
            if rendered[r : r + 1] != "\n":
                return None
            r += 1
        if not rendered.startswith(name, r) or rendered[r + len(name) : r + len(name) + 2] != ": ":
            return None
        r += len(name) + 2
        if not rendered.startswith(value, r) or not (tagged or _WORD.search(value)):
            return None
        if keyed:
            k = text.find(f'"{name}"', s, end) + 1
            colon = text.find(":", k + len(name), end)
            if not k or colon < 0 or _WORD.search(text, s, k) or text[k + len(name) + 1 : colon].strip():
                return None
            r_starts.extend((r - len(name) - 2, r - 2))
            r_ends.extend((r - 2, r - 1))
            s_starts.extend((k, colon))
            s = colon + 1
            q = s
            while q < end and text[q] in " \t\r\n":
                q += 1
            # a string, escapes and all
            found = _json_string_runs(text, q, end, value) if text[q : q + 1] == '"' else False
        else:
            found = _xml_value_runs(text, s, end, value) if tagged else False
        # runs and where the value ends; None: it does not stand there; False: a plain value (below)
        if found is None:
            return None
        if found:
            runs, s = found
            for a, n, at in runs:
                r_starts.append(r + a)
                r_ends.append(r + a + n)
                s_starts.append(at)
            r += len(value)
            continue
        f = text.find(value, s, end)
        if f < 0 or not (_CELL_GAP.fullmatch(text, s, f) or (f == s and (keyed or not s_starts))):
            return None
        e = f + len(value)
        if (f > 0 and _WORDS2.fullmatch(text[f - 1] + value[0])) or _WORDS2.fullmatch(
            value[-1] + text[e : e + 1]
        ):
            return None  # part of a longer word or number: not this cell
        r_starts.append(r)
        r_ends.append(r + len(value))
        s_starts.append(f)
        r, s = r + len(value), e
    if r != len(rendered) or not r_starts:
        return None
    return Alignment(r_starts, r_ends, s_starts, start)


def _xml_value_runs(text: str, s: int, end: int, value: str) -> tuple[list[tuple[int, int, int]], int] | None:
    """The first place from ``s`` where ``value`` (an XML element's text or attribute value, its
    whitespace made single spaces) stands in ``text``: not inside a longer word, not a tag's or an
    attribute's name (after ``<``, ``</`` or before ``=``), not in a comment; its runs as
    ``_json_string_runs`` gives them (one where it stands verbatim, else ``_xml_runs``) and where it
    ends."""
    f = text.find(value, s, end)
    while f >= 0 and not _xml_value_at(text, s, f, f + len(value), value):
        f = text.find(value, f + 1, end)
    # Verbatim, unless it may stand earlier escaped or spaced otherwise: where its first stretch
    # occurs before (``code="say &quot;hi&quot;"`` before ``<note>say "hi"</note>``).
    pieces = [p for p in _XML_SPECIAL.split(value) if p]
    first = pieces[0]
    verbatim = ([(0, len(value), f)], f + len(value)) if f >= 0 else None
    if verbatim and (first == value or (not _XML_SPECIAL.fullmatch(first) and text.find(first, s, f) < 0)):
        return verbatim
    if len(pieces) == 1 and not _XML_SPECIAL.fullmatch(first):
        return verbatim
    stop = f if f >= 0 else end
    at = s
    while at < stop:
        if _XML_SPECIAL.fullmatch(first):
            g = min((i for i in (text.find(first, at, stop), text.find("&", at, stop)) if i >= 0), default=-1)
        else:
            g = text.find(first, at, stop)
        if g < 0:
            break
        found = _xml_runs(text, g, end, value, pieces)
        if found is not None and _xml_value_at(text, s, g, found[1], value):
            return found
        at = g + 1
    return verbatim


def _xml_runs(
    text: str, at: int, end: int, value: str, pieces: list[str]
) -> tuple[list[tuple[int, int, int]], int] | None:
    """``pieces`` (``value`` split at spaces and escapable characters) read from ``text[at]`` as XML
    may write them: a stretch of text as itself; a space as any run of whitespace, references to it
    and tags the reader made a space (``_XML_GAP``), mapped to nothing; an escapable character as
    itself or a reference (``&quot;``), mapped to the reference's first character at the value's
    start and its last elsewhere, so that a span ends past it. The runs and where the value ends;
    None where the text does not read so before ``end``."""
    runs, a = [], 0
    for piece in pieces:
        if piece.isspace():
            gap = _XML_GAP_RE.match(text, at, end)
            if gap is None:
                return None
            at = gap.end()
        elif _XML_SPECIAL.fullmatch(piece):
            ref = _XML_REFERENCE.match(text, at, end)
            if ref is not None and not value.startswith(ref.group(), a):  # CDATA keeps "&amp;" as text
                runs.append((a, 1, ref.start() if a == 0 else ref.end() - 1))
                at = ref.end()
            elif text.startswith(piece, at) and at < end:
                runs.append((a, 1, at))
                at += 1
            else:
                return None
        elif text.startswith(piece, at) and at + len(piece) <= end:
            runs.append((a, len(piece), at))
            at += len(piece)
        else:
            return None
        a += len(piece)
    return runs, at


def _xml_value_at(text: str, s: int, f: int, e: int, value: str) -> bool:
    return not (
        (f > 0 and (_WORDS2.fullmatch(text[f - 1] + value[0]) or text[f - 1] in "</"))
        or _WORDS2.fullmatch(value[-1] + text[e : e + 1])
        or text[e : e + 1] == "="
        or text.rfind("<!--", s, f) > text.rfind("-->", s, f)  # in a comment
    )


_XML_SPECIAL = re.compile(r"(\s+|[&<>\"'])")
# a space of the value: whitespace (or a reference to it: an attribute's &#10;, a no-break space's
# &nbsp;), where a CDATA section opens or closes, or an HTML tag, escaped or in CDATA, that the
# reader made one (a feed's markup)
_XML_GAP_RE = re.compile(
    r"(?:\s|&(?:nbsp|#0*(?:9|10|13|32|160)|#x0*(?:9|[aAdD]|20|[aA]0));|<!\[CDATA\[|\]\]>|<[^<>]*>"
    r"|&lt;/?[a-zA-Z][^&]*?&gt;)+"
)
_XML_REFERENCE = re.compile(r"&(?:[a-zA-Z]+|#[0-9]+|#x[0-9a-fA-F]+);")


_JSON_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/"}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")  # what the records reader drops from a value
_JSON_STRING = re.compile(r'"((?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*)"')
_JSON_ESCAPE = re.compile(r"\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)")
_ODD_SPACE = re.compile(r"\s{2,}|[^\S ]")  # a run of whitespace that squash changes


def _json_string_runs(
    text: str, q: int, end: int, value: str
) -> tuple[list[tuple[int, int, int]], int] | None:
    """The JSON string opening at ``text[q]`` mapped onto ``value``, the cell read from it (decoded,
    runs of whitespace made one space, trimmed): ``(offset in value, length, source offset)`` for
    each stretch that stands in the source as itself (``\\"`` as its quote; an escape that is not its
    character, ``\\n`` or ``\\u2019``, maps to nothing, as markup does), and where the string ends;
    None where ``value`` is not what it reads as."""
    m = _JSON_STRING.match(text, q, end)
    if m is None:
        return None
    body, at = m.group(1), q + 1
    # the decoded text as segments (start in it, length, source offset or -1 for an escape)
    parts: list[str] = []
    segments: list[tuple[int, int, int]] = []
    d = last = 0
    for e in _JSON_ESCAPE.finditer(body):
        if e.start() > last:
            parts.append(body[last : e.start()])
            segments.append((d, e.start() - last, at + last))
            d += e.start() - last
        x = e.group()
        if x[1] == "u":
            code = int(x[2:6], 16)
            if len(x) == 12:
                code = 0x10000 + ((code - 0xD800) << 10) + (int(x[8:12], 16) - 0xDC00)
            c = chr(code)
        else:
            c = _JSON_ESCAPES[x[1]]
        parts.append(c)
        # \" \\ \/ are their character after the backslash; another escape is not its character
        segments.append((d, 1, at + e.start() + 1 if x[1] in '"\\/' else -1))
        d += 1
        last = e.end()
    if last < len(body):
        parts.append(body[last:])
        segments.append((d, len(body) - last, at + last))
    decoded = "".join(parts)
    if _CONTROL.search(decoded):
        return None
    # what squash keeps of it as it stands: the stretches between runs of whitespace other than
    # one plain space, each such run one space; whitespace at either end dropped
    kept: list[tuple[int, int]] = []
    pos = len(decoded) - len(decoded.lstrip())
    stop = len(decoded.rstrip())
    for w in _ODD_SPACE.finditer(decoded, pos, stop):
        kept.append((pos, w.start()))
        pos = w.end()
    kept.append((pos, stop))
    if " ".join(decoded[a:b] for a, b in kept) != value:
        return None
    runs: list[tuple[int, int, int]] = []
    r, k = 0, 0
    for a, b in kept:
        while k < len(segments) and segments[k][0] + segments[k][1] <= a:
            k += 1
        j = k
        while j < len(segments) and segments[j][0] < b:
            s0, n, src = segments[j]
            lo, hi = max(a, s0), min(b, s0 + n)
            if src >= 0 and hi > lo:
                runs.append((r + lo - a, hi - lo, src + lo - s0))
            j += 1
        r += b - a + 1
    return runs, m.end()


def _without_tags(source: str) -> tuple[str, list[tuple[int, int, int]]]:
    """``source`` without its tags, comments and entities, and where each of its pieces of text lies
    in both: ``(offset in the result, offset in source, length)``; no pieces where there was no tag.
    A space stands where tags parted two characters other than whitespace, so the words are those
    of the source with its tags blanked out."""
    out: list[str] = []
    pieces: list[tuple[int, int, int]] = []
    at = pos = 0

    def keep(start: int, end: int) -> None:
        nonlocal at
        after_tags = pieces and pieces[-1][1] + pieces[-1][2] < start
        if after_tags and not out[-1][-1].isspace() and not source[start].isspace():
            out.append(" ")
            at += 1
        pieces.append((at, start, end - start))
        out.append(source[start:end])
        at += end - start

    for m in _TAG.finditer(source):
        if m.start() > pos:
            keep(pos, m.start())
        pos = m.end()
    if pos == 0:
        return source, []
    if pos < len(source):
        keep(pos, len(source))
    return "".join(out), pieces


def _lifted(inner: Alignment, pieces: list[tuple[int, int, int]], base: int) -> Alignment:
    """``inner``, an alignment to the text ``_without_tags`` made, onto the source it was made from:
    each run cut where it crosses from one piece of text to the next."""
    r_starts, r_ends, s_starts = array("q"), array("q"), array("q")
    at = [p[0] for p in pieces]
    for r, e, s in zip(inner.r_starts, inner.r_ends, inner.s_starts):
        end = s + e - r
        k = max(0, bisect.bisect_right(at, s) - 1)
        while k < len(pieces) and pieces[k][0] < end:
            b, src, n = pieces[k]
            lo, hi = max(s, b), min(end, b + n)
            if lo < hi:
                r_starts.append(r + lo - s)
                r_ends.append(r + hi - s)
                s_starts.append(base + src + lo - b)
            k += 1
    return Alignment(r_starts, r_ends, s_starts, base)


def _common(a: str, i: int, b: str, j: int) -> int:
    """The length of the longest common prefix of ``a[i:]`` and ``b[j:]``."""
    lo, hi = 0, min(len(a) - i, len(b) - j)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[i : i + mid] == b[j : j + mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _blank(m: re.Match) -> str:
    return " " * (m.end() - m.start())


def _same_words(
    pattern: re.Pattern, rendered: str, text: str, words_of: str, source: str, base: int
) -> Alignment | None:
    """``align`` where the two texts hold the same words in the same order: word k of one is word k
    of the other, and the punctuation between two words is matched within that gap. The runs are
    joined as they come (as ``_compact`` joins them); a gap that is the same characters in both
    texts joins the next word to the run before it at once. None as soon as a word differs, or one
    text has words the other lacks: the two are read once, not listed first to compare them."""
    r_starts, r_ends, s_starts = array("q"), array("q"), array("q")
    cur_r = cur_e = cur_s = -1  # the run being extended: rendered start, rendered end, source start

    def add(runs) -> None:
        nonlocal cur_r, cur_e, cur_s
        for r, e, s in runs:
            s += base
            if (
                cur_e >= 0
                and r >= cur_e
                and s - cur_s == r - cur_r
                and (r == cur_e or rendered[cur_e:r].isspace())
            ):
                cur_e = e
                continue
            if cur_e >= 0:
                r_starts.append(cur_r)
                r_ends.append(cur_e)
                s_starts.append(cur_s)
            cur_r, cur_e, cur_s = r, e, s

    prev_r = prev_s = 0
    first = True
    tags = pattern is _TAG_OR_WORD
    words_r, words_s = pattern.finditer(rendered), pattern.finditer(words_of)
    while (mr := next(words_r, None)) is not None:
        ms = next(words_s, None)
        if ms is None or ms.group() != mr.group():
            return None
        r, e = mr.span()
        s, se = ms.span()
        if first or r - prev_r != s - prev_s or text[prev_r:r] != source[prev_s:s]:
            add(_gap_marks(text, prev_r, r, source, prev_s, s, first))
            add(((r, e, s),))
            first = False
            prev_r, prev_s = e, se
            continue
        cur_e = e  # the gap and the word go on the run, which ends at the word before
        prev_r, prev_s = e, se
        # The same characters for a while (a table's rows): the words in them join the run at once,
        # up to the last one that ends inside the stretch (a word, not markup: no tag starts there).
        if rendered[e : e + _PROBE] != words_of[se : se + _PROBE]:
            continue
        n = _common(rendered, e, words_of, se)
        if tags:
            for ch in "<&":
                k = rendered.find(ch, e, e + n)
                n = k - e if k >= 0 else n
        last = _LAST_WORD_END.match(rendered, e, e + n)
        if last is None:
            continue
        cur_e = prev_r = last.end() - 1
        prev_s = se + prev_r - e
        words_r, words_s = pattern.finditer(rendered, prev_r), pattern.finditer(words_of, prev_s)
    if next(words_s, None) is not None:
        return None
    add(_gap_marks(text, prev_r, len(text), source, prev_s, len(source), first))
    if cur_e >= 0:
        r_starts.append(cur_r)
        r_ends.append(cur_e)
        s_starts.append(cur_s)
    return Alignment(r_starts, r_ends, s_starts, base)


def _compact(runs: list[tuple[int, int, int]], rendered: str, base: int) -> Alignment:
    """The runs as arrays, each joined to the one before it when only whitespace of the rendering
    lies between them and the source is as far apart: a span from and to other characters than
    whitespace maps the same, in a fraction of the memory (a word-level alignment of a long block
    would keep three integers per word)."""
    r_starts, r_ends, s_starts = array("q"), array("q"), array("q")
    for r, e, s in runs:
        if (
            r_ends
            and r >= r_ends[-1]
            and base + s - s_starts[-1] == r - r_starts[-1]
            and (r == r_ends[-1] or rendered[r_ends[-1] : r].isspace())
        ):
            r_ends[-1] = e
            continue
        r_starts.append(r)
        r_ends.append(e)
        s_starts.append(base + s)
    return Alignment(r_starts, r_ends, s_starts, base)


def _tokens(text: str, markup: bool) -> list[tuple[str, int]]:
    return [(m.group(), m.start()) for m in (_TAG_OR_WORD if markup else _WORD).finditer(text)]


def _match_words(rw: list[str], sw: list[str]) -> list[tuple[int, int, int]]:
    """``(i, j, n)``: rendered word i is source words j to j+n (n > 1 where markup parted one word),
    in order. Where the next words differ, the nearest match wins (a skipped rendered word costs
    more than a skipped source word: markup is common, words that exist only in the rendering are
    rare), one that the next word confirms on a tie; else a match further on in the source,
    confirmed by the next word; else the word is the rendering's own."""
    if rw == sw:  # the same words (a table re-rendered, markup that parts no word): one to one
        return [(i, i, 1) for i in range(len(rw))]
    where: dict[str, list[int]] = {}
    for j, w in enumerate(sw):
        where.setdefault(w, []).append(j)
    out = []
    i = j = 0
    while i < len(rw) and j < len(sw):
        n = 1
        if rw[i] == sw[j] or (n := _parted(rw[i], sw, j)) > 1:
            hit = (i, j)
        else:
            n = 1
            hit = _nearest(rw, sw, where, i, j) or _further(rw, sw, where, i, j)
        if hit is None:
            i += 1
            continue
        out.append((*hit, n))
        i, j = hit[0] + 1, hit[1] + n
    return out


def _parted(word: str, sw: list[str], j: int) -> int:
    """How many source words from j make up ``word`` (``2015`` + ``at``), or 0."""
    acc, k = "", j
    while k < len(sw) and word.startswith(acc + sw[k]):
        acc += sw[k]
        k += 1
        if acc == word:
            return k - j
    return 0


def _nearest(rw, sw, where, i, j):
    """The best match for one of the next rendered words among the next source words: the one that
    skips least, counting each of the words after it that also follow it in the source against it."""
    best = None
    for a in range(min(_SKIP_R + 1, len(rw) - i)):
        positions = where.get(rw[i + a], ())
        k = bisect.bisect_left(positions, j)
        while k < len(positions) and positions[k] - j <= _SKIP_S:
            jj = positions[k]
            score = (5 * a + jj - j - 4 * _support(rw, where, i + a, jj), a)
            if best is None or score < best[0]:
                best = (score, (i + a, jj))
            k += 1
    return best[1] if best else None


def _support(rw, where, i, j, ahead: int = 3, gap: int = 8) -> int:
    """How many of the ``ahead`` rendered words after word i follow source word j closely, in order."""
    found = 0
    for w in rw[i + 1 : i + 1 + ahead]:
        positions = where.get(w, ())
        k = bisect.bisect_right(positions, j)
        if k < len(positions) and positions[k] - j <= gap:
            found += 1
            j = positions[k]
    return found


def _further(rw, sw, where, i, j):
    positions = where.get(rw[i], ())
    k = bisect.bisect_left(positions, j)
    for jj in positions[k : k + 4]:
        if i + 1 < len(rw) and rw[i + 1] in sw[jj + 1 : jj + 1 + _NEAR]:
            return i, jj  # confirmed by the next word
        if i + 1 == len(rw) and len(sw) - jj <= _NEAR:
            return i, jj  # the last word, near the end of the source
    return None


def _gap_marks(
    rendered: str, r0: int, r1: int, source: str, s0: int, s1: int, first: bool
) -> list[tuple[int, int, int]]:
    """The punctuation of ``rendered[r0:r1]`` paired up with that of ``source[s0:s1]`` (the gap
    between two matched words), in order; before the first word from the right (markup that opens
    a block sits further from its text than the block's own punctuation)."""
    if r1 <= r0 or (r1 - r0 < 8 and rendered[r0:r1].isspace()):
        return []  # most gaps between two words: a space or a line break, no marks
    marks = [(m.start(), m.group()) for m in _MARK.finditer(rendered, r0, r1)]
    if not marks:
        return []
    if s1 - s0 == r1 - r0 and rendered[r0:r1] == source[s0:s1]:  # the same gap: mark to mark
        return [(r, r + 1, s0 + r - r0) for r, _ in marks]
    found = [(m.start(), m.group()) for m in _MARK.finditer(source, s0, s1)] if s1 > s0 else []
    if len(found) == len(marks) and all(a == b for (_, a), (_, b) in zip(marks, found)):
        # The same marks in the same order (the spacing differs): each is its counterpart.
        return [(r, r + 1, s) for (r, _), (s, _) in zip(marks, found)]
    where: dict[str, list[int]] = {}
    for s, mark in found:
        where.setdefault(mark, []).append(s)
    out = []
    if first:
        bound = s1
        for r, mark in reversed(marks):
            positions = where.get(mark, ())
            k = bisect.bisect_left(positions, bound) - 1
            if k >= 0:
                bound = positions[k]
                out.append((r, r + 1, bound))
        return out[::-1]
    bound = s0
    for r, mark in marks:
        positions = where.get(mark, ())
        k = bisect.bisect_left(positions, bound)
        if k < len(positions):
            out.append((r, r + 1, positions[k]))
            bound = positions[k] + 1
    return out
