"""``scripts/ceiling.py``: the two upper bounds on hit@k that chunking alone can reach, on the samples set."""

import re
from pathlib import Path

from tests.drivers import load_script

ROOT = Path(__file__).resolve().parent.parent


def test_holds_is_the_metrics_ninety_percent_span_rule():
    ceiling = load_script("ceiling")

    class C:
        source, char_start, char_end = "a.md", 100, 200

    assert ceiling.holds(C, "a.md", 110, 190)
    assert ceiling.holds(C, "a.md", 91, 191)  # 90 of 100 characters covered
    assert not ceiling.holds(C, "a.md", 89, 189)  # 89 of 100
    assert not ceiling.holds(C, "b.md", 110, 190)


def test_bounds_on_the_samples_set(tmp_path, capsys):
    ceiling = load_script("ceiling")
    settings = ["fixed:64", "structure:128", "fixed:200"]
    argv = ["--queries", str(ROOT / "evals/samples.jsonl"), "--corpus", str(ROOT / "samples")]
    argv += ["--cache", str(tmp_path / "cache"), "--k", "1"]
    assert ceiling.main(argv + [a for s in settings for a in ("--setting", s)]) == 0
    out = capsys.readouterr().out
    singles = {
        s: float(re.search(rf"^{re.escape(s)}\s+\d+\s+([\d.]+)", out, re.M).group(1)) for s in settings
    }
    best = max(singles.values())
    m = re.search(r"all\s+best single setting ([\d.]+) \((\S+)\); best of 3 per question ([\d.]+)", out)
    assert float(m.group(1)) == best and singles[m.group(2)] == best
    # At top 1 the settings find different questions: picking per question beats every single one.
    assert float(m.group(3)) > best
    o = re.search(r"all\s+oracle ([\d.]+); \S+ ([\d.]+); either ([\d.]+)", out)
    oracle, single, either = map(float, o.groups())
    assert single == best and either >= max(oracle, single) and 0 < oracle <= 1
