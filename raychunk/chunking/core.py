"""The chunker: a parsed document and a profile in, chunk records out. Pure Python, no I/O.

Each strategy is one module behind ``Strategy``; ``REGISTRY`` maps a profile's strategy name to it.
structure, records, code and fixed pack pieces through ``packing.Packer``; the
``unstructured_by_title`` baseline (``baselines``) states its own invariants. The packing ones hold
these (tested with hypothesis):
- every piece of a chunk's body is a span of the document text, and the chunk's span covers them;
- the chunks cover every non-empty block, and only declared overlap repeats text;
- a chunk exceeds ``max_tokens`` only when it holds one block that cannot be split;
- the same document and profile give the same chunks and ids.
"""

from __future__ import annotations

from typing import Protocol

from raychunk.chunking.baselines import UnstructuredByTitle
from raychunk.chunking.code import Code
from raychunk.chunking.fixed import Fixed
from raychunk.chunking.model import STRATEGIES, Chunk, ChunkStats, Profile
from raychunk.chunking.records import Records
from raychunk.chunking.structure import Structure
from raychunk.document import ParsedDocument
from raychunk.tokens import TokenCounter

__all__ = ["REGISTRY", "Strategy", "chunk_document", "chunk_stats"]


class Strategy(Protocol):
    """One chunking strategy. ``stats`` gives the numbers of the chunks ``chunks`` gives."""

    name: str

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
    ) -> list[ChunkStats]: ...


REGISTRY: dict[str, Strategy] = {
    s.name: s for s in (Structure(), Records(), Fixed(), Code(), UnstructuredByTitle())
}
assert tuple(REGISTRY) == STRATEGIES, "model.STRATEGIES and the registry must name the same strategies"


def chunk_stats(
    parsed: ParsedDocument,
    profile: Profile,
    counter: TokenCounter,
    *,
    doc_type: str = "unknown",
    with_ids: bool = False,
) -> list[ChunkStats]:
    """The numbers of ``chunk_document``'s chunks (same boundaries, counts and ids), computed without
    building their texts: a grid of settings prices a corpus at little more than the cost of one."""
    if parsed.document.status != "ok" or not parsed.blocks:
        return []
    return REGISTRY[profile.strategy].stats(parsed, profile, counter, doc_type, with_ids=with_ids)


def chunk_document(
    parsed: ParsedDocument, profile: Profile, counter: TokenCounter, *, doc_type: str = "unknown"
) -> list[Chunk]:
    """Chunk one parsed document with one profile. Documents that did not parse give no chunks."""
    if parsed.document.status != "ok" or not parsed.blocks:
        return []
    return REGISTRY[profile.strategy].chunks(parsed, profile, counter, doc_type)
