"""LaTeX (``.tex``) read through pandoc's LaTeX reader and ``latex.lua``: what a reader of the typeset
document sees, as blocks under their headings. Before, a ``.tex`` file was plain text: no heading,
no list, ``\\section{Intro}`` a paragraph."""

from __future__ import annotations

from pathlib import Path

import pytest

from raychunk.parse import parse_document
from tests.spans import assert_spans_match

pytest.importorskip("pypandoc")

DATA = Path(__file__).parent / "data" / "latex"

ARTICLE = r"""\documentclass{article}
\usepackage{amsmath}
\newcommand{\sys}{raychunk}
\title{Structure-First Chunking at Scale}
\author{A. Author \and B. Author}
\date{2026}
\begin{document}
\maketitle
\begin{abstract}
We present \sys{}, a chunker that splits on structure first.
\end{abstract}
\section{Introduction}\label{sec:intro}
% a comment \input{notes}: not read, not named
Retrieval needs chunks\footnote{A chunk is a span of text.} that keep their context~\cite{lewis2020,gao2023}.
See Section~\ref{sec:method}; the \mycustom{unknown macro} keeps its words, \vspace{2mm} gives none.
\subsection{Contributions}
\begin{enumerate}
\item Keep list numbers.
\item Keep exact spans: $n \le 256$.
\end{enumerate}
\section{Method}\label{sec:method}
\begin{tabular}{lrr}
\hline
Chunker & Vectors & Hit@5 \\
\hline
raychunk & 1,514 & 0.887 \\
\hline
\end{tabular}
\begin{verbatim}
raychunk run --input docs/
\end{verbatim}
\input{appendix}
\end{document}
"""


def parsed(data: bytes, name: str):
    p = parse_document(data, name)
    assert_spans_match(p, rendered=("page_break",))
    return p


def blocks(p) -> list[tuple]:
    return [(b.kind, b.text, b.heading_path, b.marker) for b in p.blocks]


def test_an_article_reads_as_its_typeset_page():
    p = parsed(ARTICLE.encode(), "paper.tex")
    assert (p.document.format, p.document.status) == ("latex", "ok")
    assert p.document.title == "Structure-First Chunking at Scale"
    # the files it pulls in are named, not read (pandoc's sandbox reads no other file)
    assert p.document.reason == "included files not inlined (appendix): each is read on its own"
    t = ("Structure-First Chunking at Scale",)
    intro = (*t, "Introduction")
    assert blocks(p) == [
        ("heading", "Structure-First Chunking at Scale", (), ""),
        ("paragraph", "A. Author, B. Author", t, ""),
        ("paragraph", "2026", t, ""),
        ("heading", "Abstract", t, ""),
        ("paragraph", "We present raychunk, a chunker that splits on structure first.", (*t, "Abstract"), ""),
        ("heading", "Introduction", t, ""),
        (
            "paragraph",
            "Retrieval needs chunks that keep their context [lewis2020, gao2023]. See Section 2; the "
            "unknown macro keeps its words, gives none.",
            intro,
            "",
        ),
        ("heading", "Contributions", intro, ""),
        ("list_item", "Keep list numbers.", (*intro, "Contributions"), "1."),
        ("list_item", "Keep exact spans: n ≤ 256.", (*intro, "Contributions"), "2."),
        ("heading", "Method", t, ""),
        (
            "table",
            "| Chunker | Vectors | Hit@5 |\n|---|---|---|\n| raychunk | 1,514 | 0.887 |",
            (*t, "Method"),
            "",
        ),
        ("code", "raychunk run --input docs/", (*t, "Method"), ""),
        ("heading", "Notes", t, ""),
        ("list_item", "A chunk is a span of text.", (*t, "Notes"), "1."),
    ]


def test_a_python_library_manual_section_in_latex():
    """httplib2's manual section (MIT, ``LICENSE-httplib2``), written with the old Python docs' own
    commands and environments (``\\module``, ``\\begin{excdesc}{Name}``, ``\\begin{methoddesc}``):
    a command pandoc does not know keeps its words, an environment's arguments are the term of its
    text."""
    p = parsed((DATA / "libhttplib2.tex").read_bytes(), "libhttplib2.tex")
    assert p.document.status == "ok" and p.document.reason == ""
    title = "httplib2 A comprehensive HTTP client library."
    assert [b.text for b in p.blocks if b.kind == "heading"] == [
        title,
        "Http Objects",
        "Cache Objects",
        "Response Objects",
        "Examples",
    ]
    texts = [b.text for b in p.blocks]
    assert "The httplib2 module is a comprehensive HTTP client library with the following features:" in texts
    assert "HttpLib2Error: The Base Exception for all exceptions raised by httplib2." in texts
    assert "methoddesc" not in p.text and "excdesc" not in p.text
    request = next(b for b in p.blocks if b.text.startswith("request uri, method"))
    assert request.heading_path == (title, "Http Objects")
    assert any(b.kind == "code" and "h = httplib2.Http" in b.text for b in p.blocks)


def test_beamer_frames_are_headings_over_their_slides():
    tex = rb"""\documentclass{beamer}
\title{Quarterly Review}
\begin{document}
\frame{\titlepage}
\begin{frame}{Revenue}
\begin{itemize}
\item Up 12\%
\item Churn down
\end{itemize}
\end{frame}
\begin{frame}
\frametitle{Next steps}
Hire two engineers.
\end{frame}
\end{document}
"""
    p = parsed(tex, "review.tex")
    t = ("Quarterly Review",)
    assert blocks(p) == [
        ("heading", "Quarterly Review", (), ""),
        ("heading", "Revenue", t, ""),
        ("list_item", "Up 12%", (*t, "Revenue"), "-"),
        ("list_item", "Churn down", (*t, "Revenue"), "-"),
        ("heading", "Next steps", t, ""),
        ("paragraph", "Hire two engineers.", (*t, "Next steps"), ""),
    ]


@pytest.mark.parametrize(
    ("tex", "status", "reason"),
    [
        (
            b"\\documentclass{book}\n\\begin{document}\n\\include{ch1}\n\\include{ch2}\n\\end{document}\n",
            "empty",
            "no text of its own: it only pulls in other files (ch1, ch2), which are not read from here",
        ),
        (b"\\documentclass{article}\n\\usepackage{amsmath}\n", "empty", "no text found"),
        (
            b"\\section{Caf\xe9}\nText \\textbf{bold {unbalanced}\n",
            "ok",
            "pandoc could not convert this .tex file (line 3, column 2: unexpected ()): read as plain text",
        ),
    ],
)
def test_latex_that_is_not_read_as_latex_says_why(tex, status, reason):
    doc = parse_document(tex, "doc.tex").document
    assert doc.status == status and doc.reason.startswith(reason), doc


def test_a_latin1_file_is_read_in_its_own_encoding():
    p = parsed(b"\\section{Caf\xe9 menu}\nCr\xe8me br\xfbl\xe9e.\n", "menu.tex")
    assert [(b.kind, b.text) for b in p.blocks] == [("heading", "Café menu"), ("paragraph", "Crème brûlée.")]
