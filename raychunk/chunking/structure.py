"""Structure-first: a section per heading, its blocks packed in order up to the cap, an over-cap block
split at sentence ends, overlap carried between the chunks of a section. A table that fits whole in
the chunk being packed joins it, after the text that introduces it; another is one chunk up to its
own cap, else split by rows with its header rows repeated. With ``min_tokens``, a tiny section
joins its next sibling under the same parent heading. A section's last chunk is not left tiny: it
takes whole pieces from the chunk before it (``_balance_tail``)."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

from raychunk.chunking.model import parent_ids, table_ids
from raychunk.chunking.packing import Packer, PackingStrategy
from raychunk.chunking.pieces import Piece, SourceMap
from raychunk.document import Block, ParsedDocument
from raychunk.render import render_table, squash

__all__ = ["Section", "Structure"]

_WORDY = re.compile(r"\w")


@dataclass(frozen=True, slots=True)
class Section:
    """The blocks under one heading. ``merged``: tiny siblings joined under their parent heading,
    whose own headings stay in the body as text."""

    path: tuple[str, ...]
    blocks: list[Block] = field(default_factory=list)
    ordinal: int = 0
    merged: bool = False


class Structure(PackingStrategy):
    name = "structure"

    def stands_alone(self, block: Block, piece: Piece, budget: int) -> bool:
        """Whether a block gets chunks of its own rather than sharing them with its neighbours."""
        return False

    def pack(self, packer: Packer) -> None:
        sections = _sections(packer.parsed)
        # The blocks every section packs (and counts, to merge tiny ones) and the sections' header
        # lines, counted at once.
        merging = bool(packer.profile.min_tokens)
        packer.prefetch(
            [b for s in sections for b in s.blocks if merging or b.kind != "heading"],
            [s.path for s in sections],
        )
        if merging:
            sections = _merge_tiny(packer, sections)
        parents = parent_ids(packer.doc.key, [s.path for s in sections])
        tables = [b for s in sections for b in s.blocks if b.kind == "table"]
        self._table_ids = dict(zip(map(id, tables), table_ids(packer.doc.key, [b.text for b in tables])))
        for section, parent in zip(sections, parents):
            blocks = section.blocks if section.merged else [b for b in section.blocks if b.kind != "heading"]
            self._pack_section(packer, section, blocks, parent)

    def _pack_section(self, packer: Packer, section: Section, blocks: list[Block], parent: str) -> None:
        budget = packer.budget(section.path)
        overlap_budget = packer.profile.overlap_tokens
        current: list[Piece] = []
        size = 0

        def flush(split: bool) -> None:
            nonlocal current, size
            if not any(not p.overlap for p in current):
                current, size = [], 0
                return
            packer.emit(current, section.path, parent)
            seed = packer.tail(current[-1], overlap_budget) if split else None
            current, size = ([seed], seed.tokens) if seed else ([], 0)

        first = len(packer.drafts)
        pieces = packer.block_pieces(blocks)
        for block, piece in zip(blocks, pieces):
            if block.kind == "table":
                if _joins(packer, current, size, piece, budget, section.path):
                    size += piece.tokens + packer.join(current[-1], piece)
                    current.append(piece)
                    continue
                flush(False)
                current, size = [], 0
                _emit_table(packer, block, piece, section, parent, self._table_ids[id(block)])
                continue
            if self.stands_alone(block, piece, budget):
                flush(False)
                current, size = [], 0
                for part in packer.split_piece(piece, budget) if piece.tokens > budget else [piece]:
                    packer.emit([part], section.path, parent, continuation=part.continuation)
                continue
            # Pieces of a split block leave room for the overlap that the next one will carry.
            parts = (
                packer.split_piece(piece, max(8, budget - overlap_budget))
                if piece.tokens > budget
                else [piece]
            )
            for part in parts:
                if not packer.bridges(current, part):
                    # A chunk's span is contiguous: it never stretches over much that the parser dropped.
                    flush(False)
                n = part.tokens + packer.join(current[-1], part) if current else part.tokens
                if current and size + n > budget:
                    if current[0].overlap and len(current) == 1:
                        current, size = [], 0  # the overlap would push a whole block over: drop it
                    else:
                        flush(True)
                    n = part.tokens + packer.join(current[-1], part) if current else part.tokens
                    if size + n > budget:
                        current, size, n = [], 0, part.tokens
                current.append(part)
                size += n
        flush(False)
        _balance_tail(packer, first, budget)


def _joins(packer: Packer, current: list[Piece], size: int, table: Piece, budget: int, path) -> bool:
    """Whether a table joins the chunk being packed, after the text that introduces it (the sentence
    before a table says what it is about, and a question names that): when it fits whole under its
    own cap and in what is left of the chunk. A table at a chunk's start, or one that does not fit,
    takes chunks of its own (``_emit_table``)."""
    if not current or current[0].overlap or table.tokens > packer.budget(path, packer.profile.table_cap):
        return False
    return size + table.tokens + packer.join(current[-1], table) <= budget and packer.bridges(current, table)


def _balance_tail(packer: Packer, first: int, budget: int) -> None:
    """A section's last chunk under a quarter of its budget takes whole pieces from the end of the
    chunk before it while that evens the two out: a section's tail is not left as a one-line chunk
    (a transcript's last turn, a list's last item) that ranks for every question, and the chunk
    count is unchanged. Not across a table's own chunk, overlap, or source the parser dropped between
    the two, and a table that joined the text introducing it stays with that text."""
    drafts = packer.drafts
    if len(drafts) - first < 2:
        return
    a, b = drafts[-2], drafts[-1]
    if a.table_id or b.table_id or len(a.pieces) < 2 or any(p.overlap for p in (*a.pieces, *b.pieces)):
        return

    # The two chunks are a run of consecutive pieces cut in two. Moving the piece before the cut
    # takes its tokens and the join before it from the first, and adds them and the join after it
    # to the second: each join is found once (a long section's tail was otherwise summed again for
    # every piece it took).
    run = [*a.pieces, *b.pieces]
    joins: dict[int, int] = {}

    def join(i: int) -> int:
        """What the join between ``run[i - 1]`` and ``run[i]`` adds."""
        if i not in joins:
            joins[i] = packer.join(run[i - 1], run[i])
        return joins[i]

    def size(lo: int, hi: int) -> int:
        return sum(p.tokens for p in run[lo:hi]) + sum(join(i) for i in range(lo + 1, hi))

    cut, end = len(a.pieces), len(run)  # the first chunk is run[:cut], the second run[cut:]
    n_left, n_right = size(0, cut), size(cut, end)
    if n_right * 4 >= budget:
        return
    while cut > 1:
        k = cut - 1
        if run[k].kind == "table" or packer.dropped(run[k], run[cut]):
            break  # a table stays with the text that introduces it; no chunk bridges a gap
        n_moved = run[k].tokens + join(cut) + n_right
        n_kept = n_left - run[k].tokens - join(k)
        if n_moved > budget or max(n_moved, n_kept) >= max(n_left, n_right):
            break
        cut, n_left, n_right = k, n_kept, n_moved
    if cut < len(a.pieces):
        drafts[-2] = dataclasses.replace(a, pieces=run[:cut])
        drafts[-1] = dataclasses.replace(b, pieces=run[cut:])


def _sections(parsed: ParsedDocument) -> list[Section]:
    out = [Section(())]
    for b in parsed.blocks:
        if b.kind == "heading":
            out.append(Section(b.heading_path + (b.text,), [b], len(out)))
        elif b.kind != "page_break":
            out[-1].blocks.append(b)
    return [s for s in out if any(b.kind != "heading" for b in s.blocks)] if len(out) > 1 else out


def _merge_tiny(packer: Packer, sections: list[Section]) -> list[Section]:
    """A section under ``min_tokens`` joins its next sibling (same parent heading), if they fit."""
    profile = packer.profile
    sizes = [sum(packer.block_counts(s.blocks)) for s in sections]
    out: list[Section] = []
    i = 0
    while i < len(sections):
        sec, size = sections[i], sizes[i]
        j = i + 1
        group = [sec]
        while (
            size < profile.min_tokens
            and j < len(sections)
            and sec.path
            and len(sections[j].path) == len(sec.path)
            and sections[j].path[:-1] == sec.path[:-1]
            and size + sizes[j] <= profile.max_tokens - packer.header(sec.path[:-1])[1]
        ):
            group.append(sections[j])
            size += sizes[j]
            j += 1
        if len(group) == 1:
            out.append(sec)
        else:
            out.append(Section(sec.path[:-1], [b for s in group for b in s.blocks], sec.ordinal, merged=True))
        i = j
    return out


def _emit_table(
    packer: Packer, block: Block, piece: Piece, section: Section, parent: str, table_id: str
) -> None:
    """A table up to its cap is one chunk; a bigger one is cut by rows, its header rows repeated at
    the top of every part as context (each part spans its own rows). A row over the cap on its own
    is cut by cells (``_row_parts``)."""
    counter = packer.counter
    budget = packer.budget(section.path, packer.profile.table_cap)
    hr = block.header_rows
    if _fits(packer, section.path, piece.text, piece.tokens, budget) or len(block.rows) <= hr:
        packer.emit([piece], section.path, parent, table_id=table_id, table_part=0)
        return
    # The pipe table's lines (squashed cells hold no line break): the header rows and the |---| line
    # after them, then one line per body row, each as ``render_table`` gives it on its own.
    whole = render_table(block.rows, hr)
    lines = whole.split("\n")
    head_text = "\n".join(lines[: hr + 1]) if hr else ""
    row_texts = lines[hr + 1 :] if hr else lines
    head_tokens, *row_tokens = counter.count_batch([head_text, *row_texts])

    def join(a: int | None, b: int) -> int:
        """What the line break between row ``a`` (None: the header) and row ``b`` adds."""
        left = row_texts[a] if a is not None else head_text
        return packer.join_text(left, "\n", row_texts[b]) if left else 0

    groups: list[list[int]] = []
    size = 0
    for i, n in enumerate(row_tokens):
        if groups and size + join(groups[-1][-1], i) + n <= budget:
            size += join(groups[-1][-1], i) + n
            groups[-1].append(i)
        else:
            groups.append([i])
            size = head_tokens + join(None, i) + n
    lines = _Lines(head_text, head_tokens, row_texts, row_tokens)
    if not counter.additive:
        groups = _fit_groups(packer, section.path, lines, groups)
    parts: list[tuple[str, int, SourceMap]] = []  # each part's text, tokens and source
    for rows in groups:
        texts, counts = lines.of(rows)
        text = "\n".join(texts)
        tokens = (
            head_tokens + sum(row_tokens[i] for i in rows)
            if counter.additive
            else packer.count_joined(texts, ["\n"] * (len(texts) - 1), counts)
        )
        if len(rows) == 1 and not _fits(packer, section.path, text, tokens, budget):
            cut = _row_parts(packer, block, whole, hr + rows[0], section.path, budget)
            parts += [(t, n, packer.table_cells(block, whole, cells)) for t, n, cells in cut]
            continue
        own = [hr + i for i in rows] + (list(range(hr)) if not parts else [])
        parts.append((text, tokens, packer.table_rows(block, whole, own)))
    for part, (text, tokens, source) in enumerate(parts):
        p = Piece(text, tokens, "table", block.pages, continuation=part > 0, root=text, source=source)
        packer.emit([p], section.path, parent, table_id=table_id, table_part=part, continuation=part > 0)


def _fits(packer: Packer, path: tuple[str, ...], text: str, tokens: int, budget: int) -> bool:
    """Whether a table part of ``tokens`` body tokens fits its cap under the header line of ``path``."""
    if packer.counter.additive:
        return tokens <= budget
    header, header_tokens = packer.header(path)
    n = packer.count_joined([header, text], ["\n\n"], [header_tokens, tokens]) if header else tokens
    return n <= packer.profile.table_cap


def _row_parts(
    packer: Packer, block: Block, whole: str, r: int, path: tuple[str, ...], budget: int
) -> list[tuple[str, int, list[tuple[int, int]]]]:
    """Row ``r`` of a table (an index into ``block.rows``) that is over the cap on its own, cut by
    cells. Each part is a pipe table: the header rows and the row, both narrowed to the row's label
    (its first cell) and a run of the next cells, as many as fit. A cell that does not fit beside
    the label is cut at sentence ends (words where a sentence is over), each piece under the label
    and the column's header. A part ends where the header's column groups do when one does inside
    it: "MAXIMUM REACH" over its three columns stays whole (``_cut_before``). The label is the first
    part's own; the later parts repeat it, like the header, as context. ``(text, tokens, ranges of
    whole held)`` per part, in column order."""
    counter = packer.counter
    hr = block.header_rows
    cells = [squash(c).replace("|", "\\|") for c in block.rows[r]]
    line = r + 1 if hr and r >= hr else r
    pos = sum(len(x) + 1 for x in whole.split("\n")[:line]) + 2
    ranges = []
    for c in cells:
        ranges.append((pos, pos + len(c)))
        pos += len(c) + 3
    heads = block.rows[:hr]
    lead: list[int] = []

    def text_of(cols: list[int], own: list[str]) -> str:
        narrowed = [tuple(h[j] if j < len(h) else "" for j in lead + cols) for h in heads]
        row = "| " + " | ".join([cells[j] for j in lead] + own) + " |"
        return render_table(narrowed, hr) + "\n" + row if hr else row

    if len(cells) > 1 and cells[0]:  # a label that fills half the room is a cell like the others
        lead = [0]
        lead = lead if counter.count(text_of([], [])) <= budget // 2 else []

    out: list[tuple[str, int, list[tuple[int, int]]]] = []

    def add(text: str, n: int, held: list[tuple[int, int]]) -> None:
        out.append((text, n, ([ranges[0]] if lead and not out else []) + held))

    def fits(cols: list[int]) -> bool:
        text = text_of(cols, [cells[k] for k in cols])
        return _fits(packer, path, text, counter.count(text), budget)

    starts = _group_starts(block, len(cells))
    run: list[int] = []
    for j in range(len(lead), len(cells)):
        while run and not fits(run + [j]):
            k = _cut_before(run, j, starts)
            add(text_of(run[:k], [cells[c] for c in run[:k]]), 0, [ranges[c] for c in run[:k]])
            run = run[k:]
        if run or fits([j]):
            run.append(j)
            continue
        for a, b in _cut_cell(packer, cells[j], lambda s, j=j: text_of([j], [s]), path, budget):
            add(text_of([j], [cells[j][a:b]]), 0, [(ranges[j][0] + a, ranges[j][0] + b)])
    if run:
        add(text_of(run, [cells[k] for k in run]), 0, [ranges[k] for k in run])
    texts = [t for t, _, _ in out]
    return [(t, n, held) for (t, _, held), n in zip(out, counter.count_batch(texts))]


def _group_starts(block: Block, width: int) -> list[int]:
    """Per column, how high in the header a cell starts there: ``header_rows - i`` for the first
    header row ``i`` with a cell of its own in that column (not empty, not the copy of a spanning
    cell), 0 where none does. A spanning header's first column scores over the columns under it."""
    copies = set(block.copies)
    hr = block.header_rows
    out = []
    for j in range(width):
        own = [
            i
            for i, row in enumerate(block.rows[:hr])
            if j < len(row) and row[j].strip() and (i, j) not in copies
        ]
        out.append(hr - own[0] if own else 0)
    return out


