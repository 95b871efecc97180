"""Perl modules and scripts (``.pm``, ``.pl``): their POD read as a ``.pod`` file is (pandoc's POD
reader, the page perldoc shows: ``=head1`` sections, lists, verbatim paragraphs as code), and the code
between its parts kept where it stands, as code blocks under the section it follows. A module's
title is its NAME line (``Benchmark - benchmark running times of Perl code``). After ``__END__``
only POD is read (the rest is data); a file with no POD is code, by the code reader's rules.

POD's parts are joined for one pandoc call, each run of code standing in as a paragraph of its own
(a mark with its number) that is then put back: the code keeps its place among the headings.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import no_blocks, with_reason
from raychunk.parse.pandoc import PandocFailed, code_put_back, convert

__all__ = ["parse_perl"]

_POD = re.compile(r"^=[a-zA-Z]", re.M)  # a command paragraph opens POD where a statement could start
_CUT = re.compile(r"^=cut\b[^\n]*(?:\n|\Z)", re.M)
_END = re.compile(r"^__(?:END|DATA)__\b", re.M)
_OVER = re.compile(r"^=over\b", re.M)
_BACK = re.compile(r"^=back\b", re.M)
_REGION = re.compile(r"^=(?:begin|end)\b[^\n]*\n", re.M)
_MARK = "RAYCHUNKPERLCODE{:06d}"
_MARKED = re.compile(r"RAYCHUNKPERLCODE(\d{6})")


def parse_perl(text: str, base: Document) -> ParsedDocument:
    from raychunk.parse.code import parse_code
    from raychunk.parse.man import name_line_title

    parts = _parts(text)
    if not any(kind == "pod" for kind, _ in parts):
        return parse_code(text, dataclasses.replace(base, format="code"))
    pod, code = [], []
    lists = 0  # the =over lists open where the code stands: closed around it, opened again after
    for kind, part in parts:
        if kind == "pod":
            pod.append(part if part.endswith("\n") else part + "\n")
            lists = max(0, lists + len(_OVER.findall(part)) - len(_BACK.findall(part)))
        elif part.strip():
            close, reopen = "=back\n\n" * lists, "=over\n\n" * lists
            pod.append(f"=pod\n\n{close}{_MARK.format(len(code))}\n\n{reopen}=cut\n")
            code.append(textwrap.dedent(part).strip("\n"))
    if lists:  # a list the file never closes: closed at its end
        pod.append("=pod\n\n" + "=back\n\n" * lists + "=cut\n")
    source = "\n".join(pod)
    html = None
    for attempt in (source, _REGION.sub("", source)):  # again without =begin/=end: pandoc wants them paired
        try:
            html = convert(attempt.encode("utf-8", errors="replace"), "pod", extension="pm")
            break
        except PandocFailed as e:
            refusal = e
    if html is None:
        return with_reason(
            parse_code(text, dataclasses.replace(base, format="code")), f"{refusal}: read as code"
        )
    parsed = code_put_back(html.decode("utf-8", errors="replace"), base, code, _MARKED, "perl")
    if parsed is None:
        return no_blocks(base, "empty", "only POD commands, no text")
    title = name_line_title(parsed)
    return (
        dataclasses.replace(parsed, document=dataclasses.replace(parsed.document, title=title))
        if title
        else parsed
    )


def _parts(text: str) -> list[tuple[str, str]]:
    """``("pod" | "code", text)`` in the file's order: POD from a command line to its ``=cut`` line
    (or the end), code between; after ``__END__``, POD only."""
    parts: list[tuple[str, str]] = []
    end = _END.search(text)
    code_until = end.start() if end else len(text)
    pos = 0
    while pos < len(text):
        start = _POD.search(text, pos)
        if start is None:
            if pos < code_until:
                parts.append(("code", text[pos:code_until]))
            break
        if pos < min(start.start(), code_until):
            parts.append(("code", text[pos : min(start.start(), code_until)]))
        cut = _CUT.search(text, start.start())
        stop = cut.end() if cut else len(text)
        parts.append(("pod", text[start.start() : stop]))
        pos = stop
    return parts
