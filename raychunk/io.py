"""Where inputs and outputs live: local paths, globs, and s3:// or gs:// URIs via pyarrow filesystems."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow.fs as pafs

__all__ = ["InputFile", "list_inputs", "readable", "resolve_output"]


@dataclass(frozen=True, slots=True)
class InputFile:
    path: str  # as the filesystem names it (no scheme)
    size: int
    refused: tuple[str, str] | None = None  # (status, reason): listed, but not to be read


def readable(files: list[InputFile]) -> list[InputFile]:
    return [f for f in files if f.refused is None]


def _is_uri(s: str) -> bool:
    return "://" in s and not s.startswith("file://")


def list_inputs(
    inputs: tuple[str, ...] | list[str], *, follow_symlinks: bool = False, max_file_mb: float | None = None
) -> tuple[pafs.FileSystem, str, list[InputFile]]:
    """Every file named by the inputs (folders walked recursively, dotfiles skipped, globs expanded),
    sorted, each once, with its size from the listing. All inputs must share one filesystem.
    Returns ``(filesystem, scheme, files)``; ``scheme`` (e.g. ``s3://``) rebuilds full URIs.

    Some files are listed but ``refused`` (never read): inside a folder, a symlink that leads out of
    it (unless ``follow_symlinks``) or that is broken, and a file over ``max_file_mb``."""
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
            found = _list_local(item, follow_symlinks)
        filesystems.add(type(fs_i).__name__ + scheme_i)
        if len(filesystems) > 1:
            raise ValueError(
                f"inputs mix filesystems ({', '.join(sorted(filesystems))}); run one job per filesystem"
            )
        fs, scheme = fs_i, scheme_i
        files.update(found)
    if not files:
        raise ValueError(f"no input files found in {', '.join(inputs)}")
    listed = []
    for p in sorted(files):
        size, refused = files[p] if isinstance(files[p], tuple) else (files[p], None)
        if refused is None and max_file_mb is not None and size > max_file_mb * 2**20:
            refused = (
                "failed",
                f"file is {size / 2**20:,.1f} MiB, over limits.max_file_mb={max_file_mb:g}: not read",
            )
        listed.append(InputFile(p, size, refused))
    return fs, scheme, listed


def _hidden(rel: str) -> bool:
    return any(part.startswith(".") for part in rel.replace("\\", "/").split("/"))


def _list_local(item: str, follow_symlinks: bool) -> dict[str, int | tuple]:
    p = Path(item).expanduser()
    if p.is_dir():
        return _walk(p.resolve(), follow_symlinks)
    if p.is_file():
        q = p.resolve()
        return {str(q): q.stat().st_size}
    matches = [Path(m).resolve() for m in glob.glob(os.path.expanduser(item), recursive=True)]
    found = {str(q): q.stat().st_size for q in matches if q.is_file()}
    if not found:
        raise FileNotFoundError(f"no such file, folder or glob match: {item}")
    return found


def _walk(root: Path, follow_symlinks: bool) -> dict[str, int | tuple]:
    """A folder's files. A symlink is followed only while it stays inside ``root`` (or with
    ``follow_symlinks``); one that leaves it, or leads nowhere, is listed as refused."""
    found: dict[str, int | tuple] = {}
    seen = {root}
    for folder, dirs, names in os.walk(root, followlinks=follow_symlinks):
        base = Path(folder)
        if base != root and _hidden(str(base.relative_to(root))):
            dirs[:] = []
            continue
        for d in list(dirs):
            q = base / d
            if not q.is_symlink():
                continue
            target = q.resolve()
            if _hidden(d) or target in seen or _inside(target, root):
                dirs.remove(d)  # inside the root it is walked anyway; a loop is walked once
            elif not follow_symlinks:
                found[str(q)] = (0, ("skipped", _outside(q, target, root)))
            seen.add(target)
        for name in names:
            q = base / name
            if _hidden(str(q.relative_to(root))):
                continue
            if q.is_symlink():
                target = q.resolve()
                if not target.is_file():
                    found[str(q)] = (0, ("failed", f"symlink to {target}, which is not a readable file"))
                    continue
                if not follow_symlinks and not _inside(target, root):
                    found[str(q)] = (0, ("skipped", _outside(q, target, root)))
                    continue
            if q.is_file():
                found[str(q)] = q.stat().st_size
    return found


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _outside(link: Path, target: Path, root: Path) -> str:
    return f"symlink to {target}, outside the input folder {root}: not followed (pass --follow-symlinks to read it)"


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
