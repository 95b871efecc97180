"""The tune job: search each document type's chunk profile on labelled questions, one change at a
time, and write the doc-types file ``raychunk run --doc-types`` takes.

In this process, without Ray: the labelled documents are parsed once and classified with the given
doc-types file; the questions are split by a hash of their id into a tuning half and a held-out half.
For each type with enough tuning questions, starting from its profile, every candidate value of one
field (size, overlap, table cap, strategy) rechunks that type's documents only, and the whole corpus
is searched as one pooled index, as ``raychunk eval`` scores it (``evaluation.metrics.score_corpus``).
A candidate is kept when its paired 95% interval of hit@k against the current profile, on that
type's tuning questions, lies above 0, or when it is within noise and its index is smaller: the
interval holds 0 and the mean loses at most ``margin`` (0.02 by default: on a few questions an
interval of [-0.33, 0] holds 0 too, and a third of them lost is no tie). Chunk texts are embedded through ``embed.VectorCache``: each distinct text once,
and with ``cache`` once across runs (the same folder ``raychunk eval --cache`` fills), so a step
embeds only the chunks it changed. The tuned profiles are then scored against the starting ones on
the held-out questions, which the search never saw.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import pickle
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

__all__ = [
    "FIELDS",
    "Outcome",
    "TuneCorpus",
    "chunk_corpus",
    "load_tune_corpus",
    "profiles_for",
    "run_tune",
    "score",
    "split",
    "tune",
    "write_doc_types",
]

# The values tried for each field, one field at a time, in this order. A value the embedder's input
# limit refuses (``chunking.check_profiles``) is not tried.
FIELDS = {
    "max_tokens": (160, 200, 250),
    "overlap": (0.0, 0.1),
    "table_max_tokens": (128, 250),
    "strategy": ("structure", "fixed"),
}


@dataclass(frozen=True, slots=True)
class Doc:
    source: str
    parsed: object
    doc_type: str
    counter: object  # a CachedCounter of this document, shared by every setting


@dataclass(frozen=True, slots=True)
class TuneCorpus:
    docs: list[Doc]
    queries: list  # ResolvedQuery, in file order
    doc_type: list[str]  # of each question's document


@dataclass(frozen=True, slots=True)
class Scored:
    vectors: dict[str, int]  # chunks by doc type
    hit: list[float]  # per question
    inside: list[float]  # per question: the passage lies inside one chunk


@dataclass(frozen=True, slots=True)
class Step:
    """One change tried: the field, its value, the paired difference in hit@k against the profile it
    was tried on (tuning questions of the type), the vectors of both, and whether it was kept."""

    doc_type: str
    field: str
    value: object
    diff: float
    interval: tuple[float, float]
    vectors: int
    vectors_before: int
    kept: bool
    why: str


@dataclass(frozen=True)
class Outcome:
    profiles: dict  # doc type → the tuned Profile
    steps: list[Step]  # every change tried
    chosen: list[Step]  # the changes made, in order
    refused: dict[str, str]  # doc type → why it was not tuned
    held_out: dict  # the tuned profiles against the starting ones on the held-out questions
    embedded: int  # texts embedded by this run
    reused: int  # texts found in the cache


def split(qid: str, holdout: float) -> bool:
    """Whether question ``qid`` is held out: a hash of the id, so the split is the same every run."""
    return int(hashlib.sha256(qid.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < holdout


def load_tune_corpus(inputs: str | Path, queries: str | Path, types, *, counter, cache=None) -> TuneCorpus:
    """The documents the labelled questions name (each ``source`` a path suffix of one file under
    ``inputs``), parsed and classified, and the questions with their passages located. ``counter``
    is the plan's token counter (``JobPlan.counter()``), shared through one ``CachedCounter`` a
    document by every setting."""
    from raychunk.classify import classify
    from raychunk.evaluation.labels import load_queries, match_source, resolve_queries
    from raychunk.parse import parse_path
    from raychunk.tokens import CachedCounter

    root = Path(inputs)
    if not root.is_dir():
        raise ValueError(f"--input {inputs}: not a folder")
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    labelled = load_queries(queries)
    if not labelled:
        raise ValueError(f"{queries}: no labelled questions")
    named = sorted({match_source(q.source, files) for q in labelled})
    docs = []
    for rel in named:
        parsed = _parse(root / rel, parse_path, cache)
        if parsed.document.status != "ok":
            raise ValueError(f"{rel}: labelled but did not parse ({parsed.document.reason})")
        kind = classify(parsed, types.thresholds, types.overrides).doc_type
        docs.append(Doc(parsed.document.source, parsed, kind, CachedCounter(counter)))
    resolved = resolve_queries(labelled, {d.source: d.parsed.text for d in docs})
    kinds = {d.source: d.doc_type for d in docs}
    return TuneCorpus(docs, resolved, [kinds[q.source] for q in resolved])


def _parse(path: Path, parse_path, cache):
    """``parse_path(path)``, kept in ``cache/parsed`` keyed by the file's bytes and the parser's
    source (its modules and pandoc's filter), so a second tuning run does not parse again."""
    if cache is None:
        return parse_path(path)
    import raychunk

    code = hashlib.sha256()
    pkg = Path(raychunk.__file__).parent
    for f in (
        sorted((pkg / "parse").glob("*.py")) + sorted((pkg / "parse").glob("*.lua")) + [pkg / "document.py"]
    ):
        code.update(f.read_bytes())
    key = hashlib.sha256(path.read_bytes() + code.digest() + str(path).encode()).hexdigest()[:32]
    kept = Path(cache) / "parsed" / f"{key}.pickle"
    if kept.exists():
        return pickle.loads(kept.read_bytes())
    parsed = parse_path(path)
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_bytes(pickle.dumps(parsed))
    return parsed


class Embedder:
    """Texts → normalised vectors through ``VectorCache``, keyed as the embed stage keys it."""

    def __init__(self, model: str, cache=None):
        from raychunk.embed import VectorCache, cache_key, load_model

        self.model, device = load_model(model, "cpu")
        dim = int(self.model.get_embedding_dimension())
        self.cache = VectorCache(str(cache) if cache else None, cache_key(model, "torch", device, True), dim)
        self.embedded = 0
        self.reused: set[bytes] = set()

    def __call__(self, texts: list[str]):
        import numpy as np

        keys = [self.cache.key(t) for t in texts]
        todo = dict.fromkeys(k for k in keys if k not in self.cache.vectors)
        self.reused.update(k for k in keys if k not in todo)
        by_key = dict(zip(keys, texts))
        new = list(todo)
        for i in range(0, len(new), 256):  # kept as it goes: a stopped run loses one part at most
            part = new[i : i + 256]
            vecs = self.model.encode(
                [by_key[k] for k in part],
                batch_size=8,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            ).astype(np.float32)
            self.cache.add(part, vecs)
            self.embedded += len(part)
        return np.stack([self.cache.vectors[k] for k in keys])


def profiles_for(spec: str, types) -> dict:
    """A setting as the scripts spell it, as profiles by doc type: ``profile`` (each type's profile
    in ``types``), ``profile@FILE`` (another doc-types file's), or ``STRATEGY:MAX[:key=value,...]``
    for every type, a peer library too (``structure:250:table_max_tokens=128``, ``langchain_markdown:200``)."""
    from raychunk.chunking import Profile
    from raychunk.config import load_doc_types

    if spec == "profile":
        return dict(types.profiles)
    if spec.startswith("profile@"):
        return dict(load_doc_types(spec.split("@", 1)[1]).profiles)
    strategy, _, rest = spec.partition(":")
    size, _, extra = rest.partition(":")
    if not size.isdigit():
        raise ValueError(
            f"setting {spec!r}: expected profile, profile@FILE or STRATEGY:MAX_TOKENS[:key=value,...]"
        )
    fields: dict = {"strategy": strategy, "max_tokens": int(size)}
    for kv in filter(None, extra.split(",")):
        key, _, v = kv.partition("=")
        fields[key] = float(v) if "." in v else int(v)
    try:
        p = Profile(**fields)
    except (TypeError, ValueError) as e:
        raise ValueError(f"setting {spec!r}: {e}") from e
    return {t: p for t in types.profiles}


def chunk_corpus(corpus: TuneCorpus, profiles: dict) -> list[list]:
    """Each document's chunks under its type's profile (a peer library's too: ``peers.chunk_any``),
    in the order of ``corpus.docs``."""
    from raychunk.peers import chunk_any

    return [chunk_any(d.parsed, profiles[d.doc_type], d.counter, doc_type=d.doc_type) for d in corpus.docs]


def score(corpus: TuneCorpus, profiles: dict, qvecs, embed: Embedder, *, k: int) -> Scored:
    """Every question against the pooled index of the corpus chunked with ``profiles`` (by type)."""
    from raychunk.evaluation.metrics import as_indexed, score_corpus
    from raychunk.evaluation.partials import inside_one_chunk

    chunks, vectors, by_source = [], {}, {}
    for d, mine in zip(corpus.docs, chunk_corpus(corpus, profiles)):
        chunks.extend(mine)
        vectors[d.doc_type] = vectors.get(d.doc_type, 0) + len(mine)
        by_source[d.source] = [{"char_start": c.char_start, "char_end": c.char_end} for c in mine]
    rows = score_corpus(
        corpus.queries,
        qvecs,
        [as_indexed(c.to_dict()) for c in chunks],
        embed([c.text for c in chunks]),
        k=k,
        parent_budget=512,
    )
    inside = set()
    for source, spans in by_source.items():
        mine = [
            (i, [[p.start, p.end] for p in q.passages])
            for i, q in enumerate(corpus.queries)
            if q.source == source
        ]
        inside.update(inside_one_chunk(spans, mine))
    return Scored(
        vectors,
        [float(r["hit"]) for r in rows["chunks"]],
        [float(i in inside) for i in range(len(corpus.queries))],
    )


def _candidates(profile, counter):
    """``(field, value, profile)`` for every one-field change of ``profile`` that is valid and within
    the embedder's input limit."""
    from raychunk.chunking import check_profiles

    for name, values in FIELDS.items():
        for value in values:
            if getattr(profile, name) == value or (name == "table_max_tokens" and profile.table_cap == value):
                continue
            try:
                cand = dataclasses.replace(profile, **{name: value})
                check_profiles({"candidate": cand}, counter)
            except ValueError:
                continue
            yield name, value, cand


def tune(
    corpus: TuneCorpus,
    types,
    *,
    model: str,
    counter,
    cache=None,
    holdout: float = 0.5,
    min_questions: int = 20,
    k: int = 5,
    only: list[str] | None = None,
    margin: float = 0.02,
    say=print,
) -> Outcome:
    """Each type's profile, searched one field at a time on its tuning questions (see the module)."""
    from raychunk.stats import paired_difference

    embed = Embedder(model, cache)
    qvecs = embed([q.query for q in corpus.queries])
    held = [split(q.qid, holdout) for q in corpus.queries]
    start = dict(types.profiles)
    profiles = dict(start)
    current = score(corpus, profiles, qvecs, embed, k=k)
    steps, chosen, refused = [], [], {}
    for kind in sorted(set(corpus.doc_type)):
        if only and kind not in only:
            continue
        idx = [i for i, (t, h) in enumerate(zip(corpus.doc_type, held)) if t == kind and not h]
        if len(idx) < min_questions:
            total = sum(t == kind for t in corpus.doc_type)
            need = -(-min_questions // max(1e-9, 1 - holdout)) if holdout < 1 else min_questions
            refused[kind] = (
                f"{len(idx)} tuning questions ({total} labelled, {holdout:.0%} held out); needs "
                f"{min_questions} to tune on: label about {max(1, int(need) - total)} more"
            )
            say(f"{kind}: not tuned: {refused[kind]}")
            continue
        say(
            f"{kind}: {len(idx)} tuning questions; start {_show(profiles[kind])}, hit@{k} {_mean(current.hit, idx):.3f}"
        )
        for name in FIELDS:
            best = None
            for field, value, cand in _candidates(profiles[kind], counter):
                if field != name:
                    continue
                trial = score(corpus, {**profiles, kind: cand}, qvecs, embed, k=k)
                d = paired_difference([trial.hit[i] for i in idx], [current.hit[i] for i in idx])
                lo, hi = d["interval"]
                n, n0 = trial.vectors[kind], current.vectors[kind]
                if lo > 0:
                    kept, why = True, "better beyond noise"
                elif hi >= 0 and d["mean"] >= -margin and n < n0:
                    kept, why = True, f"within noise and {n0 - n:,} fewer vectors"
                else:
                    kept, why = (
                        False,
                        "worse" if hi < 0 or d["mean"] < -margin else "within noise, not smaller",
                    )
                step = Step(kind, field, value, d["mean"], (lo, hi), n, n0, kept, why)
                steps.append(step)
                say(
                    f"  {field}={value}: hit@{k} {d['mean']:+.3f} [{lo:+.3f}, {hi:+.3f}], vectors {n0:,} -> {n:,}: {'kept' if kept else 'dropped'} ({why})"
                )
                # Of the kept values of one field, the best beyond noise, else the smallest index.
                if kept and (best is None or (lo > 0, -n) > (best[0].interval[0] > 0, -best[0].vectors)):
                    best = (step, cand, trial)
            if best is not None:
                step, profiles[kind], current = best
                chosen.append(step)
                say(f"  -> {step.field}={step.value}")
        if profiles[kind] != start[kind]:
            say(f"{kind}: tuned to {_show(profiles[kind])} (was {_show(start[kind])})")
        else:
            say(f"{kind}: unchanged, no change measured better or smaller within noise")
    held_idx = [i for i, h in enumerate(held) if h]
    before = score(corpus, start, qvecs, embed, k=k)
    out = {"questions": len(held_idx), "by_type": {}}
    if held_idx:
        d = paired_difference([current.hit[i] for i in held_idx], [before.hit[i] for i in held_idx])
        out.update(_summary(current, before, held_idx, d))
        for kind in sorted(set(corpus.doc_type)):
            ix = [i for i in held_idx if corpus.doc_type[i] == kind]
            if ix:
                dk = paired_difference([current.hit[i] for i in ix], [before.hit[i] for i in ix])
                out["by_type"][kind] = _summary(current, before, ix, dk) | {"questions": len(ix)}
    return Outcome(profiles, steps, chosen, refused, out, embed.embedded, len(embed.reused))


def _summary(after: Scored, before: Scored, idx: list[int], d: dict) -> dict:
    return {
        "hit_before": _mean(before.hit, idx),
        "hit_after": _mean(after.hit, idx),
        "difference": d["mean"],
        "interval": d["interval"],
        "inside_before": _mean(before.inside, idx),
        "inside_after": _mean(after.inside, idx),
        "vectors_before": sum(before.vectors.values()),
        "vectors_after": sum(after.vectors.values()),
    }


def _mean(v: list[float], idx: list[int]) -> float:
    return sum(v[i] for i in idx) / len(idx) if idx else 0.0


def _show(p) -> str:
    return f"{p.strategy} {p.max_tokens}, overlap {p.overlap:g}, table cap {p.table_cap}"


def _as_yaml_profile(p) -> dict:
    """A profile's fields that differ from ``Profile()``'s, strategy and size always."""
    from raychunk.chunking.model import Profile

    base = Profile()
    out = {"strategy": p.strategy, "max_tokens": p.max_tokens}
    for f in dataclasses.fields(p):
        v = getattr(p, f.name)
        if f.name not in out and v != getattr(base, f.name):
            out[f.name] = v
    return out


def write_doc_types(path: str | Path, types, outcome: Outcome, *, source: str) -> Path:
    """The doc-types file with the tuned profiles, the thresholds and overrides as they were, and a
    header saying what changed; checked by loading it back as ``run --doc-types`` does."""
    import yaml

    from raychunk.config import load_doc_types

    lines = [f"# Written by raychunk tune from {source}."]
    for kind, p in sorted(outcome.profiles.items()):
        if p != types.profiles[kind]:
            lines.append(f"# {kind}: {_show(types.profiles[kind])} -> {_show(p)}")
    for s in outcome.chosen:
        lines.append(
            f"#   {s.doc_type} {s.field}={s.value}: hit {s.diff:+.3f} [{s.interval[0]:+.3f}, {s.interval[1]:+.3f}],"
            f" vectors {s.vectors_before:,} -> {s.vectors:,} ({s.why})"
        )
    for kind, why in sorted(outcome.refused.items()):
        lines.append(f"# {kind}: not tuned: {why}")
    data = {
        "types": {kind: _as_yaml_profile(p) for kind, p in outcome.profiles.items()},
        "thresholds": dict(types.thresholds),
        "overrides": [dict(r) for r in types.overrides],
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n" + yaml.safe_dump(data, sort_keys=False, default_flow_style=None))
    load_doc_types(path)  # fails here, not in a later run, if the file is not one run accepts
    return path


def run_tune(
    inputs,
    queries,
    *,
    doc_types=None,
    output: str | Path = "out/tune/doc_types.yaml",
    cache=None,
    holdout: float = 0.5,
    min_questions: int = 20,
    k: int = 5,
    only: list[str] | None = None,
    margin: float = 0.02,
    say=print,
) -> dict:
    """The job, top to bottom: its plan resolved once (``plan.resolve_plan``: the doc-types file read
    and checked against the embedder's input limit, the model and tokenizer resolved), the labelled
    documents parsed and classified, each type's profile searched, the doc-types file written and
    ``tune.json`` beside it; returns the report. Its steps run in this process, not on Ray: every
    change tried rechunks a few documents and scores them in milliseconds, where a task would cost
    more to schedule than to run."""
    from raychunk.config import build_run_config, load_config
    from raychunk.plan import resolve_plan

    t0 = time.perf_counter()
    overrides = {"input": str(inputs)} | ({"chunk.doc_types": str(doc_types)} if doc_types else {})
    job = resolve_plan(build_run_config(load_config(), overrides))
    types = job.doc_types
    corpus = load_tune_corpus(inputs, queries, types, counter=job.counter(), cache=cache)
    counts: dict[str, int] = {}
    for t in corpus.doc_type:
        counts[t] = counts.get(t, 0) + 1
    say(
        f"{len(corpus.docs)} documents, {len(corpus.queries)} questions by type: "
        + ", ".join(f"{t} {n}" for t, n in sorted(counts.items()))
        + f"; {holdout:.0%} held out"
    )
    outcome = tune(
        corpus,
        types,
        model=job.model.name,
        counter=job.counter(),
        cache=cache,
        holdout=holdout,
        min_questions=min_questions,
        k=k,
        only=only,
        margin=margin,
        say=say,
    )
    written = write_doc_types(output, types, outcome, source=str(queries))
    h = outcome.held_out
    if h.get("questions"):
        lo, hi = h["interval"]
        say(
            f"held out ({h['questions']} questions the search never saw): hit@{k} {h['hit_before']:.3f} -> "
            f"{h['hit_after']:.3f}, {h['difference']:+.3f} [{lo:+.3f}, {hi:+.3f}]; vectors "
            f"{h['vectors_before']:,} -> {h['vectors_after']:,}; inside one chunk {h['inside_before']:.3f} -> "
            f"{h['inside_after']:.3f}"
        )
    say(
        f"wrote {written} ({time.perf_counter() - t0:.0f} s; {outcome.embedded:,} texts embedded, "
        f"{outcome.reused:,} reused from the cache or an earlier step)"
    )
    report = {
        "doc_types": str(written),
        "profiles": {t: _as_yaml_profile(p) for t, p in outcome.profiles.items()},
        "steps": [dataclasses.asdict(s) for s in outcome.steps],
        "chosen": [dataclasses.asdict(s) for s in outcome.chosen],
        "refused": outcome.refused,
        "held_out": outcome.held_out,
        "embedded": outcome.embedded,
        "reused": outcome.reused,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    (written.parent / "tune.json").write_text(json.dumps(report, indent=2, default=str))
    return report
