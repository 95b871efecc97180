"""Where inputs and outputs live: local paths, globs, and s3:// or gs:// URIs via pyarrow filesystems."""

from __future__ import annotations

import glob
import os
import posixpath
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used: the document process never loads pyarrow
    import pyarrow.fs as pafs

__all__ = [
    "InputFile",
    "identity_of",
    "input_root",
    "list_inputs",
    "MARK_TEXT",
    "OUTPUT_MARK",
    "mark_output",
    "open_input",
    "readable",
    "real_name",
    "resolve_output",
    "shown",
]


@dataclass(frozen=True, slots=True)
class InputFile:
    path: str  # the name shown (``shown``), the file's identity in every output; no scheme
    size: int
    refused: tuple[str, str] | None = None  # (status, reason): listed, but not to be read
    raw: bytes | None = None  # the name's bytes, when ``path`` had to escape some of them

    @property
    def real(self) -> str:
        return real_name(self.path, self.raw)


def readable(files: list[InputFile]) -> list[InputFile]:
    return [f for f in files if f.refused is None]


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shown(name: str) -> str:
    r"""``name`` as valid, printable UTF-8: a byte that is not UTF-8 (a surrogate escape, as Python
    lists it) as ``\xNN``, a newline, tab or other control character as ``\n``, ``\t``, ``\xNN``;
    any other name unchanged. Two names that show the same are told apart at listing.

    >>> shown("a\udcffb\nc.txt")
    'a\\xffb\\nc.txt'
    """
    if name.isprintable() and name.isascii():
        return name
    out = []
    for ch in name:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append(f"\\x{o - 0xDC00:02x}")
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif o < 0x20 or o == 0x7F or 0xD800 <= o <= 0xDFFF:
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def raw_of(name: str) -> bytes | None:
    """The bytes of ``name`` when ``shown`` changes it, else None."""
    return None if shown(name) == name else name.encode("utf-8", "surrogateescape")


def real_name(path: str, raw: bytes | None) -> str:
    """The name to open: ``path`` itself, or its bytes decoded as Python names files."""
    return path if raw is None else raw.decode("utf-8", "surrogateescape")


def open_input(fs: pafs.FileSystem, path: str, raw: bytes | None = None):
    """A readable binary stream of the listed file's bytes as stored: a compressed file (``.gz``,
    ``.zst``, ...) is not decompressed here but by the parse, within its limits. A local name that
    is not UTF-8 is opened by Python (pyarrow takes only UTF-8 names); an object key is UTF-8 by
    definition."""
    import pyarrow.fs as pafs

    if raw is not None and isinstance(fs, pafs.LocalFileSystem):
        return open(os.fsdecode(raw), "rb")
    return fs.open_input_stream(real_name(path, raw), compression=None)


def _is_uri(s: str) -> bool:
    return "://" in s and not s.startswith("file://")


