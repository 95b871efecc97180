import json
import subprocess
import sys
from pathlib import Path

import pytest

from raychunk.cli import main
from raychunk.config import ConfigError, load_config, parse_options_from

ROOT = Path(__file__).resolve().parent.parent


def test_default_config_loads_and_validates():
    opts = parse_options_from(load_config()["parse"])
    assert opts.pdf_tables == "auto"


def test_unknown_key_is_named():
    with pytest.raises(ConfigError, match="parse.pdf_table: accepted keys are"):
        parse_options_from({"pdf_table": "auto"})


def test_bad_value_names_accepted_values():
    with pytest.raises(ConfigError, match="auto, always, never"):
        parse_options_from({}, pdf_tables="maybe")


def test_parse_json_lines(tmp_path, capsys):
    (tmp_path / "a.md").write_text("# Title\n\nBody text.\n")
    (tmp_path / "b.txt").write_bytes(b"")
    assert main(["parse", "--json", str(tmp_path)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    docs = [x for x in lines if x["type"] == "document"]
    blocks = [x for x in lines if x["type"] == "block"]
    assert [(d["source"].split("/")[-1], d["status"]) for d in docs] == [("a.md", "ok"), ("b.txt", "empty")]
    assert [(b["kind"], b["text"], b["heading_path"]) for b in blocks] == [
        ("heading", "Title", []),
        ("paragraph", "Body text.", ["Title"]),
    ]


def test_parse_human_output_on_sample_corpus():
    out = subprocess.run(
        [sys.executable, "-m", "raychunk", "parse", str(ROOT / "samples")],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert "== " in out.stdout and "heading" in out.stdout
    assert "failed" not in out.stderr
    n_files = len([p for p in (ROOT / "samples").iterdir() if p.is_file()])
    assert f"parsed {n_files} files" in out.stderr


def test_missing_input_is_a_clear_error(capsys):
    assert main(["parse", "/no/such/dir"]) == 2
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("key", ["table_page_timeout_s", "table_doc_budget_s"])
def test_removed_table_time_keys_warn_and_are_ignored(key):
    from raychunk.config import RemovedConfigKeyWarning, build_run_config

    with pytest.warns(RemovedConfigKeyWarning, match=f"parse.{key} is no longer used"):
        opts = parse_options_from({"pdf_tables": "never", key: 10})
    assert opts.pdf_tables == "never"
    with pytest.warns(RemovedConfigKeyWarning, match=f"parse.{key}"):
        cfg = build_run_config({"parse": {key: 60}})
    assert cfg.parse.pdf_tables == "auto"
    with pytest.warns(RemovedConfigKeyWarning, match=f"parse.{key}"):
        build_run_config({}, {f"parse.{key}": 5})


def test_default_config_sets_no_removed_key(recwarn):
    from raychunk.config import build_run_config

    build_run_config(load_config())
    assert not [w for w in recwarn if "no longer used" in str(w.message)]
