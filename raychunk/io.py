"""Where inputs and outputs live: local paths, globs, and s3:// or gs:// URIs via pyarrow filesystems."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow.fs as pafs

__all__ = ["InputFile", "list_inputs", "resolve_output"]


@dataclass(frozen=True, slots=True)
class InputFile:
    path: str  # as the filesystem names it (no scheme)
    size: int


def _is_uri(s: str) -> bool:
    return "://" in s and not s.startswith("file://")


def list_inputs(inputs: tuple[str, ...] | list[str]) -> tuple[pafs.FileSystem, str, list[InputFile]]:
    """Every file named by the inputs (folders walked recursively, dotfiles skipped, globs expanded),
    sorted, each once, with its size from the listing. All inputs must share one filesystem.
    Returns ``(filesystem, scheme, files)``; ``scheme`` (e.g. ``s3://``) rebuilds full URIs."""
    if not inputs:
        raise ValueError("no input given: pass --input PATH (a folder, file, glob or s3:// URI)")
    filesystems = set()
    fs: pafs.FileSystem | None = None
    scheme = ""
    files: dict[str, int] = {}
    for item in inputs:
        if _is_uri(item):
            fs_i, root = pafs.FileSystem.from_uri(item)
            scheme_i = item.split("://", 1)[0] + "://"
            found = _list_fs(fs_i, root, item)
        else:
            fs_i, scheme_i = pafs.LocalFileSystem(), ""
            found = _list_local(item)
        filesystems.add(type(fs_i).__name__ + scheme_i)
        if len(filesystems) > 1:
            raise ValueError(
                f"inputs mix filesystems ({', '.join(sorted(filesystems))}); run one job per filesystem"
            )
        fs, scheme = fs_i, scheme_i
        files.update(found)
    if not files:
        raise ValueError(f"no input files found in {', '.join(inputs)}")
    return fs, scheme, [InputFile(p, files[p]) for p in sorted(files)]


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.replace("\\", "/").split("/"))


def _list_local(item: str) -> dict[str, int]:
    p = Path(item).expanduser()
    if p.is_dir():
        root = p.resolve()
        return {
            str(q): q.stat().st_size
            for q in root.rglob("*")
            if q.is_file() and not _hidden(str(q.relative_to(root)))
        }
    if p.is_file():
        q = p.resolve()
        return {str(q): q.stat().st_size}
    matches = [Path(m).resolve() for m in glob.glob(os.path.expanduser(item), recursive=True)]
    found = {str(q): q.stat().st_size for q in matches if q.is_file()}
    if not found:
        raise FileNotFoundError(f"no such file, folder or glob match: {item}")
    return found


def _list_fs(fs: pafs.FileSystem, root: str, uri: str) -> dict[str, int]:
    info = fs.get_file_info(root)
    if info.type == pafs.FileType.File:
        return {info.path: info.size}
    if info.type == pafs.FileType.Directory:
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=True))
        return {
            i.path: i.size
            for i in infos
            if i.type == pafs.FileType.File and not _hidden(i.path[len(root) :].lstrip("/"))
        }
    raise FileNotFoundError(f"no such object or prefix: {uri}")


def resolve_output(output: str) -> tuple[pafs.FileSystem, str]:
    """The output folder as ``(filesystem, path)``; local paths are made absolute."""
    if _is_uri(output):
        return pafs.FileSystem.from_uri(output)
    return pafs.LocalFileSystem(), str(Path(output).expanduser().resolve())
