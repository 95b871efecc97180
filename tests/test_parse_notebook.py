"""Jupyter notebooks: the cells as a reader sees them (markdown, code in the notebook's language, the
text of outputs), never the JSON they are stored in."""

import base64
import gzip
import json

import pytest

from raychunk.parse import parse_document
from tests.spans import assert_spans_match, chunks_holding_their_spans

PNG = base64.b64encode(bytes(range(256)) * 40).decode()


def _nb(cells, language="python", **meta) -> bytes:
    metadata = {"kernelspec": {"name": language, "language": language, "display_name": language}, **meta}
    return json.dumps(
        {"nbformat": 4, "nbformat_minor": 5, "metadata": metadata, "cells": cells}, indent=1
    ).encode()


def _md(source):
    return {"cell_type": "markdown", "metadata": {}, "source": source}


def _code(source, *outputs):
    return {
        "cell_type": "code",
        "metadata": {},
        "execution_count": 1,
        "source": source,
        "outputs": list(outputs),
    }


TRAIN = [
    _md(["# Training a classifier\n", "\n", "This notebook fits a **logistic regression** on iris.\n"]),
    _code(
        ["from sklearn.datasets import load_iris\n", "X, y = load_iris(return_X_y=True)\n", "print(X.shape)"],
        {"output_type": "stream", "name": "stdout", "text": ["(150, 4)\n"]},
    ),
    _md("## Results\n\nThe held-out accuracy is printed below."),
    _code(
        "acc = 0.953\nacc",
        {
            "output_type": "execute_result",
            "execution_count": 2,
            "metadata": {},
            "data": {"text/plain": ["0.953"]},
        },
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {"image/png": PNG, "text/plain": "<Figure size 640x480>"},
        },
    ),
]


def test_cells_are_read_as_markdown_code_and_output_text():
    doc = parse_document(_nb(TRAIN), "train.ipynb")
    assert doc.document.status == "ok" and doc.document.format == "notebook"
    assert doc.document.title == "Training a classifier"
    got = [(b.kind, b.language, b.text, b.heading_path) for b in doc.blocks]
    assert got == [
        ("heading", None, "Training a classifier", ()),
        (
            "paragraph",
            None,
            "This notebook fits a **logistic regression** on iris.",
            ("Training a classifier",),
        ),
        (
            "code",
            "python",
            "from sklearn.datasets import load_iris\nX, y = load_iris(return_X_y=True)\nprint(X.shape)",
            ("Training a classifier",),
        ),
        ("code", "output", "(150, 4)", ("Training a classifier",)),
        ("heading", None, "Results", ("Training a classifier",)),
        ("paragraph", None, "The held-out accuracy is printed below.", ("Training a classifier", "Results")),
        ("code", "python", "acc = 0.953\nacc", ("Training a classifier", "Results")),
        ("code", "output", "0.953", ("Training a classifier", "Results")),
    ]
    # the chart is left out whole: its base64, and the repr that stands beside it
    assert PNG[:40] not in doc.text and "Figure" not in doc.text and '"cell_type"' not in doc.text
    assert_spans_match(doc)


def test_the_same_notebook_without_outputs_reads_the_same_less_them():
    bare = [dict(c, outputs=[]) if c["cell_type"] == "code" else c for c in TRAIN]
    with_outputs = parse_document(_nb(TRAIN), "a.ipynb")
    without = parse_document(_nb(bare), "a.ipynb")
    assert [b.text for b in without.blocks] == [b.text for b in with_outputs.blocks if b.language != "output"]


def test_streams_show_what_a_terminal_leaves_and_errors_their_message():
    bar = "\r  0%|          | 0/3\r 33%|###       | 1/3\r100%|##########| 3/3\n"  # redrawn with \\r
    out = [
        {"output_type": "stream", "name": "stderr", "text": bar},
        {"output_type": "stream", "name": "stdout", "text": ["epoch 1 loss 0.5\r\n", "epoch 2 loss 0.3\r\n"]},
        {
            "output_type": "error",
            "ename": "ValueError",
            "evalue": "shapes (3,) and (4,) not aligned",
            "traceback": [
                "\x1b[0;31m---------------------------------------------------------------\x1b[0m",
                "Traceback",
            ],
        },
    ]
    doc = parse_document(_nb([_code("train()", *out)]), "t.ipynb")
    outputs = [b.text for b in doc.blocks if b.language == "output"]
    assert outputs == [
        "100%|##########| 3/3",
        "epoch 1 loss 0.5\nepoch 2 loss 0.3",
        "ValueError: shapes (3,) and (4,) not aligned",
    ]
    assert "Traceback" not in doc.text and "\x1b" not in doc.text and "33%" not in doc.text


