"""A chunk's header line: the document title and the heading path, fitted to its share of the
token budget."""

from __future__ import annotations

import re

from raychunk.tokens import TokenCounter

__all__ = ["ELLIPSIS", "fit_header", "header_line", "header_parts", "header_texts"]

ELLIPSIS = "…"
_SITE_SUFFIX = re.compile(r"\s+[^\w\s]")


def header_line(title: str, path: tuple[str, ...]) -> str:
    """The heading path, document title first: ``Acme Cloud > Billing > Refunds``."""
    return " > ".join(header_parts(title, path))


def header_parts(title: str, path: tuple[str, ...]) -> list[str]:
    if title and path and _site_title(title, path[0]):
        title = ""  # "Mozilla - Wikipedia > Mozilla > History": the heading says it without the site
    parts = [title] if title else []
    for p in path:
        if not parts or p.casefold() != parts[-1].casefold():
            parts.append(p)
    return parts


def _site_title(title: str, heading: str) -> bool:
    """``title`` is ``heading`` and then a site's name after a mark: `` - Wikipedia``, `` | The
    Independent``, `` [LWN.net]``."""
    n = len(heading)
    return (
        len(title) > n
        and title[:n].casefold() == heading.casefold()
        and _SITE_SUFFIX.match(title, n) is not None
    )


def fit_header(parts: list[str], cap: int, counter: TokenCounter) -> tuple[str, int]:
    """``parts`` joined by `` > `` in at most ``cap`` tokens, and its tokens: headings dropped from the
    middle of the path (``Title > … > Nearest``), never the title or the nearest heading; if those two
    alone are over, their own text is cut short with an ellipsis."""
    line = " > ".join(parts)
    if not parts:
        return line, counter.count(line)
    n = _path_count(parts, counter)
    if n <= cap:
        return line, n
    for k in range(2, len(parts)):
        kept = [parts[0], ELLIPSIS, *parts[k:]]
        line, n = " > ".join(kept), _path_count(kept, counter)
        if n <= cap:
            return line, n
    first, last = parts[0], parts[-1] if len(parts) > 1 else None
    middle = [ELLIPSIS] if len(parts) > 2 else []
    keep_first = counter.count(first)
    keep_last = counter.count(last) if last is not None else 0
    for _ in range(64):
        line = " > ".join(
            [_cut(first, keep_first, counter), *middle]
            + ([_cut(last, keep_last, counter)] if last is not None else [])
        )
        n = counter.count(line)
        over = n - cap
        if over <= 0 or keep_first + keep_last == 0:
            break
        if last is not None and keep_last >= keep_first:
            keep_last = max(0, keep_last - over)
        else:
            keep_first = max(0, keep_first - over)
    return line, n


def header_texts(parts: list[str], counter: TokenCounter) -> list[str]:
    """The texts ``fit_header`` counts first for ``parts`` (those of the whole path), so that a
    document's header lines can be tokenized in the same call as its blocks."""
    if not parts:
        return [""]
    if not counter.exact_cuts or not all(p and not p[-1].isspace() for p in parts):
        return [" > ".join(parts)]
    return [" >", parts[0], *(" " + p for p in parts[1:])]


def _path_count(parts: list[str], counter: TokenCounter) -> int:
    """``counter.count(" > ".join(parts))``. Where the counter cuts exactly at a space after a
    non-space, from the counts of the parts (each heading with the space before it, remembered
    across the document's headers): the line cuts exactly before each `` >`` and after it."""
    if not counter.exact_cuts or not all(p and not p[-1].isspace() for p in parts):
        return counter.count(" > ".join(parts))
    counts = counter.count_batch([" >", parts[0], *(" " + p for p in parts[1:])])
    return sum(counts[1:]) + counts[0] * (len(parts) - 1)


def _cut(text: str, keep: int, counter: TokenCounter) -> str:
    """``text`` cut to its first ``keep`` tokens plus an ellipsis, when it has more."""
    if keep <= 0:
        return ELLIPSIS
    cuts = counter.cut_points(text, keep)
    return text[: cuts[0]].rstrip() + ELLIPSIS if cuts else text
