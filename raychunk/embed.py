"""The embed stage: a callable class, so that Ray Data loads the model once per actor.

On CUDA it runs in fp16. Each batch's texts are sorted longest first and embedded one forward pass
at a time, so padding stays small and, on CPU, the thread count can follow the node between passes.
Rows that are not chunks (document rows) get a null embedding.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

__all__ = [
    "EmbedChunks",
    "embed",
    "QueryEncoder",
    "SpareCores",
    "VectorCache",
    "embedding_dim",
    "forward_batch",
    "load_model",
    "model_version",
]

from raychunk.models import PACKAGED_MODEL, resolve_model
from raychunk.step import EmbedPlan, Step

log = logging.getLogger(__name__)


def _local(model: str) -> str:
    """A model folder as given (a job's plan resolved the name once), else the name resolved here."""
    return model if Path(model).is_dir() else resolve_model(model)


def load_model(model: str, device: str, backend: str = "torch"):
    """The model as an object with sentence-transformers' ``encode``: torch on CPU or CUDA (fp16), or
    onnxruntime on CPU for ``onnx`` / ``onnx-int8``. A BERT model of the usual shape on CPU runs
    without sentence-transformers' imports (``bert_encoder``: the same vectors, bit for bit)."""
    try:
        import torch
    except ImportError as e:
        raise ImportError("embedding needs torch: pip install torch==2.13.0 sentence-transformers") from e
    if backend == "torch" and (device == "cpu" or (device == "auto" and not torch.cuda.is_available())):
        from raychunk.bert_encoder import BertEncoder

        if (plain := BertEncoder.open(_local(model))) is not None:
            return plain, "cpu"
    try:
        SentenceTransformer = _sentence_transformers().SentenceTransformer
    except ImportError as e:
        raise ImportError(
            "embedding needs torch and sentence-transformers: pip install torch==2.13.0 sentence-transformers"
        ) from e
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # a bar for loading a local model is only noise on the console
    if backend != "torch":
        if device == "cuda":
            raise RuntimeError(f"embedder.backend={backend} runs on CPU; use embedder.backend=torch on CUDA")
        from raychunk.onnx_encoder import OnnxEncoder

        st = SentenceTransformer(_local(model), device="cpu")
        return OnnxEncoder(st, quantize=backend == "onnx-int8"), "cpu"
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("embedder.device=cuda but this worker has no CUDA device; use auto or cpu")
    st = SentenceTransformer(_local(model), device=device)
    if device == "cuda":
        st = st.half()
    return st, device


def _sentence_transformers():
    """``sentence_transformers``, imported without scikit-learn: its ``util.similarity`` imports
    ``sklearn.metrics`` (and with it scipy and pandas, ~800 modules, 1-2 s of the embed actor's
    start) for ``pairwise_distances``, which ``encode`` never calls. While it loads, ``sklearn``
    and ``sklearn.metrics`` are stand-ins whose functions import the real module when first called;
    then they leave ``sys.modules``, so a later ``import sklearn`` loads the real one."""
    import importlib
    import importlib.machinery
    import importlib.util
    import sys
    import types

    if "sentence_transformers" in sys.modules or "sklearn" in sys.modules:
        return importlib.import_module("sentence_transformers")
    if importlib.util.find_spec("sklearn") is None:
        return importlib.import_module("sentence_transformers")

    def deferred(name: str):
        def call(*args, **kwargs):
            return getattr(importlib.import_module("sklearn.metrics"), name)(*args, **kwargs)

        call.__name__ = call.__qualname__ = name
        return call

    class DeferredMetrics(types.ModuleType):
        def __getattr__(self, name: str):
            if name.startswith("__"):
                raise AttributeError(name)
            return deferred(name)

    package = types.ModuleType("sklearn")
    package.__path__ = []
    package.__spec__ = importlib.machinery.ModuleSpec("sklearn", None, is_package=True)
    metrics = DeferredMetrics("sklearn.metrics")
    metrics.__spec__ = importlib.machinery.ModuleSpec("sklearn.metrics", None)
    package.metrics = metrics
    stand_ins = {"sklearn": package, "sklearn.metrics": metrics}

    def drop_stand_ins() -> None:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]

    sys.modules.update(stand_ins)
    try:
        return importlib.import_module("sentence_transformers")
    except ImportError:  # something reached further into scikit-learn: the real one, then
        for name in [m for m in sys.modules if m.split(".")[0] == "sentence_transformers"]:
            del sys.modules[name]
        drop_stand_ins()
        return importlib.import_module("sentence_transformers")
    finally:
        drop_stand_ins()


