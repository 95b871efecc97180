"""The chunker: a parsed document and a profile in, chunk records out. Pure Python, no I/O.

Each strategy is one module behind ``Strategy``; ``REGISTRY`` maps a profile's strategy name to it.
structure, records, code and fixed pack pieces through ``packing.Packer``; the
``unstructured_by_title`` baseline (``baselines``) states its own invariants. The packing ones hold
these (tested with hypothesis, ``tests/test_chunking_properties.py`` and ``tests/test_exact_chunks.py``):
- a chunk's span is exact: from the first to the last document character its body was made from
  (mapped through rendering by ``align``, a pipe table's rows line for line where its source is
  one; list markers, record keys, repeated table header rows and the header line are context and
  span nothing); a split table's part spans its own rows; a span
  is contiguous, so it claims what the parser dropped between the chunk's blocks: a few words at
  most (``Packer.bridges``, tested in ``tests/test_span_dropped_text.py``);
- the chunks cover every non-empty block, and only declared overlap repeats text;
- ``n_tokens`` is ``counter.count(text)`` for the text embedded (header, separators, body), for any
  tokenizer; the header line takes at most ``header_share`` of ``max_tokens``;
- a chunk exceeds its cap only when it is one unit that cannot be split (a table's header cells
  over it; a word over the cap is cut at token boundaries), and is then flagged ``oversize``; a
  table row over the cap is cut by cells, its label and header narrowed to each part's columns;
- ids hash the document's identity (``Document.key``: its path relative to its input root), the
  setting, the tokenizer, the heading path, the text and its occurrence among equal (path, text)
  pairs: unique within a document, unchanged by an edit elsewhere in it, and the same document and
  profile give the same chunks and ids (``chunk_stats(with_ids=True)`` too).

Memory is proportional to the document's text, whatever its shape (a 20 MB single line is one block
and one sentence): a text over ``tokens.WINDOW`` characters is tokenized window by window, token
offsets, sentence boundaries and alignments are arrays of integers, and a long block's sentences
and words are counted and packed a window at a time, never a Python object per token or per word
of the whole block (``benchmarks/chunk_memory.py`` measures it).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from raychunk.chunking.baselines import UnstructuredByTitle
from raychunk.chunking.code import Code
from raychunk.chunking.fixed import Fixed
from raychunk.chunking.model import STRATEGIES, Chunk, ChunkStats, Profile, Strategy
from raychunk.chunking.records import Records
from raychunk.chunking.structure import Structure
from raychunk.document import ParsedDocument
from raychunk.tokens import TokenCounter

__all__ = ["REGISTRY", "Strategy", "check_profiles", "chunk_document", "chunk_stats"]

log = logging.getLogger(__name__)


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
    _check_core(profile)
    return REGISTRY[profile.strategy].stats(parsed, profile, counter, doc_type, with_ids=with_ids)


def chunk_document(
    parsed: ParsedDocument, profile: Profile, counter: TokenCounter, *, doc_type: str = "unknown"
) -> list[Chunk]:
    """Chunk one parsed document with one profile. Documents that did not parse give no chunks."""
    if parsed.document.status != "ok" or not parsed.blocks:
        return []
    _check_core(profile)
    return REGISTRY[profile.strategy].chunks(parsed, profile, counter, doc_type)


def _check_core(profile: Profile) -> None:
    if profile.strategy not in REGISTRY:
        raise ValueError(
            f"strategy={profile.strategy!r} is a peer library's chunker: it runs in raychunk eval and "
            f"raychunk price (raychunk.peers), not in the chunking core ({', '.join(STRATEGIES)})"
        )


def check_profiles(profiles: Mapping[str, Profile], counter: TokenCounter) -> list[str]:
    """Every profile's caps against the embedder's input limit (``counter.max_input``): a cap over it
    raises ``ValueError`` naming the doc type and the limit, unless the profile has
    ``allow_over_limit``; then the warning is logged and returned. No limit known, nothing to check."""
    limit = counter.max_input
    warnings = []
    for name, p in profiles.items():
        caps = [
            (k, v) for k, v in (("max_tokens", p.max_tokens), ("table_max_tokens", p.table_max_tokens)) if v
        ]
        over = [f"{k}={v}" for k, v in caps if limit is not None and v > limit]
        if not over:
            continue
        msg = (
            f"doc type {name!r}: {', '.join(over)} is over the input limit of {counter.name} "
            f"({limit} tokens): longer chunks would be truncated when embedded"
        )
        if not p.allow_over_limit:
            raise ValueError(f"{msg}; lower it, or set allow_over_limit: true on the profile")
        log.warning("%s (allowed by allow_over_limit)", msg)
        warnings.append(msg)
    return warnings
