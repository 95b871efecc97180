"""The office, book and e-mail formats, one row each: what reads a format (raychunk's own reader, and
what to install for it), what its file is (a zip package and what it must hold, an OLE container,
text), and the features that steer its reading. ``parse/office.py`` reads a format's row once and
asks it, never the format's name; a new office format is one row here (and its extension in
``detect.py``). Standard library only: the dispatcher lists its formats from here."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FORMATS", "OfficeFormat"]


@dataclass(frozen=True, slots=True)
class OfficeFormat:
    name: str
    # The reader, ``module.function`` under ``raychunk.parse``: it takes the bytes, the document and
    # the package's title, and gives the parse.
    reader: str
    # What ``pip install`` needs when the reader's library is missing.
    install: str = ""
    # What a reason calls a file of this format; the format's name where unset.
    what: str = ""
    # A zip package: "ooxml" (docx, pptx, xlsx: an encrypted one is an OLE container; a DOCTYPE in
    # a part is stripped), "odf" or "epub"; and the parts it must hold (a folder ends with "/").
    package: str = ""
    parts: tuple[str, ...] = ()
    # An OLE compound file (msg read by python-oxmsg, xls by xlrd, doc and ppt by their converters):
    # what it is.
    ole: str = ""
    # Text (e-mail, Org): binary content behind its extension is refused first, as for every text format.
    text: bool = False
    # E-mail: its reader takes the parse options too, to read the files attached to a message.
    attachments: bool = False

    @property
    def called(self) -> str:
        return self.what or self.name


_OOXML = ("[Content_Types].xml",)

# fmt: off
_ROWS = (
    OfficeFormat("docx", "word.read_docx", "python-docx", what="Word document", package="ooxml",
                 parts=(*_OOXML, "word/")),
    OfficeFormat("pptx", "slides.read_pptx", "python-pptx", what="PowerPoint deck", package="ooxml",
                 parts=(*_OOXML, "ppt/")),
    OfficeFormat("xlsx", "sheets.read_xlsx", "lxml", what="workbook", package="ooxml", parts=(*_OOXML, "xl/")),
    OfficeFormat("xls", "sheets.read_xls", "xlrd", what="workbook", ole="legacy Excel workbook"),
    OfficeFormat("epub", "book.read_epub", what="EPUB book", package="epub", parts=("META-INF/container.xml",)),
    # odt is not html-born: pandoc turns it into a docx, read as one.
    OfficeFormat("odt", "word.read_odt", "python-docx pypandoc-binary", what="OpenDocument text", package="odf",
                 parts=("content.xml",)),
    OfficeFormat("ods", "sheets.read_ods", "lxml", what="OpenDocument spreadsheet", package="odf",
                 parts=("content.xml",)),
    OfficeFormat("odp", "odp.read_odp", "lxml", what="OpenDocument presentation", package="odf",
                 parts=("content.xml",)),
    OfficeFormat("eml", "mail.read_eml", what="e-mail", text=True, attachments=True),
    OfficeFormat("mbox", "mail.read_mbox", what="mailbox", text=True, attachments=True),
    OfficeFormat("msg", "mail.read_msg", "python-oxmsg", what="Outlook message", ole="Outlook message",
                 attachments=True),
    OfficeFormat("rtf", "pandoc.read_rtf", "pypandoc-binary", what="RTF document"),
    OfficeFormat("org", "pandoc.read_org", "pypandoc-binary", what="Org document", text=True),
    # Word and PowerPoint 97-2003: msdoc2docx and ppt2pptx (pure Python, no LibreOffice) convert them
    # into a docx and a pptx, read as one.
    OfficeFormat("doc", "word.read_doc", "msdoc2docx", what="legacy Word document", ole="legacy Word document"),
    OfficeFormat("ppt", "slides.read_ppt", "ppt2pptx", what="legacy PowerPoint deck", ole="legacy PowerPoint deck"),
)
# fmt: on
FORMATS: dict[str, OfficeFormat] = {f.name: f for f in _ROWS}
