"""`raychunk price` end to end on the sample corpus, on a real local Ray."""

import dataclasses
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from raychunk.chunking import chunk_document
from raychunk.classify import classify
from raychunk.cli import main
from raychunk.config import load_doc_types
from raychunk.parse import parse_path
from raychunk.plan import resolve_plan
from raychunk.tokens import load_counter

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _profile_ids(paths) -> dict[str, int]:
    """The chunk ids `raychunk run --input samples` would write for these files (the per-type
    profiles): each document named by its path relative to the input folder."""
    types = load_doc_types()
    counter = load_counter()
    ids = {}
    for p in paths:
        parsed = parse_path(p)
        parsed = dataclasses.replace(parsed, document=dataclasses.replace(parsed.document, identity=p.name))
        doc_type = classify(parsed, types.thresholds).doc_type
        for c in chunk_document(parsed, types.profiles[doc_type], counter, doc_type=doc_type):
            ids[c.chunk_id] = c.n_tokens
    return ids


def test_price_grid_writes_table_files_and_chart(tmp_path, fresh_ray, capsys):
    prev = tmp_path / "prev" / "chunks"
    prev.mkdir(parents=True)
    some = sorted(SAMPLES.glob("*.md")) + sorted(SAMPLES.glob("*.csv"))
    ids = _profile_ids(some)
    ids["0" * 32] = 40  # a chunk that no longer exists
    pq.write_table(pa.table({"chunk_id": list(ids), "n_tokens": list(ids.values())}), prev / "part-0.parquet")

    out = tmp_path / "price"
    rc = main(
        [
            "price",
            "--input",
            str(SAMPLES),
            "--output",
            str(out),
            "--sizes",
            "128,256",
            "--overlaps",
            "0,0.2",
            "--strategies",
            "structure,fixed",
            "--tokens-per-second",
            "1000",
            "--gpu-hour-usd",
            "2",
            "--index",
            "hnsw:M=16",
            "--previous",
            str(tmp_path / "prev"),
            "--num-cpus",
            "2",
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "per-type profile" in printed and "fixed 256 o0.2" in printed and "By document type" in printed

    report = json.loads((out / "report.json").read_text())
    labels = [s["setting"] for s in report["settings"]]
    assert labels == [
        "per-type profile",
        "structure 128 o0",
        "structure 128 o0.2",
        "structure 256 o0",
        "structure 256 o0.2",
        "fixed 128 o0",
        "fixed 128 o0.2",
        "fixed 256 o0",
        "fixed 256 o0.2",
    ]
    n_files = len([p for p in SAMPLES.iterdir() if p.is_file()])
    for s in report["settings"]:
        assert s["documents"] == n_files
        assert s["vectors"] == s["chunks"] > 0
        assert s["vector_bytes"] == s["vectors"] * 384 * 4
        assert s["index_bytes"] > s["vector_bytes"]  # HNSW links
        assert s["total_bytes"] == s["index_bytes"] + s["text_bytes"]
        assert s["tokens_p50"] <= s["tokens_p95"]
        assert s["embed_usd"] == pytest.approx(s["tokens"] / 1000 / 3600 * 2)
        assert sum(t["chunks"] for t in s["by_type"].values()) == s["chunks"]
    fixed = {s["setting"]: s for s in report["settings"]}
    # Overlap costs tokens; on 12 small samples, whose windows also end where a parser dropped text,
    # it need not cost a whole extra window.
    assert fixed["fixed 128 o0.2"]["tokens"] > fixed["fixed 128 o0"]["tokens"]
    assert fixed["fixed 128 o0.2"]["vectors"] >= fixed["fixed 128 o0"]["vectors"]
    assert fixed["fixed 128 o0.2"]["overlap_share"] > 0 == fixed["fixed 128 o0"]["overlap_share"]

    delta = report["settings"][0]["delta"]
    assert delta["unchanged"] == len(ids) - 1
    assert delta["removed"] == 1
    assert delta["new"] == report["settings"][0]["chunks"] - delta["unchanged"]

    assert report["projection"][0].startswith("per-type profile: Projection (not measured): at 8 GPUs")
    assert "Projection (not measured)" in printed and "On the cluster" in printed
    assert (out / "report.md").read_text().startswith("# raychunk price report")
    assert "## On the cluster" in (out / "report.md").read_text()
    csv_lines = (out / "report.csv").read_text().splitlines()
    assert csv_lines[0].startswith("scope,setting,documents,chunks,vectors")
    assert (out / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sampled_price_is_labelled_an_estimate(tmp_path, fresh_ray, capsys):
    out = tmp_path / "price"
    rc = main(
        [
            "price",
            "--input",
            str(SAMPLES),
            "--output",
            str(out),
            "--sizes",
            "256",
            "--overlaps",
            "0",
            "--sample",
            "0.5",
            "--no-measure",
            "--no-chart",
            "--num-cpus",
            "2",
        ]
    )
    assert rc == 0
    assert "ESTIMATE" in capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    assert report["estimate"] and 0 < report["sampled_documents"] < report["corpus_files"]
    assert all(s["interval_95"] for s in report["settings"])
    assert not (out / "chart.png").exists()


def write_notes(folder: Path, n: int, copies: int = 0) -> None:
    """``n`` small markdown notes of varied length, each of its own size, and ``copies`` byte-identical
    copies of some (so only the copies' sizes collide and duplicates are found without Ray)."""
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda"]
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        body = "\n\n".join(
            f"## Part {h}\n\n"
            + " ".join(words[(i * 7 + h * 3 + k) % len(words)] for k in range(15 + (i * 13) % 90))
            for h in range(1 + i % 3)
        )
        text = f"# Note {i}\n\n{body}\n\n"
        (folder / f"note-{i:04d}.md").write_text(text + "." * (4000 + i - len(text)) + "\n")
    for k in range(copies):
        (folder / f"copy-{k:02d}.md").write_bytes((folder / f"note-{k % 3:04d}.md").read_bytes())


def local_rows(cfg, settings, duplicates: dict, keep_ids: bool = False) -> list[dict]:
    """The measure rows of every input, made here by the same steps the workers run, without Ray."""
    from raychunk.document_steps import measure, per_document
    from raychunk.io import list_inputs, readable

    _, _, files = list_inputs(cfg.input)
    plan = resolve_plan(cfg)
    steps = per_document(
        plan, scheme="", last=measure(plan, settings, keep_ids=keep_ids), duplicates=duplicates
    )
    rows = []
    for f in readable(files):
        value = {"path": f.path, "bytes": Path(f.path).read_bytes(), "read_error": None}
        for _, fn in steps:
            value = fn(value)
        rows += value
    return rows


@pytest.fixture
def driver_rows(monkeypatch):
    """Rows that reach the driver through any Ray Data iteration (take_all, iter_rows, iter_batches)."""
    from ray.data.iterator import DataIterator

    seen: list[int] = []
    iterate = DataIterator._iter_batches

    def counted(self, *args, **kwargs):
        for batch in iterate(self, *args, **kwargs):
            seen.append(len(next(iter(batch.values()), [])) if isinstance(batch, dict) else len(batch))
            yield batch

    monkeypatch.setattr(DataIterator, "_iter_batches", counted)
    return seen


def _config(folder: Path):
    from raychunk.config import build_run_config, load_config

    return build_run_config(
        load_config(), {"input": [str(folder)], "embedder.enabled": False, "resources.num_cpus": 2}
    )


def test_driver_gets_one_partial_per_block_and_the_same_report(tmp_path, fresh_ray, driver_rows):
    """300 notes and 6 copies: the driver receives one partial per input block, never a row per
    document, and the report equals the one computed from every row (as before, on the driver)."""
    import ray

    from raychunk.blocks import plan_blocks
    from raychunk.corpus import find_duplicates
    from raychunk.io import list_inputs, readable
    from raychunk.jobs.price import measure_corpus
    from raychunk.pricing import IndexSpec, Rates, Setting, grid, summarize, summarize_partial
    from tests.test_price_partials import old_duplicates_saved

    write_notes(tmp_path / "notes", 300, copies=6)
    cfg = _config(tmp_path / "notes")
    settings = [Setting("per-type profile"), *grid([64], [0.2], ["fixed"])]
    measured = measure_corpus(resolve_plan(cfg), settings)

    fs, _, files = list_inputs(cfg.input)
    blocks = plan_blocks(readable(files), cpus=ray.cluster_resources()["CPU"], max_files=32)
    duplicates = find_duplicates(readable(files), fs, "", resolve_plan(cfg))
    assert len(duplicates) == 6
    assert measured.partials <= len(blocks) < 30
    assert measured.driver_rows == measured.partials
    assert sum(driver_rows) == measured.partials  # the copies' sizes are few: hashed without Ray

    rows = local_rows(cfg, settings, duplicates)
    assert len(rows) == 306 * len(settings)
    args = {
        "dim": 384,
        "dtype": "float32",
        "index": IndexSpec(),
        "corpus_files": 306,
        "corpus_bytes": measured.listing["bytes"],
        "sample": 1.0,
        "rates": Rates(),
    }
    report = summarize_partial(measured.partial, settings, **args)
    assert report == summarize(rows, settings, **args)
    for s in report["settings"]:
        assert s["documents"] == 306
        assert {k: s[k] for k in ("duplicates", "tokens_saved")} == old_duplicates_saved(rows, s["setting"])
        assert s["tokens_saved"] > 0


def test_previous_counts_equal_a_set_computation(tmp_path, fresh_ray, driver_rows):
    """A real run, then one note edited, one added and one deleted: per setting, the cluster's counts
    against the run's chunks/ equal plain Python sets."""
    from raychunk.jobs.price import measure_corpus
    from raychunk.pricing import Setting, grid

    notes = tmp_path / "notes"
    write_notes(notes, 6)
    assert (
        main(
            ["run", "--input", str(notes), "--output", str(tmp_path / "run"), "--no-embed", "--num-cpus", "2"]
        )
        == 0
    )
    (notes / "note-0002.md").write_text((notes / "note-0002.md").read_text() + "\nOne more line, edited.\n")
    (notes / "note-0099.md").write_text("# Added\n\nA note that the earlier run did not see.\n")
    (notes / "note-0004.md").unlink()

    cfg = _config(notes)
    settings = [Setting("per-type profile"), *grid([32], [0], ["fixed"])]
    measured = measure_corpus(resolve_plan(cfg), settings, previous=str(tmp_path / "run"))

    previous = set(
        pq.read_table(tmp_path / "run" / "chunks", columns=["chunk_id"]).column("chunk_id").to_pylist()
    )
    expected = {}
    for s in settings:
        current = {}
        for r in local_rows(cfg, settings, {}, keep_ids=True):
            if r["setting"] == s.label:
                current.update({c["chunk_id"]: c["n_tokens"] for c in r["chunk_ids"]})
        new = current.keys() - previous
        expected[s.label] = {
            "unchanged": len(current.keys() & previous),
            "new": len(new),
            "removed": len(previous - current.keys()),
            "tokens_to_embed": sum(current[c] for c in new),
        }
    assert measured.delta == expected
    profile = expected["per-type profile"]
    assert profile["unchanged"] > 0 and profile["new"] > 0 and profile["removed"] > 0
    assert expected["fixed 32 o0"]["unchanged"] == 0  # another setting's ids are all new
    # One partial per block, and per shuffle partition (as many as blocks) a count row per setting.
    assert sum(driver_rows) == measured.driver_rows <= measured.partials * (len(settings) + 2)


def test_previous_without_a_chunks_table_fails_before_parsing(tmp_path):
    from raychunk.jobs.price import measure_corpus
    from raychunk.pricing import grid

    write_notes(tmp_path / "notes", 2)
    with pytest.raises(ValueError, match="no chunks/ table there"):
        measure_corpus(
            _config(tmp_path / "notes"), grid([64], [0], ["fixed"]), previous=str(tmp_path / "none")
        )


def test_the_cluster_projection_scales_with_the_priced_tokens(tmp_path):
    """The projection prices the per-type profile's tokens at the measured GPU rate on the
    cluster.yaml cluster; without the rates file (an install with no checkout) it says so."""
    from raychunk.jobs.price import CHECKOUT, cluster_projection
    from raychunk.projection import StageRates

    rates = StageRates.from_dict(
        json.loads((CHECKOUT / "benchmarks" / "stage_rates.json").read_text())["rates"]
    )
    report = {
        "corpus_files": 1000,
        "corpus_bytes": 10**9,
        "settings": [
            {"setting": "structure 256 o0", "tokens": 10**6, "vectors": 5000},
            {
                "setting": "per-type profile",
                "tokens": 8 * 3600 * rates.embed_tokens_s_gpu.value,
                "vectors": 10**6,
            },
        ],
    }
    lines = cluster_projection(report)
    assert lines[0].startswith(
        "per-type profile: Projection (not measured): at 8 GPUs this corpus embeds in 60.0 min;"
    )
    assert "Inputs:" in lines[1] and "cluster.yaml" in lines[1]
    missing = cluster_projection(report, rates_file=tmp_path / "stage_rates.json")
    assert missing == [missing[0]] and missing[0].startswith("No cluster projection")
