"""The recommendation: the cheapest setting whose score is within noise of the best, and why, in words."""

from __future__ import annotations

from raychunk.render import signed
from raychunk.stats import paired_difference

__all__ = ["recommend"]


def recommend(settings: list[dict], *, metric: str = "recall", rounds: int = 2000, seed: int = 0) -> dict:
    """The cheapest setting (fewest vectors, then least total storage) whose ``metric`` is not worse
    than the best setting's beyond noise. Each setting is ``{"setting", "vectors", "total_bytes",
    "values": [per-question metric]}``, all on the same questions in the same order.

    Noise, by a paired bootstrap over questions: the 95% interval of (candidate - best) reaches 0,
    or the mean gap is at most one question's worth (1/n). A setting may carry ``tokens`` (mean
    tokens read at k) and ``budget_recall`` (recall within ``read_budget`` tokens read): the reason
    then says what the chosen index costs the reader against the best.
    """
    if not settings:
        raise ValueError("no settings to recommend from")
    n = len(settings[0]["values"])
    mean = {s["setting"]: sum(s["values"]) / n if n else 0.0 for s in settings}
    best = max(settings, key=lambda s: (mean[s["setting"]], -s["vectors"], -s["total_bytes"]))
    comparisons = []
    for s in sorted(settings, key=lambda s: (s["vectors"], s["total_bytes"])):
        d = paired_difference(s["values"], best["values"], rounds=rounds, seed=seed)
        gap_questions = -d["mean"] * n
        within = s is best or d["interval"][1] >= 0 or gap_questions <= 1 + 1e-9
        comparisons.append(
            {
                "setting": s["setting"],
                "vectors": s["vectors"],
                "total_bytes": s["total_bytes"],
                metric: mean[s["setting"]],
                "difference": d["mean"],
                "interval": d["interval"],
                "gap_questions": gap_questions,
                "tokens": s.get("tokens"),
                "budget_recall": s.get("budget_recall"),
                "within_noise": within,
            }
        )
    chosen = next(c for c in comparisons if c["within_noise"])
    reason = _reason(chosen, best, mean, comparisons, metric, n)
    if chosen["setting"] != best["setting"]:
        reason += _reading(chosen, best, settings[0].get("read_budget"))
    return {
        "setting": chosen["setting"],
        "best": best["setting"],
        "metric": metric,
        "questions": n,
        "reason": reason,
        "comparisons": comparisons,
    }


def _reading(chosen: dict, best: dict, budget: int | None) -> str:
    """What the chosen index costs the reader, against the best: tokens read at k, and recall within
    the reading budget."""
    parts = []
    tokens, best_tokens = chosen.get("tokens"), best.get("tokens")
    if tokens and best_tokens:
        parts.append(
            f"its top k hand the reader {tokens:.0f} tokens per question against {best_tokens:.0f} for "
            f"{best['setting']}"
        )
    if budget and chosen.get("budget_recall") is not None and best.get("budget_recall") is not None:
        parts.append(
            f"within {budget:,} tokens read it reaches recall {chosen['budget_recall']:.2f} against "
            f"{best['budget_recall']:.2f}"
        )
    if not parts:
        return ""
    heavy = tokens and best_tokens and tokens > 1.25 * best_tokens
    lead = " Mind the reading cost, which the rule does not weigh: " if heavy else " Reading cost: "
    return lead + "; ".join(parts) + "."


def _reason(chosen: dict, best_row: dict, mean: dict, comparisons: list[dict], metric: str, n: int) -> str:
    label = f"{metric}@k"
    best = best_row["setting"]
    if chosen["setting"] == best:
        if comparisons[0]["setting"] == best:
            return f"{best} has the best {label} ({mean[best]:.2f}) and is also the cheapest index: nothing to trade."
        text = (
            f"{best} has the best {label} ({mean[best]:.2f}) and no cheaper setting comes within noise of it"
        )
        worse = [c for c in comparisons if not c["within_noise"]]
        if worse:
            w = worse[0]  # comparisons are in cost order: this is the cheapest
            text += (
                f": the cheapest, {w['setting']} ({w['vectors']:,} vectors), trails by {w['gap_questions']:.1f} "
                f"questions in {n} (paired 95% interval of the difference {signed(w['interval'][0])} to "
                f"{signed(w['interval'][1])}, all below 0): more than noise, so the extra vectors pay"
            )
        return text + "."
    iv = chosen["interval"]
    why = (
        "the paired 95% interval of the difference includes 0"
        if iv[1] >= 0
        else "the gap is within one question's worth"
    )
    gap = chosen["gap_questions"]
    gap_words = (
        "no gap" if abs(gap) < 0.05 else f"a gap of {gap:.1f} question{'s' if abs(gap) != 1 else ''} in {n}"
    )
    text = (
        f"{chosen['setting']} ({chosen['vectors']:,} vectors) scores {label} {chosen[metric]:.2f} against the best, "
        f"{best} ({mean[best]:.2f}): {gap_words} (difference {signed(iv[0])} to {signed(iv[1])}; {why}). "
        f"That is noise: take the cheaper index."
    )
    return text
