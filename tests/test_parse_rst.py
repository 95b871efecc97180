"""reStructuredText read as Sphinx renders it: definition terms joined to what they define, version
notes in words, object signatures kept with their descriptions, roles as their text, file-wide
metadata as the title, and nothing read from the disk by a document's own directives."""

import pytest

from raychunk.parse import parse_document
from tests.spans import assert_spans_match, chunks_holding_their_spans, kinds

pytest.importorskip("pypandoc")

# The shape of CMake's command reference (Help/command/*.rst), shortened.
COMMAND = b"""add_custom_command
------------------

Add a custom build rule to the generated build system.

Generating Files
^^^^^^^^^^^^^^^^

The options are:

``APPEND``
  Append the ``COMMAND`` and ``DEPENDS`` option values to the custom
  command for the first output specified.

``BYPRODUCTS``
  .. versionadded:: 3.2

  Specify the files the command is expected to produce but whose
  modification time may or may not be newer than the dependencies.

  .. versionadded:: 3.20
    Arguments to ``BYPRODUCTS`` may use a restricted set of
    :manual:`generator expressions <cmake-generator-expressions(7)>`.

``DEPENDS``
  Each argument is converted to a dependency as follows:

  1. If the argument is the name of a target, a target-level dependency is created.
  2. If the argument is an absolute path, a file-level dependency is created.

  .. deprecated:: 3.31
    Use :command:`add_dependencies` for target-level dependencies.
"""


def _blocks(data: bytes, name: str = "add_custom_command.rst"):
    parsed = parse_document(data, name)
    assert parsed.document.status == "ok", parsed.document.reason
    assert parsed.document.format == "rst"
    assert_spans_match(parsed)
    return parsed


def test_a_command_reference_reads_as_sphinx_shows_it():
    parsed = _blocks(COMMAND)
    assert parsed.document.title == "add_custom_command"
    got = kinds(parsed)
    assert got == [
        ("heading", "add_custom_command"),
        ("paragraph", "Add a custom build rule to the generated build system."),
        ("heading", "Generating Files"),
        ("paragraph", "The options are:"),
        (
            "paragraph",
            "APPEND: Append the COMMAND and DEPENDS option values to the custom command for the first "
            "output specified.",
        ),
        (
            "paragraph",
            "BYPRODUCTS: Added in version 3.2. Specify the files the command is expected to produce but "
            "whose modification time may or may not be newer than the dependencies.",
        ),
        (
            "paragraph",
            "Added in version 3.20: Arguments to BYPRODUCTS may use a restricted set of generator expressions.",
        ),
        ("paragraph", "DEPENDS: Each argument is converted to a dependency as follows:"),
        ("list_item", "If the argument is the name of a target, a target-level dependency is created."),
        ("list_item", "If the argument is an absolute path, a file-level dependency is created."),
        (
            "paragraph",
            "Deprecated since version 3.31: Use add_dependencies for target-level dependencies.",
        ),
    ]
    assert [b.marker for b in parsed.blocks if b.kind == "list_item"] == ["1.", "2."]
    assert parsed.blocks[4].heading_path == ("add_custom_command", "Generating Files")


def test_sphinx_object_descriptions_keep_their_signatures():
    """pandoc takes no colon in a directive's name: ``.. py:function::`` lost its signature and
    left only the body, quoted. Every object description is now its signature, then its body."""
    src = b"""API
===

.. py:function:: send(data, timeout=10)

   Send *data* to the peer.

   :param data: bytes to send

.. function:: close()

   Close the connection.

.. c:function:: int rc_open(const char *path)

   Open a connection.

.. envvar:: RC_HOME

   Where the client keeps its state.

.. option:: --build <dir>

   Project binary directory to be built.

.. envvar:: CTEST_RESOURCE_GROUP_<num>

  The resource types of each group.

.. signature::
  cmake_minimum_required(VERSION <min>)
  cmake_minimum_required(VERSION <min>...<max>)

  Require a minimum version of cmake.

.. py:module:: transport

.. autofunction:: transport.flush
"""
    got = [t for _, t in kinds(_blocks(src, "api.rst"))]
    assert got == [
        "API",
        "send(data, timeout=10): Send data to the peer.",
        "param data: bytes to send",
        "close(): Close the connection.",
        "int rc_open(const char *path): Open a connection.",
        "RC_HOME: Where the client keeps its state.",
        "--build <dir>: Project binary directory to be built.",
        # the argument as written: ``GROUP_`` is no link reference to Sphinx
        "CTEST_RESOURCE_GROUP_<num>: The resource types of each group.",
        "cmake_minimum_required(VERSION <min>) cmake_minimum_required(VERSION <min>...<max>): "
        "Require a minimum version of cmake.",
        "transport.flush",
    ]