def embedding_dim(model: str) -> int:
    """The model's output dimension, read from its config without loading weights when possible."""
    import json

    path = Path(_local(model))
    for cfg in (path / "config.json",):
        if cfg.exists():
            data = json.loads(cfg.read_text())
            pooling = path / "1_Pooling" / "config.json"
            if pooling.exists():
                return int(json.loads(pooling.read_text())["word_embedding_dimension"])
            if "hidden_size" in data:
                return int(data["hidden_size"])
    st, _ = load_model(model, "cpu")
    return int(st.get_embedding_dimension())


def model_version(model: str) -> str:
    """What identifies the model's weights without reading them: a hash of its folder's file names,
    sizes and small config files. A hub name not on disk is its own version (sentence-transformers
    would fetch it)."""
    import hashlib

    path = Path(_local(model))
    if not path.is_dir():
        return model
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        h.update(f"{f.relative_to(path)}|{f.stat().st_size}\n".encode())
        if f.suffix == ".json" and f.stat().st_size < 1 << 20:
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


class SpareCores:
    """Torch threads for an embedder on CPU: the node's cores less those the rest of the node kept
    busy since it last looked (``/proc/stat`` less this process's own CPU time; it looks between
    forward passes, at most every ``_MIN_WINDOW_S``), never under its
    ``share`` of Ray's CPUs nor over ``most`` (its fair part when the pool is several actors).
    Parsing and embedding overlap at the start of a run; once parsing is done the embedder takes the
    cores it left, and gives them back when other work returns."""

    def __init__(self, share: int, most: int):
        self.share, self.most = max(1, share), max(1, share, most)
        self.cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        self.current = 0
        # From the start, so the first batch already knows how busy the node was while the model loaded.
        self._last: tuple[float, float, float] | None = self._now()

    @staticmethod
    def _now() -> tuple[float, float, float]:
        return time.monotonic(), _node_busy_seconds(), time.process_time()

    def apply(self) -> int:
        import torch

        self.current = self.wanted()
        if torch.get_num_threads() != self.current:
            torch.set_num_threads(self.current)
        return self.current

    def wanted(self) -> int:
        now = self._now()
        last = self._last
        if last is None or now[1] < 0:
            self._last = now
            return self.share
        elapsed = now[0] - last[0]
        if elapsed < _MIN_WINDOW_S:  # /proc/stat counts in 10 ms ticks: too short a window is noise
            return self.current or self.share
        self._last = now
        others = max(0.0, (now[1] - last[1]) - (now[2] - last[2])) / elapsed
        return max(self.share, min(self.most, int(self.cores - others + 0.5)))


_MIN_WINDOW_S = 0.5


def _node_busy_seconds() -> float:
    """CPU seconds the whole node has spent busy since boot, or -1 where /proc/stat is missing."""
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return -1.0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    busy = sum(fields[:8]) - idle  # user nice system idle iowait irq softirq steal
    return busy / os.sysconf("SC_CLK_TCK")


# Texts per forward pass when embedder.batch_size is auto. On CPU, small length-sorted batches are
# fastest: 1,356 real PDF chunks on 2 threads took 13.3 s at 64, 10.2 s at 16 and 9.4-10.7 s at 4-8.
CPU_FORWARD_BATCH = 8
CUDA_FORWARD_BATCH = 64


