"""Markdown dialects. MyST (Jupyter Book, Sphinx's myst-parser): directives that hold Markdown are
read as the document's own blocks, code directives as code, a table of contents as navigation,
``(label)=`` targets as nothing; every other fence as before. MDX (Docusaurus): Markdown, its
ES module lines left out. Quarto and R Markdown: Markdown."""

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
        assert (
            ":class:" not in doc.text[b.char_start : b.char_end]
            and ":sync:" not in doc.text[b.char_start : b.char_end]
        )


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


MDX = """---
sidebar_position: 2
title: Installation
---

import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';
export const Highlight = ({children}) => (
  <span style={{color: 'green'}}>{children}</span>
);

# Installation

import the data first, then run it.

<Tabs>
  <TabItem value="npm" label="npm">

```bash
npm install -g acme-cli
```

  </TabItem>
</Tabs>

## Configuration

The default port is <Highlight>8080</Highlight>.

```js
import fs from 'fs';
```
"""


def test_mdx_is_markdown_without_its_module_lines():
    doc = _read(MDX, "docs/intro.mdx")
    assert (doc.document.format, doc.document.title) == ("markdown", "Installation")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("heading", "Installation"),
        ("paragraph", "import the data first, then run it."),  # prose that starts with the word
        ("code", "npm install -g acme-cli"),
        ("heading", "Configuration"),
        ("paragraph", "The default port is 8080."),
        ("code", "import fs from 'fs';"),  # code keeps its imports
    ]
    from raychunk.evaluation.spans import check_chunk  # inline JSX is markup, as HTML tags are

    for b in doc.blocks:
        assert (
            check_chunk(doc.text, {"text": b.text, "char_start": b.char_start, "char_end": b.char_end})
            is None
        )
    # in a .md file the same lines are text, as written
    assert "import Tabs from '@theme/Tabs';" in _read(MDX, "intro.md").blocks[0].text


@pytest.mark.parametrize("name", ["report.qmd", "analysis.Rmd", "page.mdx.gz"])
def test_quarto_r_markdown_and_compressed_mdx_are_markdown(name):
    import gzip

    data = b"# Results\n\n```{r}\nsummary(cars)\n```\n\nThe mean is 15.4.\n"
    doc = parse_document(gzip.compress(data) if name.endswith(".gz") else data, name)
    assert doc.document.format == "markdown"
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("heading", "Results"),
        ("code", "summary(cars)"),
        ("paragraph", "The mean is 15.4."),
    ]


def test_directives_nested_past_the_depth_limit_stay_code():
    from raychunk.parse.markdown import MYST_DEPTH

    n = 200  # each level's fence one backtick longer: a hostile file, parsed in one pass per level at most
    opening = "\n".join("`" * (n + 3 - i) + "{note}" for i in range(n))
    closing = "\n".join("`" * (n + 3 - i) for i in reversed(range(n)))
    doc = _read(f"# T\n\n{opening}\nDeep text.\n{closing}\n")
    assert [b.kind for b in doc.blocks] == ["heading", "code"]
    assert "Deep text." in doc.blocks[1].text and doc.blocks[1].text.count("{note}") == n - MYST_DEPTH - 1