def test_navigation_and_other_files_give_no_text_and_roles_read_as_their_text():
    src = b"""Guide
=====

.. toctree::
   :maxdepth: 2

   intro
   usage

.. literalinclude:: example.py

.. only:: html

   Shown on the web page.

See :ref:`the install steps <install>`, :func:`~transport.session.open` and :doc:`usage`;
set :envvar:`RC_HOME` first.

.. note::

   Sessions are **not** thread-safe.
"""
    got = [t for _, t in kinds(_blocks(src, "guide.rst"))]
    assert got == [
        "Guide",
        "Shown on the web page.",
        "See the install steps, open and usage; set RC_HOME first.",
        "Note",
        "Sessions are not thread-safe.",
    ]


def test_footnotes_keep_their_text_without_the_back_link():
    src = b"""Paths
=====

Searched last [#]_.

.. [#] .. versionadded:: 3.25
"""
    texts = [t for _, t in kinds(_blocks(src, "paths.rst"))]
    assert texts == ["Paths", "Searched last.", "Added in version 3.25."]


def test_file_wide_metadata_names_the_document_and_is_not_text():
    """awscli's topic guides open with Sphinx's file-wide metadata (``:title:``, ``:category:``):
    it read as a list of "title / - AWS CLI ..." blocks, and the first section was taken for the
    title, so every later section sat under it in the header line."""
    src = b""":title: AWS CLI Configuration Variables
:description: Configuration Variables for the AWS CLI
:related command: configure, configure get,
   configure set

Configuration values can come from several sources.

Config File Format
==================

The config file defaults to ``~/.aws/config``.

General Options
===============

The AWS CLI has a few general options.
"""
    parsed = _blocks(src, "config-vars.rst")
    assert parsed.document.title == "AWS CLI Configuration Variables"
    assert [(k, t, b.heading_path) for (k, t), b in zip(kinds(parsed), parsed.blocks)] == [
        ("paragraph", "Configuration values can come from several sources.", ()),
        ("heading", "Config File Format", ()),
        ("paragraph", "The config file defaults to ~/.aws/config.", ("Config File Format",)),
        ("heading", "General Options", ()),
        ("paragraph", "The AWS CLI has a few general options.", ("General Options",)),
    ]


@pytest.mark.parametrize(
    "src",
    [
        b"Intro\n=====\n\n:param x: not at the top\n",  # after the title: the document's own text
        b":not metadata: a field list that runs straight\ninto a paragraph line.\n",
    ],
)
def test_a_field_list_that_is_not_file_wide_metadata_stays(src):
    parsed = _blocks(src, "fields.rst")
    assert any("metadata" in t or "not at the top" in t for _, t in kinds(parsed)), kinds(parsed)


def test_grid_tables_keep_their_header_row():
    src = b"""Limits
======

+-----------+---------+
| Setting   | Default |
+===========+=========+
| retries   | 3       |
+-----------+---------+
| timeout   | 30 s    |
+-----------+---------+
"""
    table = next(b for b in _blocks(src, "limits.rst").blocks if b.kind == "table")
    assert table.rows == (("Setting", "Default"), ("retries", "3"), ("timeout", "30 s"))
    assert table.header_rows == 1


