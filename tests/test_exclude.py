"""``--exclude``: files and folders under the inputs that the user does not want read, named as
``.gitignore`` names them; each ends as a ``skipped`` documents row (a folder as one), never read."""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from raychunk.cli import main
from raychunk.config import ConfigError, build_run_config, load_config
from raychunk.io import Exclusions, list_inputs


@pytest.mark.parametrize(
    ("pattern", "rel", "is_dir", "named"),
    [
        ("*.css", "a.css", False, True),
        ("*.css", "site/static/a.css", False, True),  # no slash: a name at any depth
        ("*.css", "a.css.md", False, False),
        ("node_modules", "web/node_modules", True, True),
        ("node_modules", "web/node_modules", False, True),  # no trailing slash: a file too
        ("build/", "docs/build", True, True),
        ("build/", "docs/build", False, False),  # trailing slash: folders only
        ("docs/build", "docs/build", True, True),  # a slash: a path from the input folder
        ("docs/build", "site/docs/build", True, False),
        ("/docs/*.md", "docs/a.md", False, True),
        ("/docs/*.md", "docs/sub/a.md", False, False),  # * stays within a name
        ("docs/**/*.md", "docs/a.md", False, True),
        ("docs/**/*.md", "docs/x/y/a.md", False, True),  # ** crosses folders
        ("**/secret*", "a/b/secrets.txt", False, True),
        ("draft-?.md", "draft-1.md", False, True),
        ("draft-?.md", "draft-12.md", False, False),
        ("[!_]*.txt", "_hidden.txt", False, False),
        ("[!_]*.txt", "notes.txt", False, True),
        ("v[0-9].md", "v7.md", False, True),
        ("a+b (1).md", "a+b (1).md", False, True),  # regex characters are literal
    ],
)
def test_patterns_name_what_gitignore_would(pattern, rel, is_dir, named):
    assert (Exclusions([pattern]).match(rel, is_dir) == pattern) is named


@pytest.mark.parametrize("bad", ["", "/", "  "])
def test_an_empty_pattern_is_refused(bad):
    with pytest.raises(ValueError, match="empty pattern"):
        Exclusions([bad])
    with pytest.raises(ConfigError, match="exclude must be a glob pattern"):
        build_run_config(load_config(), {"exclude": [bad]})


def site(tmp_path: Path) -> Path:
    """A documentation build as a user has it: pages, site machinery, a dependency folder."""
    root = tmp_path / "site"
    for rel, text in {
        "index.md": "# Home\n\nWelcome to the guide.\n",
        "guide/install.md": "# Install\n\nRun the installer.\n",
        "guide/build/out.md": "# Built\n\nGenerated copy.\n",
        "static/theme.css": "body { color: red }\n",
        "static/app.js": "console.log('x')\n",
        "node_modules/pkg/README.md": "# pkg\n\nA dependency.\n",
        "node_modules/pkg/index.js": "module.exports = 1\n",
        "api/v1.json": '{"a": 1}\n',
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def rows(files) -> dict[str, object]:
    return {f.path: f.refused for f in files}


def test_the_listing_turns_what_is_excluded_into_skipped_rows(tmp_path):
    root = site(tmp_path)
    _, _, files = list_inputs([str(root)], exclude=("node_modules/", "*.css", "static/*.js", "build/"))
    got = {Path(p).relative_to(root).as_posix(): r for p, r in rows(files).items()}
    assert got == {
        "api/v1.json": None,
        "guide/install.md": None,
        "index.md": None,
        "guide/build": ("skipped", "excluded by --exclude 'build/': a folder; its 1 file is not read"),
        "node_modules": (
            "skipped",
            "excluded by --exclude 'node_modules/': a folder; its 2 files are not read",
        ),
        "static/app.js": ("skipped", "excluded by --exclude 'static/*.js': not read"),
        "static/theme.css": ("skipped", "excluded by --exclude '*.css': not read"),
    }
    # the patterns are relative to each input folder, and to a glob's folder
    _, _, files = list_inputs([str(root / "guide")], exclude=("/build",))
    assert {Path(p).name: r and r[0] for p, r in rows(files).items()} == {
        "install.md": None,
        "build": "skipped",
    }
    _, _, files = list_inputs([str(root / "**" / "*.md")], exclude=("node_modules/",))
    assert sum(r is None for r in rows(files).values()) == 3
    with pytest.raises(ValueError, match="leaves none of them"):
        list_inputs([str(root / "guide")], exclude=("*.md",))


def test_a_run_and_a_price_read_nothing_excluded(tmp_path, fresh_ray):
    root = site(tmp_path)
    out = tmp_path / "out"
    args = ["--input", str(root), "--exclude", "node_modules/", "--exclude", "*.css", "--exclude", "*.js"]
    assert main(["run", *args, "--output", str(out), "--no-embed", "--num-cpus", "2"]) == 0
    docs = pq.read_table(out / "documents", columns=["source", "status", "reason"]).to_pylist()
    status = {Path(d["source"]).relative_to(root).as_posix(): d["status"] for d in docs}
    assert status == {
        "api/v1.json": "ok",
        "guide/build/out.md": "ok",
        "guide/install.md": "ok",
        "index.md": "ok",
        "node_modules": "skipped",
        "static/app.js": "skipped",
        "static/theme.css": "skipped",
    }
    texts = " ".join(pq.read_table(out / "chunks", columns=["text"]).column("text").to_pylist())
    assert "dependency" not in texts and "color" not in texts and "console" not in texts
    report = json.loads((out / "report.json").read_text())
    assert report["input"]["exclude"] == ["node_modules/", "*.css", "*.js"]

    price = tmp_path / "price"
    assert main(["price", *args, "--output", str(price), "--sizes", "128", "--overlaps", "0"]) == 0
    priced = json.loads((price / "report.json").read_text())
    assert (priced["corpus_files"], priced["sampled_documents"]) == (7, 4)  # the 3 skipped rows not priced
