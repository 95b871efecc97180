"""SVG images (``.svg``): the words a viewer shows or announces, never the drawing's markup.

The image's own ``<title>`` and ``<desc>`` (the root's children, what a screen reader announces)
each a paragraph, then the words of its ``<text>`` elements (with their ``<tspan>`` runs) in
document order as one paragraph: a diagram's labels. A title or description inside a shape is a
tooltip, or in Graphviz's output a node's id, and is left out, as are paths, styles, scripts and
metadata. The
document's text is those paragraphs, which every span points into. An SVG with no such text is
``no_text``, one that is not well-formed XML ``failed``. External entities are never read, and
expat refuses entity expansion that grows past its amplification limit ("billion laughs").
"""

from __future__ import annotations

import dataclasses

from raychunk.document import Document, ParsedDocument

__all__ = ["parse_svg", "svg_texts"]

_SKIP = frozenset({"style", "script", "metadata", "defs"})


def parse_svg(text: str, base: Document) -> ParsedDocument:
    from raychunk.parse.text import parse_text

    try:
        texts = svg_texts(text)
    except ValueError as e:
        return ParsedDocument(
            dataclasses.replace(base, status="failed", reason=f"not a well-formed SVG: {e}")
        )
    if not texts:
        why = "an SVG image with no text in it (no title, description or text element)"
        return ParsedDocument(dataclasses.replace(base, status="no_text", reason=why))
    return parse_text("\n\n".join(texts) + "\n", base)


def svg_texts(text: str) -> list[str]:
    """The paragraphs of an SVG's words: its title, its description, then its labels.

    >>> svg_texts('<svg><title>Load</title><g><title>node1</title><text x="1">CPU <tspan>95%</tspan></text>'
    ...           '<text>disk</text></g></svg>')
    ['Load', 'CPU 95% disk']
    """
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(text.lstrip("\ufeff"))
    except ET.ParseError as e:
        raise ValueError(str(e)) from None
    out = [words for el in root if _name(el) in ("title", "desc") and (words := _words(el))]
    labels: list[str] = []

    def walk(el) -> None:
        name = _name(el)
        if name in _SKIP:
            return
        if name == "text":
            if words := _words(el):
                labels.append(words)
            return
        for child in el:
            walk(child)

    walk(root)
    return out + ([" ".join(labels)] if labels else [])


def _name(el) -> str:
    return el.tag.rsplit("}", 1)[-1].lower() if isinstance(el.tag, str) else ""


def _words(el) -> str:
    return " ".join("".join(el.itertext()).split())
