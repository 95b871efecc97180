"""The run's documents row: every input ends as chunks or as a row whose status says why not."""

from pathlib import Path

from raychunk import document_steps
from raychunk.config import build_run_config, load_config
from raychunk.plan import resolve_plan


def rows_of(tmp_path: Path, name: str, data: bytes) -> list[dict]:
    path = tmp_path / name
    path.write_bytes(data)
    cfg = build_run_config(load_config(), {"input": [str(tmp_path)], "embedder.enabled": False})
    job = resolve_plan(cfg)
    value = {"path": str(path), "bytes": data}
    for _, fn in document_steps.per_document(job, scheme="", last=document_steps.chunk(job)):
        value = fn(value)
    return value


def test_a_document_of_headings_alone_is_empty_with_its_reason(tmp_path):
    doc, *chunks = rows_of(tmp_path, "slides.md", b"# Test Slide\n\n## Problem Date Placeholder\n")
    assert chunks == []
    assert (doc["status"], doc["reason"]) == ("empty", "no text to chunk: only headings, nothing under them")
    assert doc["chunks"] == 0 and doc["blocks"] == 2
    assert "Test Slide" in doc["text"]  # the words stay in the documents table


def test_a_document_with_text_under_its_heading_is_ok(tmp_path):
    doc, *chunks = rows_of(tmp_path, "note.md", b"# Test Slide\n\nThe agenda for the week.\n")
    assert (doc["status"], doc["reason"]) == ("ok", "")
    assert len(chunks) == doc["chunks"] == 1


def test_an_empty_document_keeps_what_its_parse_said(tmp_path):
    """An e-mail of a subject and an attachment has nothing to chunk; the parse's note that the
    attachment was not read was replaced by "no text to chunk" and lost."""
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["Subject"] = "Q3 figures"
    msg.add_attachment(b"%PDF-1.4", maintype="application", subtype="pdf", filename="q3.pdf")
    doc, *chunks = rows_of(tmp_path, "figures.eml", msg.as_bytes())
    assert chunks == []
    assert (doc["status"], doc["reason"]) == (
        "empty",
        "no text to chunk: only headings, nothing under them; attachments not read (q3.pdf (failed: "
        "cannot open PDF: the file is damaged or is not a PDF (MuPDF: Failed to open stream)))",
    )
