"""The jobs' own progress (raychunk.progress) and a quiet engine: counts read from the rows as the
stages emit them, the line and its ETA weighted by bytes, the printer on and off a terminal, and a
real `raychunk run` off a terminal whose stderr is its own progress lines and no Ray log line."""

import io
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa

from raychunk.progress import NativeNoise, Progress, ProgressCounter, count_batch, render_progress
from raychunk.schema import RUN_ROWS

ROOT = Path(__file__).resolve().parent.parent


def document_row(source: str, status: str, size: int, text: str, reason: str = "") -> dict:
    doc = {"doc_id": "d", "source": source, "status": status, "reason": reason, "bytes": size, "text": text}
    return {"row_type": "document", **doc}


def test_count_batch_reads_status_and_bytes_from_the_documents_rows():
    sly = 'he wrote "status": "failed", "bytes": 999999 — ünïcode'
    rows = [
        document_row("a.md", "ok", 1200, sly),
        {"row_type": "chunk", "source": "a.md", "text": sly, "n_tokens": 9},
        {"row_type": "chunk", "source": "a.md"},
        document_row(
            "b.pdf", "failed", 5000, "", reason="parse took longer than 300 s (limits.doc_timeout_s)"
        ),
        document_row("c.txt", "duplicate", 7, ""),
        {"row_type": "reuse", "source": "d.txt"},
    ]
    counts = count_batch(pa.Table.from_pylist(rows, schema=RUN_ROWS))
    assert counts == {
        "documents": 3,
        "bytes": 6207,
        "chunks": 2,
        "reused": 1,
        "failed": 1,
        "failures": [("b.pdf", "parse took longer than 300 s (limits.doc_timeout_s)")],
    }
    assert count_batch(pa.table({"x": [1]}))["documents"] == 0  # rows of another shape count nothing


def test_the_line_weights_the_eta_by_bytes():
    counter = ProgressCounter()
    counter.add("chunk", {"documents": 2, "bytes": 900_000, "chunks": 30, "failed": 0})
    counter.add("embed", {"documents": 1, "bytes": 900_000, "chunks": 30})
    totals, _ = counter.snapshot()
    # one document of two done, but it held 90% of the bytes: 10 s gone, about 1 s to go
    line = render_progress(totals, documents=2, nbytes=1_000_000, elapsed=10.0, embedding=True)
    assert line.startswith("documents 1/2 (2 parsed) · 900.0 kB/1.0 MB (90%)")
    assert line.endswith("· 90.0 kB/s · ETA 1s")
    done = render_progress(totals, documents=2, nbytes=900_000, elapsed=10.0, embedding=True)
    assert "(100%)" in done and "ETA" not in done
    # Everything chunked, a quarter of the chunks embedded: the chunks tell the share, not the bytes
    counter.add("chunk", {"chunks": 90})
    tail, _ = counter.snapshot()
    line = render_progress(tail, documents=2, nbytes=1_000_000, elapsed=10.0, embedding=True)
    assert "· chunks 30/120 ·" in line and "(25%)" in line and line.endswith("ETA 30s")
    assert render_progress(totals, documents=2, nbytes=1_000_000, elapsed=10.0, embedding=False).startswith(
        "documents 2/2 · 900.0 kB"
    )


class Terminal(io.StringIO):
    def isatty(self):
        return True


def fake_counter(steps):
    """A snapshot function that advances one step a call."""
    state = {"i": 0}

    def snapshot():
        i = min(state["i"], len(steps) - 1)
        state["i"] += 1
        docs, failures = steps[i]
        chunk = {
            "documents": docs,
            "bytes": docs * 100,
            "chunks": docs * 3,
            "reused": 0,
            "failed": len(failures),
        }
        return {"chunk": chunk, "embed": chunk}, failures

    return snapshot


def test_off_a_terminal_a_plain_line_every_interval_and_each_failure_once():
    out = io.StringIO()
    steps = [(0, []), (1, [("bad.pdf", "no text")]), (2, []), (3, [])]
    p = Progress(
        fake_counter(steps),
        documents=3,
        nbytes=300,
        label="run",
        embedding=False,
        out=out,
        every_s=0.2,
        poll_s=0.05,
    )
    t0 = time.monotonic()
    p.start()
    time.sleep(0.7)
    p.stop()
    elapsed = time.monotonic() - t0
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    periodic = [line for line in lines[:-1] if line.startswith("run: documents")]
    assert 1 <= len(periodic) <= elapsed / 0.2 + 1, lines  # one every 0.2 s at most, then the last
    assert lines.count("run: failed: bad.pdf: no text") == 1
    assert lines[-1].startswith("run: documents 3/3 · 300 B/300 B (100%) · chunks 9")