def list_inputs(
    inputs: tuple[str, ...] | list[str],
    *,
    follow_symlinks: bool = False,
    max_file_mb: float | None = None,
    outputs: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
) -> tuple[pafs.FileSystem, str, list[InputFile]]:
    """Every file named by the inputs (folders walked recursively, dotfiles skipped, globs expanded),
    sorted, each once, with its size from the listing. All inputs must share one filesystem.
    Returns ``(filesystem, scheme, files)``; ``scheme`` (e.g. ``s3://``) rebuilds full URIs.
    ``outputs``: the job's output folders (paths or URIs: its output, a previous run's), whose files
    (shards, reports, staging) are never inputs, though they may lie inside an input folder.
    ``exclude``: the user's patterns (``Exclusions``); what they name is listed as ``skipped`` rows,
    a folder as one row, and never read.

    Some files are listed but ``refused`` (never read): inside a folder, a symlink that leads out of
    it (unless ``follow_symlinks``) or that is broken, and a file over ``max_file_mb``."""
    if not inputs:
        raise ValueError("no input given: pass --input PATH (a folder, file, glob or s3:// URI)")
    import pyarrow.fs as pafs

    filesystems = set()
    fs: pafs.FileSystem | None = None
    scheme = ""
    files: dict[str, int] = {}
    # A symlink from one input folder into another leads to an input, as one inside its own does.
    folders = tuple(
        Path(i).expanduser().resolve() for i in inputs if not _is_uri(i) and Path(i).expanduser().is_dir()
    )
    for item in inputs:
        if _is_uri(item):
            fs_i, root = pafs.FileSystem.from_uri(item)
            scheme_i = item.split("://", 1)[0] + "://"
            found = _list_fs(fs_i, root, item)
        else:
            fs_i, scheme_i = pafs.LocalFileSystem(), ""
            found = _list_local(item, follow_symlinks, folders)
        filesystems.add(type(fs_i).__name__ + scheme_i)
        if len(filesystems) > 1:
            raise ValueError(
                f"inputs mix filesystems ({', '.join(sorted(filesystems))}); run one job per filesystem"
            )
        fs, scheme = fs_i, scheme_i
        files.update(found)
    for folder in outputs:
        _leave_out(files, fs, folder, [_item_root(item) for item in inputs])
    if exclude:
        Exclusions(exclude).apply(files, [_item_root(item) for item in inputs])
    if not files:
        raise ValueError(f"no input files found in {', '.join(inputs)}")
    if all(map(_is_output_row, files.values())):
        raise ValueError(
            f"no input files found in {', '.join(inputs)}: only raychunk's own output folders "
            f"({', '.join(sorted(map(shown, files)))}), which are never inputs"
        )
    if all(_is_output_row(v) or _is_excluded_row(v) for v in files.values()):
        raise ValueError(
            f"no input files found in {', '.join(inputs)}: --exclude {' '.join(map(repr, exclude))} "
            "leaves none of them"
        )
    listed, seen = [], set()
    for p in sorted(files, key=shown):
        size, refused = files[p] if isinstance(files[p], tuple) else (files[p], None)
        if refused is None and max_file_mb is not None and size > max_file_mb * 2**20:
            refused = (
                "failed",
                f"file is {size / 2**20:,.1f} MiB, over limits.max_file_mb={max_file_mb:g}: not read",
            )
        name, raw = shown(p), raw_of(p)
        if name in seen:  # an escaped name that reads like another file's: told apart by its bytes
            name = f"{name} [name bytes {raw.hex() if raw else p.encode().hex()}]"
            raw = p.encode("utf-8", "surrogateescape")
        seen.add(name)
        listed.append(InputFile(name, size, refused and (refused[0], shown(refused[1])), raw))
    return fs, scheme, listed


OUTPUT_MARK = ".raychunk-output"
MARK_TEXT = "raychunk wrote this folder: its files are never read as inputs by raychunk.\n"
_OUTPUT_ROW = "a raychunk output folder"


def mark_output(fs: pafs.FileSystem, folder: str) -> None:
    """Mark a folder a job writes (``OUTPUT_MARK``), so that a later listing of a folder holding it
    leaves its files out: an index written into the corpus it indexes is not a document."""
    with fs.open_output_stream(f"{folder.rstrip('/')}/{OUTPUT_MARK}") as f:
        f.write(MARK_TEXT.encode())


def _output_row(files: int | None, whose: str = "") -> tuple[int, tuple[str, str]]:
    count = (
        "its files are"
        if files is None
        else f"its {files:,} file is"
        if files == 1
        else f"its {files:,} files are"
    )
    return (0, ("skipped", f"{_OUTPUT_ROW}{whose}: {count} not read as inputs"))


def _is_output_row(value) -> bool:
    return isinstance(value, tuple) and value[1][1].startswith(_OUTPUT_ROW)


