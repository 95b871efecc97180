"""MyST Markdown (Jupyter Book, Sphinx's myst-parser): directives that hold Markdown are read as the
document's own blocks, code directives as code, a table of contents as navigation, ``(label)=``
targets as nothing; every other fence as before."""

import pytest

from raychunk.parse import markdown as md_parse
from raychunk.parse import parse_document
from tests.spans import assert_spans_match

GUIDE = """# Install

(install-guide)=

```{note}
:class: dropdown

Ray needs **Python 3.9** or later on every node.
```

```{admonition} Before you start
Stop the old cluster with `ray stop`.

- back up the head node
- drain the workers
```

`````{tab-set}
````{tab-item} macOS
:sync: mac
```bash
brew install tesseract
```
````
````{tab-item} Linux
```bash
apt-get install tesseract-ocr
```
````
`````

```{code-block} python
:linenos:
:caption: start.py

import ray
ray.init()
```

```{toctree}
:maxdepth: 1

installation
quickstart
```

```{mermaid}
graph TD; A-->B
```

```{ .dockerfile .annotate }
FROM python:3.14
```
"""


def _read(data: str, name: str = "guide.md"):
    return parse_document(data.encode(), name)


def test_directives_are_read_as_what_they_hold():
    doc = _read(GUIDE)
    got = [(b.kind, b.language, b.marker, b.text) for b in doc.blocks]
    assert got == [
        ("heading", None, "", "Install"),
        ("paragraph", None, "", "Ray needs **Python 3.9** or later on every node."),
        ("paragraph", None, "", "Before you start"),
        ("paragraph", None, "", "Stop the old cluster with `ray stop`."),
        ("list_item", None, "-", "back up the head node"),
        ("list_item", None, "-", "drain the workers"),
        ("paragraph", None, "", "macOS"),
        ("code", "bash", "", "brew install tesseract"),
        ("paragraph", None, "", "Linux"),
        ("code", "bash", "", "apt-get install tesseract-ocr"),
        ("code", "python", "", "import ray\nray.init()"),
        ("code", "{mermaid}", "", "graph TD; A-->B"),  # a directive not known to hold Markdown: as written
        ("code", "{", "", "FROM python:3.14"),  # an attribute list, not a directive: as before
    ]
    assert all(b.heading_path == ("Install",) for b in doc.blocks[1:])
    assert_spans_match(doc, exact=False)
    for b in doc.blocks:  # each block's span is its own source, never the directive's option lines
        assert ":class:" not in doc.text[b.char_start : b.char_end] and ":sync:" not in doc.text[b.char_start : b.char_end]


def test_the_same_blocks_from_either_markdown_parser(monkeypatch):
    fast = _read(GUIDE)
    with monkeypatch.context() as m:
        m.setattr(md_parse, "block_tokens", lambda text: None)
        pure = _read(GUIDE)
    assert fast.blocks == pure.blocks


@pytest.mark.parametrize(
    "text",
    [
        "(not a target)= at all\n",
        "Call f(x)= 3 here.\n",
        "```{note}\n```\n\nAfter.\n",  # an empty directive
        "```{note}\nNever closed, to the end of the file.\n",
        "- item\n\n  ```{note}\n  Indented under an item.\n  ```\n",
        "> ```{tip}\n> In a quote.\n> ```\n",
        "```{note}\r\nWindows line ends.\r\n```\r\n",
    ],
)
def test_edges_keep_their_words(text):
    doc = _read(text)
    words = {w.strip(".*`") for w in text.split() if w[0].isalpha() and "{" not in w}
    kept = " ".join(b.text for b in doc.blocks)
    assert all(w in kept for w in words), (words, kept)
    assert_spans_match(doc, exact=False)


def test_nested_directives_and_their_headings():
    text = "# Top\n\n`````{card} Card title\n````{dropdown} More\n## Inside\n\nDeep text.\n````\n`````\n\nAfter.\n"
    doc = _read(text)
    assert [(b.kind, b.text, b.heading_path) for b in doc.blocks] == [
        ("heading", "Top", ()),
        ("paragraph", "Card title", ("Top",)),
        ("paragraph", "More", ("Top",)),
        ("heading", "Inside", ("Top",)),
        ("paragraph", "Deep text.", ("Top", "Inside")),
        ("paragraph", "After.", ("Top", "Inside")),
    ]
    assert_spans_match(doc, exact=False)