@pytest.mark.parametrize(
    "directive",
    [
        b".. include:: /etc/hostname",
        b".. include:: /etc/hostname\n   :literal:",
        b".. csv-table:: Hosts\n   :file: /etc/hostname",
        b".. csv-table:: Hosts\n   :header-rows: 0\n   :url: file:///etc/hostname",
        b".. raw:: html\n   :file: /etc/hostname",
        b".. literalinclude:: /etc/hostname",
    ],
)
def test_a_document_reads_no_other_file(tmp_path, directive):
    """pandoc's RST reader follows ``include`` and ``:file:`` wherever they point: a document could
    pull any file the worker can read into the index. It runs in its sandbox; the document parses,
    without the file (a csv-table ``:file:`` made pandoc fail the whole document)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-TOKEN-42\n")
    src = (
        b"Report\n======\n\nBefore.\n\n"
        + directive.replace(b"/etc/hostname", str(secret).encode())
        + b"\n\nAfter.\n"
    )
    parsed = _blocks(src, "report.rst")
    assert "SECRET-TOKEN-42" not in parsed.text
    texts = [t for _, t in kinds(parsed)]
    assert texts[:2] == ["Report", "Before."] and texts[-1] == "After."


@pytest.mark.parametrize("src", [b":orphan:\n:tocdepth: 2\n", b":title: Only a title\n\n"])
def test_a_file_of_metadata_only_is_empty_and_says_so(src):
    doc = parse_document(src, "stub.rst").document
    assert (doc.status, doc.reason) == ("empty", "only file-wide metadata")


def test_included_files_are_named_in_the_reason():
    src = b"cmake\n=====\n\nOptions:\n\n.. include:: OPTIONS_BUILD.txt\n\n.. literalinclude:: ../example.cmake\n"
    doc = _blocks(src, "cmake.1.rst").document
    assert doc.reason == (
        "included files not inlined (../example.cmake, OPTIONS_BUILD.txt): each is read on its own"
    )


def test_a_file_that_only_pulls_in_others_says_so():
    parsed = parse_document(b".. cmake-module:: ../../Modules/FindZLIB.cmake\n", "FindZLIB.rst")
    assert parsed.document.status == "empty"
    assert parsed.document.reason == (
        "no text of its own: it only pulls in other files (.. cmake-module::), which are not read from here"
    )


def test_a_file_pandoc_stops_on_is_read_as_plain_text_saying_where_it_stopped(monkeypatch):
    import raychunk.parse.rst as rst

    monkeypatch.setattr(rst, "_FILTER", rst._FILTER.with_name("no-such-filter.lua"))
    parsed = parse_document(b"Title\n=====\n\nText.\n", "broken.rst")
    assert parsed.document.status == "ok"
    assert parsed.document.reason.startswith("pandoc could not convert this .rst file (")
    assert parsed.document.reason.endswith("): read as plain text")
    assert kinds(parsed) == [("heading", "Title"), ("paragraph", "Text.")]


def test_a_link_left_open_costs_no_file():
    # awscli's examples (8 of site-packages' 5,859 .rst files): a link without its closing ">", on
    # which pandoc stops at the end of the file. They were failed rows, their words lost.
    src = (
        b"Enable auto renew\n=================\n\nThis command produces no output.\n\n"
        b"For more information, see `Renewing Registration <https://docs.aws.amazon.com/domain-renew.html`__ "
        b"in the *Route 53 Developer Guide*.\n"
    )
    parsed = parse_document(src, "enable-domain-auto-renew.rst")
    assert parsed.document.status == "ok"
    assert parsed.document.reason == (
        "pandoc could not convert this .rst file (line 8, column 1: unexpected end of input): read as plain text"
    )
    assert [b.text for b in parsed.blocks][:2] == ["Enable auto renew", "This command produces no output."]


def test_chunks_hold_their_spans():
    counts = chunks_holding_their_spans(_blocks(COMMAND * 3), 40)
    assert all(n > 5 for n in counts)


def test_a_grammar_keeps_its_lines():
    src = b'Grammar\n=======\n\n.. productionlist::\n   try_stmt: try1_stmt | try2_stmt\n   try1_stmt: "try" ":" suite\n'
    block = _blocks(src, "grammar.rst").blocks[-1]
    assert (block.kind, block.text) == ("code", 'try_stmt: try1_stmt | try2_stmt\ntry1_stmt: "try" ":" suite')


def test_a_literal_block_after_space_colons_shows_no_colon():
    # docutils' "partially minimized" form: "example. ::" shows "example." (pandoc left "example. :"),
    # "Output::" shows "Output:", a "::" alone shows nothing; a colon that opens no literal block stays
    parsed = _blocks(
        b"Title\n=====\n\nThe following example creates scopes. ::\n\n    aws x\n\nOutput::\n\n    {}\n\n"
        b"::\n\n    more\n\nA colon at the end :\n\nnot literal.\n",
        "scopes.rst",
    )
    assert kinds(parsed) == [
        ("heading", "Title"),
        ("paragraph", "The following example creates scopes."),
        ("code", "aws x"),
        ("paragraph", "Output:"),
        ("code", "{}"),
        ("code", "more"),
        ("paragraph", "A colon at the end :"),
        ("paragraph", "not literal."),
    ]


PROSE = (
    b"This command generates installation rules for a project. Install rules specified by calls to\n"
    b"the install command within a source directory are executed in order during installation, and\n"
    b"those in subdirectories are interleaved with those in the parent directory to run in the order\n"
    b"declared. The options common to several signatures are covered here.\n"
)


def test_a_parsed_literal_keeps_its_lines_and_shows_its_markup_as_text():
    # CMake writes every command's synopsis as one: pandoc knows no such directive and read its first
    # line as a definition term ("find_package(<PackageName> [MODULE]: [REQUIRED] ..."), lines joined
    src = (
        b"install\n-------\n\nSynopsis\n^^^^^^^^\n\n.. parsed-literal::\n\n"
        b"  install(`TARGETS`_ <target>... [...])\n  install({`FILES`_ | `PROGRAMS`_} <file>... [...])\n\n"
        b"Signature\n^^^^^^^^^\n\n* In a list:\n\n  .. parsed-literal::\n    :class: sig\n\n"
        b"    find_package(<PackageName> [version] [MODULE]\n"
        b"                 [REQUIRED] `\\<HASH\\> <HASH_>`_ :command:`cmake_path` *cpack* **bold** ``lit``)\n"
        b"    a * b, *.txt\n\n" + PROSE
    )
    parsed = _blocks(src, "install.rst")
    assert kinds(parsed) == [
        ("heading", "install"),
        ("heading", "Synopsis"),
        ("code", "install(TARGETS <target>... [...])\ninstall({FILES | PROGRAMS} <file>... [...])"),
        ("heading", "Signature"),
        ("list_item", "In a list:"),
        (
            "code",
            "find_package(<PackageName> [version] [MODULE]\n"
            "             [REQUIRED] <HASH> cmake_path cpack bold lit)\na * b, *.txt",
        ),
        ("paragraph", " ".join(PROSE.decode().split())),
    ]
    assert_spans_match(parsed)


def test_a_page_mostly_of_literal_blocks_keeps_them_code():
    # An AWS CLI example page is its command and its output, most of its text: a literal block is
    # code however much of the page it holds (the rule that reads a page of <pre> text as paragraphs
    # is an HTML page's, an IETF draft's; JSON output has too few ";" "{" "}" line ends to pass as code)
    src = (
        b"**To describe a Fargate profile**\r\n\r\nThe following ``describe-fargate-profile`` example "
        b"describes a Fargate profile. ::\r\n\r\n    aws eks describe-fargate-profile \\\r\n"
        b"        --cluster-name my-eks-cluster \\\r\n        --fargate-profile-name my-fargate-profile\r\n"
        b'\r\nOutput::\r\n\r\n    {\r\n        "fargateProfile": {\r\n'
        + b"".join(b'            "subnet%d": "subnet-09d912bb63ef21b9a",\r\n' % i for i in range(12))
        + b'            "status": "ACTIVE"\r\n        }\r\n    }\r\n\r\nFor more information, see '
        b"`AWS Fargate profiles <https://docs.aws.amazon.com/eks/latest/userguide/fargate-profile.html>`__.\r\n"
    )
    parsed = _blocks(src, "describe-fargate-profile.rst")
    got = kinds(parsed)
    assert [k for k, _ in got] == ["heading", "paragraph", "code", "paragraph", "code", "paragraph"]
    assert got[2][1].startswith("aws eks describe-fargate-profile \\\n    --cluster-name")
    assert got[4][1].startswith('{\n    "fargateProfile": {') and got[4][1].endswith("}\n}")
    assert_spans_match(parsed)
