"""E-mail (.eml), read with the standard library's MIME parser and raychunk's own text parsers.

The subject is a level-1 heading and the document's title; sender, recipients and date go to
metadata. The body is the message's HTML part where it has one (lists and tables as the sender
wrote them), else its plain-text part, parsed as an ``.html`` or ``.txt`` file would be; its
headings sit under the subject, one level down. A part whose character set Python does not know is
read as UTF-8 with replacement characters, not lost. Attachments are not read: the row names them.
"""

from __future__ import annotations

import dataclasses
import email.parser
import email.policy
from typing import TYPE_CHECKING

from raychunk.document import Block
from raychunk.parse._common import TextAssembler, clean_text, finish
from raychunk.render import squash

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["mail_fields", "read_eml"]

_FIELDS = (("subject", "Subject"), ("from", "From"), ("to", "To"), ("cc", "Cc"), ("date", "Date"))


def read_eml(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    from raychunk.parse.html import parse_html
    from raychunk.parse.text import parse_text

    msg = email.parser.BytesParser(policy=email.policy.default).parsebytes(data)
    fields = mail_fields(msg)
    subject = fields.pop("subject", "") or title
    part = msg.get_body(preferencelist=("html", "plain"))
    body = None
    if part is not None:
        text = clean_text(_content(part))
        if text.strip():
            read = parse_html if part.get_content_subtype() == "html" else parse_text
            body = read(text, base)
    asm = TextAssembler()
    blocks = []
    path: tuple[str, ...] = ()
    if subject:
        start, end = asm.append(subject)
        blocks.append(Block("heading", subject, start, end, level=1))
        path = (subject,)
    for b in body.blocks if body is not None else ():
        if b.kind == "page_break" or not b.text:
            continue
        start, end = asm.append(b.text)
        blocks.append(
            dataclasses.replace(
                b,
                char_start=start,
                char_end=end,
                heading_path=path + b.heading_path,
                level=b.level + 1 if b.kind == "heading" else b.level,
            )
        )
    changes: dict = {"metadata": tuple(fields.items())}
    if subject:
        changes["title"] = subject[:200]
    notes = [body.document.reason] if body is not None and body.document.reason else []
    attached = [a.get_filename() or a.get_content_type() for a in msg.iter_attachments()]
    if attached:
        shown = ", ".join(attached[:3]) + (f" and {len(attached) - 3} more" if len(attached) > 3 else "")
        notes.append(f"attachments not read ({shown})")
    if notes:
        changes["reason"] = "; ".join(notes)
    return finish(base, asm.text, blocks, **changes)


def mail_fields(msg) -> dict[str, str]:
    """Subject, from, to, cc and date of a message, each as one line; a header that cannot be read
    is left out, the others kept."""
    fields = {}
    for key, header in _FIELDS:
        try:
            value = msg.get(header)
        except Exception:  # a malformed header: skip it, keep the rest
            value = None
        if value:
            fields[key] = squash(str(value))
    return fields


def _content(part) -> str:
    try:
        return part.get_content()
    except (LookupError, UnicodeError, ValueError):  # a charset Python does not know: UTF-8, replaced
        raw = part.get_payload(decode=True) or b""
        return raw.decode("utf-8", errors="replace")
