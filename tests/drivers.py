"""Test helpers that drive things from outside: a `raychunk run` driver killed mid-run (the resume
tests), and a script of scripts/ loaded as a module."""

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def kill_run_after_shards(args: list[str], out: Path, *, shards: int, seconds: float, env: dict) -> None:
    """Start ``raychunk run ARGS`` in a process group of its own and SIGKILL it, with every process
    under it, once ``shards`` shard manifests are staged under ``out``. Ray's workers need not share
    the driver's group, and one that outlived the kill by a moment could stage one more shard after
    the caller counted them: each is killed and waited for."""
    import psutil

    driver = subprocess.Popen(
        [sys.executable, "-m", "raychunk", "run", *args],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + seconds
        while len(list(out.glob("_staging/*/_done/*.json"))) < shards:
            assert driver.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, f"no shard was written in {seconds:g} s"
            time.sleep(0.2)
    finally:
        tree = psutil.Process(driver.pid).children(recursive=True)
        os.killpg(driver.pid, signal.SIGKILL)
        for proc in tree:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        driver.wait()
        psutil.wait_procs(tree, timeout=30)


def load_script(name: str):
    """``scripts/NAME.py`` as the module ``NAME``, loaded once. It is registered before it runs:
    a dataclass in it looks its own module up."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]
