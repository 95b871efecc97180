"""Hard limits per document: its CPU stages run in a child process that the caller can kill.

A ``Sandbox`` keeps one child (``python -m raychunk.isolate``) and sends it the steps to run on a
document (parse, classify, chunk) once, then the documents, a batch of them per round trip
(``run_many``). The parent watches the child's resident memory and the clock and kills its whole
process group (MuPDF and the PDF table finder included) when a document goes over ``doc_memory_mb``
(the resident memory of the child and of every process it started) or ``doc_timeout_s``; a child
that dies on its own (a segfault, ``os._exit``, the kernel's OOM killer) is replaced and the
document tried again, at most ``crash_attempts`` times; the rest of its batch goes on in the new
child. Nothing the document's own code does can catch or ignore any of this.
The outcome is a value or a ``Failure`` whose reason names the limit and the stage.

Only the standard library is imported here; the steps bring their own imports into the child.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import mmap
import os
import pickle
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection

__all__ = ["Failure", "Limits", "Sandbox", "SandboxError", "human_mib", "peak_rss_mb"]

_MIB = 2**20
_POLL_S = 0.02
_START_TIMEOUT_S = 120.0
_LOG_LEVEL = "RAYCHUNK_CHILD_LOG_LEVEL"


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-document limits of the CPU stages, and how often the job retries infrastructure failures.

    ``doc_timeout_s`` and ``doc_memory_mb`` bound parse + classify + chunk of one document (resident
    memory of the process doing it); ``max_file_mb`` refuses a file before it is read;
    ``max_unzipped_mb`` refuses a zip package (docx, pptx, xlsx, epub, odt) whose parts declare more,
    and a compressed file (gzip, bzip2, xz, zstd, lz4) that decompresses to more;
    ``crash_attempts`` is how many times a document may kill its worker before it is given up;
    ``task_retries`` / ``actor_restarts`` are Ray's retries of a task or embed actor lost with its
    worker or node; ``follow_symlinks`` reads symlinks that lead out of an input folder."""

    doc_timeout_s: float = 300.0
    doc_memory_mb: int = 2048
    max_file_mb: float = 512.0
    max_unzipped_mb: float = 1024.0
    crash_attempts: int = 3
    task_retries: int = 3
    actor_restarts: int = 3
    follow_symlinks: bool = False

    def __post_init__(self):
        for name in ("doc_timeout_s", "doc_memory_mb", "max_file_mb", "max_unzipped_mb", "crash_attempts"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"limits.{name} must be a number > 0, got {value!r}")
        for name in ("task_retries", "actor_restarts"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"limits.{name} must be a whole number >= 0, got {value!r}")


class SandboxError(RuntimeError):
    """The child process cannot be started at all: a set-up problem, not a bad document."""


@dataclass(frozen=True, slots=True)
class Failure:
    kind: str  # timeout | memory | crash | error
    stage: str
    reason: str
    seconds: float = 0.0  # the document's time in the sandbox, its attempts together


def human_mib(mb: float) -> str:
    """2048 → '2 GiB', 1536 → '1.5 GiB', 300 → '300 MiB'."""
    return f"{mb / 1024:g} GiB" if mb >= 1024 else f"{mb:g} MiB"


def peak_rss_mb() -> int:
    """This process's peak resident memory (since the sandbox last reset it for a new document)."""
    return _status_kb("VmHWM") // 1024


Step = tuple[str, Callable]


