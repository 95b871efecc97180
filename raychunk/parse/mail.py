"""E-mail: ``.eml`` read with the standard library's MIME parser, Outlook's ``.msg`` with
python-oxmsg; the body by raychunk's own text parsers (an Outlook message's HTML kept only inside
its compressed RTF body taken back out of it: ``rtf_html``).

The subject is a level-1 heading and the document's title; sender, recipients and date go to
metadata. The body is the message's HTML part where it has one (lists and tables as the sender
wrote them), else its plain-text part, parsed as an ``.html`` or ``.txt`` file would be; its
headings sit under the subject, one level down. A part whose character set Python does not know is
read as UTF-8 with replacement characters, not lost. Each attached file is read as a file of its
kind would be (a PDF, a Word document, a forwarded message), under a heading ``Attachment: name``
below the subject, one level deep (``parse.attachments``; an attached message's own attachments are
named, not read, in the reason); a message attached to an Outlook message as an item (a storage in
the file, not a file) is read the same way; a picture shown in the body, an attachment that gives
no text and one that is not a file are named in the row's reason.
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
import functools
import html as html_lib
import re
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from raychunk.document import Block, Document, ParsedDocument, content_hash
from raychunk.parse._common import TextAssembler, clean_text, finish, listing
from raychunk.render import squash

if TYPE_CHECKING:
    from raychunk.parse import ParseOptions

__all__ = ["mail_fields", "read_eml", "read_mbox", "read_msg"]

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


def read_mbox(
    data: bytes, base: Document, title: str = "", options: ParseOptions | None = None
) -> ParsedDocument:
    """A mailbox (``.mbox``: Thunderbird's folders, Google Takeout's export): its messages in order,
    each read as an ``.eml`` file is (its subject a level-1 heading over its body and attachments),
    with a line of who sent it to whom and when, since a mailbox's messages share one documents row
    and its metadata. What a message left unread is said in the row's reason, message by message."""
    asm = TextAssembler()
    blocks: list[Block] = []
    notes: list[str] = []
    count = 0
    for count, raw in enumerate(_mbox_messages(data), 1):
        message = read_eml(raw, dataclasses.replace(base, doc_id=f"{base.doc_id}#{count}"), "", options)
        doc, found = message.document, list(message.blocks)
        subject = found[0].text if found and found[0].kind == "heading" and found[0].level == 1 else ""
        name = subject or f"Message {count}"
        if doc.reason:
            notes.append(f"{name}: {_short(squash(doc.reason))}")
        if not found:
            continue
        if not subject:  # a message without a subject: a heading of its own, its blocks below it
            start, end = asm.append(name)
            blocks.append(Block("heading", name, start, end, level=1))
        else:
            _place(asm, blocks, found[:1], (), keep_pages=False)
            found = found[1:]
        fields = dict(doc.metadata)
        sent = "; ".join(
            f"{key.capitalize()}: {fields[key]}" for key in ("from", "to", "date") if fields.get(key)
        )
        if sent:
            start, end = asm.append(sent)
            blocks.append(Block("paragraph", sent, start, end, heading_path=(name,)))
        _place(asm, blocks, found, () if subject else (name,), keep_pages=False)
    # the mailbox's own name: its first message's subject would head every chunk of the others
    changes: dict = {"title": (title or PurePosixPath(base.source).name)[:200]}
    reasons = [f"a mailbox of {count} messages"] if count else ["no messages: not a mailbox"]
    if notes:
        reasons.append(f"in messages: {listing(notes)}")
    changes["reason"] = "; ".join(reasons)
    return finish(base, asm.text, blocks, **changes)


# A message starts at a line beginning "From " (the envelope line) at the start or after a line
# break; a body line that begins so is written ">From " by the mailbox's writer.
_ENVELOPE = re.compile(rb"(?:\A|\n)From [^\n]*\n")


def _mbox_messages(data: bytes) -> Iterator[bytes]:
    """Each message of a mailbox, its envelope line off and its ``>From`` lines unquoted."""
    found = list(_ENVELOPE.finditer(data))
    for k, m in enumerate(found):
        end = found[k + 1].start() if k + 1 < len(found) else len(data)
        yield _FROM_QUOTED.sub(rb"\1", data[m.end() : end])


_FROM_QUOTED = re.compile(rb"(?m)^>(>*From )")


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

    msg = Message.load(data)
    fields, body, html = _outlook_message(msg)
    read = options is not None and options.attachments
    files = [_outlook_file(a, base, options if read else None) for a in msg.attachments]
    return _message(base, fields, title, body, html, files, options)


def _outlook_message(msg) -> tuple[dict[str, str], str | None, bool]:
    """An Outlook message's fields, its body and whether the body is HTML."""
    from oxmsg.domain import constants as c

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
    if html_body and html_body.strip():
        return fields, html_body, True
    plain = _text(msg.body)
    kept = _rtf_body(props.binary_prop_value(c.PID_RTF_COMPRESSED), plain)
    return (fields, *kept) if kept else (fields, plain or None, False)


