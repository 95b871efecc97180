"""The documents a labelled query set names, as paths under a corpus folder, one line each: what
``make eval-corpus`` passes to ``raychunk eval --input``, so only the labelled documents are embedded.

    python scripts/labelled_files.py evals/corpus.jsonl ../shared/corpus

A source is a path suffix (``md/guide.md``); it must name exactly one file under the folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

from raychunk.evaluation import load_queries, match_source


def labelled_files(queries: str | Path, root: str | Path) -> list[str]:
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"{root}: not a folder")
    files = sorted(str(p) for p in root.rglob("*") if p.is_file())
    return sorted({match_source(q.source, files) for q in load_queries(queries)})


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        print("\n".join(labelled_files(*argv)))
    except (FileNotFoundError, ValueError) as e:
        print(f"labelled_files: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
