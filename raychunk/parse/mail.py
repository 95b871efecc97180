"""E-mail: ``.eml`` read with the standard library's MIME parser, Outlook's ``.msg`` with
python-oxmsg; the body by raychunk's own text parsers.

The subject is a level-1 heading and the document's title; sender, recipients and date go to
metadata. The body is the message's HTML part where it has one (lists and tables as the sender
wrote them), else its plain-text part, parsed as an ``.html`` or ``.txt`` file would be; its
headings sit under the subject, one level down. A part whose character set Python does not know is
read as UTF-8 with replacement characters, not lost. Each attached file is read as a file of its
kind would be (a PDF, a Word document, a forwarded message), under a heading ``Attachment: name``
below the subject, one level deep (``parse.attachments``; an attached message's own attachments are
named, not read); a picture shown in the body, an attachment that gives no text and one that is
not a file are named in the row's reason.
An Outlook message's fields come from the internet headers it was received with; a message never
sent through the internet (a draft, a message within one Exchange server) has none, and its fields
come from Outlook's own properties.
"""

from __future__ import annotations

import dataclasses
import datetime
import email.message
import email.parser
import email.policy
import email.utils
from typing import TYPE_CHECKING

from raychunk.document import Block
from raychunk.parse._common import TextAssembler, clean_text, finish, listing
from raychunk.render import squash

if TYPE_CHECKING:
    from raychunk.document import Document, ParsedDocument
    from raychunk.parse import ParseOptions

__all__ = ["mail_fields", "read_eml", "read_msg"]

# A message written back as it was received: no header refolded (the standard library's folding
# raises on some damaged parameters and takes minutes on others).
_AS_RECEIVED = email.policy.default.clone(refold_source="none", max_line_length=None)
_FIELDS = (("subject", "Subject"), ("from", "From"), ("to", "To"), ("cc", "Cc"), ("date", "Date"))


def read_eml(
    data: bytes, base: Document, title: str = "", options: ParseOptions | None = None
) -> ParsedDocument:
    msg = email.parser.BytesParser(policy=email.policy.default).parsebytes(data)
    try:
        part = msg.get_body(preferencelist=("html", "plain"))
        attached = list(msg.iter_attachments())
    except (AttributeError, TypeError):  # a part the parser kept as text where a part should be
        parts = list(_parts(msg))
        attached = [x for x in parts if _attached(x)]
        texts = [
            x for x in parts if x.get_content_type() in ("text/html", "text/plain") and x not in attached
        ]
        part = next((x for x in texts if x.get_content_subtype() == "html"), texts[0] if texts else None)
    body, html = None, False
    if part is not None:
        body, html = _content(part), part.get_content_subtype() == "html"
    files = [_mime_file(a) for a in attached]
    return _message(base, mail_fields(msg), title, body, html, files, options)


def _attached(part) -> bool:
    try:
        return part.is_attachment()
    except Exception:  # a Content-Disposition the header parser cannot read
        return False


def _parts(msg):
    """The message and its parts, depth first, past any part the parser kept as a string."""
    yield msg
    if msg.is_multipart():
        for sub in msg.get_payload():
            if isinstance(sub, email.message.Message):
                yield from _parts(sub)


def read_msg(
    data: bytes, base: Document, title: str = "", options: ParseOptions | None = None
) -> ParsedDocument:
    from oxmsg import Message
    from oxmsg.domain import constants as c

    msg = Message.load(data)
    props = msg.properties
    headers = _text(props.str_prop_value(c.PID_TRANSPORT_MESSAGE_HEADERS))
    fields = mail_fields(email.parser.HeaderParser(policy=email.policy.default).parsestr(headers))
    if "subject" not in fields and _text(msg.subject):
        fields = {"subject": squash(msg.subject), **fields}
    sent = msg.sent_date
    own = {
        "from": _text(msg.sender),
        "to": _text(props.str_prop_value(c.PID_DISPLAY_TO)),
        "cc": _text(props.str_prop_value(c.PID_DISPLAY_CC)),
        "date": email.utils.format_datetime(sent) if isinstance(sent, datetime.datetime) else "",
    }
    for key, value in own.items():  # a draft, or mail that stayed inside Exchange: no internet headers
        if key not in fields and squash(value):
            fields[key] = squash(value)
    fields = {key: fields[key] for key, _ in _FIELDS if key in fields}
    html_body = msg.html_body
    html = bool(html_body and html_body.strip())
    body = html_body if html else msg.body
    files = [_outlook_file(a, c) for a in msg.attachments]
    return _message(base, fields, title, body, html, files, options)


