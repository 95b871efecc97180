"""Finding a quote, copied from the document as a viewer shows it, in the document's parsed text.

A PDF viewer, a browser or rendered markdown shows text that raychunk's parse renders differently:
line breaks and hyphens at line ends, table cells joined by pipes, ``**bold**`` and ``[text](url)``
markup, curly quotes, ligatures, running headers and page numbers between two pages. The quote is
found in passes, the first that succeeds wins:

1. ``exact``: the quote as given;
2. ``whitespace``: whitespace runs treated as equal;
3. ``words``: the quote's words (``\\w+`` runs, NFKC, case-folded; punctuation, pipes, emphasis and
   code marks, markdown link targets, HTML tags and comments, and entities for no letter are no
   word) are the text's words, in order, with nothing between them. Words are compared run
   together, so ``exam-\\nple`` finds ``example`` and the other way round;
4. ``words, N skipped``: as ``words``, but at most ``MAX_GAPS`` runs of ``MAX_NOISE`` words in all
   may lie between the quote's words in the text (a running header, a page number), or be in the
   quote and not in the text (the viewer's page number and footer that the parse dropped; at most
   half the quote's words). Words are skipped on one side at a time (a word in place of another
   is not noise), the quote's first word must be in the text, and two words must match after
   each skip, so the quote's last two words are always matched with nothing between them.

The span returned covers the whole matched region of the text: its first to last matched word, and
the emphasis marks touching them. A quote found more than once is resolved to its first occurrence
(the earliest start), and the count is returned so the caller can warn.
"""

from __future__ import annotations

import bisect
import html
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["ANCHOR", "MAX_GAPS", "MAX_NOISE", "Match", "TextWords", "find_quote", "nearest"]

MAX_NOISE = 30  # words skipped in all, text side and quote side together
MAX_GAPS = 3  # separate runs of skipped words
ANCHOR = 3  # the quote's first words, matched with nothing between them
_JOIN = 6  # one word may be this many words of the other side run together (hyphenation, a split)
_RESYNC = 2  # words that must match after a skip
_MAX_COUNT = 1000  # occurrences counted before giving up counting

_WORD = re.compile(r"[^\W_]+(?:_+[^\W_]+)*")  # word characters; underscores only inside a word
_SPACES = re.compile(r"\s+")
_MARKS = frozenset("*_`~")
# Markup a viewer does not show: markdown link targets, HTML comments and tags (not autolinks).
# HTML entities that stand for no letter or digit (``&amp;``, ``&#9745;``).
_HIDDEN = re.compile(
    r"\]\([^()\s]*(?:\s+\"[^\"]*\")?\)|<!--.*?(?:-->|\Z)|</?(?![a-z][a-z0-9+.-]*://|mailto:)[A-Za-z][^<>]*>"
    r"|&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z]\w{1,30});",
    re.S,
)


@dataclass(frozen=True, slots=True)
class Match:
    """Where a quote is: ``text[start:end]``; ``how`` it was found; ``occurrences`` of it (the
    first is returned); ``skipped`` words of noise between its words."""

    start: int
    end: int
    how: str
    occurrences: int = 1
    skipped: int = 0


def _blank(m: re.Match) -> str:
    """Hidden markup as spaces of its length (offsets hold); an entity for a letter stays."""
    g = m.group()
    if g[0] == "&" and any(ch.isalnum() for ch in html.unescape(g)):
        return g
    return " " * len(g)


def _fold(word: str) -> str:
    w = unicodedata.normalize("NFKC", word).casefold()
    return w if w.isalnum() else "".join(ch for ch in w if ch.isalnum() or ch == "_")


