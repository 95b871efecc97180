"""The peer libraries inside the harness (``raychunk.peers``): LangChain's markdown pipeline and
Chonkie's recursive chunker run for real on the sample documents, located by span, priced and
scored by the eval's own stages; the eval's embedding cache embeds each distinct text once."""

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from raychunk.chunking import chunk_document
from raychunk.chunking.model import PEERS, Profile
from raychunk.config import build_run_config, load_config
from raychunk.document import Document, ParsedDocument
from raychunk.evaluation.spans import check_chunk
from raychunk.parse import parse_path
from raychunk.peers import peer_chunks, peer_input
from raychunk.tokens import TiktokenCounter, load_counter

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted(p for p in (ROOT / "samples").iterdir() if p.is_file())
LIBRARY = {"langchain_markdown": "langchain_text_splitters", "chonkie_recursive": "chonkie"}


def need(strategy: str) -> None:
    pytest.importorskip(LIBRARY[strategy], reason=f"{strategy}: pip install -e '.[peers]'")


@pytest.fixture(scope="module")
def counter():
    return load_counter("all-MiniLM-L6-v2")


@pytest.fixture(scope="module")
def parsed():
    return [parse_path(str(p)) for p in SAMPLES]


def markdown(text: str) -> ParsedDocument:
    doc = Document("d1", "guide.md", "markdown", "ok", bytes=len(text))
    return ParsedDocument(doc, text, ())


@pytest.mark.parametrize("strategy", PEERS)
@pytest.mark.parametrize("size", [256, 64])
def test_peers_chunk_every_sample_with_spans_that_hold_their_text(strategy, size, parsed, counter):
    need(strategy)
    cl100k = TiktokenCounter("cl100k_base")
    profile = Profile(strategy=strategy, max_tokens=size)
    total = 0
    for p in parsed:
        if p.document.status != "ok":
            continue
        got = peer_chunks(p, profile, counter)
        assert got.unlocated == 0, p.document.source
        assert got.chunks, p.document.source
        for c in got.chunks:
            assert check_chunk(p.text, c.to_dict()) is None, (p.document.source, c.chunk_index)
            body = c.text[len(c.header) + 2 :] if c.header else c.text
            assert cl100k.count(body) <= size, (p.document.source, c.chunk_index)
            assert c.n_tokens == counter.count(c.text) and c.strategy == strategy
        assert len({c.chunk_id for c in got.chunks}) == len(got.chunks)
        assert peer_chunks(p, profile, counter) == got  # deterministic, ids included
        total += len(got.chunks)
    assert total > len(parsed)


def test_langchain_splits_on_headings_and_prefixes_the_path(counter):
    need("langchain_markdown")
    text = (
        "# Guide\n\nIntro line.\n\n## Refunds\n\nRefunds are paid within **10 days**.\n"
        "Credits expire.\n\n### Late\n\nLate claims are refused.\n"
    )
    chunks = peer_chunks(
        markdown(text), Profile(strategy="langchain_markdown", max_tokens=64), counter
    ).chunks
    assert [c.text for c in chunks] == [
        "Guide\n\nIntro line.",
        "Guide > Refunds\n\nRefunds are paid within **10 days**.\nCredits expire.",
        "Guide > Refunds > Late\n\nLate claims are refused.",
    ]
    assert [c.heading_path for c in chunks][2] == ("Guide", "Refunds", "Late")
    # The span is the body's own text in the document.
    assert text[chunks[1].char_start : chunks[1].char_end] == (
        "Refunds are paid within **10 days**.\nCredits expire."
    )
    assert chunks[1].header_tokens == counter.count("Guide > Refunds")


def test_chonkie_pieces_are_its_own_offsets_in_the_file(counter):
    need("chonkie_recursive")
    text = "# Guide\n\n" + "\n\n".join(f"Paragraph {i} says something about refunds." for i in range(40))
    chunks = peer_chunks(markdown(text), Profile(strategy="chonkie_recursive", max_tokens=32), counter).chunks
    assert len(chunks) > 5
    for c in chunks:
        assert text[c.char_start : c.char_end] == c.text and not c.header
    assert [c.char_start for c in chunks] == sorted(c.char_start for c in chunks)


def test_other_formats_reach_the_peers_as_markdown(parsed):
    html = next(p for p in parsed if p.document.format == "html")
    text = peer_input(html)
    assert text != html.text and "<" not in text.split("\n")[0]
    headings = [b for b in html.blocks if b.kind == "heading"]
    assert headings and all(("#" * b.level + " ") in text for b in headings[:3])


def test_a_peer_is_not_the_chunking_core(parsed, counter):
    with pytest.raises(ValueError, match="raychunk eval and raychunk price"):
        chunk_document(parsed[0], Profile(strategy="chonkie_recursive"), counter)
    with pytest.raises(ValueError, match="langchain_markdown"):
        Profile(strategy="llamaindex")


