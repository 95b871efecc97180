"""Source code: one ``code`` block per top-level function or class, and one per run of other code.

Python is parsed with :mod:`ast`; brace languages (JS/TS, Go, Rust, Java, C-family, ...) by a
brace-depth scan that ignores strings and comments. Comments directly above a definition belong to it.
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

from raychunk.document import Document, ParsedDocument
from raychunk.parse._common import BlockStream, clean_text, finish, line_offsets
from raychunk.parse.compressed import inner_name

__all__ = ["LANGUAGES", "NAMES", "name_language", "named_language", "parse_code", "text_language"]

LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".kt": "kotlin",
    ".swift": "swift",
    ".rb": "ruby",
    ".php": "php",
    ".scala": "scala",
    ".sh": "bash",
    ".bash": "bash",
    ".pm": "perl",
    ".pl": "perl",
    ".sql": "sql",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".tcc": "cpp",  # libstdc++'s template bodies
    ".ipp": "cpp",
    ".inl": "cpp",
    ".ino": "cpp",  # Arduino
    ".mm": "objective-c",
    ".kts": "kotlin",
    ".groovy": "groovy",
    ".gradle": "groovy",
    ".dart": "dart",
    ".zig": "zig",
    ".sol": "solidity",
    ".proto": "protobuf",
    ".lua": "lua",
    ".tcl": "tcl",
    ".r": "r",
    ".jl": "julia",
    ".ex": "elixir",
    ".exs": "elixir",
    ".erl": "erlang",
    ".hrl": "erlang",
    ".hs": "haskell",
    ".ml": "ocaml",
    ".mli": "ocaml",
    ".fs": "fsharp",
    ".fsx": "fsharp",
    ".clj": "clojure",
    ".cljs": "clojure",
    ".el": "emacs-lisp",
    ".lisp": "lisp",
    ".scm": "scheme",
    ".vb": "vbnet",
    ".f90": "fortran",
    ".ps1": "powershell",
    ".psm1": "powershell",
    ".zsh": "zsh",
    ".fish": "fish",
    ".bat": "batch",
    ".cmd": "batch",
    ".cmake": "cmake",
    ".nim": "nim",
    ".vim": "vim",
    ".awk": "awk",
    ".mk": "make",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini",
    ".css": "css",
    ".scss": "scss",
    ".less": "less",
    ".cu": "cuda",
    ".cuh": "cuda",
    # systemd units and desktop entries are INI files
    ".service": "ini",
    ".socket": "ini",
    ".target": "ini",
    ".timer": "ini",
    ".mount": "ini",
    ".automount": "ini",
    ".path": "ini",
    ".slice": "ini",
    ".desktop": "ini",
}
# Files a project names for what they are, whatever their extension (``Dockerfile.dev``).
NAMES = {
    "dockerfile": "dockerfile",
    "containerfile": "dockerfile",
    "makefile": "make",
    "gnumakefile": "make",
    "cmakelists.txt": "cmake",
    "jenkinsfile": "groovy",
    "vagrantfile": "ruby",
    "rakefile": "ruby",
    "gemfile": "ruby",
    "justfile": "just",
    "sconstruct": "python",
    "sconscript": "python",
}
# What a script's ``#!`` line runs, and an editor's mode (Emacs' ``-*- C++ -*-``, Vim's ``ft=cpp``),
# by the names they use: the language of a file whose name says nothing (libstdc++'s ``vector``, a
# project's ``bin/deploy``). Modes of markups are the formats ``parse`` reads them as.
_RUNS = {
    "python": "python",
    "sh": "bash",
    "bash": "bash",
    "dash": "bash",
    "ksh": "bash",
    "zsh": "zsh",
    "fish": "fish",
    "node": "javascript",
    "nodejs": "javascript",
    "deno": "typescript",
    "ts-node": "typescript",
    "ruby": "ruby",
    "perl": "perl",
    "php": "php",
    "lua": "lua",
    "rscript": "r",
    "tclsh": "tcl",
    "wish": "tcl",
    "julia": "julia",
    "make": "make",
    "awk": "awk",
    "gawk": "awk",
    "pwsh": "powershell",
}
_MODES = {
    "c": "c",
    "c++": "cpp",
    "cpp": "cpp",
    "objc": "objective-c",
    "python": "python",
    "perl": "perl",
    "cperl": "perl",
    "sh": "bash",
    "shell-script": "bash",
    "bash": "bash",
    "ruby": "ruby",
    "js": "javascript",
    "javascript": "javascript",
    "typescript": "typescript",
    "java": "java",
    "go": "go",
    "rust": "rust",
    "lua": "lua",
    "tcl": "tcl",
    "makefile": "make",
    "make": "make",
    "lisp": "lisp",
    "emacs-lisp": "emacs-lisp",
    "scheme": "scheme",
    "fortran": "fortran",
    "f90": "fortran",
    "php": "php",
    "awk": "awk",
    "cmake": "cmake",
    "autoconf": "m4",
    "m4": "m4",
    "dockerfile": "dockerfile",
}
_MARKUP_MODES = {"org": "org", "markdown": "markdown", "gfm": "markdown", "rst": "rst"}
_EMACS_MODE = re.compile(r"-\*-\s*(?:(?:.*?;\s*)?mode:\s*([\w+-]+)|([\w+-]+))\s*(?:;.*?)?-\*-", re.I)
_VIM_MODE = re.compile(r"(?:^|\s)(?:vim?|ex):.*?\b(?:ft|filetype|syntax)=([\w+-]+)")
_COMMENT = re.compile(r"^\s*(#|//|/\*|\*|--)")


def name_language(name: str) -> str | None:
    """The language a file's name gives it: its extension's, or a well-known name's (``Makefile``,
    ``Dockerfile.dev``); a compressed file's is its content's (``setup.py.gz``: Python)."""
    p = PurePosixPath(inner_name(name))
    return named_language(p.name) or LANGUAGES.get(p.suffix.lower())


def named_language(name: str) -> str | None:
    """The language of a well-known file name (``Makefile``, ``CMakeLists.txt``, ``Dockerfile.dev``;
    not ``dockerfile.vim``, a Vim script)."""
    lower = name.lower()
    if lower.startswith(("dockerfile.", "containerfile.")) and PurePosixPath(lower).suffix not in LANGUAGES:
        lower = lower.split(".")[0]
    return NAMES.get(lower)


def text_language(text: str) -> str | None:
    """The language that a file's text names: a ``#!`` line's interpreter, an Emacs mode on its first
    two lines, or a Vim modeline on its first or last five; a markup's format name for a markup mode
    (``-*- org -*-``: ``org``). None when it names none (a ``-*- coding: utf-8 -*-`` line names no mode)."""
    head = text[:400].split("\n", 2)
    if head[0].startswith("#!") and (runs := _interpreter(head[0][2:])) in _RUNS:
        return _RUNS[runs]
    for line in head[:2]:
        if "-*-" in line and (m := _EMACS_MODE.search(line)):
            mode = (m.group(1) or m.group(2)).lower()
            mode = "makefile" if mode.startswith("makefile") else mode  # makefile-gmake
            if mode != "coding" and (found := _MODES.get(mode) or _MARKUP_MODES.get(mode)):
                return found
    lines = text[:2000].split("\n")[:5] + text[-2000:].split("\n")[-5:]
    for line in lines:
        if ("vim" in line or "ex:" in line) and (m := _VIM_MODE.search(line)):
            mode = m.group(1).lower()
            return _MODES.get(mode) or _MARKUP_MODES.get(mode)
    return None


def _interpreter(line: str) -> str:
    """The program a ``#!`` line runs, without its folder or version: ``/usr/bin/env -S python3.11 -u``
    runs ``python``."""
    words = line.split()
    if words and words[0].rsplit("/", 1)[-1] == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    return re.sub(r"[\d.]+$", "", words[0].rsplit("/", 1)[-1].lower()) if words else ""


def parse_code(text: str, base: Document) -> ParsedDocument:
    language = name_language(base.source) or text_language(text)
    if language == "cmake":
        from raychunk.parse.cmake import has_rst_docs, parse_cmake_docs

        if has_rst_docs(text):
            return parse_cmake_docs(text, base, as_code=_parse_code)
    return _parse_code(text, base, language)


def _parse_code(text: str, base: Document, language: str | None = None) -> ParsedDocument:
    language = language or name_language(base.source) or text_language(text)
    off = line_offsets(text)
    n_lines = len(off)
    off.append(len(text))
    # lines as Python's parser and the offsets count them: \r\n, \r and \n each end one
    lines = [text[off[i] : off[i + 1]].rstrip("\r\n") for i in range(n_lines)]
    units = None
    if language == "python":
        units = _python_units(text)
    elif language == "sql":
        units = _sql_units(lines)
    elif language in _SECTION_START:
        units = _section_units(lines, _SECTION_START[language])
    if units is None:
        units = _brace_units(lines)
    out = BlockStream()
    for kind, first, last in _fill_gaps(units, lines, n_lines):
        s, e = off[first], off[last + 1]
        while e > s and text[e - 1] in "\r\n":
            e -= 1
        body = text[s:e]
        if not body.strip():
            continue
        if kind == "docstring":
            out.add("paragraph", clean_text(body), s, e)
        else:
            out.add("code", clean_text(body), s, e, language=language)
    return finish(base, text, out.blocks)


def _python_units(text: str) -> list[tuple[str, int, int]] | None:
    """(kind, first line, last line), 0-based inclusive, for each top-level def/class."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    units = []
    for i, node in enumerate(tree.body):
        if (
            i == 0
            and isinstance(node, ast.Expr)
            and isinstance(getattr(node, "value", None), ast.Constant)
            and isinstance(node.value.value, str)
        ):
            units.append(("docstring", node.lineno - 1, node.end_lineno - 1))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            units.append(("def", first, node.end_lineno - 1))
    return units


