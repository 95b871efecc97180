"""The labelled queries: reading them, matching their sources, and locating their passages.

A label names a document and a passage (a quote and/or a character span ``[start, end)`` into the
document's parsed text), never a chunk id, so it survives a re-chunk. ``load_queries`` checks the
file as written; ``resolve_queries`` locates every passage in the parsed text, once the corpus is in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from raychunk.render import squash

__all__ = [
    "LabelledQuery",
    "Passage",
    "ResolvedQuery",
    "load_queries",
    "locate_quote",
    "match_source",
    "resolve_queries",
]


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    """One line of the labelled-query file, as written: passages are ``{"quote": ...}`` and/or
    ``{"span": [start, end]}`` dicts, not yet located in any document."""

    qid: str
    query: str
    source: str
    passages: tuple[dict, ...]


@dataclass(frozen=True, slots=True)
class Passage:
    """A located answer passage: ``text[start:end]`` of the document; ``quote`` when one was given."""

    start: int
    end: int
    quote: str | None = None


@dataclass(frozen=True, slots=True)
class ResolvedQuery:
    qid: str
    query: str
    source: str  # the corpus document's full source, as the chunks carry it
    passages: tuple[Passage, ...]


def load_queries(path: str | Path) -> list[LabelledQuery]:
    """Read a JSONL file of labelled queries; a malformed line fails naming the line and the fix.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "q.jsonl")
    >>> _ = open(p, "w").write('{"query": "Refund window?", "source": "guide.md", "passages": [{"quote": "30 days"}]}\\n')
    >>> load_queries(p)[0].qid
    'q1'
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"labelled queries not found: {path}")
    out, seen = [], set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{n}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{where}: not a JSON object ({e})") from e
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(row).__name__}")
        unknown = sorted(set(row) - {"id", "query", "source", "passages", "note"})
        if unknown:
            raise ValueError(
                f"{where}: unknown key {unknown[0]!r}: accepted keys are id, query, source, passages"
            )
        for key in ("query", "source"):
            if not isinstance(row.get(key), str) or not row[key].strip():
                raise ValueError(f"{where}: {key!r} must be a non-empty string")
        passages = row.get("passages")
        if not isinstance(passages, list) or not passages:
            raise ValueError(f"{where}: 'passages' must be a non-empty list of {{quote}} / {{span}} objects")
        for p in passages:
            if not isinstance(p, dict) or not p or set(p) - {"quote", "span"}:
                raise ValueError(
                    f'{where}: a passage is {{"quote": TEXT}} and/or {{"span": [START, END]}}, got {p!r}'
                )
            if "quote" in p and (not isinstance(p["quote"], str) or not p["quote"].strip()):
                raise ValueError(f"{where}: a passage quote must be non-empty text")
            if "span" in p and not (
                isinstance(p["span"], list)
                and len(p["span"]) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) for x in p["span"])
                and 0 <= p["span"][0] < p["span"][1]
            ):
                raise ValueError(
                    f"{where}: a passage span is [START, END] with 0 <= START < END, got {p['span']!r}"
                )
        qid = str(row.get("id") or f"q{n}")
        if qid in seen:
            raise ValueError(f"{where}: duplicate query id {qid!r}")
        seen.add(qid)
        out.append(LabelledQuery(qid, row["query"].strip(), row["source"].strip(), tuple(passages)))
    if not out:
        raise ValueError(f"{path}: no labelled queries in the file")
    return out


def match_source(name: str, sources: list[str]) -> str:
    """The corpus source a label names: the same path, or a path ending in ``/name`` (a basename or
    any longer suffix). No match or several is an error that says which.

    >>> match_source("faq.txt", ["/data/a/faq.txt", "/data/b/guide.md"])
    '/data/a/faq.txt'
    """
    want = name[2:] if name.startswith("./") else name
    found = [s for s in sources if s == name or s.endswith("/" + want)]
    if len(found) == 1:
        return found[0]
    if not found:
        names = sorted({s.rsplit("/", 1)[-1] for s in sources})
        shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
        raise ValueError(f"source {name!r} names no document of the corpus (documents: {shown})")
    raise ValueError(
        f"source {name!r} names {len(found)} documents ({', '.join(found[:4])}): give a longer path"
    )


def _normalise(text: str) -> tuple[str, list[int]]:
    """Whitespace runs collapsed to one space, with each output character's index in ``text``."""
    out: list[str] = []
    pos: list[int] = []
    space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if space:
                continue
            out.append(" ")
            space = True
        else:
            out.append(ch)
            space = False
        pos.append(i)
    return "".join(out), pos


def locate_quote(text: str, quote: str) -> tuple[int, int] | None:
    """The span of ``quote`` in ``text``: the first exact occurrence, else the first occurrence with
    whitespace runs treated as equal (a quote copied across a line break). None when absent.
    Invariant: ``squash(text[start:end]) == squash(quote)``.

    >>> locate_quote("Refunds are paid\\n  within 10 days.", "paid within 10 days")
    (12, 33)
    """
    i = text.find(quote)
    if i >= 0:
        return i, i + len(quote)
    q = squash(quote)
    if not q:
        return None
    norm, pos = _normalise(text)
    j = norm.find(q)
    if j < 0:
        return None
    return pos[j], pos[j + len(q) - 1] + 1


def resolve_queries(queries: list[LabelledQuery], documents: dict[str, str]) -> list[ResolvedQuery]:
    """Locate every passage in its document's text (``documents``: source → text). A source that
    names no document, a quote not in the text, or a span outside it fails naming the query."""
    sources = sorted(documents)
    out = []
    for q in queries:
        try:
            source = match_source(q.source, sources)
        except ValueError as e:
            raise ValueError(f"query {q.qid} ({q.query!r}): {e}") from e
        text = documents[source]
        passages = []
        for p in q.passages:
            quote = p.get("quote")
            if "span" in p:
                start, end = p["span"]
                if end > len(text):
                    raise ValueError(
                        f"query {q.qid} ({q.query!r}): span {p['span']} runs past the end of {source} "
                        f"({len(text)} characters)"
                    )
                if quote is not None and squash(text[start:end]) != squash(quote):
                    raise ValueError(
                        f"query {q.qid} ({q.query!r}): span {p['span']} of {source} reads "
                        f"{text[start:end][:60]!r}, not the quote {quote[:60]!r}; fix one of them"
                    )
            else:
                span = locate_quote(text, quote)
                if span is None:
                    raise ValueError(
                        f"query {q.qid} ({q.query!r}): quote {quote[:80]!r} is not in the text of {source}. "
                        "Copy it from the document's parsed text (what `raychunk chunk FILE` shows, or the "
                        "raw source for HTML), or give a span [start, end] instead."
                    )
                start, end = span
            passages.append(Passage(start, end, quote))
        out.append(ResolvedQuery(q.qid, q.query, source, tuple(passages)))
    return out
