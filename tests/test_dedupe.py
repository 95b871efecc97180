"""Byte-identical inputs: which files are hashed, how copies group, and which copy is kept."""

import hashlib

import pyarrow.fs as pafs

from raychunk.dedupe import duplicates_from_digests, duplicates_of, hash_in_driver, size_candidates
from raychunk.io import InputFile, list_inputs


def write(folder, files: dict[str, bytes]):
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    fs, scheme, listed = list_inputs([str(folder)])
    return fs, scheme, listed


def names(folder, mapping: dict[str, str]) -> dict[str, str]:
    cut = len(str(folder)) + 1
    return {dup[cut:]: kept[cut:] for dup, kept in mapping.items()}


def test_only_non_empty_files_with_a_shared_size_are_candidates():
    files = [InputFile("a", 3), InputFile("b", 3), InputFile("c", 4), InputFile("e1", 0), InputFile("e2", 0)]
    assert [f.path for f in size_candidates(files)] == ["a", "b"]
    assert size_candidates([InputFile("a", 3)]) == []


def test_three_identical_files_keep_the_smallest_source_whatever_the_order():
    pairs = [("s3://b/c.md", "x"), ("s3://b/a.md", "x"), ("s3://b/b.md", "x")]
    expected = {"s3://b/b.md": "s3://b/a.md", "s3://b/c.md": "s3://b/a.md"}
    assert duplicates_of(pairs) == expected
    assert duplicates_of(reversed(pairs)) == expected
    assert duplicates_of([("only.md", "x"), ("other.md", "y")]) == {}


def test_groups_in_a_folder(tmp_path):
    fs, scheme, files = write(
        tmp_path,
        {
            "three/c.md": b"same three",
            "three/a.md": b"same three",
            "three/b/x.md": b"same three",
            "pair1/a.txt": b"first pair",  # same size as the three, different bytes
            "pair1/b.txt": b"first pair",
            "pair2/z.csv": b"a,b\n1,2\n",
            "pair2/y.csv": b"a,b\n1,2\n",
            "lone/size.md": b"SAME THREE",  # same size again, different bytes: no group
            "empty/1.txt": b"",
            "empty/2.txt": b"",
        },
    )
    candidates = size_candidates(files)
    assert not any(f.size == 0 for f in candidates)
    assert len(candidates) == 8
    assert names(tmp_path, hash_in_driver(candidates, fs, scheme)) == {
        "three/b/x.md": "three/a.md",
        "three/c.md": "three/a.md",
        "pair1/b.txt": "pair1/a.txt",
        "pair2/z.csv": "pair2/y.csv",
    }


def test_digest_grouping_names_only_duplicates_whatever_the_order():
    names = ["z", "m", "a", "lone", "q1", "q2"]
    data = {"z": b"same", "m": b"same", "a": b"same", "lone": b"diff", "q1": b"pair", "q2": b"pair"}
    digest = {name: hashlib.sha256(d).digest() for name, d in data.items()}
    expected = {"s3://b/z": "s3://b/a", "s3://b/m": "s3://b/a", "s3://b/q2": "s3://b/q1"}
    for order in ([0, 1, 2, 3, 4, 5], [5, 3, 1, 4, 0, 2]):  # blocks come back in any order
        paths = [names[i] for i in order]
        assert duplicates_from_digests(paths, b"".join(digest[p] for p in paths), "s3://b/") == expected
    unique = ["z", "lone", "q1"]  # an unreadable file has no row: never a duplicate
    assert duplicates_from_digests(unique, b"".join(digest[p] for p in unique), "") == {}
    assert duplicates_from_digests([], b"", "") == {}


def test_hashing_streams_through_the_filesystem(tmp_path):
    big = bytes(range(256)) * 9000  # larger than one read
    fs, scheme, files = write(tmp_path, {"a.bin": big, "b.bin": big, "c.bin": big[:-1] + b"\x00"})
    assert names(tmp_path, hash_in_driver(files, pafs.LocalFileSystem(), scheme)) == {"b.bin": "a.bin"}
