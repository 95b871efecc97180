"""The chunker's records: a chunk profile (the setting), the chunk it produces and that chunk's numbers."""

from __future__ import annotations

import hashlib
import operator
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from raychunk.document import ParsedDocument
    from raychunk.tokens import TokenCounter

__all__ = [
    "PEERS",
    "STRATEGIES",
    "Chunk",
    "ChunkIds",
    "ChunkStats",
    "Profile",
    "Strategy",
    "chunk_id",
    "chunk_ids",
]

STRATEGIES = ("structure", "records", "fixed", "code", "unstructured_by_title")
# Other libraries' chunkers, run by ``raychunk.peers`` (eval and price), never by the core.
PEERS = ("langchain_markdown", "chonkie_recursive")


@dataclass(frozen=True, slots=True)
class Profile:
    """A chunking setting.

    ``overlap`` below 1 is a fraction of ``max_tokens``, from 1 up a token count. ``table_max_tokens``
    is the table cap: a table up to it is one chunk, a bigger one is split by rows. ``min_tokens``
    lets a tiny section join its next sibling under the same parent heading (0 = never).
    ``header_share`` is the most of ``max_tokens`` the header line may take (a longer heading path
    is shortened from the middle). ``allow_over_limit`` lets a cap exceed the embedder's input limit
    (the check at start-up then warns instead of failing).
    """

    strategy: str = "structure"
    max_tokens: int = 256
    min_tokens: int = 0
    overlap: float = 0.0
    table_max_tokens: int | None = None
    header_share: float = 0.25
    allow_over_limit: bool = False

    def __post_init__(self):
        if self.strategy not in STRATEGIES + PEERS:
            raise ValueError(
                f"strategy={self.strategy!r}: accepted values are {', '.join(STRATEGIES + PEERS)}"
            )
        if not isinstance(self.max_tokens, int) or self.max_tokens < 16:
            raise ValueError(f"max_tokens must be an integer >= 16, got {self.max_tokens!r}")
        if self.min_tokens < 0 or self.min_tokens >= self.max_tokens:
            raise ValueError(
                f"min_tokens must be >= 0 and < max_tokens ({self.max_tokens}), got {self.min_tokens!r}"
            )
        if self.overlap < 0 or self.overlap_tokens >= self.max_tokens // 2:
            raise ValueError(
                f"overlap must be a fraction in [0, 0.5) or a token count below max_tokens/2, got {self.overlap!r}"
            )
        if self.table_max_tokens is not None and self.table_max_tokens < 16:
            raise ValueError(f"table_max_tokens must be >= 16, got {self.table_max_tokens!r}")
        if isinstance(self.header_share, bool) or not 0 < self.header_share <= 0.5:
            raise ValueError(f"header_share must be a fraction in (0, 0.5], got {self.header_share!r}")
        if not isinstance(self.allow_over_limit, bool):
            raise ValueError(f"allow_over_limit must be true or false, got {self.allow_over_limit!r}")

    @property
    def overlap_tokens(self) -> int:
        return int(round(self.overlap * self.max_tokens)) if self.overlap < 1 else int(self.overlap)

    @property
    def table_cap(self) -> int:
        return self.table_max_tokens or self.max_tokens

    @property
    def key(self) -> str:
        """Everything in the setting that shapes chunks, for ids."""
        return (
            f"{self.strategy}|{self.max_tokens}|{self.overlap_tokens}|{self.min_tokens}|{self.table_cap}"
            f"|{self.header_share}"
        )

    @property
    def label(self) -> str:
        """A short name for reports: ``structure/256/o26``."""
        return f"{self.strategy}/{self.max_tokens}/o{self.overlap_tokens}"


@dataclass(frozen=True, slots=True)
class Chunk:
    """One unit of retrieval. ``text`` is exactly what gets embedded: the header line, a blank line,
    then the body; ``n_tokens`` is its exact token count. ``char_start``/``char_end`` span exactly the
    document text the body was made from, from its first to its last source character (rendering
    context such as list markers, record keys and repeated table header rows spans nothing).
    ``overlap_tokens`` of the body repeat the end of the previous chunk. ``oversize``: over the
    profile's cap because it is one unit that cannot be split (a table row); ``over_limit``: over
    the embedder's input."""

    chunk_id: str
    doc_id: str
    source: str
    doc_type: str
    strategy: str
    max_tokens: int
    overlap: int
    chunk_index: int
    text: str
    header: str
    heading_path: tuple[str, ...]
    char_start: int
    char_end: int
    page_start: int | None
    page_end: int | None
    n_tokens: int
    header_tokens: int
    overlap_tokens: int
    block_kinds: tuple[str, ...]
    parent_id: str
    table_id: str | None = None
    table_part: int | None = None
    continuation: bool = False
    over_limit: bool = False
    oversize: bool = False

    def to_dict(self) -> dict:
        """The chunk's output columns (``schema.CHUNK_COLUMNS``)."""
        return dict(
            zip(self.__slots__, [list(v) if isinstance(v, tuple) else v for v in _chunk_fields(self)])
        )


