"""Every directory entry a real tree holds ends as one documents row (or chunks and a row), and
none stops the job: names that are not UTF-8 or hold a newline, FIFOs, sockets, devices, symlink
loops, unreadable folders and files, files that change size between listing and reading."""

from __future__ import annotations

import os
import socket
import stat

import pyarrow.parquet as pq
import pytest

from raychunk.blocks import _read_group
from raychunk.document_steps import parse_file
from raychunk.io import list_inputs, open_input, shown
from raychunk.parse import ParseOptions
from raychunk.plan import resolve_plan

NAMES = {  # name bytes → contents, the regular files of the tree
    b"plain.md": b"# Title\n\nSome text here.\n",
    b"latin1-\xff\xfe.txt": b"a name that is not UTF-8\n",
    b"new\nline.txt": b"a name with a newline\n",
    b"tab\tname.md": b"# Tab\n\nbody of the tab file\n",
    b"sub\xff/inner.txt": b"inside a folder whose name is not UTF-8\n",
    b"empty.txt": b"",
}


def every_kind(root) -> dict[str, tuple[str, str]]:
    """A tree with every entry kind under ``root``; returns what each entry's documents row should
    show: ``{source: (status, words in its reason)}``."""
    base = os.fsencode(root)
    os.makedirs(os.path.join(base, b"sub\xff"))
    for name, data in NAMES.items():
        with open(os.path.join(base, name), "wb") as f:
            f.write(data)
    os.mkfifo(os.path.join(base, b"pipe.txt"))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(os.fsdecode(os.path.join(base, b"sock.txt")))
    sock.close()
    os.symlink(b"loop.txt", os.path.join(base, b"loop.txt"))
    os.symlink(b"missing.txt", os.path.join(base, b"dangling.txt"))
    want = {
        f"{root}/pipe.txt": ("skipped", "FIFO"),
        f"{root}/sock.txt": ("skipped", "socket"),
        f"{root}/loop.txt": ("failed", "symlink"),
        f"{root}/dangling.txt": ("failed", "symlink"),
        f"{root}/empty.txt": ("empty", "zero-byte"),
    }
    try:
        os.mknod(os.path.join(base, b"zero.md"), 0o600 | stat.S_IFCHR, os.makedev(1, 5))
        want[f"{root}/zero.md"] = ("skipped", "character device")
    except PermissionError:  # not root: no device file, the rest still holds
        pass
    for name in NAMES:
        source = shown(os.fsdecode(os.path.join(base, name)))
        want.setdefault(source, ("ok", ""))
    return want


def test_the_listing_has_one_entry_per_name_shown_escaped_and_read_by_its_bytes(tmp_path):
    want = every_kind(tmp_path)
    fs, _, files = list_inputs([str(tmp_path)])
    assert sorted(f.path for f in files) == sorted(want)
    by_path = {f.path: f for f in files}
    assert f"{tmp_path}/latin1-\\xff\\xfe.txt" in by_path and f"{tmp_path}/new\\nline.txt" in by_path
    for path, (status, words) in want.items():
        f = by_path[path]
        path.encode("utf-8")  # every name shown is valid UTF-8
        if status in ("ok", "empty"):
            assert f.refused is None
            with open_input(fs, f.path, f.raw) as stream:  # the raw name opens the very file
                assert stream.read() == NAMES[os.fsencode(f.real)[len(os.fsencode(tmp_path)) + 1 :]]
        else:
            assert f.refused[0] == status and words in f.refused[1], f.refused
    assert by_path[f"{tmp_path}/plain.md"].raw is None  # a plain name carries no bytes


def test_two_names_that_show_alike_stay_two_documents(tmp_path):
    (tmp_path / "a\\xff.txt").write_text("a literal backslash name\n")
    with open(os.path.join(os.fsencode(tmp_path), b"a\xff.txt"), "wb") as f:
        f.write(b"a byte name\n")
    fs, _, files = list_inputs([str(tmp_path)])
    assert len({f.path for f in files}) == 2
    assert sorted(open_input(fs, f.path, f.raw).read() for f in files) == [
        b"a byte name\n",
        b"a literal backslash name\n",
    ]


def test_a_folder_that_cannot_be_listed_is_a_failed_row(tmp_path, monkeypatch):
    (tmp_path / "ok.txt").write_text("fine\n")
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "secret.txt").write_text("hidden\n")
    real = os.scandir
    locked = str(tmp_path / "locked")

    def scandir(path="."):
        if os.fspath(path) == locked:  # what a folder without read permission raises
            raise PermissionError(13, "Permission denied", locked)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    _, _, files = list_inputs([str(tmp_path)])
    refused = {f.path: f.refused for f in files}
    assert refused[str(tmp_path / "ok.txt")] is None
    assert refused[locked] == ("failed", "could not list the folder: PermissionError: Permission denied")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file and folder")