def forward_batch(batch_size: int | str, device: str) -> int:
    if batch_size != "auto":
        return int(batch_size)
    return CUDA_FORWARD_BATCH if device == "cuda" else CPU_FORWARD_BATCH


class VectorCache:
    """Vectors by text, for one model: each distinct text is embedded once. In memory, and with
    ``folder`` also on disk under ``folder/<model key>/``, one ``.npz`` shard per batch that
    embedded something (written whole, then renamed into place), all read back at start: a later run
    embeds only the texts no run has embedded before. The key is the SHA-256 of the text; the model
    key hashes the model's version (``model_version``), backend, device and normalisation, so a
    vector is reused only for what would have computed the same one."""

    def __init__(self, folder: str | None, model_key: str, dim: int):
        import numpy as np

        self.dim = dim
        self.vectors: dict[bytes, object] = {}
        self.folder = Path(folder) / model_key if folder else None
        self.loaded = 0
        if self.folder is not None and self.folder.is_dir():
            for shard in sorted(self.folder.glob("*.npz")):
                try:
                    with np.load(shard) as z:
                        keys, vectors = z["keys"], z["vectors"]
                except (OSError, ValueError, KeyError) as e:
                    log.warning("embedding cache: %s unreadable, ignored (%s)", shard, e)
                    continue
                if vectors.ndim != 2 or vectors.shape[1] != dim:
                    continue
                for k, v in zip(keys, vectors):
                    self.vectors[k.tobytes()] = v
            self.loaded = len(self.vectors)

    @staticmethod
    def key(text: str) -> bytes:
        import hashlib

        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()

    def add(self, keys: list[bytes], vectors) -> None:
        import numpy as np

        for k, v in zip(keys, vectors):
            self.vectors[k] = v
        if self.folder is None or not keys:
            return
        import hashlib

        self.folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha256(b"".join(keys)).hexdigest()[:24]
        tmp = self.folder / f".{name}.{os.getpid()}.tmp.npz"
        np.savez(
            tmp,
            keys=np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 32),
            vectors=np.asarray(vectors, dtype=np.float32),
        )
        os.replace(tmp, self.folder / f"{name}.npz")


def cache_key(model: str, backend: str, device: str, normalize: bool) -> str:
    """What must match for a cached vector to be the one this embedder would compute."""
    import hashlib

    key = f"{model_version(model)}|{backend}|{device}|{normalize}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def embed(job, pool: EmbedPlan, *, on_batch=None, dedupe: bool = False, cache: str | None = None) -> Step:
    """The step that embeds every chunk row on the actor ``pool``, with the model ``job`` (a
    ``plan.JobPlan``) resolved. ``dedupe``: each distinct text once per actor; ``cache``: and once
    across runs, in that folder (the eval's settings share most texts)."""
    embedder = job.config.embedder
    return Step(
        "embed",
        EmbedChunks,
        kwargs={
            "on_batch": on_batch,
            "model": job.model.local,
            "batch_size": embedder.batch_size,
            "device": embedder.device,
            "normalize": embedder.normalize,
            "backend": embedder.backend,
            "threads": max(1, int(pool.cpus_per_actor)),
            "max_threads": pool.max_threads,
            "dedupe": dedupe,
            "cache": cache,
        },
        runs_as="pool",
        pool=pool,
        batch_size=pool.batch_rows,
    )


