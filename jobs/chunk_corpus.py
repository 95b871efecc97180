"""The main job as a script for `ray job submit`:

    ray job submit --working-dir . -- python jobs/chunk_corpus.py --input s3://bucket/docs --output s3://bucket/index

Under `ray job submit` RAY_ADDRESS is set, so the job joins the cluster instead of starting a local
Ray. It takes the same flags as `raychunk run`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from raychunk.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(["run", *sys.argv[1:]]))
