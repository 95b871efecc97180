"""The office formats' table (``parse/office_formats.py``) is what the detector and the parser
follow: each row's extension and text-ness agree with ``detect``, and a file of each format is
refused with the row's own words (what the file is, the part its package must hold), through the
real dispatcher."""

import io
import zipfile

import pytest

from raychunk.parse import parse_document
from raychunk.parse.detect import EXTENSIONS, TEXT_FORMATS
from raychunk.parse.office_formats import FORMATS


def test_each_format_has_its_extension_and_is_text_exactly_where_the_detector_says():
    assert {fmt for fmt in EXTENSIONS.values() if fmt in FORMATS} == set(FORMATS)
    for spec in FORMATS.values():
        assert spec.text == (spec.name in TEXT_FORMATS), spec.name
        assert bool(spec.parts) == bool(spec.package), spec.name  # a package says what it must hold


@pytest.mark.parametrize("fmt", sorted(f for f, spec in FORMATS.items() if spec.package))
def test_a_package_without_its_parts_is_refused_in_its_rows_words(fmt):
    spec = FORMATS[fmt]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("readme.txt", "not a document")
    parsed = parse_document(buf.getvalue(), f"a.{fmt}")
    missing = next(p for p in spec.parts)
    what = f"{missing} folder" if missing.endswith("/") else missing
    assert parsed.document.status == "failed"
    assert parsed.document.reason == (
        f"not a valid {spec.called}: the package is damaged or is not a .{fmt} "
        f"(it has no {what}; it holds readme.txt)"
    )
