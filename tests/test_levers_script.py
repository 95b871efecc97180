"""``scripts/levers.py --pieces``: what the embedder reads of each setting's embedded texts, on the
samples set (no embedding)."""

import re
from pathlib import Path

from tests.drivers import load_script

ROOT = Path(__file__).resolve().parent.parent


def test_pieces_counts_what_minilm_cuts_off(tmp_path, capsys):
    levers = load_script("levers")
    argv = ["--pieces", "--queries", str(ROOT / "evals/samples.jsonl"), "--corpus", str(ROOT / "samples")]
    argv += ["--cache", str(tmp_path / "cache"), "--setting", "profile", "--setting", "fixed:400"]
    assert levers.main(argv) == 0
    out = capsys.readouterr().out
    assert "all-MiniLM-L6-v2: reads 254 word pieces of a text" in out
    rows = {
        m.group(1): (int(m.group(2).replace(",", "")), int(m.group(3)), int(m.group(4).replace(",", "")))
        for m in re.finditer(r"^  (\S+)\s+([\d,]+) texts, .* max (\d+); over 254: ([\d,]+)", out, re.M)
    }
    texts, longest, over = rows["profile"]
    # The default sizes its chunks in MiniLM's own word pieces, header line included: nothing cut.
    assert texts > 0 and longest <= 254 and over == 0
    texts, longest, over = rows["fixed:400"]
    # Windows of 400 pass what the embedder reads; their cut tails are counted.
    assert longest > 254 and over > 0
    cut = re.search(
        r"^  fixed:400 .*over 254: [\d,]+ \([\d.]+%\), ([\d,]+) of ([\d,]+) pieces cut", out, re.M
    )
    assert 0 < int(cut.group(1).replace(",", "")) < int(cut.group(2).replace(",", ""))
