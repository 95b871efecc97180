"""A fast tuning loop for the chunker on the labelled corpus set, in this process and without Ray.
(``raychunk tune`` is the user's job that searches each type's profile; ``scripts/levers.py`` adds
"inside one chunk" and uses the eval's ``--cache``; this script keeps its own sqlite cache.)

    python scripts/tune.py --setting profile --setting structure:256 --setting fixed:256 \\
        --compare structure:256,fixed:256 --save out/tune/base.json
    python scripts/tune.py --setting structure:256 --against out/tune/base.json   # after a change

Each labelled document is parsed once (``raychunk.parse.parse_path``, default options, as the jobs
parse) and classified with the given doc-types file; every setting chunks it in-process with
``chunk_document`` (or a peer library, ``langchain_markdown:256``: ``peers.chunk_any``) (a setting is ``profile``, the per-type profiles as ``raychunk run`` builds them,
or ``STRATEGY:MAX_TOKENS[:key=value,...]`` over ``Profile``'s fields, e.g.
``structure:256:min_tokens=40,overlap=0.1``). Chunk texts (header line included: what the embed stage
embeds) and questions are embedded with the eval's embedder (``raychunk.embed.load_model``, torch on CPU,
normalised), through an on-disk cache keyed by sha256 of model name and text, so a run after a change
embeds only the chunks that changed. Every question is scored with ``evaluation.metrics.score_corpus``
over all documents pooled, as ``raychunk eval`` scores it; quotes are located with
``evaluation.labels.resolve_queries`` and a question whose quote does not locate is skipped (listed).

Prints per setting and subset (the ``tags`` of each question): vectors, hit@k, recall, IoU, MRR,
tokens read, each with a 95% bootstrap interval; ``--compare A,B`` adds paired differences A - B
by subset; ``--against FILE`` pairs each setting with the same-named one of an earlier ``--save``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sqlite3
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's raychunk, not the editable install's
DEFAULT_QUERIES = ROOT / "evals" / "corpus.jsonl"
DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus"
DEFAULT_TYPES = ROOT / "configs" / "doc_types.yaml"
DEFAULT_CACHE = ROOT / "out" / "tune-cache" / "embeddings.sqlite"
MODEL = "all-MiniLM-L6-v2"
SUBSETS = ("all", "structured", "weak", "wiki", "heading", "table", "list", "prose")
SHOWN = ("hit", "recall", "iou", "rr", "tokens")


@dataclasses.dataclass(frozen=True, slots=True)
class Doc:
    source: str
    parsed: object
    doc_type: str
    counter: object  # a CachedCounter of this document, shared by every setting


def parse_setting(spec: str):
    """``profile`` (None: each type's own), or ``STRATEGY:MAX[:k=v,...]`` as a ``Profile``."""
    from raychunk.chunking import Profile

    if spec == "profile":
        return None
    strategy, _, rest = spec.partition(":")
    size, _, extra = rest.partition(":")
    if not size.isdigit():
        raise SystemExit(f"--setting {spec!r}: expected profile or STRATEGY:MAX_TOKENS[:key=value,...]")
    fields: dict = {"strategy": strategy, "max_tokens": int(size)}
    for kv in filter(None, extra.split(",")):
        k, _, v = kv.partition("=")
        fields[k] = float(v) if "." in v else int(v)
    try:
        return Profile(**fields)
    except (TypeError, ValueError) as e:
        raise SystemExit(f"--setting {spec!r}: {e}") from e


def labelled_docs(queries: Path, corpus: Path, types) -> list[Doc]:
    """The documents a labelled set names (each ``source`` a path suffix of one corpus file), parsed."""
    from raychunk.evaluation.labels import match_source

    rows = [json.loads(x) for x in queries.read_text().splitlines() if x.strip()]
    files = sorted(
        p.relative_to(corpus).as_posix()
        for p in corpus.rglob("*")
        if p.is_file() and not p.relative_to(corpus).parts[0].startswith("_")
    )
    return load_docs(corpus, sorted({match_source(r["source"], files) for r in rows}), types)


def load_docs(corpus: Path, sources: list[str], types) -> list[Doc]:
    from raychunk.classify import classify
    from raychunk.parse import parse_path
    from raychunk.tokens import CachedCounter, load_counter

    inner = load_counter(MODEL)
    out = []
    for rel in sources:
        parsed = _parsed(corpus / rel, parse_path)
        if parsed.document.status != "ok":
            raise SystemExit(f"{rel} did not parse: {parsed.document.reason}")
        kind = classify(parsed, types.thresholds, types.overrides).doc_type
        out.append(Doc(parsed.document.source, parsed, kind, CachedCounter(inner)))
    return out


def _parsed(path: Path, parse_path):
    """``parse_path(path)``, pickled under ``out/tune-cache/parsed`` keyed by the file's bytes and the
    parser's source, so a run after a chunker change does not parse again."""
    import pickle

    code = hashlib.sha256()
    for f in sorted((ROOT / "raychunk" / "parse").glob("*.py")) + [ROOT / "raychunk" / "document.py"]:
        code.update(f.read_bytes())
    key = hashlib.sha256(path.read_bytes() + code.digest()).hexdigest()[:32]
    cached = DEFAULT_CACHE.parent / "parsed" / f"{key}.pickle"
    if cached.exists():
        return pickle.loads(cached.read_bytes())
    parsed = parse_path(path)
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_bytes(pickle.dumps(parsed))
    return parsed


def chunk_all(docs: list[Doc], profile, types) -> list:
    from raychunk.peers import chunk_any  # raychunk's strategies, and the peer libraries

    chunks = []
    for d in docs:
        p = profile or types.profiles[d.doc_type]
        chunks.extend(chunk_any(d.parsed, p, d.counter, doc_type=d.doc_type))
    return chunks


class Embedder:
    """Texts → normalised float32 vectors, through a sqlite cache keyed by sha256(model, text)."""

    def __init__(self, path: Path, model: str = MODEL):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path, timeout=120)
        self.db.execute("create table if not exists v (k text primary key, v blob)")
        self.model_name, self.model, self.embedded = model, None, 0

    def key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model_name}\0{text}".encode()).hexdigest()

    def __call__(self, texts: list[str]):
        import numpy as np

        keys = [self.key(t) for t in texts]
        found: dict[str, bytes] = {}
        uniq = list(dict.fromkeys(keys))
        for i in range(0, len(uniq), 500):
            part = uniq[i : i + 500]
            q = f"select k, v from v where k in ({','.join('?' * len(part))})"
            found.update(self.db.execute(q, part).fetchall())
        todo = {k: t for k, t in zip(keys, texts) if k not in found}
        if todo:
            if self.model is None:
                from raychunk.embed import load_model

                self.model, _ = load_model(self.model_name, "cpu")
            items = sorted(todo.items(), key=lambda kv: -len(kv[1]))  # longest first, as the embed stage
            for i in range(0, len(items), 256):
                part = items[i : i + 256]
                vecs = self.model.encode(
                    [t for _, t in part],
                    batch_size=8,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                ).astype(np.float32)
                rows = [(k, v.tobytes()) for (k, _), v in zip(part, vecs)]
                self.db.executemany("insert or replace into v values (?, ?)", rows)
                self.db.commit()
                found.update(rows)
                self.embedded += len(part)
                print(f"  embedded {self.embedded}/{len(todo)}", file=sys.stderr, flush=True)
        return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])


