"""Test-only fault injection, for the fault tests of isolation, retries and resume.

``RAYCHUNK_TEST_FAULTS="ACTION:MATCH,..."`` makes ``inject(where)`` misbehave wherever ``MATCH`` is
part of ``where`` (a source path in the parse stage, ``embed`` in the embed stage). ACTION is one of
``crash`` (the process exits at once), ``kill-parent`` (the process that started this one is killed:
the Ray worker, seen from the document sandbox), ``hang``, ``memory`` (allocates without end),
``raise``, ``slow`` (sleeps 2 s); with ``-once`` (``crash-once``) it fires only the first time
(a marker file in ``RAYCHUNK_TEST_FAULTS_DIR``, else the temp folder). Unset, ``inject`` returns at once.
"""

from __future__ import annotations

import hashlib
import os
import signal
import tempfile
import time

__all__ = ["inject"]

_SPEC = [tuple(x.split(":", 1)) for x in os.environ.get("RAYCHUNK_TEST_FAULTS", "").split(",") if ":" in x]


def inject(where: str) -> None:
    for action, match in _SPEC:
        if match not in where:
            continue
        if action.endswith("-once"):
            action = action[: -len("-once")]
            folder = os.environ.get("RAYCHUNK_TEST_FAULTS_DIR") or tempfile.gettempdir()
            marker = os.path.join(folder, "raychunk-fault-" + hashlib.sha1(match.encode()).hexdigest()[:16])
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                continue
        if action == "crash":
            os._exit(70)
        elif action == "kill-parent":
            os.kill(os.getppid(), signal.SIGKILL)
            time.sleep(60)
        elif action == "hang":
            while True:
                time.sleep(1)
        elif action == "memory":
            hog = []
            while True:
                hog.append(b"x" * (64 * 2**20))
        elif action == "raise":
            raise RuntimeError(f"test fault at {match}")
        elif action == "slow":
            time.sleep(2)