class TextWords:
    """A text's words with their character spans, and the words run together (``compact``) with
    each word's offset in it: the index the word passes search. Built once per document."""

    def __init__(self, text: str, *, hide_markup: bool = True):
        self.text = text
        masked = (
            _HIDDEN.sub(_blank, text)
            if hide_markup and ("<" in text or "](" in text or "&" in text)
            else text
        )
        self.words: list[str] = []
        self.spans: list[tuple[int, int]] = []
        for m in _WORD.finditer(masked):
            w = _fold(m.group())
            if w:
                self.words.append(w)
                self.spans.append(m.span())
        self.offsets: list[int] = []
        n = 0
        for w in self.words:
            self.offsets.append(n)
            n += len(w)
        self.compact = "".join(self.words)
        self._starts = set(self.offsets)
        self._normalised: tuple[str, list[int]] | None = None

    @property
    def normalised(self) -> tuple[str, list[int]]:
        """The text with whitespace runs as one space, and each character's index in the text."""
        if self._normalised is None:
            self._normalised = _normalise(self.text)
        return self._normalised

    def find_run(self, run: str, at: int = 0):
        """Each ``(first, last)`` word index where ``run`` (words run together) starts on a word
        and ends on one, from compact offset ``at`` on."""
        if not run:
            return
        i = self.compact.find(run, at)
        while i >= 0:
            end = i + len(run)
            if i in self._starts and (end == len(self.compact) or end in self._starts):
                first = bisect.bisect_left(self.offsets, i)
                last = bisect.bisect_left(self.offsets, end) - 1
                yield first, last
            i = self.compact.find(run, i + 1)

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Words ``first`` to ``last`` as a character span, widened over emphasis and code marks that
        touch them (``**bold**``, a backtick), so markup is not cut in half."""
        start, end = self.spans[first][0], self.spans[last][1]
        while start > 0 and self.text[start - 1] in _MARKS:
            start -= 1
        while end < len(self.text) and self.text[end] in _MARKS:
            end += 1
        return start, end


def _quote_words(quote: str) -> list[str]:
    return TextWords(quote, hide_markup=False).words


def _count(text: str, quote: str) -> int:
    n, i = 0, text.find(quote)
    while i >= 0 and n < _MAX_COUNT:
        n += 1
        i = text.find(quote, i + 1)
    return n


def _normalise(text: str) -> tuple[str, list[int]]:
    """Whitespace runs collapsed to one space, with each output character's index in ``text``."""
    out: list[str] = []
    pos: list[int] = []
    space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if space:
                continue
            out.append(" ")
            space = True
        else:
            out.append(ch)
            space = False
        pos.append(i)
    return "".join(out), pos


def find_quote(text: str, quote: str, words: TextWords | None = None) -> Match | None:
    """The first place ``quote`` is in ``text`` (see the module docstring), or None. ``words``: the
    text's ``TextWords``, when several quotes are looked up in one text.

    >>> find_quote("| dividends | Exempt payees 1 through |", "dividends Exempt payees 1 through")
    Match(start=2, end=37, how='words', occurrences=1, skipped=0)
    """
    i = text.find(quote)
    if i >= 0 and quote:
        return Match(i, i + len(quote), "exact", _count(text, quote))
    q = _SPACES.sub(" ", quote).strip()
    if not q:
        return None
    words = words or TextWords(text)
    norm, pos = words.normalised
    j = norm.find(q)
    if j >= 0:
        return Match(pos[j], pos[j + len(q) - 1] + 1, "whitespace", _count(norm, q))
    qw = _quote_words(quote)
    if not qw:
        return None
    found = list(_first_runs(words, "".join(qw)))
    if found:
        first, last = found[0]
        return Match(*words.span(first, last), "words", len(found))
    if len(qw) <= ANCHOR:
        return None
    matches = _noisy(words, qw)
    if not matches:
        return None
    (first, last, skipped), n = matches[0], len(matches)
    return Match(*words.span(first, last), f"words, {skipped} skipped", n, skipped)


def _first_runs(words: TextWords, run: str):
    for n, found in enumerate(words.find_run(run)):
        if n >= _MAX_COUNT:
            return
        yield found


def _step(dw: list[str], i: int, qw: list[str], k: int) -> tuple[int, int] | None:
    """Words ``(text, quote)`` consumed when the text from word ``i`` and the quote from word ``k``
    spell the same next word(s), run together; None when they do not."""
    if i >= len(dw) or k >= len(qw):
        return None
    a, b = dw[i], qw[k]
    if a == b:
        return 1, 1
    di, qi = i + 1, k + 1
    for _ in range(2 * _JOIN):
        if a == b:
            return di - i, qi - k
        if len(a) < len(b) and b.startswith(a) and di < len(dw) and di - i < _JOIN:
            a += dw[di]
            di += 1
        elif len(b) < len(a) and a.startswith(b) and qi < len(qw) and qi - k < _JOIN:
            b += qw[qi]
            qi += 1
        else:
            return None
    return None