class EmbedChunks:
    """Embeds the ``text`` of every chunk row of an Arrow batch into ``embedding``:
    ``fixed_size_list<float32>[dim]``, built in Arrow so Ray never turns it into its tensor type."""

    def __init__(
        self,
        model: str = PACKAGED_MODEL,
        *,
        batch_size: int | str = "auto",
        device: str = "auto",
        normalize: bool = True,
        threads: int | None = None,
        max_threads: int | None = None,
        backend: str = "torch",
        dedupe: bool = False,
        cache: str | None = None,
        on_batch=None,
    ):
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        # Torch's OpenMP threads sleep between parallel regions instead of spinning: on a node whose
        # cores the parse tasks share, a spinning thread burns the core a parse needs (53 sample
        # chunks on 2 threads at load 5: 5.0-8.1 s wall and 3.6-6.3 CPU s spinning, 1.6-2.7 s and
        # 1.6-2.0 CPU s sleeping; the same vectors). Read when torch loads, so set before it does.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self.on_batch = on_batch  # told of each batch embedded (the job's progress)
        t = time.perf_counter()
        self.model, self.device = load_model(model, device, backend)
        self.threads = SpareCores(threads or 1, max_threads or threads or 1) if self.device == "cpu" else None
        self.dim = int(self.model.get_embedding_dimension())
        self.batch_size = forward_batch(batch_size, self.device)
        self.normalize = normalize
        # dedupe: each distinct text embedded once per actor (the eval's settings share most texts);
        # cache: and once across runs, in that folder.
        self.cache = (
            VectorCache(cache, cache_key(model, backend, self.device, normalize), self.dim)
            if dedupe or cache
            else None
        )
        log.info(
            "embedder %s (%s) on %s, dim %d, loaded in %.1f s",
            model,
            backend,
            self.device,
            self.dim,
            time.perf_counter() - t,
        )

    def __call__(self, batch):
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        from raychunk.faults import inject

        inject("embed")  # test-only faults; nothing unless RAYCHUNK_TEST_FAULTS is set
        is_chunk = pc.equal(batch.column("row_type"), "chunk").to_numpy(zero_copy_only=False)
        # An incremental run's rows arrive with ``embedding``: only the chunks still without one are
        # embedded, and ``embedded`` says which, for the run report.
        given = batch.column("embedding") if "embedding" in batch.column_names else None
        todo = is_chunk & given.is_null().to_numpy(zero_copy_only=False) if given is not None else is_chunk
        rows = np.flatnonzero(todo)
        vectors = np.zeros((batch.num_rows, self.dim), dtype=np.float32)
        if given is not None:
            kept = np.flatnonzero(is_chunk & ~todo)
            if len(kept):
                flat = given.combine_chunks().take(pa.array(kept)).flatten()
                vectors[kept] = flat.to_numpy(zero_copy_only=False).reshape(len(kept), self.dim)
        texts = batch.column("text").take(pa.array(rows)).to_pylist() if len(rows) else []
        if self.cache is not None:
            out = self._with_cache(batch, rows, texts, vectors, is_chunk, given)
            if self.on_batch is not None:
                self.on_batch(batch)
            return out
        self._encode(texts, rows, vectors)
        values = pa.array(vectors.reshape(-1), type=pa.float32())
        column = pa.FixedSizeListArray.from_arrays(values, self.dim, mask=pa.array(~is_chunk))
        if self.on_batch is not None:
            self.on_batch(batch)
        if given is None:
            return batch.append_column("embedding", column)
        batch = batch.set_column(batch.schema.get_field_index("embedding"), "embedding", column)
        return batch.append_column("embedded", pa.array(todo))

    def _with_cache(self, batch, rows, texts, vectors, is_chunk, given):
        """Embed only the texts the cache lacks, each once; ``embedded`` says which rows computed
        their vector (the first row of each new text) and which reused one."""
        import numpy as np
        import pyarrow as pa

        keys = [self.cache.key(t) for t in texts]
        first: dict[bytes, int] = {}
        for j, k in enumerate(keys):
            if k not in self.cache.vectors and k not in first:
                first[k] = j
        new = list(first.values())
        fresh = np.zeros((len(new), self.dim), dtype=np.float32)
        self._encode([texts[j] for j in new], np.arange(len(new)), fresh)
        self.cache.add([keys[j] for j in new], fresh)
        for j, k in enumerate(keys):
            vectors[rows[j]] = self.cache.vectors[k]
        embedded = np.zeros(batch.num_rows, dtype=bool)
        embedded[rows[new]] = True
        values = pa.array(vectors.reshape(-1), type=pa.float32())
        column = pa.FixedSizeListArray.from_arrays(values, self.dim, mask=pa.array(~is_chunk))
        if given is None:
            batch = batch.append_column("embedding", column)
        else:
            batch = batch.set_column(batch.schema.get_field_index("embedding"), "embedding", column)
        return batch.append_column("embedded", pa.array(embedded))

    def _encode(self, texts: list[str], rows, vectors) -> None:
        """``vectors[rows[i]]`` = the embedding of ``texts[i]``."""
        # Longest first over the whole batch (as sentence-transformers sorts), one forward pass at a
        # time, so the thread count follows the node between passes: the embedder grows into the cores
        # parsing leaves idle mid-batch, not only at the next batch.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            if self.threads is not None:
                n = self.threads.apply()
                if hasattr(self.model, "set_num_threads"):  # onnxruntime: one session per thread count
                    self.model.set_num_threads(n)
            part = order[start : start + self.batch_size]
            vectors[rows[part]] = self.model.encode(
                [texts[i] for i in part],
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=self.normalize,
                show_progress_bar=False,
            )


