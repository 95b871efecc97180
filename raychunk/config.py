"""Typed configuration, loaded from ``configs/*.yaml`` and checked on construction.

YAML holds values; these dataclasses hold structure. An unknown key or a bad value fails at start
with a message that names the key and what is accepted.
"""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from typing import Any

from raychunk.isolate import Limits
from raychunk.parse import ParseOptions

__all__ = [
    "ConfigError",
    "DEFAULT_CONFIG",
    "SAMPLE_CORPUS",
    "RunConfig",
    "build_run_config",
    "load_config",
    "load_doc_types",
    "parse_doc_types",
    "read_doc_types",
    "parse_options_from",
    "parse_set_flags",
]


def _configs_dir() -> Path:
    """The default configs: ``raychunk.configs`` when installed (a wheel, or an editable checkout),
    else ``configs/`` beside the package, for a source tree on sys.path (``ray job submit --working-dir``)."""
    import importlib.util

    spec = importlib.util.find_spec("raychunk.configs")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(__file__).resolve().parent.parent / "configs"


DEFAULT_CONFIG = _configs_dir() / "default.yaml"
SAMPLE_CORPUS = Path(__file__).resolve().parent.parent / "samples"


class ConfigError(ValueError):
    pass


def load_config(path: str | Path | None = None) -> dict[str, Any]:
    """The YAML config as a dict (the packaged default when ``path`` is None or missing)."""
    import yaml

    path = Path(path) if path else DEFAULT_CONFIG
    if not path.exists():
        raise ConfigError(f"config file not found: {path}")
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def parse_options_from(section: dict[str, Any] | None, **overrides: Any) -> ParseOptions:
    """ParseOptions from the ``parse:`` section, with CLI overrides (None means 'not given')."""
    values = _drop_removed("parse", dict(section or {}))
    values.update({k: v for k, v in overrides.items() if v is not None})
    known = {f.name for f in dataclasses.fields(ParseOptions)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ConfigError(f"unknown key parse.{unknown[0]}: accepted keys are {', '.join(sorted(known))}")
    try:
        return ParseOptions(**values)
    except (TypeError, ValueError) as e:
        raise ConfigError(f"parse: {e}") from e


DEFAULT_DOC_TYPES = DEFAULT_CONFIG.parent / "doc_types.yaml"


@dataclasses.dataclass(frozen=True)
class DocTypeConfig:
    """Per-type chunk profiles, classification thresholds, and forced types by path glob."""

    profiles: dict
    thresholds: dict
    overrides: tuple = ()


_THRESHOLDS = (
    "faq_min_pairs",
    "faq_share",
    "transcript_min_turns",
    "transcript_share",
    "records_share",
    "reference_table_share",
    "manual_min_headings",
    "manual_heading_density",
    "manual_procedure_share",
    "slides_max_words_per_page",
)


def load_doc_types(path: str | Path | None = None) -> DocTypeConfig:
    """Read and check ``doc_types.yaml``: every type known, every profile valid, every threshold given.
    A job reads it once, in ``plan.resolve_plan``; this is for the tools that chunk without a job."""
    return parse_doc_types(read_doc_types(path), path)


def read_doc_types(path: str | Path | None = None) -> bytes:
    """The bytes of the doc types file (``configs/doc_types.yaml`` when ``path`` is None)."""
    path = Path(path) if path else DEFAULT_DOC_TYPES
    if not path.exists():
        raise ConfigError(f"doc types file not found: {path}")
    return path.read_bytes()


def parse_doc_types(data: bytes, path: str | Path | None = None) -> DocTypeConfig:
    """The doc types file's bytes (``read_doc_types``), checked: every type known, every profile
    valid, every threshold given. ``path`` names the file in errors."""
    import yaml

    from raychunk.chunking.model import Profile
    from raychunk.classify import DOC_TYPES

    path = Path(path) if path else DEFAULT_DOC_TYPES
    data = yaml.safe_load(data.decode("utf-8")) or {}
    unknown = sorted(set(data) - {"types", "thresholds", "overrides"})
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r}: accepted keys are types, thresholds, overrides"
        )
    types = data.get("types") or {}
    missing = [t for t in DOC_TYPES if t not in types]
    if missing:
        raise ConfigError(
            f"{path}: types.{missing[0]} is missing: every type needs a profile ({', '.join(DOC_TYPES)})"
        )
    profiles = {}
    fields = {f.name for f in dataclasses.fields(Profile)}
    for name, spec in types.items():
        if name not in DOC_TYPES:
            raise ConfigError(f"{path}: unknown type types.{name}: accepted types are {', '.join(DOC_TYPES)}")
        bad = sorted(set(spec or {}) - fields)
        if bad:
            raise ConfigError(
                f"{path}: unknown key types.{name}.{bad[0]}: accepted keys are {', '.join(sorted(fields))}"
            )
        try:
            profiles[name] = Profile(**(spec or {}))
        except ValueError as e:
            raise ConfigError(f"{path}: types.{name}: {e}") from e
    thresholds = data.get("thresholds") or {}
    for key in thresholds:
        if key not in _THRESHOLDS:
            raise ConfigError(
                f"{path}: unknown key thresholds.{key}: accepted keys are {', '.join(_THRESHOLDS)}"
            )
    for key in _THRESHOLDS:
        if not isinstance(thresholds.get(key), (int, float)):
            raise ConfigError(f"{path}: thresholds.{key} must be a number, got {thresholds.get(key)!r}")
    overrides = []
    for i, rule in enumerate(data.get("overrides") or []):
        if not isinstance(rule, dict) or set(rule) != {"glob", "type"} or rule["type"] not in DOC_TYPES:
            raise ConfigError(
                f"{path}: overrides[{i}] must be {{glob: PATTERN, type: TYPE}} with TYPE one of "
                f"{', '.join(DOC_TYPES)}, got {rule!r}"
            )
        overrides.append(dict(rule))
    return DocTypeConfig(profiles, dict(thresholds), tuple(overrides))


