"""E-mail: ``.eml`` read with the standard library's MIME parser, Outlook's ``.msg`` with
python-oxmsg; the body by raychunk's own text parsers.

The subject is a level-1 heading and the document's title; sender, recipients and date go to
metadata. The body is the message's HTML part where it has one (lists and tables as the sender
wrote them), else its plain-text part, parsed as an ``.html`` or ``.txt`` file would be; its
headings sit under the subject, one level down. A part whose character set Python does not know is
read as UTF-8 with replacement characters, not lost. Attachments are not read: the row names them.
An Outlook message's fields come from the internet headers it was received with; a message never
sent through the internet (a draft, a message within one Exchange server) has none, and its fields
come from Outlook's own properties.
"""

from __future__ import annotations

import dataclasses
import email.parser
import email.policy
import email.utils
from typing import TYPE_CHECKING

from raychunk.document import Block
from raychunk.parse._common import TextAssembler, clean_text, finish, listing
from raychunk.render import squash

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument

__all__ = ["mail_fields", "read_eml", "read_msg"]

_FIELDS = (("subject", "Subject"), ("from", "From"), ("to", "To"), ("cc", "Cc"), ("date", "Date"))


def read_eml(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    msg = email.parser.BytesParser(policy=email.policy.default).parsebytes(data)
    part = msg.get_body(preferencelist=("html", "plain"))
    body, html = None, False
    if part is not None:
        body, html = _content(part), part.get_content_subtype() == "html"
    attached = [a.get_filename() or a.get_content_type() for a in msg.iter_attachments()]
    return _message(base, mail_fields(msg), title, body, html, attached)


def read_msg(data: bytes, base: Document, title: str = "") -> ParsedDocument:
    from oxmsg import Message
    from oxmsg.domain import constants as c

    msg = Message.load(data)
    props = msg.properties
    headers = props.str_prop_value(c.PID_TRANSPORT_MESSAGE_HEADERS) or ""
    fields = mail_fields(email.parser.HeaderParser(policy=email.policy.default).parsestr(headers))
    if "subject" not in fields and msg.subject:
        fields = {"subject": squash(msg.subject), **fields}
    own = {
        "from": msg.sender or "",
        "to": props.str_prop_value(c.PID_DISPLAY_TO) or "",
        "cc": props.str_prop_value(c.PID_DISPLAY_CC) or "",
        "date": email.utils.format_datetime(msg.sent_date) if msg.sent_date else "",
    }
    for key, value in own.items():  # a draft, or mail that stayed inside Exchange: no internet headers
        if key not in fields and squash(value):
            fields[key] = squash(value)
    fields = {key: fields[key] for key, _ in _FIELDS if key in fields}
    html_body = msg.html_body
    html = bool(html_body and html_body.strip())
    body = html_body if html else msg.body
    attached = [a.file_name or a.mime_type or "an attachment" for a in msg.attachments]
    return _message(base, fields, title, body, html, attached)


def _message(
    base: Document, fields: dict[str, str], title: str, body_text: str | None, html: bool, attached: list[str]
) -> ParsedDocument:
    """The parse of a message: its subject a heading over its body's blocks."""
    from raychunk.parse.html import parse_html
    from raychunk.parse.text import parse_text

    subject = fields.pop("subject", "") or title
    body = None
    if body_text is not None:
        text = clean_text(body_text)
        if text.strip():
            body = (parse_html if html else parse_text)(text, base)
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
    if attached:
        notes.append(f"attachments not read ({listing(attached)})")
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
