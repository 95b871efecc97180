"""Plain text: paragraphs at blank lines; headings only where the text plainly has them.

A text with no blank lines is a log (a paragraph per line) or a page flattened to hard-wrapped
lines, whose paragraphs end where a line ends short (``_wrap_ends``).

A heading is recognised when it is underlined (``===``/``---``/``~~~``), numbered (``1.2 Title``,
nroff's overstruck ``_\b1.  _\bI_\bn...`` as it reads), or wiki-style (``== Title ==``, or WikiText's
spaced ``= = Title = =``; the level is the count of ``=``), also as the first line of a paragraph.
Lines starting with a bullet become list items. A text made of ``Q:``/``A:`` pairs becomes one
record per pair.
"""

from __future__ import annotations

import dataclasses
import itertools
import re

from raychunk.document import Block, Document, ParsedDocument
from raychunk.parse._common import BlockStream, clean_text, finish, no_blocks, wiki_heading
from raychunk.render import squash, trimmed

__all__ = ["add_body", "iter_paragraphs", "opens_item", "parse_text", "text_blocks"]

_BLANK = re.compile(r"\n[ \t\f\v\r]*\n")
_UNDERLINE = re.compile(r"^\s*([=\-~^*#])\1{2,}\s*$")
_UNDERLINE_LEVEL = {"=": 1, "#": 1, "*": 1, "-": 2, "~": 3, "^": 4}
_NUMBERED = re.compile(r"^(\d{1,3}(?:\.\d{1,3})*)\.?\s+([A-Z\u00c0-\u024f].{0,80})$")
# A numbered line that cites rather than titles: a reference list's entries ("1. Hugman, Barry J.,
# ed. (2005). The PFA ...", "47. Roberts 2004, pp. 62-63") are no section headings.
_CITATION = re.compile(r'"|://|\(\d{4}\)|\(\d{1,2} \w+ \d{4}\)|\bpp?\. ?\d|\b(?:ed|eds|et al)\.')
_BULLET = re.compile(r"^(\s*)(?:[-*•‣◦▪]|\d{1,3}[.)])\s+\S")
_MARKER = re.compile(r"([-*•‣◦▪]|\d{1,3}[.)])\s+")
# characters that are only ever bullets (a line opened by ``-`` or ``*`` may be a dash, a footnote)
_BULLETS_ONLY = "•‣◦▪"
_SPEAKER = re.compile(r"^[A-Z][\w.'()\- ]{0,40}:\s+\S")
_QUESTION = re.compile(r"^\s*(?:Q|Question)\s*[:.)]\s*\S", re.I)
_ANSWER = re.compile(r"^\s*(?:A|Answer)\s*[:.)]\s*\S", re.I)
# Another letter's item: "a." and "q." among "b." ... "z." are a lettered list (bash's NEWS), not Q/A.
_LETTERED = re.compile(r"^\s*[b-pr-z][.)]\s+\S", re.I)
# A field stanza (RFC 822 headers, Debian's copyright and control files, apt preferences): each line
# a "Name: value" of a field not named before in it, or a value's continuation, indented.
_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9_-]{0,60}):(?:[ \t]|$)")
# A changelog's entry line: Debian's ("apt (2.6.1) unstable; urgency=medium") and GNU's ("2013-12-09
# Colin Watson  <cjwatson@debian.org>", or with the date as `date` prints it). Each opens a section;
# in a Debian entry, "[ Name ]" opens the changes one person made.
_DEBIAN_ENTRY = re.compile(r"[a-z0-9][a-z0-9.+-]+ \([^()\s]+\) [^;\n]+;[^\n]*\burgency=\S")
_GNU_ENTRY = re.compile(
    r"(?:\d{4}-\d{2}-\d{2}|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d (?:[A-Z]{2,5} )?\d{4})"
    r"[ \t]+\S[^\n]*<[^<>\s]+@[^<>\s]+>[ \t]*$"
)
_CONTRIBUTOR = re.compile(r"[ \t]*\[ ([^\]\n]{1,80}) \][ \t]*$")
_QUESTION_AT = re.compile(r"(?im)^[ \t]*(?:Q|Question)\s*[:.)]")


