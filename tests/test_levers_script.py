"""``scripts/levers.py --pieces``: what the embedder reads of each setting's embedded texts, on the
samples set (no embedding); ``--crowding``'s counts of what holds a miss's top k."""

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


def test_crowding_sorts_a_misses_top_k_by_its_kin_to_the_answer():
    """``--crowding``'s counts on chunks of two documents: a miss whose top 5 is its own section's
    siblings is listed as crowded; one whose top 5 is other documents' chunks is not; a hit's own
    answer is left out of its counts."""
    from raychunk.chunking import Profile, chunk_document
    from raychunk.parse import parse_document
    from raychunk.tokens import load_counter

    levers = load_script("levers")
    counter = load_counter("all-MiniLM-L6-v2")
    long_section = "# Guide\n\n## Setup\n\n" + "\n\n".join(
        f"Step {i}: set the option number {i} to its value and restart the service." * 3 for i in range(12)
    )
    other = "# Other\n\n" + "\n\n".join(
        f"Unrelated paragraph {i} about apples and pears." * 6 for i in range(10)
    )
    chunks = []
    for name, text in (("guide.md", long_section), ("other.md", other)):
        parsed = parse_document(text.encode(), name)
        chunks += chunk_document(parsed, Profile(strategy="structure", max_tokens=64), counter)
    guide = [i for i, c in enumerate(chunks) if c.source == "guide.md"]
    others = [i for i, c in enumerate(chunks) if c.source == "other.md"]
    assert len(guide) >= 7 and len(others) >= 5
    # The same heading path and header line for every chunk of the long section.
    assert len({chunks[i].heading_path for i in guide}) == 1
    ranked = [
        guide[:6] + others,  # the answer at rank 6 behind five of its siblings
        others[:5] + [guide[0]],  # the answer at rank 6 behind five chunks of another document
        [guide[1], guide[0], *others],  # a hit at rank 1
        others,  # no chunk holds the passage
    ]
    per, n, crowded = levers.crowding(chunks, ranked, [6, 6, 1, None], 5)
    assert n == {"miss": 2, "hit": 1}
    assert per["miss"] == {"section": 5, "header": 0, "document": 0, "other": 5}
    assert per["hit"] == {"section": 1, "header": 0, "document": 0, "other": 3}
    assert crowded == [(0, 6, {"section": 5, "header": 0, "document": 0, "other": 0})]