def load_questions(path: Path, docs: list[Doc]):
    """The questions whose passages locate (``resolve_queries``), their tags, and the skipped ids."""
    from raychunk.evaluation.labels import LabelledQuery, resolve_queries

    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    texts = {d.source: d.parsed.text for d in docs}
    resolved, tags, skipped = [], [], []
    for row in rows:  # read here: this checkout's load_queries does not take ``tags`` yet
        q = LabelledQuery(row["id"], row["query"].strip(), row["source"].strip(), tuple(row["passages"]))
        try:
            (r,) = resolve_queries([q], texts)
        except ValueError:
            skipped.append(q.qid)
            continue
        resolved.append(r)
        tags.append(set(row.get("tags", ())))
    return resolved, tags, skipped


def score(docs, queries, qvecs, chunks, embed, *, k: int, parent_budget: int) -> dict:
    from raychunk.evaluation.metrics import as_indexed, score_corpus

    vecs = embed([c.text for c in chunks])
    rows = score_corpus(
        queries, qvecs, [as_indexed(c.to_dict()) for c in chunks], vecs, k=k, parent_budget=parent_budget
    )
    return {
        "vectors": len(chunks),
        "vectors_by_doc": {
            d.source.rsplit("/", 1)[-1]: sum(c.source == d.source for c in chunks) for d in docs
        },
        "per_question": [
            {m: r[m] for m in (*SHOWN, "top")} | {"s2b_recall": s["recall"]}
            for r, s in zip(rows["chunks"], rows["small_to_big"])
        ],
    }


def summary(result: dict, ids: list[str], tags: list[set], subset: str) -> dict:
    from raychunk.stats import bootstrap_interval

    rows = [r for r, t in zip(result["per_question"], tags) if subset == "all" or subset in t]
    out = {"n": len(rows)}
    for m in (*SHOWN, "s2b_recall"):
        v = [r[m] for r in rows]
        out[m] = (sum(v) / len(v) if v else 0.0, bootstrap_interval(v) if m != "tokens" else None)
    return out


def paired(a: dict, b: dict, tags: list[set], subset: str, metric: str) -> dict:
    from raychunk.stats import paired_difference

    idx = [i for i, t in enumerate(tags) if subset == "all" or subset in t]
    return paired_difference(
        [a["per_question"][i][metric] for i in idx], [b["per_question"][i][metric] for i in idx]
    )


def _fmt(mean: float, ci) -> str:
    return f"{mean:.3f} [{ci[0]:.2f}-{ci[1]:.2f}]" if ci else f"{mean:,.0f}"