def iter_paragraphs(text: str, start: int = 0, end: int | None = None):
    """Yield ``(start, end)`` of each blank-line-separated paragraph, whitespace trimmed."""
    end = len(text) if end is None else end
    pos = start
    for m in _BLANK.finditer(text, start, end):
        yield from trimmed(text, pos, m.start())
        pos = m.end()
    yield from trimmed(text, pos, end)


def parse_text(text: str, base: Document) -> ParsedDocument:
    from raychunk.parse.vimhelp import looks_like_vim_help, parse_vim_help, tags_file_entries

    if looks_like_vim_help(text):
        return parse_vim_help(text, dataclasses.replace(base, format="vimhelp"))
    if entries := tags_file_entries(text, base.source):
        why = f"a tags file ({entries:,} entries, each pointing into another file, which is read on its own)"
        return no_blocks(base, "empty", f"{why}: an index, no text of its own")
    paragraphs = list(iter_paragraphs(text))
    stanzas = _stanzas(text, paragraphs)  # a long stanza (a licence's text) is a record, not a run of lines
    if not stanzas and (
        len(paragraphs) == 1 or any(e - s > 4000 and text.count("\n", s, e) > 20 for s, e in paragraphs)
    ):
        paragraphs = _split_line_runs(text, paragraphs)
    if _is_faq(text, paragraphs):
        return finish(base, text, _faq_records(text))
    entries = _changelog(text, paragraphs)
    blocks = text_blocks(text, paragraphs, stanzas=stanzas, entries=entries)
    if entries is None:
        return finish(base, text, blocks)
    # Not the first entry's line: it would head every chunk of the releases below it.
    first = blocks[0].text if blocks else ""
    title = f"{first.split(' ', 1)[0]} changelog" if entries is _DEBIAN_ENTRY else ""
    return finish(base, text, blocks, title=title)


def _changelog(text: str, paragraphs: list):
    """The entry-line pattern of a changelog that opens with an entry and has another, else None."""
    if not paragraphs:
        return None
    s, e = paragraphs[0]
    first = text[s:e].split("\n", 1)[0]
    for entry in (_DEBIAN_ENTRY, _GNU_ENTRY):
        if entry.match(first) and any(entry.match(text, ps, pe) for ps, pe in paragraphs[1:]):
            return entry
    return None


def _fields(para: str) -> tuple[list[str], int] | str | None:
    """A stanza's field names and its count of continuation lines; ``"turns"`` if a name comes
    back with no value running on over indented lines (people talking: ``Alice: ...`` twice); None
    if ``para`` is neither."""
    names: list[str] = []
    seen: set[str] = set()
    continued = 0
    again = False
    said = True  # every value a sentence: people talking in pairs of lines, no fields
    for line in _lines(para):  # lazily: most paragraphs are decided by their first line
        if line[:1] in (" ", "\t"):
            continued += bool(names)
            if not names:
                return None
        elif m := _FIELD.match(line):
            name = m[1].lower()
            again = again or name in seen  # Debian's copyright files repeat `Comment:`
            seen.add(name)
            names.append(name)
            said = said and line.rstrip()[-1:] in (".", "?", "!")
        else:
            return None
    if not continued and (again or said):
        return "turns" if again else None
    return (names, continued) if len(names) >= 2 or (names and continued) else None


def _lines(para: str):
    start = 0
    while (end := para.find("\n", start)) != -1:
        yield para[start:end]
        start = end + 1
    yield para[start:]


def _stanzas(text: str, paragraphs: list) -> frozenset:
    """The ``(start, end)`` of the paragraphs that are field stanzas, where they hold most of the
    text: such a file is records (a Debian copyright file read as paragraphs looked like a
    transcript of speakers named Files, Copyright and License)."""
    found = {}
    for s, e in paragraphs:
        if (fields := _fields(text[s:e])) == "turns":
            return frozenset()
        if fields is not None:
            found[(s, e)] = fields
    full = sum(1 for names, _ in found.values() if len(names) >= 2)
    if full < 2 or sum(e - s for s, e in found) < 0.5 * sum(e - s for s, e in paragraphs):
        return frozenset()
    return frozenset(found)