def _leave_out(files: dict, fs: pafs.FileSystem, folder: str, input_roots: list[str]) -> None:
    """Drop the listed files inside ``folder`` (a path or URI on ``fs``'s kind of filesystem; none
    when it is on another) and list the folder instead, as one ``skipped`` row; not when an input
    lies in it (``--output .`` over ``--input docs``: the inputs are the inputs)."""
    folder_fs, root = resolve_output(folder)
    if type(folder_fs) is not type(fs):
        return
    prefix = root.rstrip("/") + "/"
    if any(r == root or r.startswith(prefix) for r in input_roots):
        return
    inside = [p for p in files if p == root or p.startswith(prefix)]
    n = sum(not _is_output_row(files[p]) for p in inside)
    if not n:  # nothing there, or the listing found the folder's mark and left it out already
        return
    for p in inside:
        del files[p]
    files[root] = _output_row(n, " (this job's output, or a previous run's)")


_EXCLUDED_ROW = "excluded by --exclude "


def _is_excluded_row(value) -> bool:
    return isinstance(value, tuple) and value[1][1].startswith(_EXCLUDED_ROW)


class Exclusions:
    """The user's ``--exclude`` patterns, read as ``.gitignore`` reads them, against each listed
    path relative to the input folder it was found in (a file given by name: its name):

    - a pattern without a slash names a file or a folder at any depth (``*.css``, ``node_modules``);
    - one with a slash is a path from the input folder (``docs/build``, ``api/**/*.json``; a leading
      slash changes nothing);
    - a trailing slash names folders only (``build/``);
    - ``*`` and ``?`` match within one name, ``**`` across folders, ``[abc]`` one of its characters.

    >>> x = Exclusions(["*.css", "node_modules/", "docs/build/**", "/api/*.json"])
    >>> [x.match(p, False) for p in ("site/a.css", "api/v1.json", "api/v1/x.json", "docs/build/x.md")]
    ['*.css', '/api/*.json', None, 'docs/build/**']
    >>> x.match("web/node_modules", True), x.match("web/node_modules", False)
    ('node_modules/', None)
    """

    def __init__(self, patterns):
        self._rules = []
        for pattern in patterns:
            text = pattern.strip()
            body = text.strip("/")
            if not body:
                raise ValueError(f"--exclude {pattern!r}: an empty pattern names nothing")
            if text.startswith("!"):
                raise ValueError(
                    f"--exclude {pattern!r}: a pattern that includes again ('!') is not supported"
                )
            anchored = "/" in text.rstrip("/")
            self._rules.append((pattern, re.compile(_glob_regex(body)), anchored, text.endswith("/")))

    def match(self, rel: str, is_dir: bool) -> str | None:
        """The first pattern naming ``rel`` (a ``/``-separated relative path), or None."""
        name = rel.rsplit("/", 1)[-1]
        for pattern, rx, anchored, dirs_only in self._rules:
            if (is_dir or not dirs_only) and rx.fullmatch(rel if anchored else name):
                return pattern
        return None

    def apply(self, files: dict, roots: list[str]) -> None:
        """Replace the listed files the patterns name by ``skipped`` rows: a named folder by one row
        (counting its files), a named file by its own."""
        folders: dict[str, tuple[str, int]] = {}
        for path in list(files):
            root = next((r for r in roots if path.startswith(r.rstrip("/") + "/")), None)
            rel = path[len(root.rstrip("/")) + 1 :] if root is not None else posixpath.basename(path)
            parts = rel.replace("\\", "/").split("/")
            hit = None
            for depth in range(1, len(parts)):
                if pattern := self.match("/".join(parts[:depth]), True):
                    folder = path[: len(path) - len("/".join(parts[depth:])) - 1]
                    hit = folder
                    folders[folder] = (pattern, folders.get(folder, (pattern, 0))[1] + 1)
                    break
            if hit is not None:
                del files[path]
            elif pattern := self.match("/".join(parts), False):
                files[path] = (0, ("skipped", f"{_EXCLUDED_ROW}{pattern!r}: not read"))
        for folder, (pattern, n) in folders.items():
            count = f"its {n:,} file is" if n == 1 else f"its {n:,} files are"
            files[folder] = (0, ("skipped", f"{_EXCLUDED_ROW}{pattern!r}: a folder; {count} not read"))


