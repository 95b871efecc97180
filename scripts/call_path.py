"""The call path of one job as a user runs it: which of raychunk's rooms (modules) the driver enters,
and how often control climbs back from one room into another.

It runs ``raychunk ARGS`` in this process (``raychunk.cli.main``) under ``sys.setprofile`` and keeps
the calls whose caller and callee are both raychunk functions (the driver only: what Ray runs in
its workers is not traced; nor is a module's import-time code). A *climb* is a distinct call edge between functions of two different
rooms (each such call returns up into the caller's room once per distinct edge); the job's own
function is reported apart: the rooms it calls into directly and its distinct cross-room calls.
A *re-entry* is stricter: a cross-room call into a room that is already an ancestor on the current
call stack (A -> B -> A: control comes back down into a room it has not yet left); they are listed,
each distinct edge once, with the rooms on the stack.

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

    calls = Calls()
    code = calls.run(main, argv)
    edges = calls.edges
    # The job's function: what the CLI calls in the job's module (``run_job`` for ``run``).
    called = {e[3] for e in edges if e[0] == "raychunk.cli" and e[2] == f"raychunk.jobs.{argv[0]}"}
    job = {e for e in edges if e[0] == f"raychunk.jobs.{argv[0]}" and e[1] in called}
    return {
        "exit": code,
        "rooms": [room(m) for m in calls.entered],
        "climbs": len(edges),
        "job_rooms": sorted({room(e[2]) for e in job}),
        "job_calls": len(job),
        "reentries": calls.reentry_lines(),
    }


class Calls:
    """The raychunk calls one function makes (``run``): rooms entered in order, distinct
    cross-room edges ``(caller room, caller function, callee room, callee function)``, and those
    edges whose callee room is already on the stack above the caller (re-entries)."""

    def __init__(self) -> None:
        self.edges: Counter = Counter()
        self.entered: list[str] = []
        self.reentries: dict[tuple, tuple[str, ...]] = {}

    def run(self, fn, *args):
        buf = io.StringIO()
        sys.setprofile(self._profile)
        try:
            with contextlib.redirect_stdout(buf):
                return fn(*args)
        finally:
            sys.setprofile(None)

    def _profile(self, frame, event, arg):
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
        if callee not in self.entered:
            self.entered.append(callee)
        if caller != callee:
            edge = (caller, caller_frame.f_code.co_name, callee, frame.f_code.co_name)
            self.edges[edge] += 1
            if edge not in self.reentries and callee in (stack := _rooms_above(caller_frame)):
                self.reentries[edge] = stack

    def reentry_lines(self) -> list[tuple[str, str]]:
        """Each re-entry as ``("a.f -> b.g", "b > ... > a > b")``: the edge, and the rooms from the
        callee's earlier place on the stack down to it again."""
        return [
            (
                f"{room(a)}.{fa} -> {room(b)}.{fb}",
                " > ".join(room(m) for m in [*stack[: stack.index(b) + 1][::-1], b]),
            )
            for (a, fa, b, fb), stack in self.reentries.items()
        ]


def _rooms_above(frame) -> tuple[str, ...]:
    """The raychunk rooms on the call stack from ``frame`` up, each once, nearest first."""
    out: list[str] = []
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name.startswith("raychunk") and (not out or out[-1] != name):
            out.append(name)
        frame = frame.f_back
    return tuple(out)


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
    print(f"re-entries (a call into a room already on the stack): {len(found['reentries'])}")
    for edge, stack in found["reentries"]:
        print(f"  {edge}    ({stack})")
    import ray

    ray.shutdown()
    return found["exit"]


if __name__ == "__main__":
    sys.exit(main())
