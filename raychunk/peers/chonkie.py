"""Chonkie's ``RecursiveChunker`` with its default rules (paragraphs, sentences, punctuation, words;
nothing from the hub), sized by the cl100k encoding object passed in."""

from __future__ import annotations

from raychunk.peers import Piece
from raychunk.peers._common import cl100k, missing

__all__ = ["split_recursive"]


def split_recursive(text: str, max_tokens: int) -> list[Piece]:
    try:
        from chonkie import RecursiveChunker
    except ImportError as e:
        raise missing("chonkie_recursive", e) from e
    chunker = RecursiveChunker(tokenizer=cl100k(), chunk_size=max_tokens)
    return [Piece(c.text, "", c.start_index) for c in chunker.chunk(text)]
