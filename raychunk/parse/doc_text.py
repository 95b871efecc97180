"""A Word 97-2003 document's main text, read straight from its piece table (MS-DOC: the FIB says
where the table stream keeps the CLX, whose pieces say where each run of characters lies in the
Word document stream, as 8-bit or UTF-16 text).

This is the fallback of ``word.read_doc`` for a document whose formatting msdoc2docx cannot read:
paragraphs and table cells, one block each, no headings, lists or tables, the notes and text
boxes after the body. A field gives its result, not its instruction; pictures, objects, note
marks, headers, footers and comments give nothing. Hidden text and tracked deletions are character
formatting, which this does not read: they are read as text.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING

from raychunk.parse._common import BlockStream, TextAssembler, clean_text, finish

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["DocStories", "doc_stories", "doc_text", "read_doc_text", "story_lines"]

_FC_CLX = 33  # fcClx's pair in FibRgFcLcb97
_COMPRESSED = 0x40000000
_MAX_CHARS = 64 * 2**20
# Word's 8-bit pieces are cp1252 (MS-DOC 2.4.1); the five bytes cp1252 leaves undefined keep their
# own code points.
_CP1252 = "".join(bytes([b]).decode("cp1252", "ignore") or chr(b) for b in range(256))


@dataclass(frozen=True, slots=True)
class DocStories:
    """A document's stories that give text, fields resolved to their results."""

    main: str
    footnotes: str
    endnotes: str
    textboxes: str


def doc_text(data: bytes) -> str | None:
    """The main story's characters, then its footnotes', endnotes' and text boxes'; None where the
    FIB, the CLX or a piece cannot be read (or the document is encrypted)."""
    stories = doc_stories(data)
    if stories is None:
        return None
    return "\r".join(x for x in (stories.main, stories.footnotes, stories.endnotes, stories.textboxes) if x)


def doc_stories(data: bytes) -> DocStories | None:
    """The stories that give text (headers, footers and comments give none); None as for
    ``doc_text``."""
    import olefile

    try:
        with olefile.OleFileIO(data) as ole:
            word = ole.openstream("WordDocument").read()
            if len(word) < 0x20 or word[:2] != b"\xec\xa5":
                return None
            flags = struct.unpack_from("<H", word, 0x0A)[0]
            if flags & 0x0100:  # fEncrypted
                return None
            table = ole.openstream("1Table" if flags & 0x0200 else "0Table").read()
        csw = struct.unpack_from("<H", word, 0x20)[0]
        at = 0x22 + 2 * csw
        cslw = struct.unpack_from("<H", word, at)[0]
        if cslw < 10:
            return None
        # FibRgLw97 from ccpText: the stories' lengths, in the order they follow one another
        text, ftn, hdd, mcr, atn, edn, txbx = struct.unpack_from("<7i", word, at + 2 + 3 * 4)
        at += 2 + 4 * cslw
        pairs = struct.unpack_from("<H", word, at)[0]
        if pairs <= _FC_CLX or min(text, ftn, hdd, mcr, atn, edn, txbx) < 0:
            return None
        end = text + ftn + hdd + mcr + atn + edn + txbx
        if end > _MAX_CHARS:
            return None
        fc_clx, lcb_clx = struct.unpack_from("<II", word, at + 2 + 8 * _FC_CLX)
        chars = _pieces(word, table[fc_clx : fc_clx + lcb_clx], end)
        endnotes_at = text + ftn + hdd + mcr + atn
        return DocStories(
            _resolve_fields(chars[:text]),
            _resolve_fields(chars[text : text + ftn]),
            _resolve_fields(chars[endnotes_at : endnotes_at + edn]),
            _resolve_fields(chars[endnotes_at + edn : end]),
        )
    except (OSError, struct.error, ValueError, IndexError, UnicodeDecodeError):
        return None


def story_lines(story: str) -> list[str]:
    """A story's paragraphs and cells, cleaned, the empty ones left out."""
    out = []
    for part in _BREAK.split(_ANCHORS.sub("", story)):
        line = clean_text(part.replace("\x0b", "\n").replace("\x1e", "-").replace("\x1f", "")).strip()
        if line:
            out.append(line)
    return out


def _pieces(word: bytes, clx: bytes, limit: int) -> str:
    """The characters from CP 0 to ``limit``, piece by piece."""
    at = 0
    while at < len(clx) and clx[at] == 0x01:  # a Prc: property modifiers, skipped
        at += 3 + struct.unpack_from("<H", clx, at + 1)[0]
    if at >= len(clx) or clx[at] != 0x02:
        raise ValueError("no piece table")
    size = struct.unpack_from("<I", clx, at + 1)[0]
    plc = clx[at + 5 : at + 5 + size]
    n = (len(plc) - 4) // 12
    if n < 1:
        raise ValueError("an empty piece table")
    cps = struct.unpack_from(f"<{n + 1}i", plc, 0)
    out, total = [], 0
    for k in range(n):
        start, end = cps[k], min(cps[k + 1], limit)
        if start >= limit or end <= start:
            continue
        fc = struct.unpack_from("<I", plc, 4 * (n + 1) + 8 * k + 2)[0]
        count = end - start
        if fc & _COMPRESSED:
            offset = (fc & ~_COMPRESSED) // 2
            raw = word[offset : offset + count]
            out.append("".join(_CP1252[b] for b in raw))
        else:
            raw = word[fc : fc + 2 * count]
            out.append(raw.decode("utf-16-le", "replace"))
        total += count
        if total > _MAX_CHARS:
            break
    return "".join(out)


_FIELD = re.compile(r"\x13[^\x13\x14\x15]*(?:\x14([^\x13\x14\x15]*))?\x15")


def _resolve_fields(text: str) -> str:
    """Each field (begin 0x13, instruction, separator 0x14, result, end 0x15) to its result, the
    innermost first."""
    for _ in range(32):  # fields nest; a damaged one that never closes stays as text
        resolved = _FIELD.sub(lambda m: m.group(1) or "", text)
        if resolved == text:
            break
        text = resolved
    return text


# A picture (0x01), a note or comment mark (0x02, 0x05) and a drawn object (0x08) stand in the text
# for something that is not text (0x08 would read as a backspace over the character before it).
_ANCHORS = re.compile(r"[\x01\x02\x05\x08]")
# A paragraph mark, a cell or row mark, a page or section break: a block ends.
_BREAK = re.compile(r"[\r\x07\x0c]")


def read_doc_text(data: bytes, base: Document, title: str, why: str) -> ParsedDocument | None:
    """The document's paragraphs and cells as paragraph blocks, ``why`` in the reason; None where
    even its text cannot be read."""
    text = doc_text(data)
    if text is None:
        return None
    asm, stream = TextAssembler(), BlockStream()
    for line in story_lines(text):
        start, end = asm.append(line)
        stream.add("paragraph", line, start, end)
    changes: dict = {"reason": f"read as plain text, without headings, lists or tables: {why}"}
    if title:
        changes["title"] = title[:200]
    return finish(base, asm.text, stream.blocks, **changes)