def test_an_open_fence_or_an_inline_image_stays_inside_its_cell():
    cells = [
        _md("# Setup\n\n```bash\npip install thing\n"),  # the cell ends inside its fence
        _md(f"## Usage\n\nSee the diagram: ![arch](data:image/png;base64,{PNG})\n"),
        _code('doc = """\n```python\nprint(1)\n```\n"""'),  # fences in the code: the block's own is longer
    ]
    doc = parse_document(_nb(cells), "n.ipynb")
    kinds = [(b.kind, b.text) for b in doc.blocks]
    assert ("code", "pip install thing") in kinds
    assert ("heading", "Usage") in kinds  # not swallowed by the fence the first cell left open
    assert ("paragraph", "See the diagram: ![arch](data:…)") in kinds
    assert ("code", 'doc = """\n```python\nprint(1)\n```\n"""') in kinds
    assert PNG[:40] not in doc.text


def test_a_long_output_keeps_its_head_and_its_last_lines_and_counts_the_rest():
    from raychunk.parse.notebook import OUTPUT_LIMIT

    lines = [f"row {i:05d} value {i * 7}" for i in range(2000)] + ["Total run time: 6.20 seconds"]
    doc = parse_document(
        _nb([_code("fit()", {"output_type": "stream", "text": "\n".join(lines)})]), "big.ipynb"
    )
    (out,) = [b.text for b in doc.blocks if b.language == "output"]
    kept = out.split("\n")
    gap = [i for i, line in enumerate(kept) if line.startswith("… (")]
    assert len(gap) == 1 and len(out) <= OUTPUT_LIMIT + 40
    head, tail = kept[: gap[0]], kept[gap[0] + 1 :]
    assert head == lines[: len(head)] and tail == lines[-len(tail) :]  # whole lines, in order
    assert kept[gap[0]] == f"… ({len(lines) - len(head) - len(tail)} lines left out)"
    assert kept[-1] == "Total run time: 6.20 seconds" and len(head) > 2 * len(tail) > 0


def test_what_a_run_leaves_on_screen_not_its_frames_escapes_or_reprs():
    """The shapes of real notebooks' outputs (Ray's and tqdm's progress bars, pip's coloured notices,
    a stream flushed in pieces, a status table shown only as HTML, the same result shown twice)."""
    table = (
        "<style>td {color: red}</style>\n<div><h3>Trial Status</h3>\n<table>\n<tr><th>Trial</th><th>status</th></tr>"
        "\n\n<tr><td>fit_1</td><td>TERMINATED</td></tr>\n</table></div>"
    )
    cells = [
        _md("# Run"),
        _code(
            "trainer.fit()",
            {
                "output_type": "stream",
                "name": "stderr",
                "text": "Running: 0.0/10.0 CPU 0/14 [00:01<?, ?it/s]\n\n   \n",
            },
            {
                "output_type": "stream",
                "name": "stderr",
                "text": "Map: 100%|\u2588\u2588| 2/2 [03:21<00:00, 100.61s/it]\n",
            },
            {
                "output_type": "stream",
                "name": "stdout",
                "text": "\x1b[1m[\x1b[0m\x1b[34;49mnotice\x1b[0m] upgrade pip\x1b[A\n",
            },
            {"output_type": "stream", "name": "stdout", "text": "PREDICTED LABELS\n"},
            {
                "output_type": "display_data",
                "metadata": {},
                "data": {"text/html": table, "text/plain": "<IPython.core.display.HTML object>"},
            },
            {"output_type": "stream", "name": "stdout", "text": "Total run time: 6.20 seconds\n"},
        ),
        _code(
            "ds.take(2)",
            {"output_type": "execute_result", "data": {"text/plain": "[{'score': 1}, {'score': 2}]"}},
        ),
        _code(
            "ds.take(2)  # again",
            {"output_type": "execute_result", "data": {"text/plain": "[{'score': 1}, {'score': 2}]"}},
        ),
    ]
    doc = parse_document(_nb(cells), "run.ipynb")
    assert "\x1b" not in doc.text and "it/s" not in doc.text and "s/it" not in doc.text
    assert "IPython" not in doc.text and "color: red" not in doc.text
    outputs = [b.text for b in doc.blocks if b.language == "output"]
    assert outputs == [
        "[notice] upgrade pip\nPREDICTED LABELS",  # one stdout stream, flushed twice
        "Total run time: 6.20 seconds",
        "[{'score': 1}, {'score': 2}]",  # once, though two cells show it
    ]
    (status,) = [b for b in doc.blocks if b.kind == "table"]
    assert status.rows == (("Trial", "status"), ("fit_1", "TERMINATED"))
    # the output's own heading is its text, not a section: the cells after it stay under "Run"
    assert [b.text for b in doc.blocks if b.kind == "heading"] == ["Run"]
    assert all(b.heading_path == ("Run",) for b in doc.blocks[1:])