def _runs(dw: list[str], i: int, qw: list[str], k: int, n: int) -> bool:
    """The next ``n`` quote words (or the rest) match from text word ``i`` on, with nothing between."""
    while n > 0 and k < len(qw):
        step = _step(dw, i, qw, k)
        if step is None:
            return False
        i, k = i + step[0], k + step[1]
        n -= 1
    return True


def _extend(dw: list[str], start: int, qw: list[str], quote_budget: int) -> tuple[int, int] | None:
    """The quote matched from text word ``start``, skipping noise: ``(last text word, skipped)``."""
    i, k, skipped, gaps = start, 0, 0, 0
    while k < len(qw):
        step = _step(dw, i, qw, k)
        if step is not None:
            i, k = i + step[0], k + step[1]
            continue
        if gaps == MAX_GAPS:
            return None
        hit = _resync(dw, i, qw, k, min(quote_budget, len(qw) - 1 - k), MAX_NOISE - skipped)
        if hit is None:
            return None
        i, k = i + hit[0], k + hit[1]
        quote_budget -= hit[1]
        skipped += hit[0] + hit[1]
        gaps += 1
    return i - 1, skipped


def _resync(dw: list[str], i: int, qw: list[str], k: int, quote_budget: int, budget: int):
    """The fewest words to skip, ``(text, quote)``, after which the two run on together for
    ``_RESYNC`` words. Words are skipped on one side only (a word in place of another is a different
    quote, not noise), and never so near the quote's end that fewer than ``_RESYNC`` words are left."""
    if len(qw) - k < _RESYNC:
        return None
    for total in range(1, budget + 1):
        for d, q in ((total, 0), (0, total)):
            if q > quote_budget or len(qw) - (k + q) < _RESYNC:
                continue
            if _step(dw, i + d, qw, k + q) is not None and _runs(dw, i + d, qw, k + q, _RESYNC):
                return d, q
    return None


def _noisy(words: TextWords, qw: list[str]) -> list[tuple[int, int, int]]:
    """Every ``(first, last, skipped)`` where the quote matches with noise skipped, first first.
    A start is tried only where the quote's last words follow within its length and the noise."""
    quote_budget = min(MAX_NOISE, len(qw) // 2)
    ends = sorted(last for _, last in words.find_run("".join(qw[-ANCHOR:])))
    reach = len(qw) + MAX_NOISE
    for anchor in (ANCHOR, 1):  # the first words together, else a gap among them: the first word
        out = []
        for first, _ in words.find_run("".join(qw[:anchor])):
            j = bisect.bisect_left(ends, first)
            if j == len(ends) or ends[j] > first + reach:
                continue
            got = _extend(words.words, first, qw, quote_budget)
            if got is not None:
                out.append((first, got[0], got[1]))
                if len(out) >= _MAX_COUNT:
                    break
        if out:
            return out
    return []


def nearest(text: str, quote: str, words: TextWords | None = None, *, context: int = 40) -> str | None:
    """Where the longest run of the quote's first words is in the text, and what follows there, in
    words: the hint an unlocatable quote's error carries. None when not even its first word is."""
    qw = _quote_words(quote)
    if not qw:
        return None
    words = words or TextWords(text)

    def found(n: int):
        return next(words.find_run("".join(qw[:n])), None)

    lo, hi = 0, len(qw)  # the longest found prefix, by bisection (a prefix of a found run is found)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if found(mid) is not None:
            lo = mid
        else:
            hi = mid - 1
    if lo == 0:
        return None
    first, last = found(lo)
    start, end = words.span(first, last)
    after = " ".join(text[end : end + context].split())
    return (
        f"its first {lo} of {len(qw)} words are at character {start:,} "
        f"({' '.join(text[start:end].split())[-60:]!r}), then the text reads {after!r} "
        f"where the quote has {' '.join(qw[lo : lo + 6])!r}"
    )
