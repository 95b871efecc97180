"""``embedder.backend: onnx | onnx-int8``: the same sentence-transformers model run by onnxruntime on CPU.

The model is exported from its local weights once per machine (torch's ONNX exporter, onnxruntime's
transformer fusions, then dynamic per-channel int8 quantization for ``onnx-int8``) into a cache
folder (``$RAYCHUNK_CACHE`` or ``~/.cache/raychunk``), so nothing is downloaded. Only the common shape of an embedding model is supported: a transformer, mean or CLS
pooling, and an optional normalisation; anything else is refused with the reason.

Vectors are not bit-equal to torch's: fp32 matches it to about 1e-6 in cosine, int8 to a mean cosine
near 0.99 (see the README's Benchmarks for the measured effect on retrieval).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import warnings
from pathlib import Path

__all__ = ["BACKENDS", "OnnxEncoder", "cache_dir"]

BACKENDS = ("torch", "onnx", "onnx-int8")


def cache_dir() -> Path:
    root = os.environ.get("RAYCHUNK_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "raychunk"
    )
    return Path(root) / "onnx"


class OnnxEncoder:
    """``encode`` and ``get_embedding_dimension`` as a SentenceTransformer has them, on onnxruntime."""

    def __init__(self, st, *, quantize: bool):
        try:
            import onnxruntime  # noqa: F401
        except ImportError as e:
            raise ImportError("embedder.backend=onnx needs onnxruntime: pip install 'raychunk[onnx]'") from e
        modules = list(st)
        kinds = [type(m).__name__ for m in modules]
        if kinds[:2] != ["Transformer", "Pooling"] or kinds[2:] not in ([], ["Normalize"]):
            raise ValueError(
                f"embedder.backend=onnx supports transformer + pooling (+ normalize) models; this one is {kinds}"
            )
        pooling = modules[1]
        mode = getattr(pooling, "pooling_mode", None)
        self.mode = mode if isinstance(mode, str) else pooling.get_pooling_mode_str()
        if self.mode not in ("mean", "cls"):
            raise ValueError(f"embedder.backend=onnx supports mean or cls pooling, not {self.mode}")
        self.normalized = kinds[2:] == ["Normalize"]
        self.tokenizer = st.tokenizer
        self.max_seq_length = st.max_seq_length
        self.dim = int(st.get_embedding_dimension())
        self.path = _exported(modules[0].auto_model, self.tokenizer, quantize=quantize)
        self._sessions: dict[int, object] = {}
        self.threads = 1

    def get_embedding_dimension(self) -> int:
        return self.dim

    def set_num_threads(self, n: int) -> None:
        self.threads = max(1, n)

    def encode(self, texts, batch_size: int = 64, normalize_embeddings: bool = False, **_):
        import numpy as np

        session = self._session(self.threads)
        names = {i.name for i in session.get_inputs()}
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))  # as sentence-transformers sorts
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            enc = self.tokenizer(
                [texts[i] for i in idx],
                padding=True,
                truncation=True,
                max_length=self.max_seq_length,
                return_tensors="np",
            )
            feed = {k: v.astype(np.int64) for k, v in enc.items() if k in names}
            hidden = session.run(None, feed)[0]
            if self.mode == "cls":
                pooled = hidden[:, 0]
            else:
                mask = enc["attention_mask"][..., None].astype(np.float32)
                pooled = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
            out[idx] = pooled
        if normalize_embeddings or self.normalized:
            out /= np.clip(np.linalg.norm(out, axis=1, keepdims=True), 1e-12, None)
        return out

    def _session(self, threads: int):
        if threads not in self._sessions:
            import onnxruntime as ort

            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            self._sessions[threads] = ort.InferenceSession(
                str(self.path), opts, providers=["CPUExecutionProvider"]
            )
        return self._sessions[threads]


_RECIPE = "eager-export+bert-fusion+int8-per-channel/1"  # part of the cache key: change it to re-export


def _exported(model, tokenizer, *, quantize: bool) -> Path:
    """The model as ONNX in the cache, exported (fused, quantized) the first time on this machine.

    Attention is exported in its eager form so that onnxruntime's transformer optimizer can fuse it
    (about 1.5x over the unfused graph on CPU); int8 is dynamic and per channel."""
    import torch

    key = hashlib.sha256(_RECIPE.encode())
    key.update(repr(sorted(model.config.to_dict().items())).encode())
    key.update(torch.__version__.encode())
    for p in list(model.state_dict().values()):
        key.update(p.detach().float().reshape(-1)[:256].numpy().tobytes())
    folder = cache_dir() / key.hexdigest()[:16]
    fp32 = folder / "model.onnx"
    int8 = folder / "model-int8.onnx"
    if not fp32.exists():
        folder.mkdir(parents=True, exist_ok=True)
        enc = tokenizer(["an example", "a second, longer example text"], padding=True, return_tensors="pt")
        names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in enc]
        with contextlib.suppress(AttributeError, ValueError):
            model.set_attn_implementation("eager")

        class Hidden(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, *args):
                return self.inner(**dict(zip(names, args))).last_hidden_state

        with _atomic(fp32) as tmp, _quiet(), torch.no_grad():
            torch.onnx.export(
                Hidden(model.eval()),
                tuple(enc[n] for n in names),
                str(tmp),
                input_names=names,
                output_names=["hidden"],
                dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]},
                opset_version=17,
                dynamo=False,
            )
            _fuse(tmp, model.config)
    if not quantize:
        return fp32
    if not int8.exists():
        try:
            from onnxruntime.quantization import QuantType, quantize_dynamic
        except ImportError as e:
            raise ImportError("embedder.backend=onnx-int8 needs onnx: pip install 'raychunk[onnx]'") from e
        with _atomic(int8) as tmp, _quiet():
            quantize_dynamic(
                str(fp32),
                str(tmp),
                weight_type=QuantType.QInt8,
                per_channel=True,
                extra_options={"DefaultTensorType": 1},  # FLOAT: the fused ops have no inferred type
            )
    return int8


def _fuse(path: Path, config) -> None:
    """BERT-family graphs get onnxruntime's attention, GELU and layer-norm fusions; others stay as exported."""
    if getattr(config, "model_type", "") not in ("bert", "roberta", "xlm-roberta", "mpnet", "distilbert"):
        return
    try:
        from onnxruntime.transformers.optimizer import optimize_model
    except ImportError as e:
        raise ImportError("embedder.backend=onnx needs onnx: pip install 'raychunk[onnx]'") from e
    fused = optimize_model(
        str(path),
        model_type="bert",
        num_heads=config.num_attention_heads,
        hidden_size=config.hidden_size,
    )
    fused.save_model_to_file(str(path))


@contextlib.contextmanager
def _quiet():
    """The exporter's warnings and the optimizer's and quantizer's root-logger hints, held back."""
    import logging

    root, level = logging.getLogger(), logging.getLogger().level
    root.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.setLevel(level)


@contextlib.contextmanager
def _atomic(target: Path):
    """Write to a temporary name, then rename: actors exporting at once never read half a file."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