class Sandbox:
    """One child process, reused document after document, replaced when killed or crashed."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self._proc: subprocess.Popen | None = None
        self._send: Connection | None = None
        self._recv: Connection | None = None
        self._stage: mmap.mmap | None = None  # the step the child is in, written there by the child
        self._steps_sent: object = None

    def run(self, steps: Sequence[Step], value, *, key: object = None) -> tuple[object, Failure | None, int]:
        """``value`` through ``steps`` in the child: ``(result, None, peak_mb)`` or ``(None, Failure, peak_mb)``.
        ``key`` names the steps, so they are sent to a child once, not with every document."""
        return self.run_many(steps, [value], key=key)[0]

    def run_many(
        self, steps: Sequence[Step], values: Sequence, *, key: object = None
    ) -> list[tuple[object, Failure | None, int]]:
        """Each of ``values`` through ``steps``, as ``run`` does, sent to the child as one batch: one
        round trip for the batch, each document under its own limits. When a document kills the
        child (a limit, a crash), the documents after it go again to a fresh child; a crashing
        document is tried ``crash_attempts`` times, as alone."""
        out: list[tuple[object, Failure | None, int]] = []
        crashes: list[str] = []
        crashed_s = 0.0
        while len(out) < len(values):
            for result, failure, peak in self._attempt(steps, values[len(out) :], key):
                if failure is not None and failure.kind == "crash":
                    crashes.append(failure.reason)
                    crashed_s += failure.seconds
                    if len(crashes) < self.limits.crash_attempts:
                        break  # the same document again, in a fresh child
                    times = f"{len(crashes)} times" if len(crashes) > 1 else "once"
                    reason = f"worker crashed {times} on this file ({crashes[-1]}, during {failure.stage})"
                    failure = Failure("crash", failure.stage, reason, crashed_s)
                out.append((result, failure, peak))
                crashes, crashed_s = [], 0.0
        return out

    def close(self) -> None:
        if self._proc is not None:
            self._kill()

    # -- one attempt --------------------------------------------------------------------------

    def _attempt(self, steps, values, key) -> list[tuple[object, Failure | None, int]]:
        """The outcomes of ``values`` in order, up to and with the first that ended the child (a
        limit, a crash, a document that left too much behind); an error is a document's own and
        the next goes on."""
        limits = self.limits
        names = [name for name, _ in steps]
        out: list[tuple[object, Failure | None, int]] = []
        started = time.monotonic()

        def failed(failure: Failure, peak_mb: int) -> list:
            out.append((None, dataclasses.replace(failure, seconds=time.monotonic() - started), peak_mb))
            return out

        try:
            self._ensure_child()
            key = key if key is not None else id(steps)
            if self._steps_sent is None or self._steps_sent[0] != key:
                # Unpickling the steps imports their modules: that start-up is not the document's time.
                self._send.send(("steps", list(steps)))
                self._await_ready()
                # Holding the steps keeps their id(): once freed, another job's steps in this worker
                # could get the same id and be taken for these.
                self._steps_sent = (key, steps)
            self._stage[0] = 0
            self._send.send(("run", list(values)))
        except (BrokenPipeError, EOFError, ConnectionError, OSError):
            return failed(self._crashed(names[0]), 0)
        started = time.monotonic()  # the child's start-up is not the first document's time
        cap_kb = limits.doc_memory_mb * 1024
        # each document's clock and peak start when the one before it comes back
        deadline = started + limits.doc_timeout_s
        peak_kb = 0
        watch = 0.0  # when the child's memory is looked at next: every _POLL_S, not per document
        while True:
            try:
                ready = self._recv.poll(_POLL_S)
                while ready:
                    msg = self._recv.recv()
                    if msg[0] == "done":
                        out.append((pickle.loads(msg[1]), None, max(msg[2], peak_kb // 1024)))
                        if msg[3]:  # the child could not give back what the document left behind
                            self._kill()
                            return out
                    elif msg[0] == "memory":
                        self._kill()
                        return failed(self._memory(msg[1]), limits.doc_memory_mb)
                    elif msg[0] == "error":
                        failed(Failure("error", msg[1], msg[2]), max(msg[3], peak_kb // 1024))
                    if len(out) == len(values):
                        return out
                    started, peak_kb = time.monotonic(), 0
                    deadline = started + limits.doc_timeout_s
                    ready = self._recv.poll(0)
            except (EOFError, ConnectionError, OSError):
                return failed(self._crashed(self._stage_name(names)), peak_kb // 1024)
            now = time.monotonic()
            if now < watch:
                continue
            watch = now + _POLL_S
            stage = self._stage_name(names)
            rss_kb = _rss_kb(self._proc.pid)
            peak_kb = max(peak_kb, rss_kb)
            if rss_kb > cap_kb:
                self._kill()
                return failed(self._memory(stage), peak_kb // 1024)
            if now > deadline:
                self._kill()
                reason = (
                    f"{stage} took longer than {limits.doc_timeout_s:g} s "
                    f"(limits.doc_timeout_s: --set limits.doc_timeout_s={2 * limits.doc_timeout_s:g} gives it more)"
                )
                return failed(Failure("timeout", stage, reason), peak_kb // 1024)
            if self._proc.poll() is not None:
                return failed(self._crashed(stage), peak_kb // 1024)

    def _await_ready(self) -> None:
        deadline = time.monotonic() + max(_START_TIMEOUT_S, self.limits.doc_timeout_s)
        while not self._recv.poll(_POLL_S):
            if self._proc.poll() is not None or time.monotonic() > deadline:
                code = self._proc.poll()
                self._kill()
                raise SandboxError(
                    f"the document worker process ({sys.executable} -m raychunk.isolate) did not start"
                    + (f": exit code {code}, see its stderr above" if code is not None else " in time")
                )
        msg = self._recv.recv()
        if msg[0] != "ready":
            self._kill()
            raise SandboxError(f"the document worker process could not load the job's steps: {msg[1]}")

    def _stage_name(self, names: list[str]) -> str:
        i = self._stage[0] if self._stage is not None else 0
        return names[i] if i < len(names) else names[0]

    def _memory(self, stage: str) -> Failure:
        cap = human_mib(self.limits.doc_memory_mb)
        more = 2 * self.limits.doc_memory_mb
        return Failure(
            "memory",
            stage,
            f"{stage} needed more than {cap} (limits.doc_memory_mb: --set limits.doc_memory_mb={more:g} gives it more)",
        )

    def _crashed(self, stage: str) -> Failure:
        proc = self._proc
        code = proc.wait() if proc is not None else None
        self._kill()
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exit code {code}"
        return Failure("crash", stage, how)

    # -- the child ----------------------------------------------------------------------------

    def _ensure_child(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            return
        if self._proc is not None:
            self._kill()
        to_child_r, to_child_w = os.pipe()
        to_parent_r, to_parent_w = os.pipe()
        # One shared byte for the step the child is in: no message, no wake-up of this process per step.
        stage_fd = os.memfd_create("raychunk-stage")
        os.ftruncate(stage_fd, 1)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        # The child logs what this process would (``raychunk -v``: a parser's traceback at INFO).
        env[_LOG_LEVEL] = str(logging.getLogger("raychunk").getEffectiveLevel())
        cmd = [
            sys.executable,
            "-m",
            "raychunk.isolate",
            str(to_child_r),
            str(to_parent_w),
            str(os.getpid()),
            str(self.limits.doc_memory_mb),
            str(stage_fd),
        ]
        try:
            self._proc = subprocess.Popen(
                cmd,
                pass_fds=(to_child_r, to_parent_w, stage_fd),
                env=env,
                start_new_session=True,
                stdin=subprocess.DEVNULL,
            )
            self._stage = mmap.mmap(stage_fd, 1)
        finally:
            os.close(to_child_r)
            os.close(to_parent_w)
            os.close(stage_fd)
        self._send = Connection(to_child_w, readable=False)
        self._recv = Connection(to_parent_r, writable=False)
        self._steps_sent = None

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # the child and anything it started
            proc.wait()
        for conn in (self._send, self._recv):
            if conn is not None:
                conn.close()
        self._send = self._recv = None
        if self._stage is not None:
            self._stage.close()
            self._stage = None
        self._steps_sent = None

    def __del__(self):
        with contextlib.suppress(Exception):
            self.close()


def _rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` and every process under it (pandoc, the PDF table finder, ...)."""
    total, todo, seen = 0, [pid], set()
    page_kb = os.sysconf("SC_PAGE_SIZE") // 1024
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f"/proc/{p}/statm", "rb") as f:
                total += int(f.read().split()[1]) * page_kb
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children", "rb") as f:
                    todo.extend(int(c) for c in f.read().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


_STATUS_FIELDS: dict[str, re.Pattern] = {}


def _status_kb(field: str, pid: str = "self") -> int:
    # read two or three times a document: one read of the file's bytes and one search, not a text
    # file's lines (0.026 -> 0.016 ms)
    pattern = _STATUS_FIELDS.get(field)
    if pattern is None:
        pattern = _STATUS_FIELDS[field] = re.compile(rb"(?:^|\n)" + field.encode() + rb":\s*(\d+)")
    try:
        fd = os.open(f"/proc/{pid}/status", os.O_RDONLY)
        try:
            found = pattern.search(os.read(fd, 16384))
        finally:
            os.close(fd)
        if found:
            return int(found.group(1))
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss if field == "VmHWM" else 0


def _reset_peak() -> None:
    try:
        fd = os.open("/proc/self/clear_refs", os.O_WRONLY)
        try:
            os.write(fd, b"5")  # resets VmHWM to the current RSS
        finally:
            os.close(fd)
    except OSError:
        pass


def _child(read_fd: int, write_fd: int, parent_pid: int, memory_mb: int, stage_fd: int) -> None:
    _die_with_parent(parent_pid)
    with contextlib.suppress(KeyError, ValueError):
        logging.basicConfig(level=int(os.environ[_LOG_LEVEL]), format="%(levelname)s %(message)s")
    at = mmap.mmap(stage_fd, 1)  # the step this document is in, read by the parent when it kills
    os.dup2(2, 1)  # libraries that print (MuPDF) write to stderr, never into the pipe
    recv, send = Connection(read_fd, writable=False), Connection(write_fd, readable=False)
    # A hard ceiling under the parent's RSS watch: an allocation that would jump far past the limit
    # between two looks fails here (MemoryError, or a native abort) instead of exhausting the node.
    try:
        data_kb = _status_kb("VmData")
        cap = (data_kb * 1024) + 2 * memory_mb * _MIB
        resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
    except (ValueError, OSError):
        pass
    steps: list[Step] = []
    start_kb = _status_kb("VmRSS")
    while True:
        try:
            msg = recv.recv()
        except (EOFError, OSError):
            return
        except BaseException as e:  # noqa: BLE001 - e.g. the steps' modules cannot be imported here
            send.send(("error", f"{type(e).__name__}: {e}"))
            continue
        if msg[0] == "steps":
            steps = msg[1]
            start_kb = _status_kb("VmRSS")
            send.send(("ready",))
            continue
        batch, msg = msg[1], None
        for value in batch:
            modules = len(sys.modules)
            _reset_peak()
            stage = steps[0][0] if steps else "parse"
            at[0] = 0
            try:
                for i, step in enumerate(steps):
                    stage, fn = step
                    at[0] = i
                    value = fn(value)
                peak = peak_rss_mb()
                blob = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
                value = None  # what the document left behind is measured without its result
                left = _left_too_much(start_kb, memory_mb, peak) and len(sys.modules) == modules
                send.send(("done", blob, peak, left))
                blob = None
                if left:
                    break  # the parent replaces this process; the batch's rest goes to the next
            except MemoryError:
                value = None
                send.send(("memory", stage))
                break
            except BaseException as e:  # noqa: BLE001 - any failure of a step is this document's, reported
                value = None
                send.send(("error", stage, _error_reason(stage, e), peak_rss_mb()))
            value = None
            if len(sys.modules) != modules:
                # The libraries of this document's format stay loaded for the next document of it
                # (unstructured with spaCy and torch: 3-4 s and ~500 MiB): from now on their memory is
                # the process's, not this document's leftovers to be replaced for.
                start_kb = _status_kb("VmRSS")
        batch = None


def _left_too_much(start_kb: int, memory_mb: int, peak_mb: int) -> bool:
    """After a big document: hand freed heap back to the OS; if a quarter of the limit is still held,
    ask to be replaced, so one document's leftovers never count against the next one's limit."""
    if peak_mb * 1024 - start_kb < 128 * 1024 or _status_kb("VmRSS") - start_kb < 128 * 1024:
        return False  # the peak first: no read of /proc for the many small documents
    import gc

    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    return _status_kb("VmRSS") - start_kb > memory_mb * 1024 // 4


def _error_reason(stage: str, e: BaseException) -> str:
    text = " ".join(str(e).split())
    if len(text) > 200:
        text = text[:199] + "…"
    return f"{stage} failed with {type(e).__name__}" + (f": {text}" if text else "")


def _die_with_parent(parent_pid: int) -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:
        os._exit(0)


if __name__ == "__main__":
    _child(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