# -- the run configuration ---------------------------------------------------------------------


def _check_choice(key: str, value, accepted: tuple) -> None:
    if value not in accepted:
        raise ConfigError(f"{key}={value!r}: accepted values are {', '.join(map(str, accepted))}")


def _check_positive(key: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{key} must be a number > 0, got {value!r}")


@dataclasses.dataclass(frozen=True)
class EmbedderConfig:
    """``model``: all-MiniLM-L6-v2 (packaged, offline), a sentence-transformers name, or a model folder.
    ``device``: auto picks CUDA when the actor got a GPU; fp16 on CUDA.
    ``backend``: torch, or onnxruntime on CPU (``onnx`` fp32, ``onnx-int8`` quantized: faster, and
    its vectors differ slightly from torch's; see the README for its measured retrieval)."""

    enabled: bool = True
    model: str = "all-MiniLM-L6-v2"
    batch_size: int | str = "auto"  # texts per forward pass; auto: 8 on CPU, 64 on CUDA (embed.forward_batch)
    device: str = "auto"
    normalize: bool = True
    backend: str = "torch"

    def __post_init__(self):
        _check_choice("embedder.device", self.device, ("auto", "cpu", "cuda"))
        _check_choice("embedder.backend", self.backend, ("torch", "onnx", "onnx-int8"))
        if self.backend != "torch" and self.device == "cuda":
            raise ConfigError(
                f"embedder.backend={self.backend} runs on CPU; use backend torch with device cuda"
            )
        if self.batch_size != "auto":
            _check_positive("embedder.batch_size", self.batch_size)


@dataclasses.dataclass(frozen=True)
class ResourcesConfig:
    """``auto`` values are derived from what the cluster has when the job starts."""

    num_cpus: int | None = None  # local Ray only; ignored when joining a cluster
    num_gpus: int | None = None  # local Ray only: advertise GPUs (a fake one works for testing)
    embed_actors: int | str = "auto"
    embed_actors_max: int | str = "auto"
    gpus_per_embed_actor: float | str = "auto"
    cpus_per_embed_actor: float = 1.0
    cpus_per_task: float = 1.0
    files_per_block: int = 1024

    def __post_init__(self):
        if self.embed_actors != "auto":
            _check_positive("resources.embed_actors", self.embed_actors)
        if self.embed_actors_max != "auto":
            _check_positive("resources.embed_actors_max", self.embed_actors_max)
        if self.gpus_per_embed_actor != "auto" and not (
            isinstance(self.gpus_per_embed_actor, (int, float)) and self.gpus_per_embed_actor >= 0
        ):
            raise ConfigError(
                f"resources.gpus_per_embed_actor must be auto or a number >= 0, "
                f"got {self.gpus_per_embed_actor!r}"
            )
        _check_positive("resources.cpus_per_embed_actor", self.cpus_per_embed_actor)
        _check_positive("resources.cpus_per_task", self.cpus_per_task)
        _check_positive("resources.files_per_block", self.files_per_block)


@dataclasses.dataclass(frozen=True)
class OutputConfig:
    rows_per_shard: int = 20000
    compression: str = "zstd"
    overwrite: bool = False
    resume: bool = False  # continue the interrupted run staged in the output folder

    def __post_init__(self):
        _check_positive("output.rows_per_shard", self.rows_per_shard)
        _check_choice("output.compression", self.compression, ("zstd", "snappy", "gzip", "none"))


@dataclasses.dataclass(frozen=True)
class IncrementalConfig:
    previous: str = ""  # an earlier run's output (folder or URI): reuse its unchanged documents and vectors
    force_reuse: bool = False  # reuse vectors even though the chunk settings changed (never the vector ones)


@dataclasses.dataclass(frozen=True)
class ChunkConfig:
    doc_types: str = ""  # empty: configs/doc_types.yaml
    tokenizer: str = "embedder"  # the embedder's own tokenizer, tiktoken:cl100k_base, or words

    @property
    def doc_types_path(self) -> Path:
        return Path(self.doc_types) if self.doc_types else DEFAULT_DOC_TYPES


@dataclasses.dataclass(frozen=True)
class RunConfig:
    input: tuple = ()
    exclude: tuple = ()  # patterns of files and folders under the inputs not to read (io.Exclusions)
    output: str = "out/run"
    embedder: EmbedderConfig = EmbedderConfig()
    resources: ResourcesConfig = ResourcesConfig()
    output_files: OutputConfig = OutputConfig()
    parse: ParseOptions = ParseOptions()
    chunk: ChunkConfig = ChunkConfig()
    limits: Limits = Limits()
    incremental: IncrementalConfig = IncrementalConfig()

    @property
    def tokenizer_spec(self) -> str:
        return self.embedder.model if self.chunk.tokenizer == "embedder" else self.chunk.tokenizer


_SECTIONS = {
    "embedder": EmbedderConfig,
    "resources": ResourcesConfig,
    "output_files": OutputConfig,
    "parse": ParseOptions,
    "chunk": ChunkConfig,
    "limits": Limits,
    "incremental": IncrementalConfig,
}
# Keys that moved, with where they live now.
_MOVED = {"parse.timeout_s": "limits.doc_timeout_s"}
# keys that no longer do anything: a config that still sets them loads, with a warning naming them
_BY_COUNTS = "the PDF table search is bounded by counts of pages, lines and words, not by time"
_REMOVED = {"parse.table_page_timeout_s": _BY_COUNTS, "parse.table_doc_budget_s": _BY_COUNTS}


class RemovedConfigKeyWarning(FutureWarning):
    """A config sets a key that was removed; it is ignored."""


def _drop_removed(name: str, section: dict[str, Any]) -> dict[str, Any]:
    """``section`` without the removed keys it sets, warning once per key."""
    for key in sorted(section):
        why = _REMOVED.get(f"{name}.{key}")
        if why is not None:
            del section[key]
            warnings.warn(
                f"config key {name}.{key} is no longer used and is ignored ({why}); remove it from your config",
                RemovedConfigKeyWarning,
                stacklevel=3,
            )
    return section


def _coerce(key: str, text: str):
    """A ``--set`` value: YAML scalars, so 64 is an int, true a bool, null None."""
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"--set {key}={text}: not a YAML value ({e})") from e


