"""``scripts/tune.py``: settings as written on its command line, and its embedding cache."""

from pathlib import Path

import numpy as np
import pytest

from raychunk.chunking import Profile
from tests.drivers import load_script

ROOT = Path(__file__).resolve().parent.parent


def _tune():
    return load_script("tune")


def test_a_setting_is_profile_or_a_profile_spelled_out():
    tune = _tune()
    assert tune.parse_setting("profile") is None
    assert tune.parse_setting("fixed:200") == Profile(strategy="fixed", max_tokens=200)
    assert tune.parse_setting("structure:256:min_tokens=100,overlap=0.1,table_max_tokens=128") == Profile(
        max_tokens=256, min_tokens=100, overlap=0.1, table_max_tokens=128
    )
    with pytest.raises(SystemExit, match="expected profile or STRATEGY:MAX_TOKENS"):
        tune.parse_setting("structure")
    with pytest.raises(SystemExit, match="min_tokens must be"):
        tune.parse_setting("structure:64:min_tokens=64")


def test_embeddings_are_cached_by_text_and_equal_the_models(tmp_path):
    tune = _tune()
    texts = [
        "Cedar: I hear you well.",
        "OTEL_BSP_SCHEDULE_DELAY | Delay interval | 5000",
        "Cedar: I hear you well.",
    ]
    first = tune.Embedder(tmp_path / "e.sqlite")
    v = first(texts)
    assert first.embedded == 2  # the repeated text once
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    direct = first.model.encode(texts[:2], convert_to_numpy=True, normalize_embeddings=True)
    assert np.allclose(v[:2], direct, atol=1e-5) and np.array_equal(v[0], v[2])
    again = tune.Embedder(tmp_path / "e.sqlite")
    assert np.array_equal(again(texts[::-1]), v[::-1])
    assert again.embedded == 0 and again.model is None  # all from the cache: the model never loaded
