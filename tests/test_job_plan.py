"""A job's settings are resolved once (``raychunk.plan.JobPlan``): one ``raychunk run``, as a user
types it, reads its doc-types file once and resolves its model name once, in the driver, and no
step below reads a settings file again."""

import builtins
import io
import shutil
from pathlib import Path

import pyarrow.parquet as pq

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
DOC_TYPES = Path(__file__).resolve().parent.parent / "configs" / "doc_types.yaml"


def _count_opens(monkeypatch, path: Path) -> list:
    """Every open of ``path`` in this process (``Path.read_text`` / ``read_bytes`` open through
    ``io.open``; ``open()`` is ``builtins.open``)."""
    opened = []
    real = io.open

    def counting(file, *args, **kwargs):
        if isinstance(file, (str, Path)) and Path(file).resolve() == path.resolve():
            opened.append(str(file))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(io, "open", counting)
    monkeypatch.setattr(builtins, "open", counting)
    return opened


def _count_resolutions(monkeypatch) -> list:
    """Every call of ``models.resolve_model``, under each name a module imported it by."""
    import sys

    from raychunk import models

    calls = []
    real = models.resolve_model

    def counting(name):
        calls.append(name)
        return real(name)

    for module in list(sys.modules.values()):
        if (
            getattr(module, "__name__", "").startswith("raychunk")
            and getattr(module, "resolve_model", None) is real
        ):
            monkeypatch.setattr(module, "resolve_model", counting)
    return calls


def test_one_run_reads_the_doc_types_once_and_resolves_the_model_once(tmp_path, monkeypatch, fresh_ray):
    import raychunk.embed  # noqa: F401  (imported before counting, as the CLI's run imports it)
    import raychunk.jobs.run  # noqa: F401
    import raychunk.tokens  # noqa: F401
    from raychunk.cli import main

    doc_types = tmp_path / "types.yaml"
    shutil.copy(DOC_TYPES, doc_types)
    opened = _count_opens(monkeypatch, doc_types)
    resolved = _count_resolutions(monkeypatch)
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--input",
            str(SAMPLES),
            "--output",
            str(out),
            "--doc-types",
            str(doc_types),
            "--num-cpus",
            "2",
        ]
    )
    monkeypatch.undo()
    print(f"doc-types file opened {len(opened)} times, model name resolved {len(resolved)} times")
    assert code == 0
    docs = pq.read_table(out / "documents")
    assert docs.num_rows == len([p for p in SAMPLES.iterdir() if p.is_file()])
    assert pq.read_table(out / "chunks").column("embedding").null_count == 0
    assert len(opened) == 1, opened
    assert len(resolved) == 1, resolved