def build_run_config(data: dict[str, Any], overrides: dict[str, Any] | None = None) -> RunConfig:
    """A RunConfig from the YAML mapping plus dotted overrides (``embedder.batch_size``: 128).
    Unknown keys and bad values raise ConfigError naming the key and the accepted values."""
    data = {k: (dict(v) if isinstance(v, dict) else v) for k, v in (data or {}).items()}
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        head, _, leaf = key.partition(".")
        if leaf:
            if head not in _SECTIONS:
                raise ConfigError(f"unknown key {key}: accepted sections are {', '.join(_SECTIONS)}")
            data.setdefault(head, {})
            if not isinstance(data[head], dict):
                raise ConfigError(f"{head} must be a mapping")
            data[head][leaf] = value
        else:
            data[head] = value
    top = {"input", "exclude", "output", *_SECTIONS}
    unknown = sorted(set(data) - top)
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]}: accepted keys are {', '.join(sorted(top))}")
    kwargs: dict[str, Any] = {}
    for name, cls in _SECTIONS.items():
        section = data.get(name) or {}
        if not isinstance(section, dict):
            raise ConfigError(f"{name} must be a mapping of settings, got {section!r}")
        known = {f.name for f in dataclasses.fields(cls)}
        section = _drop_removed(name, dict(section))
        for key in section:
            if f"{name}.{key}" in _MOVED:
                raise ConfigError(
                    f"{name}.{key} is now {_MOVED[f'{name}.{key}']}: rename it in your config or --set"
                )
        bad = sorted(set(section) - known)
        if bad:
            raise ConfigError(f"unknown key {name}.{bad[0]}: accepted keys are {', '.join(sorted(known))}")
        try:
            kwargs[name] = cls(**section)
        except ConfigError:
            raise
        except (TypeError, ValueError) as e:
            raise ConfigError(f"{name}: {e}") from e
    inputs = data.get("input") or ()
    if isinstance(inputs, str):
        inputs = (inputs,)
    if not isinstance(inputs, (list, tuple)) or not all(isinstance(x, str) for x in inputs):
        raise ConfigError(f"input must be a path, URI or glob, or a list of them; got {inputs!r}")
    exclude = data.get("exclude") or ()
    if isinstance(exclude, str):
        exclude = (exclude,)
    if not isinstance(exclude, (list, tuple)) or not all(
        isinstance(x, str) and x.strip("/ ") for x in exclude
    ):
        raise ConfigError(f"exclude must be a glob pattern, or a list of them; got {exclude!r}")
    output = data.get("output", RunConfig.output)
    if not isinstance(output, str) or not output:
        raise ConfigError(f"output must be a folder path or URI, got {output!r}")
    # The zip cap is a limit, applied where packages are opened.
    kwargs["parse"] = dataclasses.replace(kwargs["parse"], max_unzipped_mb=kwargs["limits"].max_unzipped_mb)
    return RunConfig(input=tuple(inputs), exclude=tuple(exclude), output=output, **kwargs)


def parse_set_flags(pairs: list[str] | None) -> dict[str, Any]:
    """``--set key=value`` flags as dotted overrides."""
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {pair!r}: expected KEY=VALUE, e.g. --set embedder.batch_size=128")
        out[key.strip()] = _coerce(key, value)
    return out
