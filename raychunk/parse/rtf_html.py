"""The body an Outlook message keeps as RTF: the HTML encapsulated in it ([MS-OXRTFEX]), or its text.

Outlook often saves an HTML message with a plain-text body and a compressed RTF body only: the HTML
itself, with its lists and tables, is in the RTF, written as ``{\\*\\htmltagN <tag>}`` groups with the
text between them, and RTF-only formatting fenced by ``\\htmlrtf`` ... ``\\htmlrtf0``. ``rtf_html``
gives that HTML back: the tags' groups and the text outside the fences, escapes decoded (``\\'hh``
bytes in the document's code page, ``\\uN`` characters with their fallbacks skipped, ``\\{``, ``\\}``,
``\\\\``), ``\\par`` a line break and ``\\tab`` a tab; every other destination (font and colour
tables, ``\\*\\mhtmltag`` copies, pictures) left out. An RTF body that encapsulates no HTML
(``\\fromtext``, or RTF written as RTF) gives its text by the same rules, without the tags' groups.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["decompressed_rtf", "rtf_body"]

# A control word with its parameter and the one space that may end it, a control symbol, a
# group's brace, or a run of text.
_TOKEN = re.compile(rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\(.)|([{}])|([^\\{}]+)", re.S)
_LEADING_BREAK, _TRAILING_BREAK = re.compile(rb"\A(?:\r\n|\n|\r)"), re.compile(rb"(?:\r\n|\n|\r)\Z")
# Destinations that hold no text of the message, whatever their mark.
_SKIP = frozenset(
    b"fonttbl colortbl stylesheet info pict object header footer listtable listoverridetable "
    b"revtbl rsidtbl generator xmlnstbl themedata colorschememapping latentstyles datastore".split()
)
_CHARACTERS = {
    b"par": "\r\n",
    b"line": "\r\n",
    b"tab": "\t",
    b"lquote": "\u2018",
    b"rquote": "\u2019",
    b"ldblquote": "\u201c",
    b"rdblquote": "\u201d",
    b"bullet": "\u2022",
    b"endash": "\u2013",
    b"emdash": "\u2014",
    b"cell": "\t",
    b"row": "\r\n",
}
_SYMBOLS = {
    b"{": "{",
    b"}": "}",
    b"\\": "\\",
    b"~": "\u00a0",
    b"-": "",
    b"_": "\u2011",
    b"\n": "\r\n",
    b"\r": "\r\n",
}


def decompressed_rtf(data: bytes) -> bytes:
    """The RTF of an Outlook ``PidTagRtfCompressed`` property ([MS-OXRTFCP]: compressed or not)."""
    from compressed_rtf import decompress

    return decompress(data)


def rtf_body(rtf: bytes) -> tuple[str, bool] | None:
    """The HTML encapsulated in ``rtf`` and True, else its text and False; None if it is no RTF."""
    head = rtf[:1024]
    if not head.startswith(b"{\\rtf"):
        return None
    html = b"\\fromhtml1" in head
    codepage = re.search(rb"\\ansicpg(\d+)", head)
    try:
        decoder = codecs.getincrementaldecoder(f"cp{int(codepage[1])}" if codepage else "cp1252")("replace")
    except LookupError:
        decoder = codecs.getincrementaldecoder("cp1252")("replace")
    out: list[str] = []
    pending = bytearray()  # code-page bytes not yet decoded: a double-byte character comes as two escapes

    def emit_bytes(b: bytes) -> None:
        pending.extend(b)

    def emit_text(s: str) -> None:
        if pending:
            out.append(decoder.decode(bytes(pending)))
            pending.clear()
        out.append(s)

    # Per group: (skipping, suppressed by \htmlrtf, characters a \uN's fallback takes)
    skip, fenced, uc = False, False, 1
    stack: list[tuple[bool, bool, int]] = []
    destination = False  # the group just opened with \*
    fallback = 0  # characters of a \uN's fallback still to skip
    closed = False  # the last token closed a group
    pos, end = 0, len(rtf)
    while pos < end:
        m = _TOKEN.match(rtf, pos)
        if m is None:  # a lone backslash at the end, or a control word too long: its byte is text
            if not (skip or fenced):
                emit_bytes(rtf[pos : pos + 1])
            pos += 1
            continue
        pos = m.end()
        word, param, hexbyte, symbol, brace, text = m.groups()
        after_group, closed = closed, brace == b"}"
        if brace is not None:
            if brace == b"{":
                stack.append((skip, fenced, uc))
            elif stack:
                skip, fenced, uc = stack.pop()
            destination, fallback = False, 0
            continue
        if word is not None:
            if word == b"bin":  # binary data: its bytes are no RTF
                pos += max(0, int(param or 0))
                continue
            if destination:
                destination = False
                if word != b"htmltag" or not html:
                    skip = True
                continue
            if word in _SKIP:
                skip = True
            elif word == b"htmlrtf":
                fenced = param != b"0"
            elif word == b"uc":
                uc = max(0, int(param or 0))
            elif skip or fenced:
                pass
            elif word == b"u":
                n = int(param or 0) % 65536  # a negative parameter is the same code unit
                emit_text(chr(n))
                fallback = uc
            elif word in _CHARACTERS and not fallback:
                emit_text(_CHARACTERS[word])
            continue
        if symbol is not None:
            if symbol == b"*":
                destination = True
                continue
            if skip or fenced:
                continue
            if fallback:
                fallback -= 1
                continue
            if symbol in _SYMBOLS:
                emit_text(_SYMBOLS[symbol])
            continue
        if skip or fenced:
            continue
        if hexbyte is not None:
            if fallback:
                fallback -= 1
            else:
                emit_bytes(bytes.fromhex(hexbyte.decode()))
            continue
        if text is not None:
            if not html:
                text = text.replace(b"\r", b"").replace(b"\n", b"")  # RTF's own line breaks
            else:
                # The writer breaks its lines after a group and before the next; a line break
                # of the HTML itself is kept, as the text it is.
                if after_group:
                    text = _LEADING_BREAK.sub(b"", text, 1)
                if rtf.startswith(b"{", pos):
                    text = _TRAILING_BREAK.sub(b"", text, 1)
            if fallback:
                text, fallback = text[fallback:], max(0, fallback - len(text))
            emit_bytes(text)
    emit_text("")
    out.append(decoder.decode(b"", final=True))
    # a character past the BMP comes as two \\u code units, a surrogate pair
    text = "".join(out).encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text, html
