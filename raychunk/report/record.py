"""What the typed report records share: ``as_json``, a record as its ``report.json`` holds it."""

from __future__ import annotations

import dataclasses

__all__ = ["OMIT_NONE", "as_json"]

OMIT_NONE = {"omit_none": True}  # a field's metadata: report.json leaves it out when it is None


def as_json(value):
    """A record as JSON values: its fields in order (those marked ``OMIT_NONE`` left out when None),
    records as objects (a record with its own ``to_dict`` as that says), tuples as lists."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if dataclasses.is_dataclass(value):
        return {
            f.name: as_json(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not (f.metadata.get("omit_none") and getattr(value, f.name) is None)
        }
    if isinstance(value, (tuple, list)):
        return [as_json(v) for v in value]
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    return value