def _add_stanza(out: BlockStream, text: str, s: int, e: int) -> None:
    names: list[str] = []
    values: list[list[str]] = []
    for line in text[s:e].split("\n"):
        if line[:1] in (" ", "\t"):
            more = line.strip()
            values[-1].append("" if more == "." else more)  # " ." is a blank line of the value
        else:
            name, _, value = line.partition(":")
            names.append(name)
            values.append([value.strip()] if value.strip() else [])
    rows = (tuple(names), tuple("\n".join(v) for v in values))
    out.add("record", clean_text(text[s:e]), s, e, rows=rows, header_rows=1)


def text_blocks(
    text: str, paragraphs: list | None = None, *, stanzas: frozenset = frozenset(), entries=None
) -> list[Block]:
    r"""Plain text's blocks by this module's rules, spans into ``text``: headings underlined, numbered or
    wiki-style, list items, a paragraph per blank-line-separated run (per speaker turn). Also the HTML
    parser's rules for a page whose body is preformatted text (an IETF draft in ``<pre>``).

    >>> [(b.kind, b.level, b.heading_path) for b in text_blocks("1.  Introduction\n\n  Many services.")]
    [('heading', 1, ()), ('paragraph', 0, ('1. Introduction',))]
    """
    if paragraphs is None:
        paragraphs = list(iter_paragraphs(text))
    out = BlockStream()
    # Numbered sections under a document title ("Guide\n=====", then "1 Intro") nest below it.
    numbered_offset = 0
    for idx, (s, e) in enumerate(paragraphs):
        if (s, e) in stanzas:
            _add_stanza(out, text, s, e)
            continue
        para = text[s:e]
        lines = para.split("\n")
        first = lines[0].rstrip("\r")
        contributor = _CONTRIBUTOR.match(first) if entries is _DEBIAN_ENTRY else None
        if entries is not None and (entries.match(first) or contributor):
            ts, te = (
                (s + contributor.start(1), s + contributor.end(1))
                if contributor
                else (s, s + len(first.rstrip()))
            )
            out.heading(clean_text(text[ts:te]), 2 if contributor else 1, ts, te)
            for rs, re_ in trimmed(text, s + len(lines[0]) + 1, e) if len(lines) > 1 else ():
                add_body(out, text, rs, re_, one_item=True)
            continue
        if entries is not None and _BULLET.match(first):
            add_body(out, text, s, e, one_item=True)  # a change of one line is an item as the others
            continue
        if len(lines) >= 2 and len(first.strip()) <= 120 and _UNDERLINE.match(lines[1]):
            level = _UNDERLINE_LEVEL[lines[1].strip()[0]]
            out.heading(clean_text(first), level, s, s + len(first.rstrip()))
            numbered_offset = numbered_offset or int(len(out.blocks) == 1 and level == 1)
            rest = s + len(lines[0]) + 1 + len(lines[1]) + 1
            for rs, re_ in trimmed(text, rest, e):
                add_body(out, text, rs, re_)
            continue
        if wiki := wiki_heading(first):
            level, ts, te = wiki
            out.heading(clean_text(first[ts:te]), level, s + ts, s + te)
            numbered_offset = numbered_offset or int(len(out.blocks) == 1 and level == 1)
            for rs, re_ in trimmed(text, s + len(lines[0]) + 1, e) if len(lines) > 1 else ():
                add_body(out, text, rs, re_)
            continue
        # Matched as the line reads: nroff output underlines a heading by overstrikes (``_\bI``).
        cleaned = clean_text(first) if len(lines) == 1 else None  # one line: the paragraph's text too
        if (
            cleaned is not None
            and (m := _NUMBERED.match(cleaned))
            and _numbered_heading(m, text, paragraphs, idx)
        ):
            out.heading(cleaned, m.group(1).count(".") + 1 + numbered_offset, s, e)
            continue
        add_body(out, text, s, e, cleaned)
    return out.blocks


