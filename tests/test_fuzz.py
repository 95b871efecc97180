"""One bad document never costs the run: a few hundred mutants of every sample file, one real job.

The mutants come from ``scripts/fuzz.py`` (bit flips, truncations, splices across formats, duplicated
and shuffled ranges, damaged zip parts, wrong extensions), deterministic for a seed. A failure names
each mutant and how it was made; ``python scripts/fuzz.py --seed SEED --only INDEX --keep DIR``
writes it out. ``RAYCHUNK_FUZZ_SEED`` / ``RAYCHUNK_FUZZ_MUTANTS`` fuzz other seeds or more mutants.
"""

from __future__ import annotations

import collections
import importlib.util
import os
import random
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
SEED = int(os.environ.get("RAYCHUNK_FUZZ_SEED", "20251201"))
MUTANTS = int(os.environ.get("RAYCHUNK_FUZZ_MUTANTS", "252"))  # 21 of each of the 12 sample files


def _load_fuzz():
    spec = importlib.util.spec_from_file_location("raychunk_fuzz_script", ROOT / "scripts" / "fuzz.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


fuzz = _load_fuzz()


@pytest.fixture(scope="module")
def corpus():
    return fuzz.load_corpus(SAMPLES)


def test_mutants_are_deterministic_for_a_seed_and_differ_between_seeds(corpus):
    first = fuzz.make_batch(corpus, 7, 60)
    assert fuzz.make_batch(corpus, 7, 60) == first
    assert fuzz.make_mutant(corpus, 7, 41) == first[41]  # one mutant rebuilt alone, as --only does
    other = fuzz.make_batch(corpus, 8, 60)
    assert sum(a.data != b.data or a.name != b.name for a, b in zip(first, other)) > 50
    assert len({m.name for m in first}) == 60
    for m in first:
        source = corpus[m.index % len(corpus)]
        assert m.recipe.startswith(f"{source.name}: ")
        assert m.data != source.data or Path(m.name).suffix != Path(source.name).suffix, m.recipe


@pytest.mark.parametrize("name", sorted(fuzz.MUTATORS))
def test_each_mutator_is_deterministic_and_changes_the_bytes(corpus, name):
    mutate = fuzz.MUTATORS[name]
    for i, source in enumerate(corpus):
        for k in range(8):
            out, how = mutate(random.Random(f"{name}/{i}/{k}"), source.data, corpus)
            again, how_again = mutate(random.Random(f"{name}/{i}/{k}"), source.data, corpus)
            assert (out, how) == (again, how_again)
            assert out != source.data, f"{name} left {source.name} unchanged: {how}"
            assert how and "\n" not in how


def test_wrong_extensions_and_every_kind_of_mutation_show_up(corpus):
    rng = random.Random(3)
    for source in corpus:
        ext = fuzz.wrong_extension(rng, source.name)
        assert ext != Path(source.name).suffix
    batch = fuzz.make_batch(corpus, SEED, MUTANTS)
    recipes = " ".join(m.recipe for m in batch)
    for word in (
        "bitflip",
        "truncate(to 0 bytes)",
        "truncate(to 1 byte)",
        "truncate(to half",
        "splice(",
        "renamed to",
    ):
        assert word in recipes, word
    for word in ("duplicate(", "shuffle(", "zip(", "numbers(", "insert(", "scatter(", "setbytes("):
        assert word in recipes, word
    assert collections.Counter(m.index % len(corpus) for m in batch) == {
        i: MUTANTS // len(corpus) for i in range(len(corpus))
    }


def test_invariant_checks_catch_what_they_promise():
    a = fuzz.Mutant(1, 0, "00000-a.md", b"x", "a.md: bitflip")
    b = fuzz.Mutant(1, 1, "00001-b.pdf", b"y", "b.pdf: truncate")
    ok = {"source": "/in/00000-a.md", "doc_id": "1", "status": "ok", "reason": None, "chunks": 1}
    bad = {"source": "/in/00001-b.pdf", "doc_id": "2", "status": "failed", "reason": "cut", "chunks": 0}
    chunk = {"source": "/in/00000-a.md", "doc_id": "1"}
    assert fuzz.check_rows([a, b], [ok, bad], [chunk]) == []
    assert "2 documents rows" in " ".join(fuzz.check_rows([a, b], [ok, bad, bad], [chunk]))
    assert "0 documents rows" in " ".join(fuzz.check_rows([a, b], [ok], [chunk]))
    assert "without a reason" in " ".join(fuzz.check_rows([a, b], [ok, {**bad, "reason": " "}], [chunk]))
    assert "not one line" in " ".join(fuzz.check_rows([a, b], [ok, {**bad, "reason": "a\nb"}], [chunk]))
    assert "is not one of" in " ".join(fuzz.check_rows([a, b], [ok, {**bad, "status": "weird"}], [chunk]))
    stray = {"source": "/in/00001-b.pdf", "doc_id": "2"}
    assert "chunk rows for a 'failed'" in " ".join(fuzz.check_rows([a, b], [ok, bad], [chunk, stray]))
    assert "seed 1, index 1" in " ".join(fuzz.check_rows([a, b], [ok], [chunk]))


def test_the_job_survives_a_few_hundred_mutants(tmp_path, fresh_ray, corpus):
    mutants = fuzz.make_batch(corpus, SEED, MUTANTS)
    fuzz.init_ray(2)
    t = time.monotonic()
    problems, statuses, outcome, contained = fuzz.fuzz_job(
        mutants, tmp_path, num_cpus=2, timeout_s=240, doc_timeout=60
    )
    took = time.monotonic() - t
    how = f"reproduce: python scripts/fuzz.py --seed {SEED} --only INDEX --keep DIR"
    assert outcome == "ok", f"{problems[0]} ({how})"
    assert not problems, "\n".join([*problems[:20], how])
    assert sum(statuses.values()) == len(mutants)
    # A batch that really exercises the job: parsed documents and refused ones, side by side.
    assert statuses["ok"] >= len(mutants) // 5 and statuses["failed"] >= len(mutants) // 10, statuses
    # Parser exceptions behind "the parser failed" are bugs to fix, not inputs to refuse.
    exceptions = [line for line in contained if line.startswith("parser exception")]
    assert not exceptions, "\n".join([*exceptions, how])
    print(
        f"fuzz: {len(mutants)} mutants in {took:.1f} s: {dict(sorted(statuses.items()))}; contained: {contained}"
    )