class QueryEncoder:
    """Embeds questions as an output's chunks were embedded: the model, backend and normalisation of
    its ``settings.vectors`` (``report.json``), on CPU in fp32 (a GPU run's fp16 vectors are within
    rounding of these)."""

    def __init__(self, vectors: dict):
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.model_name = vectors["model"]
        self.normalize = bool(vectors.get("normalize", True))
        self.model, _ = load_model(self.model_name, "cpu", vectors.get("backend") or "torch")
        self.dim = int(self.model.get_embedding_dimension())
        if vectors.get("dim") and int(vectors["dim"]) != self.dim:
            raise ValueError(
                f"the output's vectors have {vectors['dim']} dimensions but {self.model_name} here "
                f"gives {self.dim}: is it another model under the same name?"
            )

    def __call__(self, texts: list[str]):
        """One float32 row per text, normalised when the output's vectors are."""
        import numpy as np

        return np.asarray(
            self.model.encode(
                texts,
                batch_size=CPU_FORWARD_BATCH,
                convert_to_numpy=True,
                normalize_embeddings=self.normalize,
                show_progress_bar=False,
            ),
            dtype=np.float32,
        )


_SAMPLE_TEXT = (
    "Requests submitted within thirty days of purchase are honoured in full. After that, refunds are "
    "prorated to the unused part of the billing period, and paid to the original payment method. "
)


def measure_throughput(
    model: str, *, tokens_per_text: int, texts: int = 32, device: str = "auto", backend: str = "torch"
) -> dict:
    """Embedding throughput of this machine in tokens/s, on ``texts`` texts of about
    ``tokens_per_text`` tokens (after one warm-up batch)."""
    st, device = load_model(model, device, backend)
    if hasattr(st, "set_num_threads"):  # onnxruntime: every core, as torch takes by default
        st.set_num_threads(
            len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        )
    words = _SAMPLE_TEXT.split()
    text = " ".join(words[i % len(words)] for i in range(max(8, int(tokens_per_text * 0.8))))
    if hasattr(st, "word_pieces"):  # bert_encoder
        n_tokens = st.word_pieces(text)
    else:
        n_tokens = len(st.tokenizer(text, add_special_tokens=False)["input_ids"])
    n_tokens = min(n_tokens, st.max_seq_length)
    st.encode([text] * 4, batch_size=4, show_progress_bar=False)
    t = time.perf_counter()
    st.encode([text] * texts, batch_size=min(texts, forward_batch("auto", device)), show_progress_bar=False)
    seconds = time.perf_counter() - t
    return {
        "tokens_per_second": texts * n_tokens / seconds,
        "device": device,
        "backend": backend,
        "texts": texts,
        "tokens_per_text": n_tokens,
        "seconds": round(seconds, 3),
    }
