"""Parse a corpus and print its block stream and a status summary.

    python jobs/parse_corpus.py INPUT... [--json]

The same code as ``raychunk parse``; the Ray job (chunk_corpus.py) builds on this stage.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from raychunk.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(["parse", *sys.argv[1:]]))
