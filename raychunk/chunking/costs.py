"""The token accounting of one document's chunks, in one place: what putting texts together adds
beyond their own counts (two pieces, two cuts of one text, a header and the blank line after it, a
table's lines), the count of texts joined from their counts, and the parts of a piece counted from
its block's token offsets. The counts themselves come from the counter (``raychunk.tokens``).

Where a counter cuts exactly (``TokenCounter.exact_cuts``: cl100k_base cuts at a space after a
non-space and after a line break before a non-space), what a join adds is found on the few
characters between the exact cuts nearest it. Join costs are remembered in the document's memo (a
``CachedCounter``'s, shared by the settings of a grid), a bounded number of them."""

from __future__ import annotations

import re

from raychunk.chunking.pieces import Piece, glued, render, separator
from raychunk.document import Block
from raychunk.tokens import CachedCounter, first_words, last_words

__all__ = ["TokenCosts", "exact_edges", "exact_join", "join_edges", "join_tail"]

_EDGE = 100  # characters either side of a join that can hold the two words next to it
_JOINS = 1 << 14  # join costs remembered per document
_SEEN = 1 << 12  # joins remembered per document by the characters either side (about 200 each)
# Exact cuts (``TokenCounter.exact_cuts``): a space after a non-space, a non-space after a line break.
_EXACT_CUT = re.compile(r"(?<=\S) |(?<=[\r\n])\S")