def _split_line_runs(text: str, paragraphs: list) -> list:
    """Text with no blank lines: a long run of hard-wrapped prose (a page flattened to text) is cut
    into its paragraphs after its short lines (``_wrap_ends``); in any other (logs, scraped lists)
    each line is its own paragraph."""
    result = []
    for s, e in paragraphs:
        if text.count("\n", s, e) < 4 or (len(paragraphs) > 1 and e - s <= 4000):
            result.append((s, e))
            continue
        lines, pos = [], s
        for line in text[s:e].split("\n"):
            lines.append((pos, pos + len(line.rstrip())))
            pos += len(line) + 1
        ends = _wrap_ends(text, lines)
        first = 0
        for i, (a, b) in enumerate(lines):
            if ends is None:
                result.extend(trimmed(text, a, b))
            elif i in ends or i == len(lines) - 1:
                result.extend(trimmed(text, lines[first][0], b))
                first = i + 1
    return result


# a line's closing mark, before any closing quotes, brackets and citations ("fan.[2]")
_CLOSING = re.compile(r"""([.,;:!?])["')\]]*(?:\[\d+\])*$""")


def _wrap_ends(text: str, lines: list[tuple[int, int]]) -> set[int] | None:
    """The lines that end a paragraph of hard-wrapped prose:

    - those shorter than three quarters of the wrap width around them (the second longest of the
      nine lines about them: pages flattened to one text wrap at different widths): a paragraph's
      last line, or a heading's;
    - the line before a heading's (short, capitalised, at most 8 words, no closing punctuation);
    - those that end a sentence where the next line's first word would still have fitted (a wrap
      would have put it there).

    None when the run is not wrapped prose: fewer than a third of its long lines go on in lower case
    on the next line, as a sentence broken by the wrap does (a log's lines never do)."""
    lengths = [b - a for a, b in lines]
    line = [text[a:b] for a, b in lines]
    ends, long = set(), []
    for i, n in enumerate(lengths):
        around = sorted(lengths[max(0, i - 4) : i + 5])
        width = around[-2] if len(around) > 1 else around[-1]
        if width < 40 or n < 0.75 * width:
            ends.add(i)
            if i and line[i][:1].isupper() and len(line[i].split()) <= 8 and not _CLOSING.search(line[i]):
                ends.add(i - 1)  # a heading's line starts its own paragraph
            continue
        if i + 1 < len(lines):
            long.append(i)
            word = line[i + 1].split(maxsplit=1)[:1]
            if word and n + 1 + len(word[0]) <= width and (m := _CLOSING.search(line[i])) and m[1] in ".!?":
                ends.add(i)
    going_on = sum(1 for i in long if line[i + 1].lstrip()[:1].islower())
    if not long or going_on < len(long) / 3:
        return None
    return ends


def _numbered_heading(m: re.Match, text: str, paragraphs: list, idx: int) -> bool:
    title = m.group(2)
    if title.rstrip()[-1:] in ".,;:" or len(title.split()) > 12 or _CITATION.search(title):
        return False
    if m.start(2) - m.end(1) > 5:  # a page number set apart from a running header or footer's date
        return False
    if "." in m.group(1):
        return True
    # "1 Title" is a heading unless its neighbours are numbered one-liners too (a list of steps).
    for j in (idx - 1, idx + 1):
        if 0 <= j < len(paragraphs):
            s, e = paragraphs[j]
            near = _NUMBERED.match(clean_text(text[s:e])) if "\n" not in text[s:e] else None
            if near and "." not in near.group(1):
                return False
    return True


def opens_item(line: str) -> bool:
    """Whether ``line`` opens a list item as the plain-text rules read one (a bullet or a number)."""
    return _BULLET.match(line) is not None