_DEF_START = re.compile(
    r"^(?:export\s+|public\s+|private\s+|protected\s+|static\s+|async\s+|abstract\s+|final\s+|pub(?:\(\w+\))?\s+|"
    r"default\s+|unsafe\s+|extern\s+\"C\"\s+|inline\s+)*"
    r"(?:function\b|class\b|interface\b|struct\b|enum\b|impl\b|trait\b|fn\b|func\b|type\s+\w+\s+(?:struct|interface)\b|"
    r"def\b|sub\b|module\b|object\b|namespace\b|[A-Za-z_][\w<>\[\],\s\*&:]*\s+\**[A-Za-z_]\w*\s*\([^;]*$)"
)


def _brace_units(lines: list[str]) -> list[tuple[str, int, int]]:
    """Top-level definitions of a brace language: from a definition line to where depth is 0 again."""
    units = []
    depth = 0
    current: int | None = None
    in_block_comment = False
    for no, line in enumerate(lines):
        if depth == 0 and current is None and line[:1] not in (" ", "\t", "}", "") and _DEF_START.match(line):
            current = no
        opened = False
        i, n = 0, len(line)
        quote = None
        while i < n:
            c = line[i]
            if in_block_comment:
                if line.startswith("*/", i):
                    in_block_comment = False
                    i += 1
            elif quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = None
            elif line.startswith("//", i) or c == "#" and i == 0:
                break
            elif line.startswith("/*", i):
                in_block_comment = True
                i += 1
            elif c in "\"'`":
                quote = c
            elif c == "{":
                depth += 1
                opened = True
            elif c == "}":
                depth = max(0, depth - 1)
            i += 1
        if current is not None and depth == 0 and (opened or "}" in line):
            units.append(("def", current, no))
            current = None
    if current is not None:
        units.append(("def", current, len(lines) - 1))
    return units