class TokenCosts:
    """Token costs of one document's joins, remembered in its counter's memo."""

    def __init__(self, counter: CachedCounter):
        self.counter = counter
        self.memo: dict = counter.memo
        self.joins: dict[tuple, int] = self.memo.setdefault("joins", {})
        self.seen: dict[tuple[str, str, str], int] = self.memo.setdefault("join_texts", {})

    def header(self, line: str, tokens: int) -> int:
        """What a header line of ``tokens`` tokens adds to a chunk: itself and the blank line after
        it, which a BPE tokenizer may merge with the line's last characters (with exact cuts: only
        the characters after the line's last cut)."""
        counter = self.counter
        if counter.additive or not line:
            return tokens
        if counter.exact_cuts:
            cut = _last_cut(line)
            tail = join_tail(line[cut:] if cut > 0 else line, "\n\n", "")
            return tokens + self.join_costs([(tail, "\n\n", "")])[0]
        return counter.count(line + "\n\n")

    def join(self, prev: Piece | None, nxt: Piece) -> int:
        """Tokens that putting ``nxt`` after ``prev`` adds beyond their own counts: 0 when counts add
        up across whitespace (word-piece); else found on the words either side of the separator."""
        if prev is None or (self.counter.additive and not glued(prev, nxt)):
            return 0
        return self.join_text(prev.text[-_EDGE:], separator(prev, nxt), nxt.text[:_EDGE])

    def count_joined(self, texts: list[str], seps: list[str], counts: list[int]) -> int:
        """``counter.count`` of the texts joined by ``seps``, given the counts of the texts."""
        n = self.joined_count(texts, seps, counts)
        if n is None:
            n = self.counter.count(texts[0] + "".join(sep + t for sep, t in zip(seps, texts[1:])))
        return n

    def join_within(self, text: str, left_end: int, right_start: int) -> int:
        """``join`` for two cuts of one text: ``text[:left_end]`` then ``text[right_start:]``."""
        if self.counter.additive and right_start > left_end:
            return 0
        return self.join_text(
            text[max(0, left_end - _EDGE) : left_end],
            text[left_end:right_start],
            text[right_start : right_start + _EDGE],
        )

    def join_text(self, left: str, sep: str, right: str) -> int:
        if self.counter.additive and sep:
            return 0
        if self.counter.exact_cuts and (edges := _line_join(left, sep, right)) is not None:
            n = self.joins.get(edges)
            return n if n is not None else self.join_costs([edges])[0]
        # The same two pieces meet again (packing tries a join, the budget of the next chunk asks
        # again): the cost is looked up by the characters either side, before finding the edges.
        key = (left, sep, right)
        n = self.seen.get(key)
        if n is None:
            n = self._join_text(left, sep, right)
            if len(self.seen) < _SEEN:
                self.seen[key] = n
        return n

    def _join_text(self, left: str, sep: str, right: str) -> int:
        # A bounded number of join costs is remembered (a long block has one per pair of words);
        # past that, they are counted and let go.
        remember = len(self.joins) < _JOINS
        counter = self.counter if remember else getattr(self.counter, "inner", self.counter)
        if sep == " " and self.counter.space_starts_word and left[-1:].strip() and right[:1].strip():
            # The space belongs to the word after it and changes only that word's tokens: the same
            # number as from the words either side, for any words before it.
            word = right.split(None, 1)[0]
            key: tuple = (sep, word)
            if key not in self.joins:
                with_space, alone = counter.count_batch([sep + word, word])
                if not remember:
                    return with_space - alone
                self.joins[key] = with_space - alone
            return self.joins[key]
        a, b = join_edges(left, sep, right, exact=self.counter.exact_cuts)
        key = (a, sep, b)
        if key not in self.joins:
            both, n_a, n_b = counter.count_batch([a + sep + b, a, b])
            if not remember:
                return both - n_a - n_b
            self.joins[key] = both - n_a - n_b
        return self.joins[key]

    def joined_count(self, texts: list[str], seps: list[str], counts: list[int]) -> int | None:
        """``count(texts[0] + seps[0] + texts[1] + ... + texts[-1])``, where ``counts`` are the counts
        of ``texts``: exact, for a counter with ``exact_cuts``, from the few characters between the
        exact cuts either side of each join. None where it cannot tell (no such counter, an empty
        text, a text without the cut a join needs): count the joined text then."""
        if not self.counter.exact_cuts:
            return None
        small: list[tuple[str, str, str]] = []
        right = 0  # where the piece around the previous join ends in this text (its start: 0)
        for i, sep in enumerate(seps):
            a, b = texts[i], texts[i + 1]
            if not a or not b:
                return None
            if not right and (sep == "\n" or sep == "\n\n") and not b[0].isspace():
                x = _line_tail(a)  # the line break cuts before b; a's last characters decide x
                if x is not None:
                    small.append((x, sep, ""))
                    continue
            # The piece around this join: from the last exact cut of a (not before the previous
            # join's piece ends) to the first exact cut of b, or the ends of the two where they cut.
            if _cuts_at(a[-1], sep[0] if sep else b[0]):
                left = len(a)
            elif (
                not right
                and a[-1] in _ASCII_ALNUM
                and sep
                and not sep.strip(" \t\n\r")
                and _cuts_at(sep[-1], b[0])
            ):
                left = len(a)  # after a letter or a digit the tail is empty wherever a's cut is
            else:
                left = _last_cut(a)
                if left < right:
                    if right:
                        return None
                    left = 0  # a has no cut of its own, but it starts at one
            if _cuts_at(sep[-1] if sep else a[-1], b[0]):
                right = 0
            else:
                right = _first_cut(b)
                if right < 0:
                    right = len(b)  # b must end at a cut: the next join or the end of the text
            y = b[:right]
            small.append((join_tail(a[left:], sep, y), sep, y))
        return sum(counts) + sum(self.join_costs(small))

    def join_costs(self, joins: list[tuple[str, str, str]]) -> list[int]:
        """``count(x + sep + y) - count(x) - count(y)`` of each ``(x, sep, y)``, remembered (the same
        few characters meet at many joins)."""
        known = self.joins
        todo = [j for j in dict.fromkeys(joins) if j not in known]
        if not todo:
            return [known[j] for j in joins]
        counted = self.counter.count_batch([t for x, sep, y in todo for t in (x + sep + y, x, y)])
        costs = {
            j: counted[k] - counted[k + 1] - counted[k + 2] for k, j in zip(range(0, len(counted), 3), todo)
        }
        if len(known) < _JOINS:
            known.update(costs)
        return [known[j] if j in known else costs[j] for j in joins]

    def block_counts(self, blocks: list[Block], texts: list[str] | None = None) -> list[int]:
        """Tokens of each block's rendering (``texts``). A table under a counter with exact cuts is
        counted line by line (remembered: its rows are what a split table is packed from)."""
        texts = [render(b) for b in blocks] if texts is None else texts
        counter = self.counter
        if not counter.exact_cuts:
            return counter.count_batch(texts)
        tables = {
            i: n
            for i, b in enumerate(blocks)
            if b.kind == "table" and (n := self.lines_count(texts[i])) is not None
        }
        if not tables:
            return counter.count_batch(texts)
        counts = counter.count_batch([t if i not in tables else "" for i, t in enumerate(texts)])
        for i, n in tables.items():
            counts[i] = n
        return counts

    def block_texts(self, blocks: list[Block]) -> list[str]:
        """The texts ``block_counts`` counts for ``blocks`` (a table under a counter with exact cuts
        is counted by its lines, and left out), so that they can be tokenized with others at once."""
        exact = self.counter.exact_cuts
        return [render(b) for b in blocks if not (exact and b.kind == "table")]

    def lines_count(self, text: str) -> int | None:
        """``counter.count(text)`` of a text of several lines, each starting with a character other
        than whitespace (a pipe table), from the counts of its lines (exact cuts: after each line
        break) and of the end of each line before its line break; None for another text."""
        key = ("lines", text)
        if key in self.memo:
            return self.memo[key]
        lines = text.split("\n")
        if len(lines) < 2 or not all(line and not line[0].isspace() for line in lines):
            return None
        counter = self.counter
        ends = []
        for line in lines[:-1]:
            tail = _line_tail(line)  # a row's " |": no cut search
            if tail is None:
                cut = _last_cut(line)
                tail = join_tail(line[cut:] if cut > 0 else line, "\n", "")
            ends.append((tail, "\n", ""))
        n = sum(counter.count_batch(lines)) + sum(self.join_costs(ends))
        self.memo[key] = n
        return n

    def piece_counts(self, p: Piece, spans: list[tuple[int, int]]) -> list[int]:
        """Tokens of each ``p.text[s:e]`` (cut at whitespace, or at the piece's ends), from the token
        offsets of the block the piece came from; counted on their own when the piece itself starts
        or ends inside a word (a part of a cut word), where offsets would miss a token."""
        root, o = p.root or p.text, p.root_offset
        e = o + len(p.text)
        if (o and not root[o - 1].isspace()) or (e < len(root) and not root[e].isspace()):
            return self.counter.count_batch([p.text[a:b] for a, b in spans])
        return self.counter.span_counts(root, [(o + a, o + b) for a, b in spans])


