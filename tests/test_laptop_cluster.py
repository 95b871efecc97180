"""The README's laptop-cluster path, run as a user runs it: `ray start --head` (the `cluster` extra
brings Ray's dashboard and job server), the job submitted through Ray's job API with this checkout
as its working directory, and its output read back with plain pyarrow.

The head is started with its own ports and stopped by ending its `--block` process, never with
`ray stop`, which would end every Ray on the machine; the address file `ray start` writes for a
bare ``ray.init()`` to join is left as it was found."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip(
    "aiohttp_cors", reason="the laptop cluster needs the `cluster` extra: pip install -e '.[cluster]'"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def head(tmp_path):
    from ray.job_submission import JobSubmissionClient

    ray_bin = Path(sys.executable).with_name("ray")
    gcs, dashboard = _free_port(), _free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    env.pop("RAY_ADDRESS", None)
    log = tmp_path / "head.log"
    # `ray start` records its address here for a bare ray.init() to join; the test leaves it as found
    current = Path(tempfile.gettempdir()) / "ray" / "ray_current_cluster"
    before = current.read_bytes() if current.exists() else None
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [str(ray_bin), "start", "--head", f"--port={gcs}", f"--dashboard-port={dashboard}",
             "--dashboard-host=127.0.0.1", "--num-cpus=2", "--block"],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        client = None
        while client is None:
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"`ray start --head` did not come up:\n{log.read_text()[-3000:]}")
            try:
                client = JobSubmissionClient(f"http://127.0.0.1:{dashboard}")
            except (ConnectionError, RuntimeError):
                time.sleep(1)
        yield client
    finally:
        proc.send_signal(signal.SIGTERM)  # --block ends the processes it started
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        if before is None:
            current.unlink(missing_ok=True)
        else:
            current.write_bytes(before)


def test_a_job_submitted_to_a_laptop_head_writes_its_output(head, tmp_path):
    from ray.job_submission import JobStatus

    src = tmp_path / "docs"
    src.mkdir()
    shutil.copy(ROOT / "samples" / "billing-faq.txt", src)
    (src / "notes.txt").write_bytes("Caf\xe9 opening hours are nine to five.\n".encode("latin-1"))
    out = tmp_path / "index"
    deadline = time.monotonic() + 60
    while True:  # the dashboard answers a little before the head's job agent takes submissions
        try:
            job = head.submit_job(
                entrypoint=f"{sys.executable} jobs/chunk_corpus.py --input {src} --output {out} --no-embed",
                runtime_env={"working_dir": str(ROOT), "excludes": [".venv", "out", ".git"]},
            )
            break
        except RuntimeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(2)
    deadline = time.monotonic() + 300
    while (status := head.get_job_status(job)) not in {
        JobStatus.SUCCEEDED,
        JobStatus.FAILED,
        JobStatus.STOPPED,
    }:
        assert time.monotonic() < deadline, head.get_job_logs(job)[-3000:]
        time.sleep(2)
    logs = head.get_job_logs(job)
    assert status == JobStatus.SUCCEEDED, logs[-3000:]
    assert f"raychunk run → {out}" in logs  # the job's own report, in `ray job logs`
    docs = pq.read_table(out / "documents").to_pylist()
    assert sorted((Path(r["source"]).name, r["status"]) for r in docs) == [
        ("billing-faq.txt", "ok"),
        ("notes.txt", "ok"),
    ]
    chunks = pq.read_table(out / "chunks")
    assert chunks.num_rows >= 2
    assert any("nine to five" in t for t in chunks.column("text").to_pylist())
