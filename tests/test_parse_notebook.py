"""Jupyter notebooks: the cells as a reader sees them (markdown, code in the notebook's language, the
text of outputs), never the JSON they are stored in."""

import base64
import gzip
import json

import pytest

from raychunk.parse import parse_document
from tests.spans import assert_spans_match

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
    bar = "\r  0%|          | 0/3\r 33%|###       | 1/3\r100%|##########| 3/3\n"
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


def test_a_long_output_is_cut_at_a_line_end_and_counted():
    from raychunk.parse.notebook import OUTPUT_LIMIT

    lines = [f"row {i:05d} value {i * 7}" for i in range(2000)]
    doc = parse_document(_nb([_code("df", {"output_type": "stream", "text": "\n".join(lines)})]), "big.ipynb")
    (out,) = [b.text for b in doc.blocks if b.language == "output"]
    kept = out.split("\n")
    assert len(out) <= OUTPUT_LIMIT + 40 and kept[0] == lines[0]
    assert kept[-1] == f"… ({2000 - (len(kept) - 1)} more lines)"
    assert kept[-2] in lines  # cut between lines, never inside one


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
    from raychunk.chunking import Profile, chunk_document
    from raychunk.evaluation.spans import check_chunk
    from raychunk.tokens import load_counter

    cells = []
    for i in range(40):
        cells.append(_md(f"## Step {i}\n\n" + "Explain the step in words. " * (i % 9 + 1)))
        cells.append(
            _code(
                f"result_{i} = step({i})\nprint(result_{i})", {"output_type": "stream", "text": f"{i}\n" * 30}
            )
        )
    doc = parse_document(_nb(cells), "steps.ipynb")
    for profile in (Profile(strategy="structure", max_tokens=48), Profile(strategy="fixed", max_tokens=48)):
        chunks = chunk_document(doc, profile, counter=load_counter("words"))
        assert len(chunks) > 40
        for c in chunks:
            row = {"text": c.text, "header": c.header, "char_start": c.char_start, "char_end": c.char_end}
            assert check_chunk(doc.text, row) is None, (c.text[:80], check_chunk(doc.text, row))
