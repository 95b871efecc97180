"""The embed actor's start: the model loads without scikit-learn, and embeds as it does with it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_SCRIPT = """
import json, sys
if sys.argv[1] == "eager":
    import sklearn.metrics  # what sentence_transformers' own import brings in
from raychunk.embed import load_model
from raychunk.models import PACKAGED_MODEL, resolve_model
model, _ = load_model(resolve_model(PACKAGED_MODEL), "cpu")
vectors = model.encode(["Refunds are prorated.", "Ошибка 503: сервис недоступен"], normalize_embeddings=True)
loaded = "sklearn" in sys.modules
import sklearn.metrics  # a later import finds the real package, not the stand-in
from sentence_transformers.util import similarity  # its deferred function calls the real one
d = similarity.pairwise_distances([[0.0, 1.0]], [[1.0, 1.0]])
print(json.dumps([loaded, hasattr(sklearn.metrics, "roc_curve"), float(d[0][0]), vectors.tolist()]))
"""


def _run(how: str) -> list:
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT, how], capture_output=True, text=True, cwd=ROOT, check=True
    ).stdout
    return json.loads(out.splitlines()[-1])


def test_the_model_loads_without_scikit_learn_and_embeds_the_same():
    deferred, eager = _run("deferred"), _run("eager")
    assert deferred[0] is False and eager[0] is True  # scikit-learn not loaded by the model's load
    assert deferred[1] and deferred[2] == 1.0  # afterwards the real module serves every name
    assert deferred[3] == eager[3]  # the same vectors, bit for bit


def test_the_embed_actor_s_torch_threads_sleep_between_passes():
    """OpenMP reads its wait policy once, when torch loads: the embedder sets it first, and the
    runtime reports no spinning (OMP_DISPLAY_ENV; left unset, GNU OpenMP spins 300,000 times before
    it sleeps), so its threads never spin on cores the parse tasks need."""
    script = (
        "from raychunk.embed import EmbedChunks\n"
        "e = EmbedChunks(threads=2)\n"
        "import pyarrow as pa\n"
        "e(pa.table({'row_type': ['chunk'], 'text': ['Refunds are prorated.']}))\n"
    )
    import os

    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env.update(OMP_DISPLAY_ENV="VERBOSE", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env, check=True
    )
    assert "GOMP_SPINCOUNT = '0'" in out.stderr
