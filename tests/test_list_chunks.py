"""Lists and markup as the chunk text carries them: numbers, starts, task boxes and definitions in
the embedded text, no HTML tags, and every chunk's span exact (the span check passes where the
marker is the format's numbering, not the source's)."""

import pytest

from raychunk.chunking import Profile, chunk_document
from raychunk.evaluation.spans import check_chunk
from raychunk.parse import parse_document
from raychunk.tokens import load_counter

MINILM = load_counter("all-MiniLM-L6-v2")

CASES = {
    "steps.md": (
        "# Cutover\n\n1. Add Traefik to DNS\n2. Monitor\n   - [x] dashboards up\n3. Remove NGINX from DNS\n\n"
        "Later:\n\n7. Drain the node\n8. Upgrade it\n\nShard\n:   One Parquet file of chunks.\n"
    ),
    "steps.html": (
        "<h1>Cutover</h1><ol><li>Add Traefik to DNS</li><li>Monitor<ul><li><input type=checkbox checked> "
        "dashboards up</li></ul></li><li>Remove NGINX from DNS</li></ol><p>Later:</p><ol start='7'>"
        "<li>Drain the node</li><li>Upgrade it</li></ol><dl><dt>Shard</dt><dd>One Parquet file of chunks.</dd></dl>"
    ),
}
LINES = [
    "1. Add Traefik to DNS",
    "2. Monitor",
    "  - [x] dashboards up",
    "3. Remove NGINX from DNS",
    "7. Drain the node",
    "8. Upgrade it",
    "Shard: One Parquet file of chunks.",
]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("max_tokens", [16, 32, 256])
def test_numbers_boxes_and_definitions_are_in_the_chunk_text_with_exact_spans(name, max_tokens):
    parsed = parse_document(CASES[name].encode(), name)
    chunks = chunk_document(parsed, Profile(max_tokens=max_tokens), MINILM)
    lines = {line for c in chunks for line in c.text.split("\n")}
    assert set(LINES) <= lines
    for c in chunks:
        assert check_chunk(parsed.text, c.to_dict()) is None, (c.text, parsed.text[c.char_start : c.char_end])
    # A marker is context: a chunk that opens on an item starts its span at the item's own words.
    for c in chunks:
        first = c.text.split("\n\n", 1)[-1].split("\n")[0].lstrip()
        marker, _, words = first.partition(" ")
        if marker[:1].isdigit():
            assert parsed.text.startswith(words.split(" ")[0], c.char_start), c.text


def test_a_docs_site_parameter_table_holds_no_tags_in_its_chunks():
    src = (
        "# API\n\n| Parameter | Type | Description |\n|---|---|---|\n"
        "| `contact` | `dict` | The contact information. <details><summary><code>contact</code> fields</summary>"
        "<table><thead><tr><th>Parameter</th><th>Type</th></tr></thead><tbody>"
        "<tr><td><code>name</code></td><td><code>str</code></td></tr></tbody></table></details> |\n"
    )
    parsed = parse_document(src.encode(), "api.md")
    chunks = chunk_document(parsed, Profile(max_tokens=256), MINILM)
    assert chunks and not any("<" in c.text for c in chunks)
    assert any("contact fields; Parameter, Type; name, str" in c.text for c in chunks)
    for c in chunks:
        assert check_chunk(parsed.text, c.to_dict()) is None


def test_a_table_with_a_row_label_spanning_rows_splits_with_the_label_in_each_part():
    rows = "".join(
        f"<tr><td rowspan='4'>Region {r}</td><td>city {r}.0</td><td>{r}00</td></tr>"
        + "".join(f"<tr><td>city {r}.{k}</td><td>{r}0{k}</td></tr>" for k in range(1, 4))
        for r in range(6)
    )
    src = f"<h1>Sites</h1><table><tr><th>Region</th><th>City</th><th>Staff</th></tr>{rows}</table>"
    parsed = parse_document(src.encode(), "sites.html")
    (table,) = [b for b in parsed.blocks if b.kind == "table"]
    assert table.rows[2] == ("Region 0", "city 0.1", "001") and (2, 0) in table.copies
    chunks = chunk_document(parsed, Profile(max_tokens=64), MINILM)
    assert len(chunks) > 2 and all(c.table_id for c in chunks)
    for c in chunks:
        body = c.text.split("\n\n", 1)[1]
        assert all(line.split(" | ")[0] != "|" for line in body.split("\n")[2:])  # every row has its label
        assert check_chunk(parsed.text, c.to_dict()) is None, c.text
        # A part spans its own rows: from its first row's first own cell to its last row.
        last_row = body.split("\n")[-1]
        assert parsed.text[: c.char_end].endswith(last_row.split(" | ")[-1].rstrip(" |"))