def exact_join(a: str, sep: str, b: str) -> tuple[str, str]:
    """For a counter with ``exact_cuts`` and non-empty ``a`` and ``b``: the end of ``a`` and the
    start of ``b`` between the exact cuts nearest the join, ``(x, y)``, so that what joining
    ``a + sep + b`` adds is what joining ``x + sep + y`` adds (the tokens either side of an exact
    cut are those of the two sides apart)."""
    if _cuts_at(a[-1], sep[0] if sep else b[0]):
        x = ""
    else:
        cut = _last_cut(a)
        x = a[cut:] if cut > 0 else a
    if _cuts_at(sep[-1] if sep else a[-1], b[0]):
        y = ""
    else:
        cut = _first_cut(b)
        y = b[:cut] if cut > 0 else b
    return join_tail(x, sep, y), y


def _cuts_at(before: str, after: str) -> bool:
    """Whether a text cuts exactly between these two characters (for a counter with ``exact_cuts``)."""
    return (after == " " and not before.isspace()) or (before in "\r\n" and not after.isspace())


_ASCII_ALNUM = frozenset("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def join_tail(x: str, sep: str, y: str) -> str:
    """For a counter with ``exact_cuts``: the end of ``x`` that decides what ``x + sep + y`` adds
    beyond ``x`` and ``y`` when ``y`` is empty and ``sep`` is ASCII whitespace, as cl100k's
    pre-tokenizer splits: nothing after a letter or a digit (a run of them ends there, and the
    whitespace is tokenized as if alone), the closing run of punctuation after one (the run and the
    line breaks after it are one pre-token); else ``x``."""
    if y or not x or not sep or sep.strip(" \t\n\r"):
        return x
    last = x[-1]
    if last in _ASCII_ALNUM:
        return ""
    if last in _ASCII_PUNCT:
        k = len(x) - 1
        while k > 0 and x[k - 1] in _ASCII_PUNCT:
            k -= 1
        if k == 0 or x[k - 1] in _ASCII_ALNUM:
            return x[k:]
    return x


def join_edges(left: str, sep: str, right: str, *, exact: bool) -> tuple[str, str]:
    """The characters either side of a join whose counts decide what it adds: the last and the first
    words (``last_words``, ``first_words``), and for a counter with exact cuts only the characters
    between the exact cuts nearest the join (the same few characters meet at many joins)."""
    if exact and (edges := exact_edges(left, sep, right)) is not None:
        return edges
    a, b = last_words(left), first_words(right)
    if exact and a and b:
        a, b = exact_join(a, sep, b)
    return a, b


def _line_join(left: str, sep: str, right: str) -> tuple[str, str, str] | None:
    """The ``(x, sep, y)`` that ``_join_text`` finds for the commonest join, at a line break between
    blocks, list items or table rows (``sep`` one or two line breaks, ``right`` starting with a
    character other than whitespace), where ``left``'s last characters decide it (``_line_tail``):
    ``y`` is empty, as the line break cuts before ``right``. None for any other join."""
    if (sep != "\n" and sep != "\n\n") or not right or right[0].isspace():
        return None
    x = _line_tail(left)
    return None if x is None else (x, sep, "")


def _line_tail(left: str) -> str | None:
    """``join_tail(left[cut:], sep, "")`` for a line break ``sep``, where ``cut`` is ``left``'s last
    exact cut (or its start), read off its last characters without a search: nothing after an ASCII
    letter or digit, the closing run of ASCII punctuation after one, or that run with the space
    before it where a non-space precedes the space (a table row's `` |``: the cut is that space).
    None where the cut decides it."""
    if not left:
        return None
    last = left[-1]
    if last in _ASCII_ALNUM:
        return ""
    if last not in _ASCII_PUNCT:
        return None
    k = len(left) - 1
    while k > 0 and left[k - 1] in _ASCII_PUNCT:
        k -= 1
    if k > 0 and left[k - 1] in _ASCII_ALNUM:
        return left[k:]
    if k > 1 and left[k - 1] == " " and not left[k - 2].isspace():
        return left[k - 1 :]
    return None


def exact_edges(left: str, sep: str, right: str) -> tuple[str, str] | None:
    """``exact_join(last_words(left), sep, first_words(right))`` (for a counter with
    ``exact_cuts``), found without those words where the exact cuts nearest the join lie within
    them: the last cut of ``left`` before its last word at the most, the first cut of ``right``
    before its second word at the most. None where that does not hold."""
    if not left or not right or not sep:
        return None
    if _cuts_at(left[-1], sep[0]):
        x = ""
    else:
        cut = _last_cut(left)
        if cut <= 0 or left[-1].isspace():
            return None
        x = left[cut:]
        if len(x.split()) > 1:
            return None
    if _cuts_at(sep[-1], right[0]):
        y = ""
    else:
        cut = _first_cut(right)
        if cut <= 0:
            return None
        y = right[:cut]
        if len(y.split()) > 1:
            return None
    return join_tail(x, sep, y), y


def _first_cut(text: str) -> int:
    """The first exact cut inside ``text`` (``0 < cut < len(text)``), or -1: the first space after a
    non-space, or the first non-space after a line break (``_EXACT_CUT``, found with ``str.find``:
    the first candidate nearly always holds)."""
    best = n = len(text)
    i = text.find(" ", 1)
    while i > 0:
        if not text[i - 1].isspace():
            best = i
            break
        i = text.find(" ", i + 1)
    for brk in "\n\r":
        j = text.find(brk, 0, best - 1)
        while j >= 0:
            if not text[j + 1].isspace():
                best = j + 1
                break
            j = text.find(brk, j + 1, best - 1)
    return best if best < n else -1


def _last_cut(text: str) -> int:
    """The last exact cut inside ``text``, or -1 (``_first_cut`` from the end)."""
    best = -1
    i = text.rfind(" ")
    while i > 0:
        if not text[i - 1].isspace():
            best = i
            break
        i = text.rfind(" ", 0, i)
    for brk in "\n\r":
        j = text.rfind(brk, max(best, 0), len(text) - 1)
        while j >= 0:
            if not text[j + 1].isspace():
                best = j + 1
                break
            j = text.rfind(brk, max(best, 0), j)
    return best