_chunk_fields = operator.attrgetter(*Chunk.__slots__)


@dataclass(frozen=True, slots=True)
class ChunkStats:
    """A chunk's numbers without its text: what pricing a setting needs."""

    chunk_id: str | None
    n_tokens: int
    header_tokens: int
    overlap_tokens: int
    over_limit: bool
    text_bytes: int
    oversize: bool = False


def chunk_id(
    identity: str,
    profile: Profile,
    heading_path: tuple[str, ...],
    text: str,
    *,
    tokenizer: str = "",
    occurrence: int = 0,
) -> str:
    """Deterministic, and derived from what the chunk is within its document, not from the file's
    bytes or where the chunk sits: a hash of the document's identity (its path relative to its input
    root, ``Document.identity``), the setting (``profile.key``) and tokenizer, the chunk's heading
    path, its text (as embedded) and how many earlier chunks of the document had the same path and
    text. An edit elsewhere in the document leaves the id as it was; a rename changes it."""
    key = "\x1f".join((identity, profile.key, tokenizer, "\x1e".join(heading_path), str(occurrence), text))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def table_ids(identity: str, tables: list[str]) -> list[str]:
    """Ids of one document's tables from their texts, in order: like chunk ids, a hash of what the
    table is (the document's identity, its text and its occurrence), not of where it sits, so an
    edit elsewhere keeps them; every part of a split table shares its table's id."""
    seen: dict[str, int] = {}
    out = []
    for text in tables:
        n = seen.get(text, 0)
        seen[text] = n + 1
        out.append(
            hashlib.sha256(
                f"{identity}\x1ftable\x1f{n}\x1f{text}".encode("utf-8", "surrogatepass")
            ).hexdigest()[:32]
        )
    return out


def parent_ids(identity: str, paths: list[tuple[str, ...]]) -> list[str]:
    """Ids of one document's sections from their heading paths, in order (a hash of the identity, the
    path and how many earlier sections had it): the parent a chunk is expanded to, small-to-big."""
    seen: dict[tuple[str, ...], int] = {}
    out = []
    for path in paths:
        n = seen.get(path, 0)
        seen[path] = n + 1
        key = "\x1f".join((identity, "\x1e".join(path), str(n)))
        out.append(hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32])
    return out


class ChunkIds:
    """Ids of one document's chunks, given in order: unique within the document, as a chunk whose
    heading path and text an earlier one had gets the next occurrence."""

    def __init__(self, identity: str, profile: Profile, tokenizer: str):
        self.identity, self.profile, self.tokenizer = identity, profile, tokenizer
        self._seen: dict[tuple[tuple[str, ...], str], int] = {}

    def __call__(self, heading_path: tuple[str, ...], text: str) -> str:
        key = (tuple(heading_path), text)
        occurrence = self._seen.get(key, 0)
        self._seen[key] = occurrence + 1
        return chunk_id(
            self.identity, self.profile, key[0], text, tokenizer=self.tokenizer, occurrence=occurrence
        )


def chunk_ids(
    identity: str, profile: Profile, tokenizer: str, chunks: list[tuple[tuple[str, ...], str]]
) -> list[str]:
    """The ids of one document's chunks, in order, from their ``(heading path, text)``."""
    ids = ChunkIds(identity, profile, tokenizer)
    return [ids(path, text) for path, text in chunks]


class Strategy(ABC):
    """One chunking strategy. ``stats`` gives the numbers of the chunks ``chunks`` gives; by default it
    derives them from the chunks, and a strategy with a cheaper way to count overrides it."""

    name: ClassVar[str]

    @abstractmethod
    def chunks(
        self, parsed: ParsedDocument, profile: Profile, counter: TokenCounter, doc_type: str
    ) -> list[Chunk]: ...

    def stats(
        self,
        parsed: ParsedDocument,
        profile: Profile,
        counter: TokenCounter,
        doc_type: str,
        *,
        with_ids: bool,
    ) -> list[ChunkStats]:
        return [
            ChunkStats(
                c.chunk_id if with_ids else None,
                c.n_tokens,
                c.header_tokens,
                c.overlap_tokens,
                c.over_limit,
                len(c.text.encode()),
                c.oversize,
            )
            for c in self.chunks(parsed, profile, counter, doc_type)
        ]
