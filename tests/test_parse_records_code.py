from raychunk.parse import parse_document
from tests.spans import assert_spans_match, chunks_holding_their_spans


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


def test_a_json_array_is_one_record_per_element_with_its_span():
    src = (
        '[\n  {"title": "Reset a password", "steps": ["open settings", "click reset"], "owner": null},\n'
        '  {"title": "Caf\\u00e9 hours", "open": 8},\n  "a loose note",\n  42\n]\n'
    )
    doc = parse_document(src.encode(), "faq.json")
    assert (doc.document.status, doc.document.format, doc.document.title) == ("ok", "json", "")
    assert [(b.kind, b.text) for b in doc.blocks] == [
        ("record", 'title: Reset a password\nsteps: ["open settings", "click reset"]'),
        ("record", "title: Café hours\nopen: 8"),
        ("record", "a loose note"),
        ("record", "42"),
    ]
    assert doc.blocks[0].rows == (
        ("title", "steps", "owner"),
        ("Reset a password", '["open settings", "click reset"]', ""),
    )
    spans = [doc.text[b.char_start : b.char_end] for b in doc.blocks]
    assert spans[1] == '{"title": "Caf\\u00e9 hours", "open": 8}' and spans[2:] == ['"a loose note"', "42"]
    from raychunk.classify import classify
    from raychunk.config import load_doc_types

    types = load_doc_types(None)
    assert classify(doc, types.thresholds, types.overrides).doc_type == "records"


def test_a_json_object_is_a_record_per_member_and_a_list_of_objects_a_section():
    """The shape of an API export: counts and links around the list; the list's key is the heading
    its records sit under, and the members after it are back at the top."""
    src = (
        '{"count": 2, "caf\\u00e9s": [{"id": 1, "name": "Blue"}, {"id": 2, "name": "Red"}],\n'
        ' "next": null, "schema": {"id": "int"}, "tags": [], "note": "end"}'
    )
    doc = parse_document(src.encode(), "export.json")
    got = [(b.kind, b.text, b.heading_path) for b in doc.blocks]
    assert got == [
        ("record", "count: 2", ()),
        ("heading", "cafés", ()),
        ("record", "id: 1\nname: Blue", ("cafés",)),
        ("record", "id: 2\nname: Red", ("cafés",)),
        ("record", 'schema: {"id": "int"}', ()),
        ("record", "tags: []", ()),
        ("record", "note: end", ()),
    ]
    heading = doc.blocks[1]
    assert doc.text[heading.char_start : heading.char_end] == "caf\\u00e9s"
    assert doc.text[doc.blocks[4].char_start : doc.blocks[4].char_end] == '"schema": {"id": "int"}'


def test_invalid_json_is_read_as_text_and_says_so():
    doc = parse_document(b'{"a": 1,,}\n\nThe rest of the file is prose.\n', "broken.json")
    d = doc.document
    assert (d.status, d.format) == ("ok", "text")
    assert (
        d.reason
        == "not valid JSON (Expecting property name enclosed in double quotes: line 1 column 9): read as plain text"
    )
    assert [b.text for b in doc.blocks] == ['{"a": 1,,}', "The rest of the file is prose."]
    assert_spans_match(doc)
    assert parse_document(b"[]", "none.json").document.status == "empty"


def test_json_chunks_hold_their_spans():
    import json

    items = [{"id": i, "body": "word " * (i % 90), "meta": {"n": i}} for i in range(120)]
    doc = parse_document(json.dumps({"total": 120, "items": items}, indent=2).encode(), "items.json")
    assert min(chunks_holding_their_spans(doc, 64)) > 40


def test_code_with_lone_carriage_returns_inside_counts_lines_as_python_does():
    """A fuzz find: Python's parser ends a line at a lone \\r, and the line list the definitions are
    placed on split only at \\n, so a file with \\r runs inside (not Mac line ends throughout) made
    the placement index past the end."""
    source = (
        b'"""Quota checks."""\n\nimport os\n\n\ndef used(path):\n    return os.path.getsize(path)\n'
        + b"\r" * 200
        + b"\n\ndef limit():\n    return 10\n"
    )
    doc = parse_document(source, "quota.py")
    assert doc.document.status == "ok", doc.document.reason
    assert [b.kind for b in doc.blocks] == ["paragraph", "code", "code", "code"]
    assert doc.blocks[2].text.startswith("def used(path):") and doc.blocks[3].text.startswith("def limit():")
    assert_spans_match(doc)
    js = parse_document(b"function f() {\r\n  return 1;\r\n}\r\r\rconst x = 2;\n", "a.js")
    assert js.document.status == "ok"
    assert [b.text for b in js.blocks] == ["function f() {\r\n  return 1;\r\n}", "const x = 2;"]
    assert_spans_match(js)


