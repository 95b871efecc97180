"""The bootstrap, once: resampled indices and percentile intervals.

The eval resamples questions (``resample_indices``); the price estimate weights documents with
Poisson(1) draws, summed per block on the workers (``pricing.poisson_weights``). Both read the
interval off ``percentile_interval``. Deterministic for a seed.
Pure Python and numpy.
"""

from __future__ import annotations

__all__ = ["bootstrap_interval", "paired_difference", "percentile_interval", "resample_indices"]


def resample_indices(n: int, rounds: int, seed: int):
    """A ``(rounds, n)`` array of indices drawn with replacement from ``range(n)``. The same for the
    same arguments, so statistics computed on the same draws are paired."""
    import numpy as np

    return np.random.default_rng(seed).integers(0, n, size=(rounds, n))


def percentile_interval(values, confidence: float = 0.95) -> list[float]:
    """The central ``confidence`` interval of ``values`` (linearly interpolated quantiles).

    >>> percentile_interval([0, 10], 0.5)
    [2.5, 7.5]
    """
    import numpy as np

    a = (1 - confidence) / 2
    return [float(np.quantile(values, a)), float(np.quantile(values, 1 - a))]


def bootstrap_interval(values, *, rounds: int = 2000, seed: int = 0, confidence: float = 0.95) -> list[float]:
    """Percentile interval of the mean over ``rounds`` resamples of ``values``.

    >>> bootstrap_interval([1, 1, 1, 1])
    [1.0, 1.0]
    """
    import numpy as np

    v = np.asarray(values, dtype=float)
    if len(v) == 0:
        return [0.0, 0.0]
    means = v[resample_indices(len(v), rounds, seed)].mean(axis=1)
    return percentile_interval(means, confidence)


def paired_difference(a, b, *, rounds: int = 2000, seed: int = 0, confidence: float = 0.95) -> dict:
    """Mean of ``a - b`` per item, with its paired bootstrap interval (both resampled on the same items)."""
    import numpy as np

    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    lo, hi = bootstrap_interval(d, rounds=rounds, seed=seed, confidence=confidence)
    return {"mean": float(d.mean()) if len(d) else 0.0, "interval": [lo, hi]}