def add_body(
    out: BlockStream, text: str, s: int, e: int, cleaned: str | None = None, *, one_item: bool = False
) -> None:
    """A paragraph; list items when every line starts with a bullet or hangs under one (a line of its
    own is an item where its bullet is a bullet character, ``•``, or with ``one_item``, in a
    changelog); one paragraph per speaker turn.
    ``cleaned``: the paragraph's text through ``clean_text`` where the caller has it."""
    para = text[s:e]
    lines = para.split("\n")
    turns = [i for i, line in enumerate(lines) if _SPEAKER.match(line)]
    if len(turns) >= 3 and turns[0] == 0:
        starts = [s + sum(len(x) + 1 for x in lines[:i]) for i in turns] + [e + 1]
        for ts, te in zip(starts, starts[1:]):
            for ps, pe in trimmed(text, ts, te - 1):
                out.add("paragraph", clean_text(text[ps:pe]), ps, pe)
        return
    lead = s - (text.rfind("\n", 0, s) + 1)  # the first line's indent, trimmed off the paragraph
    if lead and not text[s - lead : s].isspace():
        lead = 0
    # a line of its own is an item where its bullet is one no sentence opens with (``•``), or in a changelog
    alone = one_item or para.lstrip()[:1] in _BULLETS_ONLY
    if (len(lines) > 1 or alone) and (items := _items([text[s - lead : s] + lines[0], *lines[1:]])):
        at = list(itertools.accumulate((len(x) + 1 for x in lines), initial=s))  # each line's start
        indents: list[int] = []  # the open levels' indents: an item is as deep as those left of it
        for first, last, indent in items:
            while indents and indents[-1] > indent:
                indents.pop()
            if not indents or indents[-1] < indent:
                indents.append(indent)
            start = at[first] + indent - (lead if first == 0 else 0)
            end = at[last + 1] - 1
            end -= len(text[start:end]) - len(text[start:end].rstrip())
            # The bullet is the item's marker, as the other readers give it, not its text: a chunk
            # read "- - Dogs are the best". A number is kept as written ("2."), a bullet is "-".
            bullet = _MARKER.match(text, start)
            marker = bullet[1] if bullet[1][0].isdigit() else ""
            start = bullet.end()
            out.add(
                "list_item", clean_text(text[start:end]), start, end, level=len(indents) - 1, marker=marker
            )
        return
    out.add("paragraph", clean_text(para) if cleaned is None else cleaned, s, e)


def _items(lines: list[str]) -> list[tuple[int, int, int]]:
    """``(first line, last line, bullet's indent)`` of each item when every line opens one or runs
    on under the one before, indented past its bullet (``  * Fix the build\n    on arm64.``, as
    changelogs and NEWS files hang them); else nothing."""
    items: list[list[int]] = []
    for i, line in enumerate(lines):
        if m := _BULLET.match(line):
            items.append([i, i, len(m[1])])
        elif not line.strip():
            continue
        elif items and len(line) - len(line.lstrip()) > items[-1][2]:
            items[-1][1] = i
        else:
            return []
    return [tuple(item) for item in items]


def _is_faq(text: str, paragraphs: list) -> bool:
    questions = answers = lettered = 0
    for s, e in paragraphs:
        for line in text[s:e].split("\n"):
            questions += bool(_QUESTION.match(line))
            answers += bool(_ANSWER.match(line))
            lettered += bool(_LETTERED.match(line))
    return questions >= 2 and answers >= questions * 0.8 and lettered < questions


def _faq_records(text: str):
    """One record per Q/A pair: from a question line up to the next question line."""
    out = BlockStream()
    starts = [m.start() for m in _QUESTION_AT.finditer(text)]
    for s, e in trimmed(text, 0, starts[0] if starts else len(text)):
        out.add("paragraph", clean_text(text[s:e]), s, e)
    for i, qs in enumerate(starts):
        for s, e in trimmed(text, qs, starts[i + 1] if i + 1 < len(starts) else len(text)):
            body = clean_text(text[s:e])
            question = squash(re.sub(r"^\s*(?:Q|Question)\s*[:.)]\s*", "", body.split("\n")[0], flags=re.I))
            out.add("record", body, s, e, rows=(("question",), (question,)), header_rows=1)
    return out.blocks