def _fmt_diff(d: dict) -> str:
    lo, hi = d["interval"]
    mark = "*" if lo > 0 or hi < 0 else " "
    return f"{d['mean']:+.3f} [{lo:+.3f}, {hi:+.3f}]{mark}"


def report(results: dict, ids, tags, subset_docs: dict, out=sys.stdout) -> None:
    for subset in SUBSETS:
        print(f"\n== {subset}", file=out)
        for name, res in results.items():
            s = summary(res, ids, tags, subset)
            vec = sum(n for doc, n in res["vectors_by_doc"].items() if doc in subset_docs.get(subset, ()))
            vec_s = f"{vec:>5}" if subset in subset_docs else "     "
            cells = "  ".join(f"{m} {_fmt(*s[m])}" for m in ("hit", "recall", "iou"))
            print(f"  {name:<40} n={s['n']:<3} vec={vec_s}  {cells}  s2b {s['s2b_recall'][0]:.3f}", file=out)


def compare(a_name, a, b_name, b, tags, out=sys.stdout) -> None:
    print(f"\n-- {a_name}  minus  {b_name}  (paired 95% bootstrap; * excludes 0)", file=out)
    for subset in SUBSETS:
        cells = "  ".join(f"{m} {_fmt_diff(paired(a, b, tags, subset, m))}" for m in ("hit", "recall", "iou"))
        print(f"  {subset:<11} vec {a['vectors'] - b['vectors']:+5d}  {cells}", file=out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=Path, default=DEFAULT_QUERIES)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--doc-types", type=Path, default=DEFAULT_TYPES, help="this worktree's, by default")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--setting", action="append", default=[], help="profile | STRATEGY:MAX[:k=v,...]")
    ap.add_argument(
        "--compare",
        action="append",
        default=[],
        help="A,B (or A;B when a setting holds a comma): paired differences A - B",
    )
    ap.add_argument("--against", type=Path, help="an earlier --save: pair each setting with its own")
    ap.add_argument("--save", type=Path, help="write per-question results (JSON) here")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--parent-budget", type=int, default=512)
    ap.add_argument("--count", action="store_true", help="only chunk: vectors per setting, no embedding")
    ap.add_argument(
        "--show", help="print the chunks of this setting whose document name contains TEXT: SETTING@TEXT"
    )
    args = ap.parse_args(argv)

    from raychunk.config import load_doc_types

    t0 = time.perf_counter()
    types = load_doc_types(args.doc_types)
    docs = labelled_docs(args.queries, args.corpus, types)
    queries, tags, skipped = load_questions(args.queries, docs)
    ids = [q.qid for q in queries]
    print(
        f"{len(docs)} documents parsed in {time.perf_counter() - t0:.1f} s; {len(queries)} questions, "
        f"{len(skipped)} skipped (quote not located without a tolerant locator): {' '.join(skipped)}",
        file=sys.stderr,
    )
    subset_docs = {"all": {d.source.rsplit("/", 1)[-1] for d in docs}}
    for q, t in zip(queries, tags):
        for s in ("structured", "weak"):
            if s in t:
                subset_docs.setdefault(s, set()).add(q.source.rsplit("/", 1)[-1])
    if args.count:
        for spec in args.setting:
            chunks = chunk_all(docs, parse_setting(spec), types)
            by = {s: sum(c.source.rsplit("/", 1)[-1] in d for c in chunks) for s, d in subset_docs.items()}
            print(
                f"{spec:<40} vectors {by['all']:>5}  structured {by['structured']:>5}  weak {by['weak']:>5}"
            )
        return 0
    embed = Embedder(args.cache)
    qvecs = embed([q.query for q in queries])
    results = {}
    for spec in args.setting or ["profile", "structure:256", "fixed:256"]:
        t = time.perf_counter()
        chunks = chunk_all(docs, parse_setting(spec), types)
        tc = time.perf_counter() - t
        results[spec] = score(docs, queries, qvecs, chunks, embed, k=args.k, parent_budget=args.parent_budget)
        print(
            f"{spec}: {len(chunks)} chunks in {tc:.1f} s, scored in {time.perf_counter() - t - tc:.1f} s",
            file=sys.stderr,
        )
        if args.show and args.show.split("@")[0] == spec:
            needle = args.show.split("@", 1)[1]
            for c in chunks:
                if needle in c.source:
                    print(f"--- #{c.chunk_index} {c.n_tokens} tok [{c.char_start}:{c.char_end}]\n{c.text}")
    report(results, ids, tags, subset_docs)
    for pair in args.compare:
        a, b = pair.split(";") if ";" in pair else pair.split(",")
        compare(a, results[a], b, results[b], tags)
    if args.against:
        before = json.loads(args.against.read_text())
        if before["ids"] != ids:
            raise SystemExit(f"{args.against}: a different question set, cannot pair")
        for name, res in results.items():
            if name in before["results"]:
                compare(f"{name} (now)", res, f"{name} ({args.against.name})", before["results"][name], tags)
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps({"ids": ids, "tags": [sorted(t) for t in tags], "results": results}))
    print(f"done in {time.perf_counter() - t0:.1f} s ({embed.embedded} texts embedded)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
