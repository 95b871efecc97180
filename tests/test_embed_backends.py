"""``embedder.backend``: torch, onnx (fp32) and onnx-int8 give the same vectors within their stated
error, the export is cached, and what cannot work is refused with a reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from raychunk.config import ConfigError, EmbedderConfig, build_run_config, load_config

pytest.importorskip("onnx")
pytestmark = pytest.mark.slow

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
TEXTS = [
    "Refunds are prorated to the unused part of the billing period.",
    "## Quotas\n\nEach project may run 40 instances; raise a ticket to go past it.",
    "| plan | support hours |\n|---|---|\n| Basic | business hours |\n| Premium | 24/7 |",
    "x",
    " ".join(["The retention window is thirty days for logs and a year for audit records."] * 30),
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    import os

    path = tmp_path_factory.mktemp("onnx-cache")
    old = os.environ.get("RAYCHUNK_CACHE")
    os.environ["RAYCHUNK_CACHE"] = str(path)
    yield path
    if old is None:
        del os.environ["RAYCHUNK_CACHE"]
    else:
        os.environ["RAYCHUNK_CACHE"] = old


def _batch(texts):
    return pa.table({"row_type": ["chunk"] * len(texts) + ["document"], "text": [*texts, None]})


def _vectors(backend: str) -> np.ndarray:
    from raychunk.embed import EmbedChunks

    out = EmbedChunks(device="cpu", backend=backend)(_batch(TEXTS))
    column = out.column("embedding")
    assert column.null_count == 1 and column.type == pa.list_(pa.float32(), 384)
    return np.array(column.to_pylist()[: len(TEXTS)], dtype=np.float32)


def test_onnx_backends_match_torch_and_export_once(cache):
    torch_v = _vectors("torch")
    fp32 = _vectors("onnx")
    files = sorted(cache.rglob("*.onnx"))
    assert [f.name for f in files] == ["model.onnx"]
    int8 = _vectors("onnx-int8")
    assert sorted(f.name for f in cache.rglob("*.onnx")) == ["model-int8.onnx", "model.onnx"]
    cos32, cos8 = (fp32 * torch_v).sum(1), (int8 * torch_v).sum(1)
    assert cos32.min() > 0.99999, cos32  # the same model, fused: equal vectors
    assert cos8.min() > 0.97 and cos8.mean() > 0.985, cos8  # quantized: close, not equal
    assert np.allclose(np.linalg.norm(int8, axis=1), 1, atol=1e-5)
    mtime = files[0].stat().st_mtime_ns
    _vectors("onnx")  # a second actor on this machine reuses the export
    assert files[0].stat().st_mtime_ns == mtime and len(list(cache.rglob("*.onnx"))) == 2
    assert not list(cache.rglob("*.tmp"))


def test_onnx_runs_on_cpu_only():
    with pytest.raises(ConfigError, match="backend=onnx-int8 runs on CPU"):
        EmbedderConfig(backend="onnx-int8", device="cuda")
    with pytest.raises(ConfigError, match="embedder.backend"):
        EmbedderConfig(backend="tensorrt")


def test_a_model_the_exporter_cannot_take_is_refused_with_its_shape():
    from sentence_transformers import SentenceTransformer, models

    from raychunk.models import resolve_model
    from raychunk.onnx_encoder import OnnxEncoder

    st = SentenceTransformer(resolve_model("all-MiniLM-L6-v2"), device="cpu")
    odd = SentenceTransformer(modules=[st[0], models.Pooling(384, pooling_mode="max")], device="cpu")
    with pytest.raises(ValueError, match="mean or cls pooling, not max"):
        OnnxEncoder(odd, quantize=False)


def test_a_run_with_the_onnx_backend_writes_torch_equal_vectors(tmp_path, fresh_ray, cache):
    from raychunk.embed import EmbedChunks
    from raychunk.jobs.run import run

    src = tmp_path / "in"
    src.mkdir()
    for name in ("acme-cloud-admin-guide.md", "billing-faq.txt"):
        shutil.copy(SAMPLES / name, src / name)
    cfg = build_run_config(
        load_config(),
        {
            "input": [str(src)],
            "output": str(tmp_path / "out"),
            "resources.num_cpus": 2,
            "embedder.backend": "onnx",
        },
    )
    report = run(cfg)
    assert report["embedder"]["backend"] == "onnx"
    table = pq.read_table(tmp_path / "out" / "chunks", columns=["text", "embedding"])
    assert table.num_rows > 5
    texts = table.column("text").to_pylist()
    got = np.array(table.column("embedding").to_pylist(), dtype=np.float32)
    want = EmbedChunks(device="cpu").model.encode(texts, normalize_embeddings=True)
    assert ((got * want).sum(1)).min() > 0.9999


def test_price_measures_the_backend_it_would_run(cache):
    from raychunk.embed import measure_throughput

    m = measure_throughput("all-MiniLM-L6-v2", tokens_per_text=40, texts=8, device="cpu", backend="onnx-int8")
    assert m["backend"] == "onnx-int8" and m["device"] == "cpu" and m["tokens_per_second"] > 0
