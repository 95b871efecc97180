"""``scripts/golden_dump.py``: what it keeps out of a dump, and what its comparison reports (the
dump itself runs every job and takes minutes: it is run by hand, not here)."""

import json

from tests.drivers import load_script


def _dump(folder, files: dict[str, str]):
    golden = load_script("golden_dump")
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    golden.write_digest(folder)
    return golden


def test_timings_and_operator_names_are_left_out():
    golden = load_script("golden_dump")
    report = {
        "chunks": 3,
        "throughput": {"wall_seconds": 1.2},
        "documents": [{"parse_seconds": 0.1, "ok": 1}],
    }
    assert golden.strip(report) == {"chunks": 3, "documents": [{"ok": 1}]}
    text = (
        "  chunks     56\n  time       3.1 s (Ray start 1.0 s): 2.00 files/s\n  stage      MapBatches(x): 1 s"
    )
    assert golden.mask(text) == "  chunks     56\n  time       # s (Ray start # s): # files/s"


def test_compare_names_the_rows_and_fields_that_differ(tmp_path, capsys):
    row = {"source": "a.md", "chunk_index": 0, "text": "one", "n_tokens": 1}
    base = {"x.chunks.jsonl": json.dumps(row) + "\n", "x.report.json": json.dumps({"chunks": 1})}
    golden = _dump(tmp_path / "base", base)
    _dump(tmp_path / "same", base)
    assert golden.compare(tmp_path / "base", tmp_path / "same") == 0
    assert "identical: 2 files" in capsys.readouterr().out

    moved = {**row, "text": "one!", "n_tokens": 2}
    _dump(
        tmp_path / "new",
        {"x.chunks.jsonl": json.dumps(moved) + "\n", "x.report.json": json.dumps({"chunks": 2})},
    )
    assert golden.compare(tmp_path / "base", tmp_path / "new") == 1
    out = capsys.readouterr().out
    assert "1 rows changed, 0 gone, 0 new, in 1 sources: a.md" in out
    assert "a.md #0: n_tokens: 1 -> 2" in out and 'a.md #0: text: "one" -> "one!"' in out
    assert "chunks: 1 -> 2" in out and "2 of 2 files differ" in out
