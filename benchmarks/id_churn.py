"""Chunk-id churn after editing 1% of a corpus's sections: how many chunk ids change per section
edited, with ids as raychunk derives them (the document's path relative to its input root, heading
path, text, occurrence and setting) against ids that hash the file's bytes (every id of an edited
file changes), measured side by side over the same parse.

    python benchmarks/id_churn.py [--input DIR ...] [--share 0.01] [--seed 0] [--json PATH]

    (default: ../shared/corpus/md and ../shared/corpus/txt)

Each input file is parsed, classified and chunked with the shipped doc types (the run's per-type
profile, the embedder's tokenizer), in this process, without Ray. A section is a paragraph block
of a document whose parsed text is its file's text (markdown and plain text), so an edit can be
made in the file itself: ``--share`` of all such paragraphs, picked by a seeded hash, get one
sentence appended. Then the edited files are chunked again and the two id sets compared: ids new,
ids removed, and (new + removed) / 2 per edited section. The byte-hash column counts every chunk of
an edited file, as it is removed and re-added under such a scheme. The same tree moved to another
root is chunked a third time, and its ids counted against the edited tree's (0 expected).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

from summary import record

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
EDIT = " This sentence was added to measure id churn."


def chunker():
    from raychunk.config import build_run_config, load_config
    from raychunk.document_steps import chunk, per_document
    from raychunk.plan import resolve_plan

    cfg = build_run_config(load_config(), {"input": ["/x"], "embedder.enabled": False})
    parse, classify, chunk = (
        fn for _, fn in per_document(resolve_plan(cfg), scheme="", last=chunk(resolve_plan(cfg)))
    )

    def run(source: str, data: bytes, root: str):
        parsed = parse.func({"path": source, "bytes": data}, **{**parse.keywords, "root": root})
        rows = chunk(classify(parsed))
        return parsed["parsed"], [r for r in rows if r["row_type"] == "chunk"]

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--input", nargs="+", default=[str(CORPUS / "md"), str(CORPUS / "txt")])
    ap.add_argument("--share", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    run = chunker()
    files = sorted(p for folder in args.input for p in Path(folder).rglob("*") if p.is_file())
    root = (
        str(Path(args.input[0]).resolve().parent)
        if len(args.input) > 1
        else str(Path(args.input[0]).resolve())
    )
    t = time.perf_counter()
    before, data, sections = {}, {}, []
    for p in files:
        source = str(p.resolve())
        raw = p.read_bytes()
        parsed, chunks = run(source, raw, root)
        if parsed.document.status != "ok":
            continue
        before[source], data[source] = chunks, raw
        try:
            same = parsed.text == raw.decode("utf-8")
        except UnicodeDecodeError:
            same = False
        if same:
            sections += [(source, b.char_end) for b in parsed.blocks if b.kind == "paragraph"]
    first = time.perf_counter() - t

    def picked(s) -> bool:
        h = hashlib.sha256(f"{args.seed}|{s[0]}|{s[1]}".encode()).digest()
        return int.from_bytes(h[:8], "big") < args.share * 2**64

    edits = [s for s in sections if picked(s)]
    by_file: dict[str, list[int]] = {}
    for source, end in edits:
        by_file.setdefault(source, []).append(end)
    after, edited = dict(before), dict(data)
    for source, ends in by_file.items():
        text = data[source].decode("utf-8")
        for end in sorted(ends, reverse=True):  # from the end: earlier offsets stay put
            text = text[:end] + EDIT + text[end:]
        edited[source] = text.encode()
        after[source] = run(source, edited[source], root)[1]

    old = {c["chunk_id"] for cs in before.values() for c in cs}
    new = {c["chunk_id"] for cs in after.values() for c in cs}
    added, removed = len(new - old), len(old - new)
    bytes_scheme = sum(len(before[s]) + len(after[s]) for s in by_file)  # removed + re-added

    moved_root = "/mnt/elsewhere/snapshot-2"
    moved = set()
    for source in after:
        rel = source[len(root) + 1 :]
        moved |= {c["chunk_id"] for c in run(f"{moved_root}/{rel}", edited[source], moved_root)[1]}

    out = {
        "inputs": args.input,
        "documents": len(before),
        "chunks": len(old),
        "sections": len(sections),
        "sections_edited": len(edits),
        "files_edited": len(by_file),
        "ids_added": added,
        "ids_removed": removed,
        "ids_changed_per_section_edited": (added + removed) / 2 / max(1, len(edits)),
        "byte_hash_ids_changed_per_section_edited": bytes_scheme / 2 / max(1, len(edits)),
        "moved_root_ids_changed": len(moved ^ new),
        "first_pass_seconds": round(first, 1),
    }
    print(
        f"corpus         {out['documents']} documents, {out['chunks']:,} chunks, {out['sections']:,} paragraph sections"
    )
    print(
        f"edited         {out['sections_edited']} sections ({args.share:.0%}) in {out['files_edited']} files"
    )
    print(f"ids            {added} added, {removed} removed")
    print(
        f"churn          {out['ids_changed_per_section_edited']:.2f} ids per section edited (path-relative ids); "
        f"{out['byte_hash_ids_changed_per_section_edited']:.1f} with ids that hash the file's bytes "
        f"({out['byte_hash_ids_changed_per_section_edited'] / max(out['ids_changed_per_section_edited'], 1e-9):.0f}x)"
    )
    print(
        f"moved root     {out['moved_root_ids_changed']} ids differ after moving the edited tree to {moved_root}"
    )
    record("id churn: ids changed per section edited", out["ids_changed_per_section_edited"])
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