# Where a top-level part of a configuration file starts: a YAML key or list item at the margin, or
# a document marker; a TOML or INI table header.
_SECTION_START = {
    "yaml": re.compile(r"---(?:\s|$)|- |[^\s#%-][^:]*:(?:\s|$)"),
    "toml": re.compile(r"\[\[?[^\]\n]+\]\]?\s*(?:#.*)?$"),
    "ini": re.compile(r"\[[^\]\n]+\]\s*(?:[#;].*)?$"),
}


def _section_units(lines: list[str], start: re.Pattern) -> list[tuple[str, int, int]]:
    """A configuration file's top-level parts, each from its starting line (``_SECTION_START``) to
    the line before the next one starts (blank lines and comments at the margin at its end are the
    next one's: they introduce it)."""
    firsts = [no for no, line in enumerate(lines) if start.match(line)]
    units = []
    for k, first in enumerate(firsts):
        last = (firsts[k + 1] if k + 1 < len(firsts) else len(lines)) - 1
        while last > first and (not lines[last].strip() or lines[last].startswith(("#", ";"))):
            last -= 1
        units.append(("def", first, last))
    return units


_SQL_DOLLAR = re.compile(r"\$(?:[A-Za-z_]\w*)?\$")


def _sql_units(lines: list[str]) -> list[tuple[str, int, int]]:
    """SQL statements, each from its first line to the one with its closing ``;``: a ``;`` inside a
    string, a quoted name, a comment or a dollar-quoted body (``$$ ... $$``, ``$fn$ ... $fn$``, a
    function's) ends nothing."""
    units: list[tuple[str, int, int]] = []
    start: int | None = None
    quote: str | None = None  # ', ", */ or a dollar tag: what closes the open quote
    for no, line in enumerate(lines):
        i, n = 0, len(line)
        while i < n:
            if quote is not None:
                end = line.find(quote, i)
                if end < 0:
                    break
                i, quote = end + len(quote), None
                continue
            c = line[i]
            if line.startswith("--", i):
                break
            if line.startswith("/*", i):
                quote, i = "*/", i + 2
                continue
            if start is None and c == "\\":  # a psql command (\echo ... \quit): its line
                units.append(("def", no, no))
                break
            if start is None and not c.isspace():
                start = no
            if c in "'\"":
                quote = c
            elif c == "$" and (m := _SQL_DOLLAR.match(line, i)):
                quote, i = m[0], m.end() - 1
            elif c == ";" and start is not None:
                units.append(("def", start, no))
                start = None
            i += 1
    if start is not None:
        units.append(("def", start, len(lines) - 1))
    return units


def _fill_gaps(units, lines: list[str], n_lines: int):
    """All lines covered: definitions (with the comments just above them) and the code between."""
    result = []
    pos = 0
    for kind, first, last in units:
        if first < pos:
            continue
        while first > pos and _COMMENT.match(lines[first - 1]):
            first -= 1
        if first > pos:
            result.extend(_split_runs(pos, first - 1, lines))
        result.append((kind, first, last))
        pos = last + 1
    if pos <= n_lines - 1:
        result.extend(_split_runs(pos, n_lines - 1, lines))
    return result


def _split_runs(first: int, last: int, lines: list[str]):
    """Code between definitions, one block per blank-line-separated run."""
    runs, start = [], None
    for no in range(first, last + 1):
        blank = not lines[no].strip() if no < len(lines) else True
        if not blank and start is None:
            start = no
        elif blank and start is not None:
            runs.append(("code", start, no - 1))
            start = None
    if start is not None:
        runs.append(("code", start, last))
    return runs