def test_jupyter_book_remove_tags_keep_what_the_author_hid_out():
    def tagged(cell, *tags):
        return dict(cell, metadata={"tags": list(tags)})

    cells = [
        tagged(_code("# flake8: noqa\nimport warnings"), "remove-cell"),
        _md("# Guide"),
        tagged(_code("setup_secret()", {"output_type": "stream", "text": "configured\n"}), "remove-input"),
        tagged(_code("train()", {"output_type": "stream", "text": "noise\n"}), "remove-output"),
        tagged(_md("Internal note."), "remove-cell"),
    ]
    doc = parse_document(_nb(cells), "book.ipynb")
    assert [(b.kind, b.language, b.text) for b in doc.blocks] == [
        ("heading", None, "Guide"),
        ("code", "output", "configured"),
        ("code", "python", "train()"),
    ]


def test_nbformat_3_worksheets_heading_cells_and_flat_outputs():
    nb = {
        "nbformat": 3,
        "metadata": {"name": "old"},
        "worksheets": [
            {
                "cells": [
                    {"cell_type": "heading", "level": 2, "source": ["Old  style"]},
                    {"cell_type": "markdown", "source": ["Some prose."]},
                    {
                        "cell_type": "code",
                        "language": "python",
                        "input": ["1 + 1"],
                        "outputs": [{"output_type": "pyout", "text": ["2"], "prompt_number": 1}],
                    },
                    {"cell_type": "raw", "source": ".. note:: raw rst"},
                ]
            }
        ],
    }
    doc = parse_document(json.dumps(nb).encode(), "old.ipynb")
    assert [(b.kind, b.language, b.text) for b in doc.blocks] == [
        ("heading", None, "Old style"),
        ("paragraph", None, "Some prose."),
        ("code", "python", "1 + 1"),
        ("code", "output", "2"),
        ("code", None, ".. note:: raw rst"),
    ]


def test_the_notebooks_language_names_its_code():
    doc = parse_document(_nb([_code("println(1)")], language="julia"), "j.ipynb")
    assert [(b.kind, b.language) for b in doc.blocks] == [("code", "julia")]
    meta_only = json.loads(_nb([_code("1")]))
    meta_only["metadata"] = {"language_info": {"name": "R"}}
    assert parse_document(json.dumps(meta_only).encode(), "r.ipynb").blocks[0].language == "r"


@pytest.mark.parametrize(
    ("data", "status", "fmt", "reason"),
    [
        (_nb(TRAIN)[:-200], "failed", "notebook", "not valid JSON"),
        (b'{"name": "not a notebook", "version": 3}', "ok", "json", "JSON without notebook cells"),
        (
            _nb([_md(""), _code("  \n", {"output_type": "stream", "text": ""})]),
            "empty",
            "notebook",
            "no cell text",
        ),
        (_nb([]), "empty", "notebook", "no cell text"),
    ],
)
def test_a_file_that_is_not_a_notebook_says_what_it_is(data, status, fmt, reason):
    doc = parse_document(data, "x.ipynb")
    assert (doc.document.status, doc.document.format) == (status, fmt)
    assert reason in doc.document.reason


def test_a_compressed_notebook_is_a_notebook():
    doc = parse_document(gzip.compress(_nb(TRAIN)), "train.ipynb.gz")
    plain = parse_document(_nb(TRAIN), "train.ipynb")
    assert doc.document.format == "notebook" and doc.text == plain.text


def test_notebook_chunks_hold_their_spans():

    cells = []
    for i in range(40):
        cells.append(_md(f"## Step {i}\n\n" + "Explain the step in words. " * (i % 9 + 1)))
        cells.append(
            _code(
                f"result_{i} = step({i})\nprint(result_{i})", {"output_type": "stream", "text": f"{i}\n" * 30}
            )
        )
    doc = parse_document(_nb(cells), "steps.ipynb")
    assert min(chunks_holding_their_spans(doc, 48)) > 40
