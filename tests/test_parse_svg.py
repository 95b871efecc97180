"""SVG images: the words a viewer shows or announces (the image's title and description, its
labels), never the drawing's markup."""

import gzip

import pytest

from raychunk.parse import parse_document

CHART = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 200">
  <title>Request latency by region</title>
  <desc>p95 latency in milliseconds, October</desc>
  <style>.label { font: 12px sans-serif }</style>
  <metadata><rdf>generator: plotting library 3.1</rdf></metadata>
  <g id="node1"><title>node1</title>
    <path d="M10 10 L 390 10 L 390 190 Z" fill="#E33D27"/>
    <text x="20" y="40" class="label">eu-west <tspan font-weight="bold">120&#160;ms</tspan></text>
    <text x="20" y="80">us-east 95 ms</text>
  </g>
  <script>alert("not words")</script>
</svg>
"""


def test_an_svg_is_its_title_description_and_labels():
    doc = parse_document(CHART.encode(), "latency.svg")
    assert (doc.document.status, doc.document.format) == ("ok", "svg")
    assert [b.text for b in doc.blocks] == [
        "Request latency by region",
        "p95 latency in milliseconds, October",
        "eu-west 120\u00a0ms us-east 95 ms".replace("\u00a0", " "),
    ]
    for markup in ("path", "M10", "font", "node1", "alert", "generator", "<"):
        assert markup not in doc.text


@pytest.mark.parametrize(
    ("data", "status", "reason"),
    [
        (b'<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0 L1 1"/></svg>', "no_text", "no text in it"),
        (b"<svg><text>cut short", "failed", "not a well-formed SVG"),
        (
            b'<?xml version="1.0"?><!DOCTYPE s [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
            b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">'
            b'<!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">'
            b'<!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;"><!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">]>'
            b"<svg><text>&h;</text></svg>",
            "failed",
            "not a well-formed SVG",  # entity expansion past expat's amplification limit
        ),
        (
            b'<?xml version="1.0"?><!DOCTYPE s [<!ENTITY x SYSTEM "file:///etc/passwd">]><svg><text>&x;</text></svg>',
            "failed",
            "not a well-formed SVG",  # an external entity is never read
        ),
    ],
)
def test_svgs_without_words_or_well_formed_xml_say_so(data, status, reason):
    doc = parse_document(data, "x.svg")
    assert (doc.document.status, doc.document.format) == (status, "svg")
    assert reason in doc.document.reason
    assert "root:" not in doc.text


@pytest.mark.parametrize("name", ["latency.svgz", "latency.svg.gz"])
def test_a_gzipped_svg_is_an_svg(name):
    doc = parse_document(gzip.compress(CHART.encode()), name)
    assert doc.document.format == "svg" and doc.blocks[0].text == "Request latency by region"


def test_an_svg_nested_too_deeply_is_a_failed_row():
    deep = "<svg>" + "<g>" * 50_000 + "<text>deep</text>" + "</g>" * 50_000 + "</svg>"
    doc = parse_document(deep.encode(), "deep.svg")
    assert (doc.document.status, doc.document.reason) == ("failed", "document nested too deeply to parse")