def test_sql_is_code_a_statement_a_block():
    """A schema or migration (the 159 scripts under /usr/share/postgresql were plain text, cut at blank
    lines through a function's body): a block per statement, to its closing ``;``, with the
    comments just above it; a ``;`` in a string, a quoted name, a comment or a dollar-quoted body
    ends nothing; a psql command (``\\echo ... \\quit``) is its own line."""
    from raychunk.parse import parse_document

    sql = (
        "/* contrib/frob/frob--1.0.sql */\n\n"
        "-- complain if sourced in psql\n"
        '\\echo Use "CREATE EXTENSION frob" to load this file. \\quit\n\n'
        "-- the table\n"
        "CREATE TABLE frob (\n    id int PRIMARY KEY,\n    note text DEFAULT 'a; b' /* ; */\n);\n"
        "CREATE FUNCTION frob_count() RETURNS int AS $fn$\n"
        "BEGIN\n\n    RETURN (SELECT count(*) FROM frob); -- ; here too\n\nEND;\n$fn$ LANGUAGE plpgsql;\n"
        'INSERT INTO "odd;name" VALUES (1);\n'
    )
    doc = parse_document(sql.encode(), "db/frob--1.0.sql")
    assert doc.document.format == "code"
    assert all(b.kind == "code" and b.language == "sql" for b in doc.blocks)
    texts = [b.text for b in doc.blocks]
    assert (
        texts[2]
        == "-- the table\nCREATE TABLE frob (\n    id int PRIMARY KEY,\n    note text DEFAULT 'a; b' /* ; */\n);"
    )
    assert texts[3].startswith("CREATE FUNCTION frob_count()") and texts[3].endswith("$fn$ LANGUAGE plpgsql;")
    assert texts[4] == 'INSERT INTO "odd;name" VALUES (1);'
    assert texts[1].endswith("\\quit") and len(texts) == 5
    assert_spans_match(doc)


# -- code told by its name or its text ---------------------------------------------------------------

CPP_HEADER = """// <vector> -*- C++ -*-

// Copyright notice.

#pragma GCC system_header

namespace std
{
  template<typename _Tp>
    class vector
    {
      void push_back(const _Tp& __x);
    };
}

template<typename _Tp>
inline bool
operator==(const vector<_Tp>& __x, const vector<_Tp>& __y)
{ return __x.size() == __y.size(); }
"""


def _code(data: str, name: str):
    p = parse_document(data.encode(), name)
    return p.document.format, sorted({b.language for b in p.blocks if b.kind == "code"}), p


def test_a_file_whose_name_says_nothing_is_code_by_its_editor_mode_line():
    fmt, languages, p = _code(CPP_HEADER, "include/c++/12/vector")
    assert (fmt, languages) == ("code", ["cpp"])
    assert any(b.text.startswith("namespace std") for b in p.blocks)
    assert any(b.text.startswith("template<typename _Tp>\ninline bool") for b in p.blocks)
    assert _code("/* -*- Mode: C; tab-width: 4 -*- */\nint main(void) { return 0; }\n", "main.def")[:2] == (
        "code",
        ["c"],
    )
    assert _code("x = 1\n\n# vim: set ts=4 ft=python :\n", "build.cfg")[:2] == ("code", ["python"])
    # A coding cookie names no mode; a markup's mode is its format.
    assert _code("# -*- coding: utf-8 -*-\nSome notes.\n", "NOTES")[0] == "text"
    assert _code("-*- org -*-\n* Release 2.0\nFaster.\n", "NEWS")[0] == "org"


def test_a_script_is_code_by_what_its_shebang_runs():
    cases = {
        "#!/usr/bin/env python3.11\nimport sys\n\ndef main():\n    return 0\n": "python",
        "#! /bin/sh -e\nset -u\n\nusage() {\n  echo usage\n}\n": "bash",
        "#!/usr/bin/env -S node --no-warnings\nconsole.log(1)\n": "javascript",
        "#!/usr/bin/env FOO=1 ruby\nputs 1\n": "ruby",
    }
    for text, language in cases.items():
        assert _code(text, "bin/deploy")[:2] == ("code", [language]), text
    p = parse_document(b"#!/usr/bin/perl -w\nprint 1;\n", "bin/report")
    assert p.document.format in ("perl", "code") and [b.language for b in p.blocks] == ["perl"]
    # The name decides where it names a format: a .txt file is text, whatever its first line.
    assert _code("#!/bin/sh\necho hi\n", "notes.txt")[0] == "text"
    assert _code("#!\nplain words\n", "README")[0] == "text"


