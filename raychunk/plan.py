"""A job's settings, resolved once before its first step.

``resolve_plan(cfg)`` reads the doc types file (once), checks every profile against the embedder's
input limit, and resolves the model name (once) into one frozen ``JobPlan`` that the job and every
step it declares receive. Nothing below reads a settings file or resolves a model name again.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
from dataclasses import dataclass

from raychunk.config import ConfigError, DocTypeConfig, RunConfig, parse_doc_types, read_doc_types
from raychunk.io import input_root
from raychunk.isolate import Limits

__all__ = ["JobPlan", "Model", "resolve_plan"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Model:
    """The embedder: ``name`` as configured (what reports record), ``path`` as resolved once
    (``models.resolve_model``: the packaged folder, a model folder, or a hub name)."""

    name: str
    path: str

    @property
    def local(self) -> str:
        """What a worker loads: the resolved folder, or the name when this node lacks that folder."""
        from pathlib import Path

        return self.path if Path(self.path).is_dir() else self.name

    @functools.cached_property
    def dim(self) -> int:
        from raychunk.embed import embedding_dim

        return embedding_dim(self.local)

    @functools.cached_property
    def version(self) -> str:
        from raychunk.embed import model_version

        return model_version(self.local)


@dataclass(frozen=True)
class JobPlan:
    """Everything a job's steps read of its settings: the ``config``, the ``doc_types`` file's
    profiles, thresholds and overrides (and the hash of its bytes), the embedder ``model``, the
    ``tokenizer`` spec (its name is in every chunk id) and its model folder, and the input ``root``
    that documents are named relative to."""

    config: RunConfig
    doc_types: DocTypeConfig
    doc_types_sha256: str
    model: Model
    tokenizer: str
    tokenizer_dir: str | None
    root: str
    warnings: tuple[str, ...] = ()  # profiles over the input limit that allow it

    @property
    def limits(self) -> Limits:
        return self.config.limits

    @property
    def doc_types_path(self):
        return self.config.chunk.doc_types_path

    def counter(self):
        """The token counter (``tokens.load_counter``: built once per process)."""
        from raychunk.tokens import load_counter

        return load_counter(self.tokenizer, self.tokenizer_dir)


def resolve_plan(cfg: RunConfig) -> JobPlan:
    """The job's plan: the doc types file read and checked, the model name resolved, every doc
    type's caps checked against the embedder's input limit (a cap over it raises ConfigError,
    unless its profile allows it: then a warning is logged)."""
    from pathlib import Path

    from raychunk.chunking import check_profiles
    from raychunk.models import resolve_model

    path = cfg.chunk.doc_types_path
    data = read_doc_types(path)
    doc_types = parse_doc_types(data, path)
    model = Model(cfg.embedder.model, resolve_model(cfg.embedder.model))
    tokenizer = cfg.tokenizer_spec
    if tokenizer == "words" or tokenizer.startswith("tiktoken:"):
        tokenizer_dir = None
    else:
        local = model.path if tokenizer == model.name else resolve_model(tokenizer)
        tokenizer_dir = local if Path(local).is_dir() else None
    plan = JobPlan(
        config=cfg,
        doc_types=doc_types,
        doc_types_sha256=hashlib.sha256(data).hexdigest(),
        model=model,
        tokenizer=tokenizer,
        tokenizer_dir=tokenizer_dir,
        root=input_root(cfg.input),
    )
    try:
        warned = check_profiles(doc_types.profiles, plan.counter())
    except ValueError as e:
        raise ConfigError(f"{path}: {e}") from e
    return dataclasses.replace(plan, warnings=tuple(warned))
