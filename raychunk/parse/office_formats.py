"""The office, book and e-mail formats, one row each: what reads a format (raychunk's own reader, or
unstructured's partitioner for legacy .doc and .ppt, and what to install for it), what its file is (a zip package and what it must hold, an OLE container,
text), and the features that decide how its elements become blocks. ``parse/office.py`` reads a
format's row once and asks it, never the format's name; a new office format is one row here (and
its extension in ``detect.py``). Standard library only: the dispatcher lists its formats from here."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FORMATS", "OfficeFormat"]


@dataclass(frozen=True, slots=True)
class OfficeFormat:
    name: str
    # unstructured.partition.<module>.<function>, and what ``pip install`` needs when it is missing.
    module: str
    function: str
    install: str
    # What a reason calls a file of this format; the format's name where unset.
    what: str = ""
    # A zip package: "ooxml" (docx, pptx, xlsx: an encrypted one is an OLE container; a DOCTYPE in
    # a part is stripped), "odf" or "epub"; and the parts it must hold (a folder ends with "/").
    package: str = ""
    parts: tuple[str, ...] = ()
    # An OLE compound file (msg read by python-oxmsg, xls by xlrd): what it is.
    ole: str = ""
    # What unstructured converts it through: "docx" (a legacy .doc that LibreOffice converted); its
    # narrative-text model is skipped there.
    read_as: str = ""
    # unstructured's own refusal (UnprocessableEntityError) means a damaged file.
    refusal_is_damage: bool = False
    # Text (e-mail, Org): binary content behind its extension is refused first, as for every text format.
    text: bool = False
    # A legacy format that LibreOffice (soffice) converts: "Word" or "PowerPoint" (97-2003).
    soffice: str = ""
    # E-mail: its reader takes the parse options too, to read the files attached to a message.
    attachments: bool = False
    # raychunk's own reader, ``module.function`` under ``raychunk.parse``, in place of unstructured's
    # partitioner: it takes the bytes, the document and the package's title, and gives the parse.
    reader: str = ""
    # The partitioner's arguments.
    options: tuple[tuple[str, bool], ...] = ()

    @property
    def called(self) -> str:
        return self.what or self.name


_TABLES = (("infer_table_structure", True),)
_SLIDES = (*_TABLES, ("include_slide_notes", True))  # speaker notes follow the slide's content
_OOXML = ("[Content_Types].xml",)

# fmt: off
_ROWS = (
    OfficeFormat("docx", "", "", "python-docx", what="Word document", package="ooxml",
                 parts=(*_OOXML, "word/"), refusal_is_damage=True, reader="word.read_docx"),
    OfficeFormat("pptx", "", "", "python-pptx", what="PowerPoint deck", package="ooxml",
                 parts=(*_OOXML, "ppt/"), refusal_is_damage=True, reader="slides.read_pptx"),
    OfficeFormat("xlsx", "", "", "lxml", what="workbook", package="ooxml", parts=(*_OOXML, "xl/"),
                 refusal_is_damage=True, reader="sheets.read_xlsx"),
    OfficeFormat("xls", "", "", "xlrd", what="workbook", ole="legacy Excel workbook",
                 refusal_is_damage=True, reader="sheets.read_xls"),
    OfficeFormat("epub", "", "", "", what="EPUB book", package="epub",
                 parts=("META-INF/container.xml",), refusal_is_damage=True, reader="book.read_epub"),
    # odt is not html-born: pandoc turns it into a docx, read as one.
    OfficeFormat("odt", "", "", "python-docx pypandoc-binary", what="OpenDocument text", package="odf",
                 parts=("content.xml",), refusal_is_damage=True, reader="word.read_odt"),
    OfficeFormat("eml", "", "", "", what="e-mail", text=True, attachments=True, reader="mail.read_eml"),
    OfficeFormat("msg", "", "", "python-oxmsg", what="Outlook message", ole="Outlook message",
                 attachments=True, reader="mail.read_msg"),
    OfficeFormat("rtf", "", "", "pypandoc-binary", what="RTF document", reader="pandoc.read_rtf"),
    OfficeFormat("org", "", "", "pypandoc-binary", what="Org document", text=True, reader="pandoc.read_org"),
    OfficeFormat("doc", "doc", "partition_doc", '"unstructured[doc]"', ole="legacy Word document",
                 read_as="docx", soffice="Word", options=_TABLES),
    OfficeFormat("ppt", "ppt", "partition_ppt", '"unstructured[ppt]"', ole="legacy PowerPoint deck",
                 soffice="PowerPoint", options=_SLIDES),
)
# fmt: on
FORMATS: dict[str, OfficeFormat] = {f.name: f for f in _ROWS}
