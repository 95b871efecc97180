"""Check the labelled corpus set before any chunking or embedding: every source names one corpus
file, every quote is in that file's parsed text, the tag targets hold.

    python scripts/check_labels.py                          # evals/corpus.jsonl over ../shared/corpus
    python scripts/check_labels.py --queries Q.jsonl --corpus DIR --verbose
    python scripts/check_labels.py --queries evals/aside.jsonl --aside   # the aside set's floors

Each document is parsed once with raychunk's own parser (``raychunk.parse.parse_path``, the default
parse options the jobs use), and each quote is reported as one of:

- ``exact``: a substring of the parsed text;
- ``whitespace``: found once whitespace runs are treated as equal;
- ``tolerant``: found only by the word passes of ``raychunk.evaluation.locate.find_quote`` (markup,
  table cell separators, hyphenation, running headers), as ``raychunk eval`` locates it;
- ``missing``: not found, a label error.

A quote found more than once is flagged ``ambiguous``: the locator takes the first occurrence, which
must be the intended passage.

Exit status 1 on a missing quote, a source that names no file or several, or a tag target not met.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_QUERIES = ROOT / "evals" / "corpus.jsonl"
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"  # beside the repo, as the tests find it

SUBSETS = ("structured", "weak")
KINDS = ("heading", "table", "list", "prose")
# Share of all questions each tag must reach, and the floor for the weak subset.
TARGETS = {"heading": 0.40, "table": 0.20, "list": 0.15}
MIN_QUESTIONS, MIN_DOCUMENTS = 150, 15
MIN_WEAK_QUESTIONS, MIN_WEAK_DOCUMENTS = 30, 3
# The aside set (evals/aside.jsonl, never used while tuning): its own floors, no kind shares.
ASIDE = {"targets": {}, "questions": 80, "documents": 10, "weak": (30, 3)}


@dataclass(frozen=True, slots=True)
class QuoteCheck:
    qid: str
    source: str
    quote: str
    status: str  # exact | whitespace | tolerant | missing
    occurrences: int  # as the locator counts them (0 when missing)


def read_rows(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            row = json.loads(line)
            row["_line"] = n
            rows.append(row)
    return rows


def corpus_files(corpus: Path) -> list[str]:
    """Every document of the corpus as a path relative to it (``md/x.md``), ``_licenses`` excluded."""
    return sorted(
        p.relative_to(corpus).as_posix()
        for p in corpus.rglob("*")
        if p.is_file() and not p.relative_to(corpus).parts[0].startswith("_") and p.name != "MANIFEST.md"
    )


def match(source: str, files: list[str]) -> list[str]:
    return [f for f in files if f == source or f.endswith("/" + source)]


def check(queries: Path, corpus: Path) -> tuple[list[QuoteCheck], list[str], list[dict]]:
    """Every quote's status, the label errors found, and the rows as read."""
    from raychunk.evaluation.locate import TextWords, find_quote
    from raychunk.parse import parse_path

    rows = read_rows(queries)
    files = corpus_files(corpus)
    errors: list[str] = []
    parsed: dict[str, tuple[str, TextWords]] = {}
    out: list[QuoteCheck] = []
    for row in rows:
        qid, source = row.get("id", f"line {row['_line']}"), row["source"]
        found = match(source, files)
        if len(found) != 1:
            errors.append(f"{qid}: source {source!r} names {len(found)} corpus files {found[:3]}")
            continue
        rel = found[0]
        if rel not in parsed:
            doc = parse_path(corpus / rel)
            if doc.document.status != "ok":
                errors.append(f"{qid}: {rel} did not parse ({doc.document.status}: {doc.document.reason})")
            parsed[rel] = (doc.text, TextWords(doc.text))
        text, words = parsed[rel]
        for p in row["passages"]:
            quote = p["quote"]
            m = find_quote(text, quote, words)
            if m is None:
                status, count = "missing", 0
                errors.append(f"{qid}: quote not in {rel}: {quote[:90]!r}")
            else:
                status = m.how if m.how in ("exact", "whitespace") else "tolerant"
                count = m.occurrences
            out.append(QuoteCheck(qid, rel, quote, status, count))
    return out, errors, rows


