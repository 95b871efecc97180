"""The cost report as a script for `ray job submit`:

    ray job submit --working-dir . -- python jobs/price_index.py --input s3://bucket/docs \\
        --sizes 128,256,512 --overlaps 0,0.1,0.2 --sample 0.01 --output price

Under `ray job submit` RAY_ADDRESS is set, so the job joins the cluster. Same flags as `raychunk price`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from raychunk.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main(["price", *sys.argv[1:]]))
