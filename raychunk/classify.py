"""Type classification: a ``doc_type`` for every parsed document, from cheap structural features,
with the reason recorded. Thresholds come from ``configs/doc_types.yaml``."""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from dataclasses import dataclass

from raychunk.document import ParsedDocument

__all__ = ["DOC_TYPES", "Classification", "Features", "classify", "features"]

DOC_TYPES = ("manual", "reference", "prose", "faq", "records", "transcript", "code", "slides")

_SPEAKER = re.compile(r"^\s*(?:\[[\d:.\-+ ]+\]\s*)?([A-Z][\w.'()\- ]{0,40}):\s+\S")
_TIMESTAMP_LINE = re.compile(r"^\s*\[?-?\d{1,2}:\d{2}(?::\d{2}){0,2}\]?\s*$")
# A log line starts with a date-time: ISO 8601, syslog/Apache ("[Sun] Dec 04 04:47:44"), loghub's
# HDFS "081109 203518", "12/03/2024 10:22", or a bare "10:22:01".
_LOG_LINE = re.compile(
    r"^\s*\[?(?:\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"
    r"|(?:[A-Z][a-z]{2},? )?[A-Z][a-z]{2} +\d{1,2},? (?:\d{4} )?\d{2}:\d{2}:\d{2}"
    r"|\d{6} \d{6}\b"
    r"|\d{1,2}/\d{1,2}/\d{2,4}[ ,T]+\d{1,2}:\d{2}"
    r"|\d{1,2}:\d{2}:\d{2})"
)
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Features:
    format: str
    words: int
    headings: int
    heading_depth: int
    heading_density: float  # headings per 1,000 words
    table_share: float  # shares are of characters of block text
    record_share: float
    code_share: float
    list_share: float
    qa_pairs: int
    qa_share: float
    speaker_turns: int
    speaker_share: float
    log_lines: int  # lines of running text that start with a date-time
    log_share: float  # ... as a share of those lines
    pages: int
    words_per_page: float
    mean_line_length: float


@dataclass(frozen=True, slots=True)
class Classification:
    doc_type: str
    reason: str
    features: Features | None = None


def _count_words(blocks: list) -> int:
    """The words of the blocks' texts, counted over about a million characters of them at a time (a
    newline between two blocks is no word character): a findall over all of a 76 MB table's rows
    held 10 million strings at once, and its document went over the memory limit."""
    words, group, size = 0, [], 0
    for b in blocks:
        group.append(b.text)
        size += len(b.text)
        if size >= 1 << 20:
            words += len(_WORD.findall("\n".join(group)))
            group, size = [], 0
    return words + len(_WORD.findall("\n".join(group)))


def features(parsed: ParsedDocument) -> Features:
    blocks = [b for b in parsed.blocks if b.kind != "page_break"]
    chars = {k: 0 for k in ("table", "record", "code", "list_item", "paragraph", "heading")}
    words = _count_words(blocks)
    lines = []
    log_lines = 0
    for b in blocks:
        chars[b.kind] = chars.get(b.kind, 0) + len(b.text)
        if b.kind in ("paragraph", "list_item"):
            for line in b.text.split("\n"):
                if line.strip():
                    lines.append(len(line))
                    log_lines += bool(_LOG_LINE.match(line))
    total = max(1, sum(chars.values()))
    headings = [b for b in blocks if b.kind == "heading"]
    records = [b for b in blocks if b.kind == "record"]
    paragraphs = [b for b in blocks if b.kind == "paragraph"]
    question_headings = sum(
        1
        for i, b in enumerate(blocks[:-1])
        if b.kind == "heading" and b.text.rstrip().endswith("?") and blocks[i + 1].kind != "heading"
    )
    qa_records = sum(1 for r in records if r.rows and r.rows[0] and r.rows[0][0].lower() in ("question", "q"))
    qa_pairs = question_headings + qa_records
    units = max(1, len(headings) + len(records) + (len(paragraphs) if not headings else 0))
    # A speaker speaks more than once: a label that opens one paragraph only is a definition's term
    # (``APPEND: Append the COMMAND ...``, ``timeout: Seconds to wait.``), not a turn.
    speakers = [m[1].strip() if (m := _SPEAKER.match(p.text)) else None for p in paragraphs]
    said = Counter(speakers)
    turns = sum(
        1
        for p, who in zip(paragraphs, speakers)
        if (who is not None and said[who] > 1) or _TIMESTAMP_LINE.match(p.text.split("\n")[0])
    )
    pages = parsed.document.pages
    return Features(
        format=parsed.document.format,
        words=words,
        headings=len(headings),
        heading_depth=max((h.level for h in headings), default=0),
        heading_density=1000 * len(headings) / max(words, 1),
        table_share=chars["table"] / total,
        record_share=chars["record"] / total,
        code_share=chars["code"] / total,
        list_share=chars["list_item"] / total,
        qa_pairs=qa_pairs,
        qa_share=qa_pairs / units,
        speaker_turns=turns,
        speaker_share=turns / max(1, len(paragraphs)),
        log_lines=log_lines,
        log_share=log_lines / max(1, len(lines)),
        pages=pages,
        words_per_page=words / pages if pages else 0.0,
        mean_line_length=sum(lines) / len(lines) if lines else 0.0,
    )


