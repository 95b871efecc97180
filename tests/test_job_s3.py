"""The job end to end against object storage: a real S3-compatible server (moto's server mode) on
127.0.0.1, input ``s3://BUCKET/docs``, output ``s3://BUCKET/index``, read back with plain pyarrow.

How the S3 settings reach everything that opens the bucket:

* the endpoint comes from ``AWS_ENDPOINT_URL``. pyarrow (checked with 26) reads it into the filesystem's
  ``endpoint_override`` when ``FileSystem.from_uri`` builds it, so it also travels inside the pickled
  filesystem that Ray ships to the read and write tasks, and the URIs stay clean ``s3://bucket/key``.
  (``s3://bucket/docs?endpoint_override=HOST:PORT&scheme=http`` works as well; see the listing test.)
* credentials come from ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``. A pickled S3 filesystem does
  *not* carry credentials it found in the environment: each worker resolves them again, so the
  variables must be set before ``ray.init``, whose local workers inherit the driver's environment.
  That is why the test starts its own Ray after setting them.
"""

from __future__ import annotations

import gzip
import json
import logging
import socket
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest

boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")

from raychunk.config import build_run_config  # noqa: E402
from raychunk.io import list_inputs  # noqa: E402
from raychunk.schema import DOCUMENT_SCHEMA, chunk_schema  # noqa: E402

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
BUCKET = "raychunk-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3_server():
    """A moto S3 server on a free local port, with the sample corpus under s3://BUCKET/docs/."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    port = _free_port()
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    env = {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",  # never wait on an instance-metadata lookup
    }
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
        s3.create_bucket(Bucket=BUCKET)
        names = sorted(p.name for p in SAMPLES.iterdir() if p.is_file() and not p.name.startswith("."))
        for name in names:
            s3.upload_file(str(SAMPLES / name), BUCKET, f"docs/{name}")
        try:
            yield {"client": s3, "endpoint": endpoint, "port": port, "names": names}
        finally:
            server.stop()


@pytest.fixture
def local_ray(s3_server):
    """A fresh 2-CPU local Ray started after the S3 variables are set (its workers inherit them).

    ``address="local"``: a bare ``ray.init()`` joins any cluster that ``ray start`` left on this
    machine (/tmp/ray/ray_current_cluster), whose workers lack these variables. The job then finds
    Ray initialized and uses it."""
    import ray

    ray.shutdown()
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_listing_yields_clean_s3_sources(s3_server):
    """Endpoint in the URI's query instead of the environment: the listed paths carry no query."""
    uri = f"s3://{BUCKET}/docs?endpoint_override=127.0.0.1:{s3_server['port']}&scheme=http"
    fs, scheme, files = list_inputs([uri])
    assert isinstance(fs, pafs.S3FileSystem)
    assert scheme == "s3://"
    assert [f.path for f in files] == [f"{BUCKET}/docs/{n}" for n in s3_server["names"]]
    assert all(f.size == (SAMPLES / f.path.rsplit("/", 1)[1]).stat().st_size for f in files)


def test_exclude_patterns_name_keys_under_the_prefix(s3_server):
    """--exclude on an object store: the keys' paths below the input prefix, as on a local folder."""
    s3_server["client"].put_object(Bucket=BUCKET, Key="docs/build/copy.md", Body=b"# Copy\n\nText.\n")
    try:
        _, _, files = list_inputs([f"s3://{BUCKET}/docs"], exclude=("*.pdf", "build/"))
    finally:
        s3_server["client"].delete_object(Bucket=BUCKET, Key="docs/build/copy.md")
    got = {f.path.split("/docs/", 1)[1]: f.refused for f in files}
    assert got["build"] == ("skipped", "excluded by --exclude 'build/': a folder; its 1 file is not read")
    assert got["acme-sla.pdf"] == ("skipped", "excluded by --exclude '*.pdf': not read")
    assert sorted(k for k, r in got.items() if r is None) == [
        n for n in s3_server["names"] if n != "acme-sla.pdf"
    ]