def _cut_before(run: list[int], j: int, starts: list[int]) -> int:
    """Where the part holding ``run`` ends when column ``j`` does not fit beside it: before the
    strongest group start inside the run (the last of equals), when it is stronger than ``j``'s;
    else before ``j``, all of the run."""
    k = max(range(1, len(run)), key=lambda x: (starts[run[x]], x), default=len(run))
    return k if k < len(run) and starts[run[k]] > starts[j] else len(run)


def _cut_cell(
    packer: Packer, cell: str, text_of, path: tuple[str, ...], budget: int
) -> list[tuple[int, int]]:
    """``(start, end)`` pieces of one cell's text such that each, set in ``text_of``, fits the cap:
    at sentence ends, else words (a word over the cap is cut at token boundaries). The pieces are
    evened out (no tiny last piece), and a piece with no word of its own (the ``)`` left of a cut
    link) joins the one before it."""
    counter = packer.counter
    room = budget - counter.count(text_of(""))
    whole = Piece(cell, counter.count(cell), "paragraph", root=cell)

    def cut(room: int) -> list[tuple[int, int]]:
        cuts = []
        for sub in packer.split_piece(whole, max(8, room)):
            a = sub.root_offset + (len(sub.text) - len(sub.text.lstrip()))
            b = sub.root_offset + len(sub.text.rstrip())
            if b <= a:
                continue
            if cuts and not _WORDY.search(cell, a, b):
                cuts[-1] = (cuts[-1][0], b)
            else:
                cuts.append((a, b))
        if cuts and len(cuts) > 1 and not _WORDY.search(cell, *cuts[0]):
            cuts[:2] = [(cuts[0][0], cuts[1][1])]
        return cuts

    while True:
        cuts = cut(room)
        if len(cuts) > 1:  # the same number of pieces, evened out
            even = cut(-(-whole.tokens // len(cuts)) + 8)
            cuts = even if len(even) == len(cuts) else cuts
        over = 0
        for a, b in cuts:
            text = text_of(cell[a:b])
            n = counter.count(text)
            if not _fits(packer, path, text, n, budget):
                over = max(over, n - budget, 1)
        if not over or room <= 8:
            return cuts
        room = max(8, room - over)


@dataclass(frozen=True, slots=True)
class _Lines:
    """A table's header rows and body rows as pipe-table lines, with their counts."""

    head: str
    head_tokens: int
    rows: list[str]
    row_tokens: list[int]

    def of(self, rows: list[int]) -> tuple[list[str], list[int]]:
        """The lines of a part holding body ``rows`` (header rows first), and their counts."""
        texts = [self.rows[i] for i in rows]
        counts = [self.row_tokens[i] for i in rows]
        return ([self.head, *texts], [self.head_tokens, *counts]) if self.head else (texts, counts)


def _fit_groups(
    packer: Packer, path: tuple[str, ...], lines: _Lines, groups: list[list[int]]
) -> list[list[int]]:
    """For tokenizers whose counts do not add up: count each part as it will be embedded, and halve
    any part over the cap that holds more than one row."""
    header, header_tokens = packer.header(path)
    cap = packer.profile.table_cap

    def count(rows: list[int]) -> int:
        texts, counts = lines.of(rows)
        seps = ["\n"] * (len(texts) - 1)
        if header:
            texts, seps, counts = [header, *texts], ["\n\n", *seps], [header_tokens, *counts]
        return packer.count_joined(texts, seps, counts)

    while True:
        counts = [count(g) for g in groups]
        over = [k for k, (g, n) in enumerate(zip(groups, counts)) if n > cap and len(g) > 1]
        if not over:
            return groups
        for k in reversed(over):
            g = groups[k]
            groups[k : k + 1] = [g[: len(g) // 2], g[len(g) // 2 :]]
