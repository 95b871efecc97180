"""Chunking: structure-first by default, with records, fixed, code and baseline strategies."""

from raychunk.chunking.core import check_profiles, chunk_document, chunk_stats
from raychunk.chunking.headers import header_line
from raychunk.chunking.model import STRATEGIES, Chunk, ChunkStats, Profile, chunk_id

__all__ = [
    "STRATEGIES",
    "Chunk",
    "ChunkStats",
    "Profile",
    "check_profiles",
    "chunk_document",
    "chunk_id",
    "chunk_stats",
    "header_line",
]
