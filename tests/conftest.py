import os

import pytest

# A local ray.init() writes an auth token unless this is set; nothing here may reach a model hub.
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def fresh_ray():
    """A test that starts Ray gets a clean slate and leaves one."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    yield
    ray.shutdown()


_EXIT_STATUS = 0


def pytest_sessionfinish(session, exitstatus):
    global _EXIT_STATUS
    _EXIT_STATUS = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """Leave without the interpreter's finalization once pytest has reported, with its exit status.

    Native libraries the suite loads into this one process keep threads running that have no shutdown
    hook (LanceDB's background event loop over its Rust runtime, Ray's core worker, torch's OpenMP
    pool). Finalizing the interpreter under them crashed it once, after every test had passed (stop
    53: "971 passed", then a segmentation fault, in one of three full runs; a run under faulthandler
    did not repeat it, so the library was not pinned). The processes the tests start, the CLI's
    included, exit normally and are checked by their status."""
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(_EXIT_STATUS)
