"""Captions and subtitles (WebVTT, SRT): what was said, as a transcript, never the cue numbers and
timings between the words."""

import gzip

import pytest

from raychunk.parse import parse_document
from tests.spans import assert_spans_match, chunks_holding_their_spans

STANDUP = """WEBVTT
Kind: captions
Language: en

NOTE recorded with Zoom;
the names are the attendees'

STYLE
::cue { color: yellow }

1
00:00:01.000 --> 00:00:04.500
<v Alice Chen>Morning everyone, let's start with the
billing migration.

2
00:00:04.500 --> 00:00:09.000 align:start position:10%
<v Alice Chen>The cutover is planned for Thursday at 14:00&nbsp;UTC.

3
00:00:09.200 --> 00:00:13.000
<v.loud Bob Ruiz>We still need the rollback script
reviewed before then.

00:00:13.000 --> 00:00:15.000
<c.yellow><i>Priya</i></c>, can you take that?

4
00:00:15.500 --> 00:00:18.000
<v Priya Nair>Yes, I'll <00:00:16.500>review it today.
"""


def test_webvtt_is_read_as_speaker_turns():
    doc = parse_document(STANDUP.encode(), "standup.vtt")
    assert (doc.document.status, doc.document.format) == ("ok", "captions")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        (
            "paragraph",
            "Alice Chen: Morning everyone, let's start with the billing migration. "
            "The cutover is planned for Thursday at 14:00 UTC.",
        ),
        # a cue that names no one goes on with who was speaking
        (
            "paragraph",
            "Bob Ruiz: We still need the rollback script reviewed before then. Priya, can you take that?",
        ),
        ("paragraph", "Priya Nair: Yes, I'll review it today."),
    ]
    for noise in ("-->", "WEBVTT", "NOTE", "color", "<v", "align:", "00:00"):
        assert noise not in doc.text
    assert_spans_match(doc)


def test_srt_without_speakers_is_paragraphs_parted_at_pauses():
    srt = (
        "1\r\n00:00:00,500 --> 00:00:03,200\r\nWelcome to the talk on vector indexes.\r\n\r\n"
        "2\r\n00:00:03,300 --> 00:00:07,000\r\nToday we compare HNSW\r\nwith flat search.\r\n\r\n"
        "3\r\n00:00:12,000 --> 00:00:15,000\r\nFirst, memory.\r\n\r\n"  # five seconds of silence before it
        "4\r\n00:00:15,100 --> 00:00:18,000\r\n- HNSW trades memory for speed.\r\n"
    )
    doc = parse_document(srt.encode("utf-8-sig"), "talk.srt")
    assert [b.text for b in doc.blocks] == [
        "Welcome to the talk on vector indexes. Today we compare HNSW with flat search.",
        "First, memory. HNSW trades memory for speed.",
    ]


def test_srt_names_and_long_speeches():
    cues = [
        f"{i}\n00:{i // 60:02d}:{i % 60:02d},000 --> 00:{i // 60:02d}:{i % 60:02d},900\n"
        for i in range(1, 61)
    ]
    lines = [
        "ANNA: We begin." if i == 0 else f"Sentence number {i} of the speech goes on here." for i in range(60)
    ]
    doc = parse_document("\n\n".join(c + t for c, t in zip(cues, lines)).encode(), "speech.srt")
    turns = [b.text for b in doc.blocks]
    assert len(turns) >= 3 and all(t.startswith("ANNA: ") for t in turns)  # one speaker, in paragraphs
    assert all(len(t.split()) < 2 * 120 for t in turns) and turns[0].startswith(
        "ANNA: We begin. Sentence number 1"
    )
    assert " ".join(t.removeprefix("ANNA: ") for t in turns).count("Sentence number") == 59


def test_rolling_captions_say_each_line_once():
    vtt = "WEBVTT\n\n" + "\n\n".join(
        f"00:00:{2 * i:02d}.000 --> 00:00:{2 * i + 2:02d}.000\n{a}\n{b}"
        for i, (a, b) in enumerate(
            [
                ("so the first thing", "we do is list"),
                ("we do is list", "the inputs and then"),
                ("the inputs and then", "plan them"),
            ]
        )
    )
    doc = parse_document(vtt.encode(), "auto.vtt")
    assert [b.text for b in doc.blocks] == ["so the first thing we do is list the inputs and then plan them"]


@pytest.mark.parametrize(
    ("data", "status", "fmt", "reason"),
    [
        (b"Just some notes saved as .srt\n\nwith no cues.\n", "ok", "text", "no caption cues"),
        (
            b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v Ann></v>\n",
            "empty",
            "captions",
            "no text in their cues",
        ),
        (b"WEBVTT\n", "ok", "text", "no caption cues"),
    ],
)
def test_captions_that_are_not_say_what_they_are(data, status, fmt, reason):
    doc = parse_document(data, "x.vtt")
    assert (doc.document.status, doc.document.format) == (status, fmt)
    assert reason in doc.document.reason


def test_compressed_captions_and_their_chunks_spans():

    doc = parse_document(gzip.compress(STANDUP.encode() * 1), "standup.vtt.gz")
    assert doc.document.format == "captions" and doc.blocks[0].text.startswith("Alice Chen: ")
    long = "WEBVTT\n\n" + "\n\n".join(
        f"00:{i // 60:02d}:{i % 60:02d}.000 --> 00:{i // 60:02d}:{i % 60:02d}.800\n<v Speaker {i // 7}>Point {i} is made here, plainly."
        for i in range(300)
    )
    doc = parse_document(long.encode(), "long.vtt")
    assert chunks_holding_their_spans(doc, 48, strategies=("structure",))[0] > 20
