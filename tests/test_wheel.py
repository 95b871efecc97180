"""An installed wheel, not the checkout, runs the job: its default configs ship inside the package."""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_wheel_runs_outside_the_checkout(tmp_path):
    # Built from a copy of the sources, so no build/ folder left in the checkout leaks into it.
    src = tmp_path / "src"
    shutil.copytree(
        ROOT, src, ignore=shutil.ignore_patterns(".*", "build", "out", "*.egg-info", "__pycache__")
    )
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            str(src),
            "-w",
            str(wheels),
        ],
        check=True,
        cwd=tmp_path,
    )
    (wheel,) = wheels.glob("raychunk-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    # The dependencies come from this environment (a .pth line adds its site-packages after the
    # fresh venv's own): only raychunk itself is installed, from the wheel.
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True)

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\n## Install\n\nRun the installer.\n\n## Use\n\nOpen the app.\n")
    (docs / "notes.txt").write_text("Plain notes.\n\nA second paragraph of notes.\n")
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "HF_HUB_OFFLINE": "1", "PYTHONPATH": ""}
    where = subprocess.run(
        [str(python), "-c", "import raychunk.config as c; print(c.__file__); print(c.DEFAULT_CONFIG)"],
        cwd=work,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert all(p.startswith(site) for p in where), where  # the wheel's copy, configs included
    done = subprocess.run(
        [
            str(venv / "bin" / "raychunk"),
            "run",
            "--input",
            str(docs),
            "--output",
            "out",
            "--no-embed",
            "--num-cpus",
            "2",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 ok" in done.stdout
    chunks = pq.read_table(work / "out" / "chunks")
    assert chunks.num_rows >= 3
    assert set(chunks.column("source").to_pylist()) == {str(docs / "guide.md"), str(docs / "notes.txt")}