def test_well_known_names_and_more_extensions_are_code():
    cases = {
        "Makefile": "make",
        "src/GNUmakefile": "make",
        "CMakeLists.txt": "cmake",
        "Dockerfile": "dockerfile",
        "Dockerfile.dev": "dockerfile",
        "ftplugin/dockerfile.vim": "vim",
        "Jenkinsfile": "groovy",
        "bits/vector.tcc": "cpp",
        "lib/util.hh": "cpp",
        "init.lua": "lua",
        "mix.exs": "elixir",
        "config.mk": "make",
        "site/theme.css": "css",
        "styles/main.scss": "scss",
        "kernels/add.cuh": "cuda",
        "kernels/add.cu": "cuda",
    }
    for name, language in cases.items():
        assert _code("all: build\n\nbuild:\n\tcc -o x x.c\n", name)[:2] == ("code", [language]), name


def test_configuration_files_are_code_a_block_per_top_level_part():
    yaml = (
        "# Cluster settings.\ncluster_name: demo\nprovider:\n  type: aws\n  # where it runs\n  region: us-west-2\n\n"
        "# The nodes.\nnodes:\n  - name: head\n    cpus: 4\n---\n- name: second document\n"
    )
    p = parse_document(yaml.encode(), "deploy/cluster.yml")
    assert (p.document.format, {b.language for b in p.blocks}) == ("code", {"yaml"})
    assert [b.text.split("\n")[0] for b in p.blocks] == [
        "# Cluster settings.",
        "provider:",
        "# The nodes.",
        "---",
        "- name: second document",
    ]
    assert "  # where it runs\n  region: us-west-2" in p.blocks[1].text  # an indented comment stays inside
    toml = '[build-system]\nrequires = ["setuptools"]\n\n# Extras.\n[project.optional-dependencies]\ndev = ["pytest"]\n\n[[tool.x]]\na = 1\n'
    p = parse_document(toml.encode(), "pyproject.toml")
    assert [b.text.split("\n")[0] for b in p.blocks] == ["[build-system]", "# Extras.", "[[tool.x]]"]
    ini = "; top\n[server]\nport = 80\n\n[client]\nretries = 3\n"
    p = parse_document(ini.encode(), "app.ini")
    assert [(b.language, b.text.split("\n")[0]) for b in p.blocks] == [
        ("ini", "; top"),
        ("ini", "[server]"),
        ("ini", "[client]"),
    ]
    assert all(p.text[b.char_start : b.char_end] == b.text for b in p.blocks)
    # systemd units and desktop entries are INI files
    unit = "[Unit]\nDescription=Daily apt download activities\n\n[Service]\nType=oneshot\n\n[Install]\nWantedBy=timers.target\n"
    for name in ("apt-daily.service", "apt-daily.timer", "org.gnome.Terminal.desktop", "tmp.mount"):
        p = parse_document(unit.encode(), name)
        assert [(b.language, b.text.split("\n")[0]) for b in p.blocks] == [
            ("ini", "[Unit]"),
            ("ini", "[Service]"),
            ("ini", "[Install]"),
        ], name


def test_a_json_value_with_no_text_is_no_record():
    p = parse_document(b'{}\n{"a": "x"}\nnull\n{"b": null, "c": ""}\n', "rows.jsonl")
    assert [b.text for b in p.blocks] == ["a: x"]
    p = parse_document(b'[{}, {"a": 1}, null]', "rows.json")
    assert [b.text for b in p.blocks] == ["a: 1"]
    assert parse_document(b"{}\n{}\n", "empty.jsonl").document.status == "empty"


def test_a_compressed_code_file_keeps_its_language():
    import gzip

    src = b"def f():\n    return 1\n\n\nclass A:\n    pass\n"
    p = parse_document(gzip.compress(src), "pkg/m.py.gz")
    assert [(b.kind, b.language, b.text.split("\n")[0]) for b in p.blocks] == [
        ("code", "python", "def f():"),
        ("code", "python", "class A:"),
    ]