def classify(parsed: ParsedDocument, thresholds: dict, overrides: list[dict] | tuple = ()) -> Classification:
    """The document's type and why. ``overrides`` force a type by glob on the source path."""
    for rule in overrides:
        if fnmatch.fnmatch(parsed.document.source, rule["glob"]):
            return Classification(rule["type"], f"forced by override {rule['glob']!r}")
    f = features(parsed)
    t = thresholds
    if f.format == "code":
        return Classification("code", "source code file", f)
    if f.format in ("csv", "tsv", "json", "jsonl"):
        return Classification("records", f"{f.format} rows are records", f)
    if f.format in ("pptx", "ppt"):
        return Classification("slides", "presentation file", f)
    if f.qa_pairs >= t["faq_min_pairs"] and f.qa_share >= t["faq_share"]:
        return Classification("faq", f"{f.qa_pairs} question/answer pairs, {f.qa_share:.0%} of units", f)
    sectioned = f.headings >= t["manual_min_headings"] and f.heading_density >= t["manual_heading_density"]
    # Labels opening the paragraphs of a sectioned document are its definitions' (Texinfo's
    # "Function: ...", a changelog's "Author (3):"): its sections are the structure to chunk by.
    if (
        not sectioned
        and f.speaker_turns >= t["transcript_min_turns"]
        and f.speaker_share >= t["transcript_share"]
    ):
        return Classification(
            "transcript", f"{f.speaker_turns} speaker turns, {f.speaker_share:.0%} of paragraphs", f
        )
    # A machine log is a stream of timestamped events with no structure: chunked like a transcript.
    if f.log_lines >= t["transcript_min_turns"] and f.log_share >= t["transcript_share"]:
        return Classification(
            "transcript", f"log: {f.log_lines} lines start with a date-time, {f.log_share:.0%} of lines", f
        )
    if f.record_share >= t["records_share"]:
        return Classification("records", f"{f.record_share:.0%} of text in records", f)
    if f.table_share >= t["reference_table_share"]:
        return Classification("reference", f"{f.table_share:.0%} of text in tables", f)
    if (
        f.format == "pdf"
        and f.pages >= 2
        and 0 < f.words_per_page <= t["slides_max_words_per_page"]
        and f.mean_line_length < 60
        and f.table_share < 0.2
    ):
        return Classification("slides", f"{f.words_per_page:.0f} words per page in short lines", f)
    procedure = f.list_share + f.code_share
    # Procedures are what make a manual: deep headings alone are just as common in news and
    # encyclopedia pages.
    if (
        f.headings >= t["manual_min_headings"]
        and f.heading_density >= t["manual_heading_density"]
        and procedure >= t["manual_procedure_share"]
    ):
        return Classification(
            "manual",
            f"{f.headings} headings ({f.heading_density:.1f} per 1k words, depth {f.heading_depth}), "
            f"{procedure:.0%} of text in lists and code",
            f,
        )
    return Classification(
        "prose",
        f"narrative: {f.headings} headings, {f.table_share:.0%} tables, {procedure:.0%} lists and code",
        f,
    )