def tag_report(rows: list[dict], aside: bool = False) -> tuple[list[str], list[str]]:
    """Lines of counts by tag, subset and document, and the targets that are not met (the aside
    set's floors with ``aside``)."""
    targets = ASIDE["targets"] if aside else TARGETS
    min_questions, min_documents = (
        (ASIDE["questions"], ASIDE["documents"]) if aside else (MIN_QUESTIONS, MIN_DOCUMENTS)
    )
    min_weak, min_weak_docs = ASIDE["weak"] if aside else (MIN_WEAK_QUESTIONS, MIN_WEAK_DOCUMENTS)
    n = len(rows)
    tags = Counter(t for r in rows for t in set(r.get("tags", [])))
    docs = Counter(r["source"] for r in rows)
    weak_docs = {r["source"] for r in rows if "weak" in r.get("tags", [])}
    failures = []
    for r in rows:
        subset = [t for t in r.get("tags", []) if t in SUBSETS]
        if len(subset) != 1:
            failures.append(f"{r.get('id')}: needs exactly one of {SUBSETS}, has {subset}")
    lines = [f"{n} questions over {len(docs)} documents"]
    for t in SUBSETS + KINDS:
        target = targets.get(t)
        pct = 100 * tags[t] / n if n else 0.0
        lines.append(
            f"  {t:<10} {tags[t]:>4}  {pct:5.1f}%" + (f"  (target >= {100 * target:.0f}%)" if target else "")
        )
        if target and tags[t] < target * n:
            failures.append(f"tag {t!r}: {pct:.1f}% of the questions, target {100 * target:.0f}%")
    if n < min_questions:
        failures.append(f"{n} questions, target {min_questions}")
    if len(docs) < min_documents:
        failures.append(f"{len(docs)} documents, target {min_documents}")
    if tags["weak"] < min_weak or len(weak_docs) < min_weak_docs:
        failures.append(
            f"weak subset: {tags['weak']} questions over {len(weak_docs)} documents, "
            f"target {min_weak} over {min_weak_docs}"
        )
    lines.append("by document:")
    for source, c in sorted(docs.items()):
        kinds = Counter(t for r in rows if r["source"] == source for t in r.get("tags", []) if t in KINDS)
        subset = "weak" if source in weak_docs else "structured"
        shown = " ".join(f"{k}={kinds[k]}" for k in KINDS if kinds[k])
        lines.append(f"  {source:<48} {c:>3}  {subset:<10} {shown}")
    return lines, failures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=Path, default=DEFAULT_QUERIES)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--verbose", action="store_true", help="print every quote, not only the ones to look at")
    ap.add_argument(
        "--aside",
        action="store_true",
        help="the aside set's floors: 80 questions, 10 documents, no kind shares",
    )
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus} (pass --corpus DIR)", file=sys.stderr)
        return 2
    checks, errors, rows = check(args.queries, args.corpus)
    status = Counter(c.status for c in checks)
    print(
        f"{len(checks)} quotes: "
        + ", ".join(f"{s} {status[s]}" for s in ("exact", "whitespace", "tolerant", "missing"))
    )
    for c in checks:
        flag = f" AMBIGUOUS x{c.occurrences}" if c.occurrences > 1 else ""
        if args.verbose or c.status in ("tolerant", "missing") or flag:
            print(f"  {c.status:<10} {c.qid:<22} {c.quote[:80]!r}{flag}")
    lines, failures = tag_report(rows, aside=args.aside)
    print("\n".join(lines))
    for e in errors + failures:
        print("ERROR " + e)
    return 1 if errors or failures else 0


if __name__ == "__main__":
    sys.exit(main())
