from raychunk.parse import parse_document
from tests.spans import assert_spans_match


def test_csv_row_per_record_with_header():
    src = 'plan,price,notes\nStarter,8,"basic, email only"\nPro,15,"multi\nline"\n\nEnterprise,custom,\n'
    doc = parse_document(src.encode(), "plans.csv")
    assert doc.document.status == "ok"
    recs = doc.blocks
    assert [r.kind for r in recs] == ["record"] * 3
    assert recs[0].rows == (("plan", "price", "notes"), ("Starter", "8", "basic, email only"))
    assert recs[0].text == "plan: Starter\nprice: 8\nnotes: basic, email only"
    assert recs[1].rows[1] == ("Pro", "15", "multi line")
    assert doc.text[recs[1].char_start : recs[1].char_end] == 'Pro,15,"multi\nline"'
    assert doc.text[recs[2].char_start : recs[2].char_end] == "Enterprise,custom,"


def test_tsv():
    doc = parse_document(b"a\tb\n1\t2\n", "x.tsv")
    assert doc.blocks[0].rows == (("a", "b"), ("1", "2"))


def test_jsonl_line_per_record_and_bad_lines_kept():
    src = '{"q": "What?", "a": "This."}\nnot json\n\n{"q": "Why?", "a": null, "n": 3}\n'
    doc = parse_document(src.encode(), "qa.jsonl")
    assert [b.text for b in doc.blocks] == ["q: What?\na: This.", "not json", "q: Why?\nn: 3"]
    assert doc.blocks[0].rows == (("q", "a"), ("What?", "This."))
    assert "1 lines are not valid JSON" in doc.document.reason
    assert doc.document.status == "ok"
    for b in doc.blocks:
        assert doc.text[b.char_start : b.char_end].strip() == doc.text[b.char_start : b.char_end]


PY = '''"""Module docstring."""

import os

CONSTANT = 1


# Helper comment
@decorator
def helper(x):
    return x + 1


class Thing:
    def method(self):
        pass
'''


def test_python_one_block_per_top_level_def():
    doc = parse_document(PY.encode(), "mod.py")
    blocks = [(b.kind, b.text.split("\n")[0]) for b in doc.blocks]
    assert blocks == [
        ("paragraph", '"""Module docstring."""'),
        ("code", "import os"),
        ("code", "CONSTANT = 1"),
        ("code", "# Helper comment"),
        ("code", "class Thing:"),
    ]
    helper = doc.blocks[3]
    assert helper.text.endswith("return x + 1")
    assert helper.language == "python"
    assert_spans_match(doc)


def test_brace_language_functions():
    src = 'package main\n\nimport "fmt"\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b // {\n}\n\ntype T struct {\n\tX int\n}\n'
    doc = parse_document(src.encode(), "main.go")
    texts = [b.text for b in doc.blocks]
    assert texts == [
        "package main",
        'import "fmt"',
        "// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b // {\n}",
        "type T struct {\n\tX int\n}",
    ]
    assert all(b.language == "go" for b in doc.blocks)


def test_python_syntax_error_falls_back():
    doc = parse_document(b"print 'py2'\n\ndef f():\n    pass\n", "old.py")
    assert doc.document.status == "ok"
    assert len(doc.blocks) >= 1
