"""A sentence-transformers BERT model (all-MiniLM-L6-v2 and its kind) run on CPU by torch alone.

sentence-transformers and transformers take 4-5 s of CPU to import, more than the model's own
forward pass over a small run's chunks, and the embed actor shares its cores with parsing. The folder
holds everything the forward pass needs: the BERT weights (``model.safetensors``), the fast tokenizer
(``tokenizer.json``) and the modules (``modules.json``: the transformer, mean pooling, a
normalisation). ``BertEncoder.open`` takes a folder of exactly that shape and returns None for anything
else, which then loads through sentence-transformers as before.

The vectors are bit for bit sentence-transformers' (the same tokenization, the same torch operations
in the same order, the length-sorted batches its ``encode`` makes); ``tests/test_bert_encoder.py``
holds both to it.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["BertEncoder"]

_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"


def _json(path: Path) -> dict | list | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _supported(folder: Path) -> tuple[dict, int, bool] | None:
    """``(config, max_seq_length, normalized)`` of a folder this encoder runs exactly, else None."""
    modules = _json(folder / "modules.json")
    config = _json(folder / "config.json")
    st = _json(folder / "sentence_bert_config.json")
    if not isinstance(modules, list) or not isinstance(config, dict) or not isinstance(st, dict):
        return None
    types = [m.get("type") for m in modules]
    if types not in ([_TRANSFORMER, _POOLING], [_TRANSFORMER, _POOLING, _NORMALIZE]) or modules[0].get(
        "path"
    ):
        return None
    pooling = _json(folder / modules[1].get("path", "") / "config.json")
    mean_only = {
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
    }
    if not isinstance(pooling, dict) or any(pooling.get(k, False) != v for k, v in mean_only.items()):
        return None
    if any(pooling.get(k) for k in ("pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken")):
        return None
    if not pooling.get("include_prompt", True):
        return None
    st_config = _json(folder / "config_sentence_transformers.json") or {}
    if st_config.get("prompts") or st_config.get("default_prompt_name"):
        return None
    bert = (
        config.get("model_type") == "bert"
        and config.get("architectures", ["BertModel"]) == ["BertModel"]
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
    )
    if not bert or st.get("do_lower_case") or not isinstance(st.get("max_seq_length"), int):
        return None
    if not (folder / "model.safetensors").is_file() or not (folder / "tokenizer.json").is_file():
        return None
    return config, st["max_seq_length"], len(types) == 3


class BertEncoder:
    """``encode`` as sentence-transformers' ``SentenceTransformer.encode`` on CPU, fp32."""

    def __init__(self, folder: Path, config: dict, max_seq_length: int, normalized: bool):
        import torch  # noqa: F401  (before safetensors.torch, which needs it)
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        weights = load_file(str(folder / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v for k, v in weights.items()}
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])
        self.dim = int(config["hidden_size"])
        self.max_seq_length = max_seq_length
        self.normalized = normalized
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_seq_length)  # longest_first, as transformers truncates
        self.tokenizer.enable_padding(pad_id=int(config.get("pad_token_id", 0)))

    @classmethod
    def open(cls, folder: str | Path) -> BertEncoder | None:
        folder = Path(folder)
        found = _supported(folder) if folder.is_dir() else None
        if not found:
            return None
        encoder = cls(folder, *found)
        try:
            encoder.encode([""])  # weights missing or misshapen for the declared BERT fail here
        except (KeyError, RuntimeError):
            return None
        return encoder

    def get_embedding_dimension(self) -> int:
        return self.dim

    def word_pieces(self, text: str) -> int:
        """Word pieces of ``text`` without the special tokens."""
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def encode(
        self,
        texts: list[str],
        batch_size: int = 32,
        convert_to_numpy: bool = True,
        normalize_embeddings: bool = False,
        show_progress_bar: bool = False,
    ):
        import numpy as np
        import torch

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = np.argsort([-len(t) for t in texts])  # as SentenceTransformer.encode orders them
        parts = []
        for start in range(0, len(texts), batch_size):
            encs = self.tokenizer.encode_batch([texts[i].strip() for i in order[start : start + batch_size]])
            vectors = self._forward(
                torch.tensor([e.ids for e in encs]), torch.tensor([e.attention_mask for e in encs])
            )
            if normalize_embeddings:
                vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
            parts.append(vectors)
        stacked = torch.cat(parts)[torch.from_numpy(np.argsort(order))]  # back in the texts' order
        return stacked.numpy() if convert_to_numpy else stacked

    def _forward(self, ids, mask):
        """BERT's forward pass as transformers runs it with sdpa attention, then mean pooling and
        the model's own normalisation, as sentence-transformers' modules do."""
        import torch
        import torch.nn.functional as F

        w, eps = self.w, self.eps

        def linear(x, name):
            return F.linear(x, w[name + ".weight"], w[name + ".bias"])

        def norm(x, name):
            return F.layer_norm(x, (x.shape[-1],), w[name + ".weight"], w[name + ".bias"], eps)

        with torch.inference_mode():
            batch, length = ids.shape
            x = F.embedding(ids, w["embeddings.word_embeddings.weight"])
            x = x + F.embedding(torch.zeros_like(ids), w["embeddings.token_type_embeddings.weight"])
            x = x + F.embedding(torch.arange(length).unsqueeze(0), w["embeddings.position_embeddings.weight"])
            x = norm(x, "embeddings.LayerNorm")
            padded = (
                None if bool(mask.all()) else mask.bool()[:, None, None, :].expand(batch, 1, length, length)
            )
            head = self.dim // self.heads
            for i in range(self.layers):
                p = f"encoder.layer.{i}."
                q, k, v = (
                    linear(x, p + "attention.self." + n).view(batch, length, -1, head).transpose(1, 2)
                    for n in ("query", "key", "value")
                )
                a = F.scaled_dot_product_attention(q, k, v, attn_mask=padded, dropout_p=0.0, scale=head**-0.5)
                a = a.transpose(1, 2).contiguous().reshape(batch, length, -1).contiguous()
                x = norm(linear(a, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
                h = F.gelu(linear(x, p + "intermediate.dense"))
                x = norm(linear(h, p + "output.dense") + x, p + "output.LayerNorm")
            m = mask.unsqueeze(-1).to(x.dtype)
            pooled = (x * m).sum(dim=1, dtype=x.dtype) / torch.clamp(m.sum(dim=1, dtype=x.dtype), min=1e-9)
            return F.normalize(pooled, p=2, dim=-1) if self.normalized else pooled