def _glob_regex(glob_: str) -> str:
    out, i = [], 0
    while i < len(glob_):
        if glob_.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob_.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob_[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob_[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob_[i] == "[" and (end := glob_.find("]", i + 2)) > 0:
            inner = glob_[i + 1 : end].replace("\\", "\\\\")
            out.append("[^" + inner[1:] + "]" if inner[0] in "!^" else "[" + inner + "]")
            i = end + 1
        else:
            out.append(re.escape(glob_[i]))
            i += 1
    return "".join(out)


def _item_root(item: str) -> str:
    """Where an input names its files, as the listing's paths are written: a URI's path (bucket
    and key, no scheme or query), a local path resolved (a glob's folder before its first wildcard)."""
    if _is_uri(item):
        return item.split("://", 1)[1].split("?", 1)[0].rstrip("/") or "/"
    parts = Path(os.path.expanduser(item)).parts
    fixed = next((i for i, part in enumerate(parts) if glob.has_magic(part)), len(parts))
    return str(Path(*parts[:fixed]).resolve()) if fixed else os.getcwd()


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.replace("\\", "/").split("/"))


_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _entry(q: Path) -> int | tuple:
    """A listed name's size, or ``(0, (status, reason))`` when it is not a regular file: a FIFO,
    socket or device is refused without being opened (reading one can wait for ever or never end)."""
    try:
        st = q.stat()
    except OSError as e:
        return (0, ("failed", _oneline(f"could not stat the file: {type(e).__name__}: {e.strerror or e}")))
    if stat.S_ISREG(st.st_mode):
        return st.st_size
    kind = next((what for test, what in _SPECIAL if test(st.st_mode)), "not a regular file")
    return (0, ("skipped", f"{kind}, not a regular file: not opened"))


def _oneline(text: str) -> str:
    return " ".join(text.split())


def _list_local(item: str, follow_symlinks: bool, folders: tuple[Path, ...] = ()) -> dict[str, int | tuple]:
    p = Path(item).expanduser()
    if p.is_dir():
        return _walk(p.resolve(), follow_symlinks, folders)
    if p.exists():
        q = p.resolve()
        return {str(q): _entry(q)}
    matches = [Path(m).resolve() for m in glob.glob(os.path.expanduser(item), recursive=True)]
    found = {str(q): _entry(q) for q in matches if q.exists() and not q.is_dir()}
    if not found:
        raise FileNotFoundError(f"no such file, folder or glob match: {item}")
    return found


def _walk(root: Path, follow_symlinks: bool, folders: tuple[Path, ...] = ()) -> dict[str, int | tuple]:
    """A folder's entries. A symlink is followed only while it stays inside ``root`` or another of
    the input ``folders`` (or with ``follow_symlinks``); one that leaves them, or leads nowhere, is
    listed as refused, as is a folder that cannot be listed and an entry that is not a regular file
    (``_entry``)."""
    found: dict[str, int | tuple] = {}
    seen = {root}
    inputs = (root, *folders)

    def unlisted(e: OSError) -> None:
        if e.filename is not None and Path(os.fsdecode(e.filename)) != root:
            reason = _oneline(f"could not list the folder: {type(e).__name__}: {e.strerror or e}")
            found[os.fsdecode(e.filename)] = (0, ("failed", reason))
        elif e.filename is not None:
            raise OSError(f"cannot list the input folder {shown(str(root))}: {e.strerror or e}") from e

    for folder, dirs, names in os.walk(root, onerror=unlisted, followlinks=follow_symlinks):
        base = Path(folder)
        if base != root and _hidden(str(base.relative_to(root))):
            dirs[:] = []
            continue
        if base != root and OUTPUT_MARK in names:
            dirs[:] = []
            found[str(base)] = _output_row(None)
            continue
        for d in list(dirs):
            q = base / d
            if not q.is_symlink():
                continue
            target = _target(q)
            if isinstance(target, str):
                dirs.remove(d)
                found[str(q)] = (0, ("failed", target))
            elif _hidden(d) or target in seen or any(_inside(target, f) for f in inputs):
                dirs.remove(d)  # inside an input folder it is walked anyway; a loop is walked once
            elif not follow_symlinks:
                found[str(q)] = (0, ("skipped", _outside(q, target, root)))
            seen.add(target)
        for name in names:
            q = base / name
            if _hidden(str(q.relative_to(root))):
                continue
            if q.is_symlink():
                target = _target(q)
                if isinstance(target, str):
                    found[str(q)] = (0, ("failed", target))
                    continue
                if not target.is_file():
                    found[str(q)] = (
                        0,
                        ("failed", f"symlink to {shown(str(target))}, which is not a readable file"),
                    )
                    continue
                if not follow_symlinks and not any(_inside(target, f) for f in inputs):
                    found[str(q)] = (0, ("skipped", _outside(q, target, root)))
                    continue
            found[str(q)] = _entry(q)
    return found


def _target(link: Path) -> Path | str:
    """Where a symlink leads, or why it leads nowhere (a loop)."""
    try:
        return link.resolve(strict=False)
    except (RuntimeError, OSError) as e:  # a loop: RuntimeError before Python 3.13
        return _oneline(f"symlink that cannot be resolved: {e}")


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _outside(link: Path, target: Path, root: Path) -> str:
    return (
        f"symlink to {shown(str(target))}, outside the input folder {shown(str(root))}: not followed "
        "(pass --follow-symlinks to read it)"
    )


def _list_fs(fs: pafs.FileSystem, root: str, uri: str) -> dict[str, int]:
    import pyarrow.fs as pafs

    info = fs.get_file_info(root)
    if info.type == pafs.FileType.File:
        return {info.path: info.size}
    if info.type == pafs.FileType.Directory:
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=True))
        found = {
            i.path: i.size
            for i in infos
            if i.type == pafs.FileType.File and not _hidden(i.path[len(root) :].lstrip("/"))
        }
        marked = {
            i.path[: -len(OUTPUT_MARK) - 1]
            for i in infos
            if i.path.endswith("/" + OUTPUT_MARK) and i.path[: -len(OUTPUT_MARK) - 1] != root.rstrip("/")
        }
        for folder in sorted(marked):
            prefix = folder + "/"
            for p in [p for p in found if p.startswith(prefix)]:
                del found[p]
            found[folder] = _output_row(None)
        return found
    raise FileNotFoundError(f"no such object or prefix: {uri}")


