"""Typed configuration, loaded from ``configs/*.yaml`` and checked on construction.

YAML holds values; these dataclasses hold structure. An unknown key or a bad value fails at start
with a message that names the key and what is accepted.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from raychunk.parse import ParseOptions

__all__ = ["ConfigError", "DEFAULT_CONFIG", "load_config", "parse_options_from"]

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "configs" / "default.yaml"


class ConfigError(ValueError):
    pass


def load_config(path: str | Path | None = None) -> dict[str, Any]:
    """The YAML config as a dict (the packaged default when ``path`` is None or missing)."""
    import yaml

    path = Path(path) if path else DEFAULT_CONFIG
    if not path.exists():
        if path == DEFAULT_CONFIG:
            return {}
        raise ConfigError(f"config file not found: {path}")
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def parse_options_from(section: dict[str, Any] | None, **overrides: Any) -> ParseOptions:
    """ParseOptions from the ``parse:`` section, with CLI overrides (None means 'not given')."""
    values = dict(section or {})
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
    """Read and check ``doc_types.yaml``: every type known, every profile valid, every threshold given."""
    import yaml

    from raychunk.chunking.model import Profile
    from raychunk.classify import DOC_TYPES

    path = Path(path) if path else DEFAULT_DOC_TYPES
    if not path.exists():
        raise ConfigError(f"doc types file not found: {path}")
    data = yaml.safe_load(path.read_text()) or {}
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