def test_job_reads_and_writes_s3(s3_server, local_ray):
    from raychunk.jobs.run import run

    cfg = build_run_config(
        {},
        {
            "input": f"s3://{BUCKET}/docs",
            "output": f"s3://{BUCKET}/index",
            "embedder.enabled": False,
            "resources.num_cpus": 2,
        },
    )
    report = run(cfg)

    fs, root = pafs.FileSystem.from_uri(f"s3://{BUCKET}/index")
    assert root == f"{BUCKET}/index"

    docs = pq.read_table(f"{root}/documents", filesystem=fs)
    assert docs.schema.names == DOCUMENT_SCHEMA.names
    expected = sorted(f"s3://{BUCKET}/docs/{n}" for n in s3_server["names"])
    assert sorted(docs.column("source").to_pylist()) == expected
    assert docs.num_rows == len(s3_server["names"]) == report["input"]["files"]

    chunks = pq.read_table(f"{root}/chunks", filesystem=fs)
    want = chunk_schema(None)
    assert [(f.name, f.type) for f in chunks.schema] == [(f.name, f.type) for f in want]
    assert chunks.num_rows == report["chunks"] > 0
    assert all(s.startswith(f"s3://{BUCKET}/docs/") for s in chunks.column("source").to_pylist())
    assert set(chunks.column("doc_id").to_pylist()) <= set(docs.column("doc_id").to_pylist())

    with fs.open_input_stream(f"{root}/report.json") as f:
        saved = json.loads(f.read())
    assert saved["chunks"] == report["chunks"] and saved["embedder"] is None
    assert fs.get_file_info(f"{root}/report.md").type == pafs.FileType.File

    keys = [o["Key"] for o in s3_server["client"].list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert not [k for k in keys if "_staging" in k], keys


def test_an_interrupted_s3_run_resumes_and_publishes_over_the_old_output(s3_server, local_ray, monkeypatch):
    """On S3: the first run publishes; a second run over it stops after writing its shards (the old
    output stays whole and readable); one shard's manifest is lost, as if its write was cut; the
    resumed run redoes only that shard's documents and replaces the old output, leaving no stray object."""
    from raychunk import publish
    from raychunk.jobs.run import run

    def cfg(**more):
        return build_run_config(
            {},
            {
                "input": f"s3://{BUCKET}/docs",
                "output": f"s3://{BUCKET}/again",
                "embedder.enabled": False,
                "resources.files_per_block": 1,
                "output_files.rows_per_shard": 1,
                **more,
            },
        )

    first = run(cfg())
    fs, root = pafs.FileSystem.from_uri(f"s3://{BUCKET}/again")
    clean = pq.read_table(f"{root}/chunks", filesystem=fs).sort_by("chunk_id")

    def crash(*args, **kwargs):
        raise RuntimeError("simulated crash after the shards were written")

    monkeypatch.setattr(publish, "compact_documents", crash)
    with pytest.raises(RuntimeError, match="simulated crash"):
        run(cfg(**{"output_files.overwrite": True}))
    monkeypatch.undo()
    with fs.open_input_stream(f"{root}/report.json") as f:
        old = json.loads(f.read())
    assert old["files"] == first["files"]
    assert (
        pq.read_table([f"{root}/{p}" for p in old["files"]["chunks"]], filesystem=fs).num_rows
        == clean.num_rows
    )

    manifests = sorted(
        i.path
        for i in fs.get_file_info(pafs.FileSelector(f"{root}/_staging", recursive=True))
        if "/_done/" in i.path
    )
    assert len(manifests) >= len(s3_server["names"])
    with fs.open_input_stream(manifests[0]) as f:
        lost = json.loads(f.read())
    fs.delete_file(manifests[0])

    report = run(cfg(**{"output_files.overwrite": True, "output_files.resume": True}))
    assert report["resumed"]["inputs_already_done"] == len(s3_server["names"]) - len(lost["documents"])
    assert pq.read_table(f"{root}/chunks", filesystem=fs).sort_by("chunk_id").equals(clean)
    listing = s3_server["client"].list_objects_v2(Bucket=BUCKET, Prefix="again/")["Contents"]
    keys = sorted(o["Key"] for o in listing if not o["Key"].endswith("/"))  # pyarrow's folder markers
    listed = sorted(f"again/{p}" for p in (*report["files"]["chunks"], *report["files"]["documents"]))
    assert keys == sorted([*listed, "again/.raychunk-output", "again/report.json", "again/report.md"])


def test_an_incremental_run_updates_an_s3_output_in_place(s3_server, local_ray):
    """``--previous`` and ``--output`` the same S3 URI: one document edited, only its chunks whose
    text is new upserted and embedded, the delta published with the output, and no object
    left that report.json does not name."""
    from raychunk.jobs.run import run

    s3 = s3_server["client"]
    texts = [n for n in s3_server["names"] if n.endswith((".md", ".txt", ".html", ".jsonl"))]
    for name in texts:
        s3.upload_file(str(SAMPLES / name), BUCKET, f"incdocs/{name}")
    out = f"s3://{BUCKET}/live"

    def cfg(**more):
        return build_run_config({}, {"input": f"s3://{BUCKET}/incdocs", "output": out, **more})

    first = run(cfg())
    edited = "acme-cloud-admin-guide.md"
    fs, root = pafs.FileSystem.from_uri(out)
    old = pq.read_table([f"{root}/{p}" for p in first["files"]["chunks"]], filesystem=fs)
    old_texts = set(
        old.filter(pc.equal(old.column("source"), f"s3://{BUCKET}/incdocs/{edited}"))["text"].to_pylist()
    )
    s3.put_object(
        Bucket=BUCKET, Key=f"incdocs/{edited}", Body=(SAMPLES / edited).read_bytes() + b"\n\nEdited.\n"
    )
    report = run(cfg(**{"output_files.overwrite": True, "incremental.previous": out}))

    chunks = pq.read_table([f"{root}/{p}" for p in report["files"]["chunks"]], filesystem=fs)
    before = set(pq.read_table(f"{root}/delta/removed", filesystem=fs).column("chunk_id").to_pylist())
    new = chunks.filter(pc.equal(chunks.column("source"), f"s3://{BUCKET}/incdocs/{edited}"))
    inc = report["incremental"]
    # ids name the chunk, not the file's bytes: only the chunks whose text the edit changed (the
    # end) get new ids, are embedded and upserted; the old ids of those texts are deleted
    fresh = [t for t in new.column("text").to_pylist() if t not in old_texts]
    assert inc["chunks"]["new"] == inc["delta"]["added"] == inc["vectors_embedded"] == len(fresh) >= 1
    assert len(fresh) < new.num_rows and inc["vectors_reused_by_text"] == 0
    assert len(before) == len(old_texts - set(new.column("text").to_pylist()))
    assert inc["documents_reused"] == len(texts) - 1
    assert inc["chunks"]["removed"] == len(before) and inc["chunks"]["unchanged"] == first["chunks"] - len(
        before
    )
    assert chunks.column("embedding").null_count == 0
    listing = s3.list_objects_v2(Bucket=BUCKET, Prefix="live/")["Contents"]
    keys = sorted(o["Key"] for o in listing if not o["Key"].endswith("/"))
    listed = sorted(f"live/{p}" for files in report["files"].values() for p in files)
    assert keys == sorted([*listed, "live/.raychunk-output", "live/report.json", "live/report.md"])


def test_s3_keys_with_control_characters_or_escapes_each_end_as_one_row(s3_server, local_ray):
    """Keys holding a tab, a control byte, a carriage return, a literal ``\\xff`` or ``%ff`` are shown
    escaped, read by their own name, and each ends as one documents row; the job finishes. (moto's
    server refuses a key with a newline; a carriage return comes back from the XML listing as a
    newline, so that object cannot be read by the listed name: a ``failed`` row says so.)"""
    from raychunk.io import shown
    from raychunk.jobs.run import run

    s3 = s3_server["client"]
    keys = {
        "odd/tab\tkey.md": b"# Tab\n\na key with a tab\n",
        "odd/bell\x07.txt": b"a key with a control byte\n",
        "odd/literal\\xff.txt": b"a key with a backslash\n",
        "odd/pct%ff.txt": b"a key with a percent sign\n",
        "odd/caf\u00e9 \u2014 ok.txt": b"a key in plain unicode\n",
    }
    # Compressed objects are read as stored and decompressed by the parse within its limits (pyarrow's
    # S3 stream would decompress them by their name, the bomb whole, in the read task).
    compressed = {
        "odd/runbook.md.gz": gzip.compress(b"# Runbook\n\n## Restarts\n\nDrain the node first.\n"),
        "odd/bomb.txt.gz": gzip.compress(bytes(40 << 20)),
    }
    # A raychunk output inside the input prefix (it holds the mark): one skipped row, not documents.
    index = {"odd/index/.raychunk-output": b"raychunk wrote this\n", "odd/index/report.md": b"# report\n"}
    for key, data in {**keys, **compressed, **index, "odd/cr\rx.txt": b"carriage return\n"}.items():
        s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    cfg = build_run_config(
        {},
        {
            "input": f"s3://{BUCKET}/odd",
            "output": f"s3://{BUCKET}/odd-index",
            "embedder.enabled": False,
            "resources.num_cpus": 2,
            "limits.max_unzipped_mb": 8,
        },
    )
    run(cfg)
    fs, root = pafs.FileSystem.from_uri(f"s3://{BUCKET}/odd-index")
    docs = {d["source"]: d for d in pq.read_table(f"{root}/documents", filesystem=fs).to_pylist()}
    cr = f"s3://{BUCKET}/odd/cr\\nx.txt"
    assert sorted(docs) == sorted(
        [cr, f"s3://{BUCKET}/odd/index", *(f"s3://{BUCKET}/{shown(k)}" for k in [*keys, *compressed])]
    )
    assert docs.pop(cr)["reason"].startswith("could not read the file")
    skipped = docs.pop(f"s3://{BUCKET}/odd/index")
    assert (skipped["status"], skipped["reason"]) == (
        "skipped",
        "a raychunk output folder: its files are not read as inputs",
    )
    runbook, bomb = (docs.pop(f"s3://{BUCKET}/{k}") for k in compressed)
    assert (runbook["status"], runbook["format"], runbook["bytes"]) == (
        "ok",
        "markdown",
        len(compressed["odd/runbook.md.gz"]),
    )
    assert (bomb["status"], bomb["bytes"]) == ("failed", len(compressed["odd/bomb.txt.gz"]))
    assert (
        bomb["reason"]
        == "gzip-compressed data that decompresses to more than 8.0 MB, over limits.max_unzipped_mb=8"
    )
    assert {d["status"] for d in docs.values()} == {"ok"}
    chunks = pq.read_table(f"{root}/chunks", filesystem=fs).to_pylist()
    text = {c["source"]: c["text"] for c in chunks}
    for key, data in keys.items():
        assert data.decode().strip().split("\n")[-1] in text[f"s3://{BUCKET}/{shown(key)}"]
    assert docs[f"s3://{BUCKET}/odd/tab\\tkey.md"]["source_bytes"] == f"{BUCKET}/odd/tab\tkey.md".encode()
    assert docs[f"s3://{BUCKET}/odd/caf\u00e9 \u2014 ok.txt"]["source_bytes"] is None
    runbook_chunks = [c for c in chunks if c["source"].endswith("runbook.md.gz")]
    assert [(c["heading_path"], c["text"]) for c in runbook_chunks] == [
        (["Runbook", "Restarts"], "Runbook > Restarts\n\nDrain the node first.")
    ]
