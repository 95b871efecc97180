"""The call path of one job as a user runs it: which of raychunk's rooms (modules) the driver enters,
and how often control climbs back from one room into another.

It runs ``raychunk ARGS`` in this process (``raychunk.cli.main``) under ``sys.setprofile`` and keeps
the calls whose caller and callee are both raychunk functions (the driver only: what Ray runs in
its workers is not traced; nor is a module's import-time code). A *climb* is a distinct call edge between functions of two different
rooms (each such call returns up into the caller's room once per distinct edge); the job's own
function is reported apart: the rooms it calls into directly and its distinct cross-room calls.

    python scripts/call_path.py run --no-embed --input samples --output /tmp/x --overwrite
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections import Counter


def room(module: str) -> str:
    return module.removeprefix("raychunk.")


def trace(argv: list[str]) -> dict:
    from raychunk.cli import main

    edges: Counter = Counter()
    entered: list[str] = []

    def profile(frame, event, arg):
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")
        caller_frame = frame.f_back
        if caller_frame is None or not callee.startswith("raychunk"):
            return
        caller = caller_frame.f_globals.get("__name__", "")
        if not caller.startswith("raychunk") or "<module>" in (
            frame.f_code.co_name,
            caller_frame.f_code.co_name,
        ):
            return  # not a raychunk call, or a module's import-time code
        if callee not in entered:
            entered.append(callee)
        if caller != callee:
            edges[(caller, caller_frame.f_code.co_name, callee, frame.f_code.co_name)] += 1

    buf = io.StringIO()
    sys.setprofile(profile)
    try:
        with contextlib.redirect_stdout(buf):
            code = main(argv)
    finally:
        sys.setprofile(None)
    # The job's function: what the CLI calls in the job's module (``run_job`` for ``run``).
    called = {e[3] for e in edges if e[0] == "raychunk.cli" and e[2] == f"raychunk.jobs.{argv[0]}"}
    job = {e for e in edges if e[0] == f"raychunk.jobs.{argv[0]}" and e[1] in called}
    return {
        "exit": code,
        "rooms": [room(m) for m in entered],
        "climbs": len(edges),
        "job_rooms": sorted({room(e[2]) for e in job}),
        "job_calls": len(job),
    }


def main() -> int:
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    found = trace(sys.argv[1:])
    print(f"rooms entered: {len(found['rooms'])} ({', '.join(found['rooms'])})")
    print(f"climbs (distinct cross-room calls): {found['climbs']}")
    print(
        f"the job's function: {found['job_calls']} cross-room calls into {len(found['job_rooms'])} rooms "
        f"({', '.join(found['job_rooms'])})"
    )
    import ray

    ray.shutdown()
    return found["exit"]


if __name__ == "__main__":
    sys.exit(main())
