"""Random markdown through both block parses, token by token: every document that markdown-it.rs'
tree stands for (``raychunk.parse.markdown_rs.block_tokens`` is not None) must give the tokens
markdown-it-py gives, as the markdown walker reads them. Prints the count of each outcome and the
first documents that differ; exits 1 if any did.

    python scripts/markdown_fuzz.py                    # 20,000 documents, seed 1
    python scripts/markdown_fuzz.py --docs 100000 --seed 7

A document is 1-18 lines drawn from constructs where the two parsers are known to read lines apart
(lazy lines, open fences and HTML blocks, tabs, tables ending at a block, Unicode whitespace,
definition lists, front matter) and common ones, joined by LF or CRLF, with or without a final
newline. ``tests/test_parse_markdown_rs.py`` runs 300 such documents through the whole parse.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from raychunk.parse.markdown import _DEEP, _parser  # noqa: E402
from raychunk.parse.markdown_rs import SKIPPED, available, block_tokens  # noqa: E402

PIECES = [
    # headings, paragraphs, rules, underlines
    *(
        "# H",
        "#",
        "## H2 ##",
        "####### seven",
        "Title",
        "===",
        "---",
        "  ---",
        "    ===",
        "***",
        "* * *",
        "___",
    ),
    *("text line", "  text cont", "\\# esc", "text\\", "&nbsp;", "a <b>c</b>", "caf\u00e9 \u65e5\u672c"),
    # lists
    *("- item", "* star", "+ plus", "1. one", "2) two", "10. ten", "0. zero", "1.", "-", "* ", "- [x] task"),
    *(
        "  - nested",
        "    - deeper",
        "      text",
        "  continued",
        "   1. n",
        "- # heading in item",
        "- > q in item",
    ),
    # quotes
    *(
        "> quote",
        "> > qq",
        ">> tight",
        "> - ql",
        ">",
        "  > q in item",
        "   > indented q",
        "> |---|---|",
        "> ---",
    ),
    # code
    *("```", "```py", "````", "~~~", "    code", "\tcode", "  ```", "- ```", "- a\tb", " \t x"),
    # tables
    *("| a | b |", "|---|---|", "| 1 | 2 |", "| x \\| y | `z|w` |", "  | a | b |", "  |---|---|", "|"),
    # HTML
    *("<div>", "</div>", "  <div>", "<!-- c -->", "<!--", "-->", "<pre>", "</pre>", "<script>", "</script>"),
    *("<details>", "</details>", "<?php x ?>", "<!DOCTYPE html>", "<custom-tag>"),
    # definition lists, references, front matter
    *("Term", ":   def", ": d", "  : indented def", "[ref]: http://x", "[ref2]:", "title: x", "+++"),
    # whitespace of all kinds
    *("", "", "", "   ", "\t", "  \u00a0 nbsp", "\u00a0", "\x0cff", "\u2028sep"),
]

# What the walker reads of each token type (raychunk.parse.markdown.parse_markdown).
_MAPPED = {"heading_open", "paragraph_open", "fence", "code_block", "html_block", "table_open"}


def read(tok) -> tuple:
    k = [tok.type]
    if tok.type in _MAPPED:
        k.append(tuple(tok.map))
    if tok.type == "dt_open":
        k.append(tok.map[0])
    if tok.type in ("paragraph_open", "list_item_open"):
        k.append(tok.level)
    if tok.type in ("inline", "fence", "code_block", "html_block"):
        k.append(tok.content)
    if tok.type == "front_matter":
        k.append(tok.content.rstrip("\n"))
    if tok.type == "heading_open":
        k.append(tok.tag)
    if tok.type == "fence":
        k += [tok.markup, tok.info]
    if tok.type == "ordered_list_open":
        k += [tok.markup, int((tok.attrs or {}).get("start", 1))]
    return tuple(k)


def compare(text: str) -> str:
    """``same``, ``fallback`` (the tree declined), or where the two token streams part."""
    text = _DEEP.sub(r"\1", text)
    fast = block_tokens(text)
    if fast is None:
        return "fallback"
    a = [read(t) for t in _parser().parse(text) if t.type not in SKIPPED]
    b = [read(t) for t in fast]
    if a == b:
        return "same"
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"apart at token {at}: markdown-it-py {a[at : at + 1]!r:.300} tree {b[at : at + 1]!r:.300}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=5, help="documents that differ to print")
    args = ap.parse_args(argv)
    if not available():
        print("markdown-it-pyrs is not installed: nothing to compare")
        return 1
    rng = random.Random(args.seed)
    outcomes: Counter = Counter()
    shown = 0
    for _ in range(args.docs):
        lines = [rng.choice(PIECES) for _ in range(rng.randint(1, 18))]
        text = ("\r\n" if rng.random() < 0.15 else "\n").join(lines) + ("\n" if rng.random() < 0.8 else "")
        got = compare(text)
        outcomes["apart" if got.startswith("apart") else got] += 1
        if got.startswith("apart") and shown < args.show:
            shown += 1
            print(f"{text!r}\n  {got}")
    print(
        f"{args.docs:,} documents (seed {args.seed}): {outcomes['same']:,} the same through the tree, "
        f"{outcomes['fallback']:,} by markdown-it-py, {outcomes['apart']:,} apart"
    )
    return 1 if outcomes["apart"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