def _rtf_body(data, plain: str) -> tuple[str, bool] | None:
    """The body an Outlook message keeps as compressed RTF, where it has no HTML body: the HTML
    encapsulated in it (Outlook often saves an HTML message so, beside a plain-text body without its
    lists and tables), or its text where there is no plain body. The HTML is taken only where it
    holds the plain body's words (``_COVERAGE`` of them): a damaged RTF leaves the plain body."""
    from raychunk.parse.rtf_html import decompressed_rtf, rtf_body

    if not isinstance(data, bytes) or not data:
        return None
    try:
        found = rtf_body(decompressed_rtf(data))
    except Exception:  # compressed RTF that does not decompress: the plain body stands
        return None
    if found is None:
        return None
    text, html = found
    if plain.strip():
        if not html:
            return None  # the same text, as Outlook wrote it
        words = set(_WORD.findall(plain.lower()))
        shown = set(_WORD.findall(html_lib.unescape(_TAGS.sub(" ", text)).lower()))
        if words and len(words & shown) < _COVERAGE * len(words):
            return None
    elif not _WORD.search(_TAGS.sub(" ", text) if html else text):
        return None
    return text, html


_WORD = re.compile(r"\w+")
# What of an HTML body is no text: its head and style sheets, comments, tags.
_TAGS = re.compile(r"(?is)<head\b.*?</head>|<style\b.*?</style>|<!--.*?-->|<[^>]*>")
_COVERAGE = 0.9


def _text(value) -> str:
    """A property's text; '' for none, or for a damaged property holding another type than its tag
    says (an integer for a time, bytes for a name). A string ends at a NUL, as Outlook reads it."""
    return value.partition("\x00")[0] if isinstance(value, str) else ""


def _message(
    base: Document,
    fields: dict[str, str],
    title: str,
    body_text: str | None,
    html: bool,
    files: list[tuple[str, bytes | ParsedDocument | None, str]],
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
    unread, inner = [], []
    for name, data, why in files:
        if why or data is None or options is None or not options.attachments:
            unread.append(f"{name} ({why})" if why else name)
            continue
        # one level deep: an attached message's own attachments are named, not read
        part = (
            data
            if isinstance(data, ParsedDocument)
            else parse_document(data, name, options=dataclasses.replace(options, attachments=False))
        )
        if part.document.status != "ok" or not part.blocks:
            unread.append(f"{name} ({part.document.status}: {_short(squash(part.document.reason))})")
            continue
        if part.document.reason:  # what the attachment itself left unread stays said
            inner.append(f"{name}: {_short(squash(part.document.reason))}")
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
    if inner:
        notes.append(f"in attachments: {listing(inner)}")
    if notes:
        changes["reason"] = "; ".join(notes)
    return finish(base, asm.text, blocks, **changes)


def _short(why: str) -> str:
    return why if len(why) <= 120 else why[:119].rsplit(" ", 1)[0] + "…"


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


def _outlook_file(attachment, base: Document, options: ParseOptions | None):
    """An attachment of an Outlook message: its name, its bytes (or, for a message attached whole,
    its parse when ``options`` say attachments are read), and why it is not read."""
    from oxmsg.domain import constants as c

    name = squash(attachment.file_name or "") or attachment.mime_type or "an attachment"
    content_id = attachment.properties.str_prop_value(c.PID_ATTACH_CONTENT_ID)
    if (attachment.mime_type or "").startswith("image/") and content_id:
        return name, None, "a picture in the body"
    data = attachment.file_bytes
    if data:
        return name, data, ""
    inner = _embedded(attachment)
    if inner is None:
        return name, None, "an attached item, not a file"
    shown = squash(_text(attachment.properties.str_prop_value(_PID_DISPLAY_NAME)))
    try:
        fields, body, html = _outlook_message(inner)
        name = shown or fields.get("subject") or "an attached message"
        if options is None:
            return name, None, ""
        if fields.get("subject") == name:  # its heading, "Attachment: <subject>", says it once
            del fields["subject"]
        where = f"{base.doc_id}\x1f{attachment._storage.path}".encode("utf-8", "surrogatepass")
        inner_base = Document(content_hash(where), name, "msg", "ok")
        # one level deep: the attached message's own attachments are named, not read
        files = [_outlook_file(a, inner_base, None) for a in inner.attachments]
        parsed = _message(
            inner_base, fields, "", body, html, files, dataclasses.replace(options, attachments=False)
        )
    except Exception:  # its storage is damaged: named, not the message failed
        return shown or "an attached message", None, "an attached message that cannot be read"
    return name, parsed, ""


# An Outlook attachment's display name: for a message attached whole, its subject as Outlook shows it.
_PID_DISPLAY_NAME = 0x3001
# Where a message attached whole keeps its storage (PidTagAttachDataObject, an object).
_EMBEDDED_STORAGE = "__substg1.0_3701000D"


def _embedded(attachment):
    """The message an Outlook attachment holds whole (attach method 5, "embedded message"): the
    attachment's storage holds it, as a message file holds its root, except that its properties
    stream has the 24-byte header of an embedded message, not the 32 of a file's root (MS-OXMSG
    2.4.1.2). None for another attachment."""
    if attachment.properties.int_prop_value(_PID_ATTACH_METHOD) != _EMBEDDED_MESSAGE:
        return None
    storage = next((s for s in attachment._storage.storages if s.name == _EMBEDDED_STORAGE), None)
    return None if storage is None else _embedded_message_class()(storage)


@functools.cache
def _embedded_message_class():
    from oxmsg import Message
    from oxmsg.properties import Properties

    class EmbeddedMessage(Message):
        @property
        def _properties(self):
            return Properties(self._storage, properties_header_offset=24)

    return EmbeddedMessage


_PID_ATTACH_METHOD, _EMBEDDED_MESSAGE = 0x3705, 5


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
