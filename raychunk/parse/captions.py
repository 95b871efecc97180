"""Captions and subtitles (WebVTT ``.vtt``, SubRip ``.srt``): what was said, as a transcript.

Cue numbers, timings and settings, styling, ``NOTE``/``STYLE``/``REGION`` blocks and the lines a
rolling caption repeats from the cue before go. A WebVTT voice (``<v Alice Chen>``) or a leading
``NAME:`` names the speaker, a cue naming no one goes on with who was speaking, and a speaker's
consecutive cues are one turn (``Alice Chen: ...``), a new one at a sentence end past about 120
words; captions without speakers become paragraphs the same way, and after a pause of two seconds.
The document's text is that transcript, which every span points into, read by the plain-text rules:
its turns are found as in any transcript.
"""

from __future__ import annotations

import dataclasses
import html
import re

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import with_reason

__all__ = ["captions_transcript", "parse_captions"]

PAUSE_S = 2.0  # silence after which an unnamed cue starts a paragraph of its own
PARAGRAPH_WORDS = 120  # past this, a turn or paragraph ends at the next sentence end

_STAMP = r"(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})"
_TIMING = re.compile(rf"\s*{_STAMP}\s*-->\s*{_STAMP}")
_VOICE = re.compile(r"<v(?:\.[\w.-]+)*\s+([^>]*)>")
_TAG = re.compile(r"</?[^<>]*>")
_NAME = re.compile(r"(?:>>\s*)?([A-Z][\w.'\- ]{0,40}):\s+(?=\S)")  # "ALICE: ...", ">> Bob: ..."
_BLOCKS = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"[.!?…][\"')\]]*$")


@dataclasses.dataclass
class _Turn:
    speaker: str | None
    parts: list[str]
    end: float

    def words(self) -> int:
        return sum(len(p.split()) for p in self.parts)


def parse_captions(text: str, base: Document) -> ParsedDocument:
    from raychunk.parse.text import parse_text

    transcript = captions_transcript(text)
    if transcript is None:
        parsed = parse_text(text, dataclasses.replace(base, format="text"))
        why = "no caption cues (no 00:00:01.000 --> 00:00:04.000 timing line): read as plain text"
        return with_reason(parsed, why)
    if not transcript.strip():
        return ParsedDocument(
            dataclasses.replace(base, status="empty", reason="captions with no text in their cues")
        )
    return parse_text(transcript, base)


def captions_transcript(text: str) -> str | None:
    """The transcript of a WebVTT or SRT file's cues, or None when it has no cue.

    >>> print(captions_transcript("WEBVTT\\n\\n00:01.000 --> 00:03.000\\n<v Ann>Hello\\n\\n"
    ...     "00:03.000 --> 00:05.000\\n<v Ann>and welcome.\\n\\n00:05.500 --> 00:07.000\\n<v Bo>Thanks!\\n"))
    Ann: Hello and welcome.
    <BLANKLINE>
    Bo: Thanks!
    <BLANKLINE>
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    turns: list[_Turn] = []
    previous: set[str] = set()
    cues = 0
    for block in _BLOCKS.split(text):
        lines = block.strip("\n").split("\n")
        at = next((i for i, line in enumerate(lines[:3]) if _TIMING.match(line)), None)
        if at is None:
            continue  # the WEBVTT header, a NOTE, STYLE or REGION block, or a stray line
        cues += 1
        start, end = _seconds(_TIMING.match(lines[at]).groups())
        voice, said = None, []
        payload = [(raw, _clean(raw)) for raw in lines[at + 1 :]]
        for raw, line in payload:
            if v := _VOICE.search(raw):
                voice = " ".join(html.unescape(v.group(1)).split()) or voice
            if line and line not in previous:  # a rolling caption repeats the lines before it
                said.append(line)
        previous = {line for _, line in payload}
        if not said:
            continue
        speaker = voice
        if speaker is None and (m := _NAME.match(said[0])):
            speaker, said[0] = m.group(1).strip(), said[0][m.end() :]
        said[0] = said[0].removeprefix(">>").removeprefix("- ").strip()
        words = " ".join(p for p in said if p)
        if not words:
            continue
        last = turns[-1] if turns else None
        gap = start - last.end if last is not None else 0.0
        if speaker is None and last is not None and gap < PAUSE_S:
            speaker = last.speaker  # a cue that names no one goes on with who was speaking
        same = (
            last is not None
            and speaker == last.speaker
            and (speaker is not None or gap < PAUSE_S)
            and not (last.words() >= PARAGRAPH_WORDS and _SENTENCE_END.search(last.parts[-1]))
        )
        if same:
            last.parts.append(words)
            last.end = max(last.end, end)
        else:
            turns.append(_Turn(speaker, [words], end))
    if not cues:
        return None
    return "".join(
        (f"{t.speaker}: " if t.speaker else "") + " ".join(t.parts) + "\n\n" for t in turns
    ).rstrip("\n") + ("\n" if turns else "")


def _clean(raw: str) -> str:
    """A payload line's words: tags (voices, styling, karaoke timestamps) and marks gone."""
    return " ".join(html.unescape(_TAG.sub("", raw)).replace("\u200e", "").split())


def _seconds(groups) -> tuple[float, float]:
    def one(h, m, s, ms):
        return int(h or 0) * 3600 + int(m) * 60 + int(s) + int(ms.ljust(3, "0")) / 1000

    return one(*groups[:4]), one(*groups[4:])
