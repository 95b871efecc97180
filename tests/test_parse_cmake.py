"""CMake files whose documentation is reStructuredText in ``.rst:`` bracket comments, as CMake's own
modules keep it: the documentation read as an ``.rst`` file is, the code kept in place."""

from raychunk.parse import parse_document

MODULE = """# Distributed under the OSI-approved BSD 3-Clause License.

#[=======================================================================[.rst:
FindFrob
--------

Find the Frob library.

Result Variables
^^^^^^^^^^^^^^^^

This module defines the following variables:

``Frob_FOUND``
  True if the system has the Frob library.
``Frob_VERSION``
  The version of the Frob library which was found.

::

  find_package(Frob 2.1 REQUIRED)

#]=======================================================================]

find_path(Frob_INCLUDE_DIR NAMES frob.h)

#[==[.rst:
Hints
^^^^^

Set ``Frob_ROOT`` to the prefix Frob is installed in.
#]==]

mark_as_advanced(Frob_INCLUDE_DIR)
"""


def test_rst_documentation_in_bracket_comments_is_read_as_rst_and_the_code_stays_in_place():
    p = parse_document(MODULE.encode(), "cmake/FindFrob.cmake")
    doc = p.document
    assert (doc.status, doc.format, doc.title) == ("ok", "code", "FindFrob")
    got = [(b.kind, b.heading_path, b.language, b.text.split("\n")[0]) for b in p.blocks]
    assert got[0] == ("code", (), "cmake", "# Distributed under the OSI-approved BSD 3-Clause License.")
    assert ("heading", ("FindFrob",), None, "Result Variables") in got
    assert (
        "paragraph",
        ("FindFrob", "Result Variables"),
        None,
        "Frob_FOUND: True if the system has the Frob library.",
    ) in got
    kinds = [g[0] for g in got]
    # the code between the comments where it stands: after the variables, before the hints
    first = got.index(
        ("code", ("FindFrob", "Result Variables"), "cmake", "find_path(Frob_INCLUDE_DIR NAMES frob.h)")
    )
    hints = got.index(("heading", ("FindFrob",), None, "Hints"))
    assert first < hints and got[-1] == (
        "code",
        ("FindFrob", "Hints"),
        "cmake",
        "mark_as_advanced(Frob_INCLUDE_DIR)",
    )
    assert "find_package(Frob 2.1 REQUIRED)" in [b.text for b in p.blocks if b.kind == "code"]
    assert kinds.count("heading") == 3 and not any("#[" in b.text or "#]" in b.text for b in p.blocks)
    assert all(p.text[b.char_start : b.char_end] == b.text for b in p.blocks)


def test_cmake_without_rst_comments_or_with_one_left_open_is_code():
    plain = "# Build the tool.\nadd_executable(tool main.c)\n\ntarget_link_libraries(tool m)\n"
    unclosed = "#[==[.rst:\nFrob\n----\n\nText.\n#]=]\nset(X 1)\n"
    for text, name in ((plain, "CMakeLists.txt"), (unclosed, "x.cmake")):
        p = parse_document(text.encode(), name)
        assert p.document.format == "code" and {b.language for b in p.blocks} == {"cmake"}, name
