"""The HTML parse stage per document, its tokenizer (``parse.html._Tokens``: offsets without line
counting, start tags of the common shape in one pattern) against the standard library's
``html.parser`` as it is, side by side in one process (passes alternate), CPU time.

    python benchmarks/html_parse.py                      # every HTML file of ../shared/corpus
    python benchmarks/html_parse.py --multilang 700 --rounds 5

Each document is parsed whole as the parse stage does it (``parse_document``: decode, dispatch, the
event walk, blocks); the ``html.parser`` pass swaps the tokenizer for the stdlib's own
``parse_starttag``, ``updatepos`` and ``getpos``-based offsets. The two passes must give equal
documents: the script says so or fails. Also on the HTML quarter of ``peer_pipelines.py``'s
generated multi-language corpus.
"""

from __future__ import annotations

import _markupbase
import argparse
import gc
import re
import sys
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.peer_pipelines import multilang_corpus  # noqa: E402
from raychunk.parse import html as html_parse  # noqa: E402
from raychunk.parse import parse_document  # noqa: E402


class _StdlibEvents(html_parse._Events):
    """The parse's event walk on the stdlib tokenizer: what ``_Tokens`` replaced, put back."""

    parse_starttag = HTMLParser.parse_starttag
    updatepos = _markupbase.ParserBase.updatepos

    def __init__(self, text: str, keep: set[int]):
        super().__init__(text, keep)
        self._lines = [0] + [m.end() for m in re.finditer("\n", text)]

    def event_start(self) -> int:
        line, col = self.getpos()
        return self._lines[line - 1] + col


_FAST = html_parse._Events


def _docs(datas, events) -> list:
    html_parse._Events = events
    return [parse_document(d, s) for d, s in datas]


def _pass(datas, events) -> float:
    """One pass's CPU seconds, from a collected heap (no pass pays for another's garbage)."""
    html_parse._Events = events
    gc.collect()
    t = time.process_time()
    for d, s in datas:
        parse_document(d, s)
    return time.process_time() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(Path(__file__).resolve().parent.parent.parent / "shared/corpus"))
    ap.add_argument("--multilang", type=int, default=700, help="generated multi-language documents")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    html = (".html", ".htm", ".xhtml")
    with tempfile.TemporaryDirectory() as tmp:
        multilang_corpus(Path(tmp), args.multilang)
        sets = {
            "corpus html": [
                (p.read_bytes(), str(p))
                for p in sorted(Path(args.corpus).rglob("*"))
                if p.is_file() and p.suffix.lower() in html
            ],
            "multilang html": [
                (p.read_bytes(), str(p)) for p in sorted(Path(tmp).rglob("*")) if p.suffix.lower() in html
            ],
        }
    try:
        for name, datas in sets.items():
            if not datas:
                print(f"{name}: no HTML files")
                continue
            if _docs(datas, _StdlibEvents) != _docs(datas, _FAST):
                print(f"{name}: the two parses differ", file=sys.stderr)
                return 1
            best = {"html.parser": float("inf"), "_Tokens": float("inf")}
            for _ in range(args.rounds):
                best["html.parser"] = min(best["html.parser"], _pass(datas, _StdlibEvents))
                best["_Tokens"] = min(best["_Tokens"], _pass(datas, _FAST))
            size = sum(len(d) for d, _ in datas)
            print(
                f"{name}: {len(datas)} documents, {size / 1e6:.2f} MB, identical documents; parse MB/s "
                f"(best of {args.rounds}, CPU): html.parser {size / 1e6 / best['html.parser']:.2f}, "
                f"_Tokens {size / 1e6 / best['_Tokens']:.2f} ({best['html.parser'] / best['_Tokens']:.2f}x)"
            )
    finally:
        html_parse._Events = _FAST
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