def test_a_missing_library_names_the_extra_before_any_work(monkeypatch, counter):
    from raychunk.peers import require_peers
    from raychunk.pricing import grid

    monkeypatch.setitem(sys.modules, "chonkie", None)
    with pytest.raises(
        ImportError, match=r"chonkie_recursive peer needs chonkie: pip install 'raychunk\[peers\]'"
    ):
        peer_chunks(markdown("# A\n\nText."), Profile(strategy="chonkie_recursive"), counter)
    require_peers(grid([256], [0], ["structure", "fixed"]))  # no peer named: nothing to import
    with pytest.raises(ImportError, match=r"raychunk\[peers\]"):
        require_peers(grid([256], [0], ["structure", "chonkie_recursive"]))


def test_price_counts_a_peer_as_its_chunks(parsed, counter):
    need("chonkie_recursive")
    from raychunk.peers import chunk_stats_any
    from raychunk.pricing import grid, measure_document

    settings = grid([128], [0], ["chonkie_recursive", "structure"])
    for p in parsed[:4]:
        rows = measure_document(p, "unknown", settings, {}, counter, stats=chunk_stats_any)
        chunks = peer_chunks(p, settings[0].profile, counter).chunks
        assert rows[0]["chunks"] == len(chunks)
        assert rows[0]["tokens"] == sum(c.n_tokens for c in chunks)


@pytest.mark.slow
def test_the_eval_scores_peers_by_span_and_embeds_each_text_once(tmp_path):
    """The eval's stages (chunk, embed, retrieve, merge, report) over the samples with raychunk and
    the installed peers: every setting scored with its passage-inside-one-chunk share, spans all
    holding, and the embedder embedding each distinct text once across settings."""
    from test_eval_partials import run_stages

    from raychunk.embed import EmbedChunks
    from raychunk.evaluation import load_queries, match_source
    from raychunk.evaluation.partials import collect_partials, retrieve_block
    from raychunk.evaluation.report import evaluate_partials
    from raychunk.io import list_inputs, readable
    from raychunk.jobs.eval import embed_queries
    from raychunk.pricing import grid
    from raychunk.schema import EVAL_ROWS

    peers = [s for s in PEERS if _installed(s)]
    if not peers:
        pytest.skip("no peer library installed: pip install -e '.[peers]'")
    cfg = build_run_config(load_config(), {"input": [str(ROOT / "samples")]})
    settings = grid([256], [0], ["structure", *peers])
    _, _, files = list_inputs(cfg.input)
    files = readable(files)
    listed = [f.path for f in files]
    queries = [
        dataclasses.replace(q, source=match_source(q.source, listed))
        for q in load_queries(ROOT / "evals" / "samples.jsonl")
    ]
    rows, _, resolved = run_stages(cfg, settings, queries, files)
    table = EmbedChunks(cfg.embedder.model, device="cpu", dedupe=True)(
        pa.Table.from_pylist(rows, schema=EVAL_ROWS)
    )
    qv = embed_queries(cfg.embedder.model, [q.query for q in resolved], device="cpu")
    partials = collect_partials([retrieve_block(table, query_vectors=qv, k=5)], queries=len(resolved), k=5)
    report = evaluate_partials(resolved, partials, settings, k=5, parent_budget=512, dim=qv.shape[1])
    by_label = {r["setting"]: r for r in report["settings"]}
    assert set(by_label) == {s.label for s in settings}
    for label, r in by_label.items():
        assert r["span_check"]["ok"], (label, r["span_check"])
        assert r["vectors"] > 0
        inside, hit = r["metrics"]["inside"]["mean"], r["metrics"]["hit"]["mean"]
        assert 0.5 < inside <= 1 and 0.5 < hit <= 1, label
    chunk_texts = [r["text"] for r in rows if r["row_type"] == "chunk"]
    e = report["embedding"]
    assert e["embedded"] == len(set(chunk_texts)) < len(chunk_texts)
    assert e["embedded"] + e["reused"] == len(chunk_texts)