def test_unreadable_files_and_folders_really_chmodded(tmp_path):
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "x.txt").write_text("x\n")
    (tmp_path / "shut.txt").write_text("shut\n")
    os.chmod(tmp_path / "shut.txt", 0)
    os.chmod(tmp_path / "locked", 0)
    try:
        fs, _, files = list_inputs([str(tmp_path)])
        by_path = {f.path: f for f in files}
        assert by_path[str(tmp_path / "locked")].refused[0] == "failed"
        (table,) = _read_group((str(tmp_path / "shut.txt"),), fs)
        assert "could not read the file: PermissionError" in table.column("read_error")[0].as_py()
    finally:
        os.chmod(tmp_path / "locked", 0o755)


def test_a_file_read_at_another_size_than_listed_says_so_and_keeps_its_text(tmp_path):
    import pyarrow.fs as pafs

    path = tmp_path / "growing.txt"
    path.write_text("first line\n")
    fs, _, (listed,) = list_inputs([str(path)])
    path.write_text("first line\nsecond line, written after the listing\n")
    (table,) = _read_group((listed.path,), pafs.LocalFileSystem(), (listed.raw,), (listed.size,))
    row = table.to_pylist()[0]
    out = parse_file(row, options=ParseOptions())
    doc = out["parsed"].document
    assert doc.status == "ok" and "second line" in out["parsed"].text
    assert "changed size between listing and reading (11 bytes listed, 50 read)" in doc.reason


def test_run_and_price_over_every_entry_kind_finish_with_one_row_per_entry(tmp_path, fresh_ray):
    from raychunk.config import build_run_config, load_config
    from raychunk.jobs.price import measure_corpus
    from raychunk.jobs.run import run
    from raychunk.pricing import Setting

    tree = tmp_path / "tree"
    tree.mkdir()
    want = every_kind(tree)
    cfg = build_run_config(
        load_config(),
        {
            "input": [str(tree)],
            "output": str(tmp_path / "out"),
            "resources.num_cpus": 2,
            "embedder.enabled": False,
        },
    )
    run(cfg)
    docs = pq.read_table(tmp_path / "out" / "documents").to_pylist()
    assert sorted(d["source"] for d in docs) == sorted(want)  # one row per entry, none lost
    for d in docs:
        status, words = want[d["source"]]
        assert d["status"] == status and words in d["reason"], d
        # the name's own bytes are kept wherever the source shows an escape
        if "\\" in d["source"]:
            assert shown(os.fsdecode(d["source_bytes"])) == d["source"]
        else:
            assert d["source_bytes"] is None
    chunks = pq.read_table(tmp_path / "out" / "chunks").to_pylist()
    texts = {c["source"]: c["text"] for c in chunks}
    assert "a name that is not UTF-8" in texts[f"{tree}/latin1-\\xff\\xfe.txt"]
    assert "a name with a newline" in texts[f"{tree}/new\\nline.txt"]

    measured = measure_corpus(resolve_plan(cfg), [Setting("per-type profile")])  # the same Ray session
    assert measured.listing["files"] == len(want)
    oks = sum(1 for s, _ in want.values() if s == "ok")
    assert measured.partial.totals["per-type profile"].chunks == oks


def test_names_show_escaped_and_read_back_by_their_bytes():
    from raychunk.io import raw_of, real_name

    for name, want in [
        ("plain/é — ok.md", "plain/é — ok.md"),
        ("a\udcffb.txt", "a\\xffb.txt"),
        ("new\nline\t\r.txt", "new\\nline\\t\\r.txt"),
        ("bell\x07\x7f.txt", "bell\\x07\\x7f.txt"),
    ]:
        assert shown(name) == want
        want.encode("utf-8")
        assert real_name(shown(name), raw_of(name)) == name  # lossless: the bytes give the name back
    assert raw_of("plain.md") is None


def test_a_document_is_named_relative_to_its_input_root(tmp_path):
    from raychunk.io import identity_of, input_root

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.md").write_text("x")
    assert input_root([str(tmp_path / "a")]) == str(tmp_path / "a")
    assert input_root([str(tmp_path / "a"), str(tmp_path / "b")]) == str(tmp_path)  # the folder both share
    assert input_root([str(tmp_path / "a" / "*.md")]) == str(tmp_path / "a")  # a glob's folder
    assert input_root(["s3://bucket/corpus/?endpoint_override=h:1"]) == "s3://bucket/corpus"
    root = input_root([str(tmp_path / "a" / "x.md")])
    assert identity_of(str(tmp_path / "a" / "x.md"), root) == "x.md"  # a file input: its own name
    # the same tree under another root, local or in a bucket, names its documents alike
    assert identity_of("/mnt/old/corpus/guide/install.md", "/mnt/old/corpus") == "guide/install.md"
    assert identity_of("s3://bucket/snap-2/guide/install.md", "s3://bucket/snap-2") == "guide/install.md"
    assert identity_of("/elsewhere/a.md", "/mnt/old/corpus") == "/elsewhere/a.md"
    assert identity_of("/mnt/old/corpus-2/a.md", "/mnt/old/corpus") == "/mnt/old/corpus-2/a.md"
