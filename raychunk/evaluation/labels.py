"""The labelled queries: reading them, matching their sources, and locating their passages.

A label names a document and a passage (a quote and/or a character span ``[start, end)`` into the
document's parsed text), never a chunk id, so it survives a re-chunk. ``load_queries`` checks the
file as written; ``locate_passages`` finds one question's passages in its document's parsed text
(``evaluation.locate``: a quote as a viewer shows it), ``apply_locations`` turns what was found for
every question into the scored questions, or one error listing every quote that was not found;
``resolve_queries`` does both where the texts are at hand.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from raychunk.evaluation.locate import TextWords, find_quote, nearest
from raychunk.render import squash

__all__ = [
    "LabelledQuery",
    "Passage",
    "ResolvedQuery",
    "UnlocatedQuotes",
    "apply_locations",
    "load_queries",
    "locate_passages",
    "locate_quote",
    "match_source",
    "passages_by_source",
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
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Passage:
    """A located answer passage: ``text[start:end]`` of the document; ``quote``, when one was given,
    is that text as located (the document's rendering of the quote, which a chunk's text holds)."""

    start: int
    end: int
    quote: str | None = None


@dataclass(frozen=True, slots=True)
class ResolvedQuery:
    qid: str
    query: str
    source: str  # the corpus document's full source, as the chunks carry it
    passages: tuple[Passage, ...]
    tags: tuple[str, ...] = ()


class UnlocatedQuotes(ValueError):
    """Quotes not found in their documents' parsed text: every one listed (``missing``), so one
    run names them all."""

    def __init__(self, missing: list[dict]):
        self.missing = missing
        lines = [
            f"{len(missing)} labelled passage{'s' if len(missing) != 1 else ''} not found in the parsed text:"
        ]
        for m in missing:
            lines.append(f"  query {m['id']} ({m['query']!r}), {m['source'].rsplit('/', 1)[-1]}: {m['why']}")
            if m.get("nearest"):
                lines.append(f"    nearest: {m['nearest']}")
        lines.append(
            "Copy each quote from the document's parsed text (what `raychunk parse FILE` shows), give a span "
            "[start, end] instead, or pass --skip-unlocated to score the other questions."
        )
        super().__init__("\n".join(lines))


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
        unknown = sorted(set(row) - {"id", "query", "source", "passages", "note", "tags"})
        if unknown:
            raise ValueError(
                f"{where}: unknown key {unknown[0]!r}: accepted keys are id, query, source, passages, tags, note"
            )
        tags = row.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) and t.strip() for t in tags):
            raise ValueError(
                f'{where}: \'tags\' must be a list of non-empty strings, e.g. ["table", "heading"]'
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
        tags = tuple(dict.fromkeys(t.strip() for t in tags))
        out.append(LabelledQuery(qid, row["query"].strip(), row["source"].strip(), tuple(passages), tags))
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


def locate_quote(text: str, quote: str) -> tuple[int, int] | None:
    """The span of ``quote`` in ``text``, its first occurrence, as ``locate.find_quote`` finds it
    (exact, whitespace runs as equal, then the quote's words with markup, hyphenation and bounded
    noise tolerated). None when absent.

    >>> locate_quote("Refunds are paid\\n  within 10 days.", "paid within 10 days")
    (12, 33)
    """
    m = find_quote(text, quote)
    return None if m is None else (m.start, m.end)


# Markup at a located quote's edges: whitespace, a table row's pipes, a list item's marker.
_LEADING_MARKUP = re.compile(r"(?:\s+|\|+|(?:[*+>-]|\d{1,3}[.)])(?=\s))+")


def trim_markup(text: str, start: int, end: int) -> tuple[int, int]:
    """``text[start:end]`` less the whitespace, table pipes and list marker at its edges: the
    structure a chunk renders (a ``* `` item as ``- ``, a row's cells between its own pipes) rather
    than words it spans, so a quote copied with the row's leading ``| `` or the item's ``* `` lies
    inside the chunk that holds the row or the item. A quote of markup alone is kept whole.

    >>> text = "x\\n* Returns `DROP` always.\\n| a | 1 |"
    >>> [text[slice(*trim_markup(text, a, b))] for a, b in ((2, 26), (27, 36))]
    ['Returns `DROP` always.', 'a | 1']
    """
    m = _LEADING_MARKUP.match(text, start, end)
    a = m.end() if m else start
    b = end
    while b > a and (text[b - 1].isspace() or text[b - 1] == "|"):
        b -= 1
    return (a, b) if b > a else (start, end)


def locate_passages(q: LabelledQuery, source: str, text: str, words: TextWords | None = None) -> dict:
    """One question's passages found in its document's ``text``: ``{"passages": [{start, end,
    quote: the located text}], "notes": [...], "unlocated": [...]}`` (``schema.LOCATED_ROWS``), where a note is a passage found other than
    exactly (``how``) or more than once (``occurrences``), and an unlocated passage says why and,
    for a quote, the nearest partial match. A quote found more than once is its first occurrence,
    with no located text: a chunk holding the same words elsewhere is not a hit, only one covering
    that occurrence's span."""
    passages, notes, unlocated = [], [], []
    for n, p in enumerate(q.passages):
        quote = p.get("quote")
        if "span" in p:
            start, end = p["span"]
            if end > len(text):
                unlocated.append(
                    {"quote": quote, "why": f"span {p['span']} runs past the end ({len(text):,} characters)"}
                )
                continue
            if quote is not None and squash(text[start:end]) != squash(quote):
                unlocated.append(
                    {
                        "quote": quote,
                        "why": f"span {p['span']} reads {text[start:end][:60]!r}, not the quote "
                        f"{quote[:60]!r}; fix one of them",
                    }
                )
                continue
        else:
            if words is None and text:
                words = TextWords(text)
            m = find_quote(text, quote, words)
            if m is None:
                unlocated.append(
                    {
                        "quote": quote,
                        "why": f"quote {quote[:80]!r} is not in the text",
                        "nearest": nearest(text, quote, words),
                    }
                )
                continue
            start, end = trim_markup(text, m.start, m.end)
            if m.how != "exact" or m.occurrences > 1:
                notes.append(
                    {
                        "passage": n,
                        "quote": quote[:80],
                        "how": m.how,
                        "occurrences": m.occurrences,
                        "span": [start, end],
                    }
                )
            if m.occurrences > 1:
                quote = None  # its first occurrence is meant: scored by span, not by any chunk quoting it
        passages.append({"start": start, "end": end, "quote": text[start:end] if quote is not None else None})
    return {"passages": passages, "notes": notes, "unlocated": unlocated}


def apply_locations(
    queries: list[LabelledQuery],
    sources: list[str],
    located: dict[int, dict],
    *,
    skip_unlocated: bool = False,
) -> tuple[list[ResolvedQuery], dict]:
    """The scored questions from what ``locate_passages`` found for each (``located``: question index
    → its result, or ``{"unlocated": [{"why": ...}]}`` when its document did not parse), with the
    report's ``labels`` section: passages found and how, ambiguous quotes (the first occurrence
    scored), and the unlocated ones. An unlocated passage fails naming every one, or with
    ``skip_unlocated`` its question is left out and listed."""
    out, missing, how, ambiguous, noisy = [], [], Counter(), [], []
    for i, (q, source) in enumerate(zip(queries, sources)):
        r = located.get(i) or {"unlocated": [{"quote": None, "why": "its document was not read"}]}
        for u in r["unlocated"]:
            why = {k: v for k, v in u.items() if v is not None}  # a row's absent fields come back null
            missing.append({"id": q.qid, "query": q.query, "source": source, **why, "quote": u.get("quote")})
        if r["unlocated"]:
            continue
        notes = {n["passage"]: n for n in r.get("notes", ())}
        for j, p in enumerate(q.passages):
            n = notes.get(j)
            how[n["how"].split(",")[0] if n else ("span" if "span" in p else "exact")] += 1
            if n and n["occurrences"] > 1:
                ambiguous.append(
                    {
                        "id": q.qid,
                        "source": source,
                        "quote": n["quote"],
                        "occurrences": n["occurrences"],
                        "scored": n["span"],
                    }
                )
            if n and n["how"].startswith("words, "):
                noisy.append(
                    {"id": q.qid, "source": source, "quote": n["quote"], "how": n["how"], "span": n["span"]}
                )
        out.append(
            ResolvedQuery(
                q.qid,
                q.query,
                source,
                tuple(Passage(p["start"], p["end"], p["quote"]) for p in r["passages"]),
                q.tags,
            )
        )
    if missing and not skip_unlocated:
        raise UnlocatedQuotes(missing)
    report = {
        "questions": len(queries),
        "scored": len(out),
        "passages_found": dict(sorted(how.items())),
        "ambiguous": ambiguous,
        "noise_skipped": noisy,
        "unlocated": missing,
        "skipped_questions": sorted({m["id"] for m in missing}, key=[q.qid for q in queries].index),
    }
    return out, report


def resolve_queries(queries: list[LabelledQuery], documents: dict[str, str]) -> list[ResolvedQuery]:
    """Locate every passage in its document's text (``documents``: source → text). A source that
    names no document fails naming the query; passages not found fail together (``UnlocatedQuotes``)."""
    sources = sorted(documents)
    matched = []
    for q in queries:
        try:
            matched.append(match_source(q.source, sources))
        except ValueError as e:
            raise ValueError(f"query {q.qid} ({q.query!r}): {e}") from e
    words: dict[str, TextWords] = {}
    located = {}
    for i, (q, source) in enumerate(zip(queries, matched)):
        text = documents[source]
        if source not in words and text:
            words[source] = TextWords(text)
        located[i] = locate_passages(q, source, text, words.get(source))
    return apply_locations(queries, matched, located)[0]


def passages_by_source(resolved: list[ResolvedQuery]) -> dict[str, list]:
    """A document's source → its scored questions' located passages, as the eval's chunk step
    marks chunks against them: ``(index, [[start, end, located quote]])``."""
    out: dict[str, list] = {}
    for i, q in enumerate(resolved):
        out.setdefault(q.source, []).append((i, [[p.start, p.end, p.quote] for p in q.passages]))
    return out