def input_root(inputs: tuple[str, ...] | list[str]) -> str:
    """The folder the inputs' documents are named relative to (``identity_of``), as their sources
    show it (a URI keeps its scheme): an input folder; a file's own path; a glob's folder before its
    first wildcard; for several inputs, the deepest folder they share.

    >>> input_root(["s3://bucket/corpus/?endpoint_override=h:1"]), input_root(["/a/b/x", "/a/c/*.md"])
    ('s3://bucket/corpus', '/a')
    """
    scheme, roots = "", []
    for item in inputs:
        if _is_uri(item):
            scheme = item.split("://", 1)[0] + "://"
        roots.append(_item_root(item))
    if not roots:
        return ""
    root = roots[0] if len(roots) == 1 else posixpath.commonpath(roots)
    return shown(scheme + root)


def identity_of(source: str, root: str) -> str:
    """A document's identity: its source relative to ``root`` (``input_root``), so that the same
    tree under another folder, mount point or bucket names its documents alike; the file's name when
    the input is that file; the source itself outside ``root`` (or with no root).

    >>> identity_of("/mnt/new/corpus/a/b.md", "/mnt/new/corpus"), identity_of("s3://b/x/c.md", "s3://b/x/c.md")
    ('a/b.md', 'c.md')
    """
    if not root:
        return source
    if source == root:
        return source.rsplit("/", 1)[-1]
    prefix = root.rstrip("/") + "/"
    return source[len(prefix) :] if source.startswith(prefix) else source


def resolve_output(output: str) -> tuple[pafs.FileSystem, str]:
    """The output folder as ``(filesystem, path)``; local paths are made absolute."""
    import pyarrow.fs as pafs

    if _is_uri(output):
        return pafs.FileSystem.from_uri(output)
    return pafs.LocalFileSystem(), str(Path(output).expanduser().resolve())
