"""The embed actor's plain-torch BERT (raychunk.bert_encoder) against sentence-transformers itself:
the same vectors bit for bit, on real chunk texts of the samples and on the edges (empty, blank,
longer than the model's window, mixed lengths in one batch, non-Latin scripts)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from raychunk.bert_encoder import BertEncoder
from raychunk.models import PACKAGED_MODEL, resolve_model

ROOT = Path(__file__).resolve().parent.parent
FOLDER = Path(resolve_model(PACKAGED_MODEL))


def _texts() -> list[str]:
    texts = []
    for path in sorted((ROOT / "samples").rglob("*.md")) + sorted((ROOT / "samples").rglob("*.txt")):
        texts += [p for p in path.read_text(errors="replace").split("\n\n") if p.strip()]
    texts += [
        "",
        "   ",
        "x",
        "  padded on both sides  ",
        "Refunds are prorated. " * 200,  # far past 256 word pieces: truncated
        "Ошибка 503: сервис недоступен",
        "東京都の天気予報は晴れです。",
        "नमस्ते दुनिया",
        "tab\tand\nnew lines",
        "Ünïcödé café naïve façade, ＦＵＬＬＷＩＤＴＨ and ligatures: ﬁ ﬂ",
        "emoji 🙂 and a zero-width\u200bjoiner",
        "Refunds are prorated.",
        "Refunds are prorated.",  # the same text twice in one batch
    ]
    return texts


@pytest.fixture(scope="module")
def both():
    from raychunk.embed import _sentence_transformers

    st = _sentence_transformers().SentenceTransformer(str(FOLDER), device="cpu")
    plain = BertEncoder.open(FOLDER)
    assert plain is not None
    return st, plain


@pytest.mark.parametrize("batch_size", [1, 7, 32])
@pytest.mark.parametrize("normalize", [True, False])
def test_the_same_vectors_as_sentence_transformers(both, batch_size, normalize):
    st, plain = both
    texts = _texts()
    assert len(texts) > 40
    kw = dict(
        batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=normalize, show_progress_bar=False
    )
    want, got = st.encode(texts, **kw), plain.encode(texts, **kw)
    assert got.dtype == np.float32 and got.shape == want.shape == (len(texts), 384)
    assert np.array_equal(got, want)


def test_the_shape_and_counts(both):
    st, plain = both
    assert plain.get_embedding_dimension() == st.get_embedding_dimension() == 384
    assert plain.max_seq_length == st.max_seq_length == 256
    text = "Configure the retry budget per endpoint."
    assert plain.word_pieces(text) == len(st.tokenizer(text, add_special_tokens=False)["input_ids"])
    assert plain.encode([]).shape == (0, 384)


def test_a_folder_of_another_shape_goes_to_sentence_transformers(tmp_path):
    bad = tmp_path / "model"
    shutil.copytree(FOLDER, bad)
    pooling = bad / "1_Pooling" / "config.json"
    cfg = json.loads(pooling.read_text())
    pooling.write_text(json.dumps({**cfg, "pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}))
    assert BertEncoder.open(bad) is None  # CLS pooling: not this encoder's
    assert BertEncoder.open(tmp_path / "missing") is None
    (bad / "1_Pooling" / "config.json").write_text(json.dumps(cfg))
    assert BertEncoder.open(bad) is not None  # the copy itself is this encoder's
    from safetensors.torch import load_file, save_file

    weights = load_file(str(bad / "model.safetensors"))
    save_file({k: v for k, v in weights.items() if "layer.5.output" not in k}, str(bad / "model.safetensors"))
    assert BertEncoder.open(bad) is None  # a layer's weights missing: sentence-transformers says what
    (bad / "modules.json").write_text("not json")
    assert BertEncoder.open(bad) is None


def test_the_embed_actor_loads_neither_sentence_transformers_nor_transformers():
    script = (
        "import sys, json\n"
        "from raychunk.embed import load_model\n"
        "from raychunk.models import PACKAGED_MODEL, resolve_model\n"
        "m, device = load_model(resolve_model(PACKAGED_MODEL), 'cpu')\n"
        "v = m.encode(['Refunds are prorated.'], normalize_embeddings=True)\n"
        "print(json.dumps([type(m).__name__, device, v.shape[1],"
        " 'sentence_transformers' in sys.modules, 'transformers' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(out.stdout.splitlines()[-1]) == ["BertEncoder", "cpu", 384, False, False]
