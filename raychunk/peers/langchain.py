"""LangChain's markdown pipeline as its users write it: ``MarkdownHeaderTextSplitter`` on h1-h4
(header lines stripped into metadata), then ``RecursiveCharacterTextSplitter`` on each section,
sized in cl100k tokens with no overlap, and the section's heading path prefixed to each piece."""

from __future__ import annotations

from raychunk.peers import Piece
from raychunk.peers._common import cl100k, missing

__all__ = ["split_markdown"]

_HEADERS = [("#", "h1"), ("##", "h2"), ("###", "h3"), ("####", "h4")]


def split_markdown(text: str, max_tokens: int) -> list[Piece]:
    try:
        from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter
    except ImportError as e:
        raise missing("langchain_markdown", e) from e
    enc = cl100k()
    sections = MarkdownHeaderTextSplitter(headers_to_split_on=_HEADERS, strip_headers=True).split_text(text)
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=max_tokens, chunk_overlap=0, length_function=lambda t: len(enc.encode_ordinary(t))
    )
    out = []
    for section in sections:
        path = " > ".join(section.metadata[k] for _, k in _HEADERS if section.metadata.get(k))
        out.extend(Piece(body, path) for body in splitter.split_text(section.page_content))
    return out