def _installed(strategy: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(LIBRARY[strategy]) is not None


def test_the_embedding_cache_embeds_each_text_once_and_keeps_it_across_runs(tmp_path, caplog):
    from raychunk.embed import EmbedChunks

    caplog.set_level("WARNING", logger="raychunk")  # whatever level an earlier in-process CLI left
    texts = ["refunds are paid within 10 days", "credits expire", "refunds are paid within 10 days", None]
    kinds = ["chunk", "chunk", "chunk", "document"]
    batch = pa.table({"row_type": kinds, "text": texts})
    plain = EmbedChunks(device="cpu")(batch)
    first = EmbedChunks(device="cpu", cache=str(tmp_path))(batch)
    assert first.column("embedded").to_pylist() == [True, True, False, False]
    vectors = lambda t: np.array(t.column("embedding").to_pylist()[:3], dtype=np.float32)  # noqa: E731
    np.testing.assert_allclose(vectors(first), vectors(plain), atol=1e-6)
    assert first.column("embedding").to_pylist()[3] is None
    (shard,) = [p for p in tmp_path.rglob("*.npz")]
    (shard.parent / "broken.npz").write_bytes(b"not a shard")
    again = EmbedChunks(device="cpu", cache=str(tmp_path))
    assert again.cache.loaded == 2
    second = again(batch)
    assert second.column("embedded").to_pylist() == [False, False, False, False]
    np.testing.assert_array_equal(vectors(second), vectors(first))
    assert "unreadable" in caplog.text


def test_rst_reaches_the_peers_with_its_headings():
    """A .rst file's parsed text is its blocks' texts joined, without the section marks: the header
    splitter read it as one section. It now gets the blocks as markdown, as HTML and office do."""
    from raychunk.parse import parse_document

    parsed = parse_document(b"Guide\n=====\n\nIntro.\n\nInstall\n-------\n\nRun it.\n", "guide.rst")
    assert parsed.document.status == "ok"
    assert peer_input(parsed) == "# Guide\n\nIntro.\n\n## Install\n\nRun it."


def test_xml_reaches_the_peers_as_written():
    """A user hands LangChain or Chonkie an XML file as it is: raychunk's records of it are its own
    reading, not the peers' input (which would move the peers' figures with raychunk's parser)."""
    from raychunk.parse import parse_document

    data = b'<?xml version="1.0"?>\n<keys><key name="a"><summary>One</summary></key><key name="b"/></keys>\n'
    parsed = parse_document(data, "keys.xml")
    assert parsed.document.format == "xml" and peer_input(parsed) == data.decode()


@pytest.mark.parametrize("name", ["install.rst", "cmake-generator-expressions.7.rst"])
def test_pieces_across_code_and_lists_are_found_in_the_text(counter, name):
    """A peer reading blocks rendered as markdown gets code fences and list markers the document text
    does not hold, and LangChain's header splitter strips each line: a piece running from prose into a
    code block or a list was not found, so it could never be a hit (4 of install.rst's 45 LangChain
    256 pieces, 7 of the generator expressions page's 71). Now found without that markup."""
    from pathlib import Path

    from raychunk.parse import parse_path

    pytest.importorskip("pypandoc")
    parsed = parse_path(Path(__file__).resolve().parent.parent / "evals" / "cmake" / name)
    assert parsed.document.status == "ok"
    for strategy in ("langchain_markdown", "chonkie_recursive"):
        result = peer_chunks(parsed, Profile(strategy=strategy, max_tokens=256), counter)
        assert len(result.chunks) > 30
        assert result.unlocated == 0, (strategy, result.unlocated)


def test_numbered_items_reach_the_peers_with_their_numbers_and_are_found(counter):
    """raychunk's own chunks show a numbered item's number (``7. Drain the node``); the peers got
    every item as ``- `` and read the steps without their numbers. Now they read what raychunk's
    chunks show, and a piece holding numbered items is still found in the text."""
    from raychunk.parse import parse_document

    steps = "".join(f"<li>Step number {k} of the cutover runs here</li>" for k in range(1, 9))
    html = f"<h1>Cutover</h1><p>Do this:</p><ol start='7'>{steps}</ol><ul><li>a bullet</li></ul>".encode()
    parsed = parse_document(html, "cutover.html")
    text = peer_input(parsed)
    assert "7. Step number 1 of the cutover runs here" in text.split("\n")
    assert "14. Step number 8 of the cutover runs here" in text.split("\n")
    assert "- a bullet" in text.split("\n")
    for strategy in ("langchain_markdown", "chonkie_recursive"):
        result = peer_chunks(parsed, Profile(strategy=strategy, max_tokens=24), counter)
        assert len(result.chunks) > 3 and result.unlocated == 0, (strategy, result.unlocated)


def test_a_pdfs_numbered_items_reach_the_peers_as_its_chunks_show_them(counter):
    """A PDF item keeps its number in its text: the peers read ``1. Add Traefik to DNS``, as
    raychunk's chunks show it, not ``- 1. Add Traefik to DNS``."""
    import pymupdf

    from raychunk.parse import parse_document

    doc = pymupdf.open()
    page = doc.new_page()
    for k, text in enumerate(["Steps:", "1.  Add Traefik to DNS", "2.  Remove NGINX from DNS"]):
        page.insert_text((72, 72 + 18 * k), text, fontsize=11)
    lines = peer_input(parse_document(doc.tobytes(), "steps.pdf")).split("\n")
    assert "1. Add Traefik to DNS" in lines and "2. Remove NGINX from DNS" in lines
    assert not any(line.startswith("- 1.") for line in lines)