def _text(value) -> str:
    """A property's text; '' for none, or for a damaged property holding another type than its tag
    says (an integer for a time, bytes for a name)."""
    return value if isinstance(value, str) else ""


def _message(
    base: Document,
    fields: dict[str, str],
    title: str,
    body_text: str | None,
    html: bool,
    files: list[tuple[str, bytes | None, str]],
    options: ParseOptions | None,
) -> ParsedDocument:
    """The parse of a message: its subject a heading over its body's blocks, then each attachment
    read (``files``: name, bytes or None, why it is not read) under a heading with its name."""
    from raychunk.parse import parse_document
    from raychunk.parse.html import parse_html
    from raychunk.parse.text import parse_text

    subject = fields.pop("subject", "") or title
    body = None
    if body_text is not None:
        text = clean_text(body_text)
        if text.strip():
            body = (parse_html if html else parse_text)(text, base)
    asm = TextAssembler()
    blocks: list[Block] = []
    path: tuple[str, ...] = ()
    if subject:
        start, end = asm.append(subject)
        blocks.append(Block("heading", subject, start, end, level=1))
        path = (subject,)
    _place(asm, blocks, body.blocks if body is not None else (), path, keep_pages=True)
    unread = []
    for name, data, why in files:
        if why or data is None or options is None or not options.attachments:
            unread.append(f"{name} ({why})" if why else name)
            continue
        # one level deep: an attached message's own attachments are named, not read
        part = parse_document(data, name, options=dataclasses.replace(options, attachments=False))
        if part.document.status != "ok" or not part.blocks:
            why = squash(part.document.reason)
            why = why if len(why) <= 120 else why[:119].rsplit(" ", 1)[0] + "…"
            unread.append(f"{name} ({part.document.status}: {why})")
            continue
        heading = f"Attachment: {name}"
        start, end = asm.append(heading)
        blocks.append(Block("heading", heading, start, end, heading_path=path, level=len(path) + 1))
        _place(asm, blocks, part.blocks, (*path, heading), keep_pages=False)
    changes: dict = {"metadata": tuple(fields.items())}
    if subject:
        changes["title"] = subject[:200]
    notes = [body.document.reason] if body is not None and body.document.reason else []
    if unread:
        notes.append(f"attachments not read ({listing(unread)})")
    if notes:
        changes["reason"] = "; ".join(notes)
    return finish(base, asm.text, blocks, **changes)


def _place(
    asm: TextAssembler, blocks: list[Block], found, path: tuple[str, ...], *, keep_pages: bool
) -> None:
    """``found`` blocks appended to the message's text under ``path``, their headings that much
    deeper; an attachment's pages are its own, not the message's."""
    for b in found:
        if b.kind == "page_break" or not b.text:
            continue
        start, end = asm.append(b.text)
        blocks.append(
            dataclasses.replace(
                b,
                char_start=start,
                char_end=end,
                heading_path=path + b.heading_path,
                level=b.level + len(path) if b.kind == "heading" else b.level,
                pages=b.pages if keep_pages else (),
            )
        )


def _mime_file(part) -> tuple[str, bytes | None, str]:
    """An attachment of a MIME message: its name, its bytes, and why it is not read ('' if it is).
    A header the standard library cannot parse, or a forwarded message it cannot write back,
    leaves that attachment named, not the message failed."""
    try:
        name = squash(part.get_filename() or "")
        kind = part.get_content_type()
        inline = part.get("Content-ID") and part.get_content_disposition() != "attachment"
    except Exception:
        return "an attachment", None, "its headers are damaged"
    if kind == "message/rfc822":  # a forwarded message, attached whole
        inner = part.get_payload()
        try:
            data = inner[0].as_bytes(policy=_AS_RECEIVED) if isinstance(inner, list) and inner else None
        except Exception:
            data = None
        return name or "message.eml", data, "" if data else "a forwarded message that cannot be read"
    if kind.startswith("image/") and inline:
        return name or kind, None, "a picture in the body"
    try:
        data = part.get_payload(decode=True)
    except Exception:  # a transfer encoding that does not decode: named, not read
        data = None
    return name or kind, data, "" if data else "no content"


def _outlook_file(attachment, c) -> tuple[str, bytes | None, str]:
    """An attachment of an Outlook message: its name, its bytes, and why it is not read."""
    name = squash(attachment.file_name or "") or attachment.mime_type or "an attachment"
    content_id = attachment.properties.str_prop_value(c.PID_ATTACH_CONTENT_ID)
    if (attachment.mime_type or "").startswith("image/") and content_id:
        return name, None, "a picture in the body"
    data = attachment.file_bytes
    return name, data, "" if data else "an attached item, not a file"


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