def test_on_a_terminal_one_line_redrawn_in_place():
    out = Terminal()
    steps = [(0, []), (1, []), (2, []), (3, [])]
    p = Progress(
        fake_counter(steps), documents=3, nbytes=300, label="price", embedding=False, out=out, poll_s=0.05
    )
    p.start()
    time.sleep(0.3)
    p.stop()
    text = out.getvalue()
    assert text.count("\r") >= 2 and text.count("\n") == 1 and text.endswith("\n")
    assert text.rsplit("\r", 1)[-1].startswith("price: documents 3/3")


def test_a_run_off_a_terminal_prints_its_own_progress_and_no_engine_lines(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("billing-faq.txt", "release-notes.txt", "acme-cloud-admin-guide.md"):
        (corpus / name).write_bytes((ROOT / "samples" / name).read_bytes())
    size = sum(f.stat().st_size for f in corpus.iterdir())
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "raychunk",
            "run",
            "--input",
            str(corpus),
            "--output",
            str(tmp_path / "out"),
            "--num-cpus",
            "2",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    err = done.stderr.splitlines()
    ours = [line for line in err if line.startswith("run: ")]
    assert ours and ours[-1].startswith(
        f"run: documents 3/3 · {size / 1000:.1f} kB/{size / 1000:.1f} kB (100%)"
    )
    for noise in (
        "INFO",
        "RayDeprecationWarning",
        "ray_remote_args",
        "Running Dataset",
        "progress UI",
        "Loading weights",
        "core_worker.cc",
    ):
        assert not any(noise in line for line in err), (noise, err)
    assert all(line.startswith("run: ") for line in err if line.strip()), err
    assert done.stdout.startswith("raychunk run → ")


NOTE = (
    b"[2026-12-03 19:42:17,090 E 24614 24614] core_worker.cc:2465: Actor with class name: "
    b"'MapWorker(MapBatches(EmbedChunks))' and ID: 'a5' has constructor arguments in the object store "
    b"and max_restarts > 0. If the arguments in the object store go out of scope or are lost, the "
    b"actor restart will fail. See https://github.com/ray-project/ray/issues/53727 for more details.\n"
)
OTHER = b"[2026-12-03 19:42:18,001 E 24614 24699] gcs_client.cc:120: Failed to connect to GCS\n"


def test_native_noise_drops_the_named_note_split_anywhere_and_keeps_everything_else():
    stream = (
        b"\rrun: documents 0/3" + NOTE + b"\rrun: documents 1/3\n" + OTHER + b"caf\xe9 \xff[not a prefix\n"
    )
    for cut in range(1, len(stream)):  # every place a pipe read can end
        noise, out = NativeNoise(), []
        noise._forward = out.append
        rest = noise._pass(stream[:cut])
        rest = noise._pass(rest + stream[cut:])
        out.append(rest)
        assert b"".join(out) == stream.replace(NOTE, b""), cut
        assert noise.dropped == 1


def test_native_noise_filters_file_descriptor_2_of_a_real_process():
    child = textwrap.dedent(
        f"""
        import os, sys
        from raychunk.progress import NativeNoise
        with NativeNoise() as noise:
            os.write(2, {NOTE!r})
            print("run: documents 1/1", file=sys.stderr)
            os.write(2, {OTHER!r})
            live = sys.stderr.isatty()
        os.write(2, b"after\\n")
        print(noise.dropped, live)
        """
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [b"1", b"False"]
    assert done.stderr.splitlines() == [b"run: documents 1/1", OTHER.rstrip(), b"after"]
    verbose = subprocess.run(
        [sys.executable, "-c", "import logging; logging.basicConfig(level=logging.INFO)\n" + child],
        capture_output=True,
        timeout=60,
    )
    assert verbose.stdout.split() == [b"0", b"False"] and NOTE.rstrip() in verbose.stderr


def test_the_counter_actor_sums_without_loading_pyarrow(fresh_ray):
    """Ray registers Arrow's serializers, importing pyarrow, in every worker at its first call with
    arguments; the counter's first comes mid-job, beside the documents' parse, and it sums ints."""
    import ray

    from raychunk.progress import read_counter, start_counter

    ray.init(num_cpus=1, include_dashboard=False)
    counter = start_counter()
    counter.add.remote("chunk", {"documents": 2, "bytes": 10, "failures": [("bad.pdf", "timeout")]})
    counter.add.remote("embed", {"documents": 1, "chunks": 5})
    totals, failures = read_counter(counter)()
    assert totals["chunk"]["documents"] == 2 and totals["chunk"]["bytes"] == 10
    assert totals["embed"] == {"documents": 1, "bytes": 0, "chunks": 5, "reused": 0, "failed": 0}
    assert failures == [("bad.pdf", "timeout")]
    pid = ray.get(counter.__ray_call__.remote(lambda self: os.getpid()))
    assert pid != os.getpid()
    assert "libarrow" not in Path(f"/proc/{pid}/maps").read_text()
